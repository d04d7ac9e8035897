// Package handlerapi holds what a handler uses of its request context
// beside its methods: the questions it asks the client (elicitation,
// sampling, roots) and their answers, and the errors it meets asking,
// reporting progress or adding session tools. Their one public name is the
// root package's (hexmcp.InputRequest, hexmcp.ErrNoClientStream,
// hexmcp.ClientError, …), which aliases these; the engine (package app)
// takes them apart with [Question] and [NewResponses].
package handlerapi

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
)

// ErrInputRequired is wrapped by the error Ask returns in the stateless era
// when the client has not answered yet: return it from the handler, and the
// engine asks the client (resultType "input_required").
var ErrInputRequired = errors.New("hexmcp: input required from the client")

// InputRequiredError is the error Ask returns in the stateless era when
// answers are missing. It wraps [ErrInputRequired].
type InputRequiredError struct {
	// Keys are the questions without an answer.
	Keys []string
}

// Error says which answers are missing.
func (e *InputRequiredError) Error() string {
	return "hexmcp: input required from the client (" + strings.Join(e.Keys, ", ") + ")"
}

// Unwrap returns ErrInputRequired.
func (e *InputRequiredError) Unwrap() error { return ErrInputRequired }

// MissingCapabilityError reports questions the client cannot answer: it
// did not declare the capability (or the protocol revision lacks the
// method). The engine answers the request with -32021 and
// data.requiredCapabilities set to Required.
type MissingCapabilityError struct {
	// Required is a ClientCapabilities object naming what is missing
	// ({"elicitation": {}}, {"elicitation": {"url": {}}}, ...).
	Required map[string]any
	// Revision is set when the request's revision has no such method.
	Revision domain.Revision
}

// Error names the missing capabilities.
func (e *MissingCapabilityError) Error() string {
	names := slices.Sorted(maps.Keys(e.Required))
	for i, n := range names {
		if sub, ok := e.Required[n].(map[string]any); ok && len(sub) > 0 {
			names[i] = n + "." + strings.Join(slices.Sorted(maps.Keys(sub)), ",")
		}
	}
	msg := "Missing required client capability: " + strings.Join(names, ", ")
	if e.Revision != "" {
		msg += " (not available in protocol revision " + string(e.Revision) + ")"
	}
	return msg
}

// InputResponseError reports an answer from the client that does not
// follow the protocol or, for a form elicitation, does not match the
// requested schema. The engine answers the request with -32602.
type InputResponseError struct {
	Key    string
	Method string
	Reason string
}

// Error says which answer is wrong and why.
func (e *InputResponseError) Error() string {
	return fmt.Sprintf("the client's answer to %s %q is invalid: %s", e.Method, e.Key, e.Reason)
}

// ClientError is the error a client answered a server request with
// (handshake era): for example -1 "User rejected sampling request".
type ClientError struct {
	// Method is the server's request (elicitation/create, ...).
	Method string
	Code   int
	// Message and Data are the client's.
	Message string
	Data    jsontext.Value
}

// Error returns "hexmcp: the client answered <method> with error <code>: <message>".
func (e *ClientError) Error() string {
	return fmt.Sprintf("hexmcp: the client answered %s with error %d: %s", e.Method, e.Code, e.Message)
}

// ErrClientGone is wrapped by the error of a server request whose session
// ended before the client answered: the connection closed, or stopped
// reading (a graceful stop), so that no answer can arrive any more.
var ErrClientGone = errors.New("hexmcp: the client went away before answering")

// ErrNoClientStream is wrapped by the error of a server request that has
// no way to the client: the request's own stream cannot carry it (an HTTP
// client that accepts only JSON) and the session has no stream of its own
// open (no GET stream), or the connection is broken.
var ErrNoClientStream = errors.New("hexmcp: no stream open to the client")

// ErrNoSession is returned by what needs a handshake-era session
// (RequestContext.AddSessionTool) in a request that has none (a
// stateless-era request).
var ErrNoSession = errors.New("hexmcp: the request has no session")

// ErrProgressNotIncreasing is returned when a progress value is not greater
// than the previous one: the spec requires strictly increasing values.
var ErrProgressNotIncreasing = errors.New("hexmcp: progress must increase with every notification")

// ErrTooManyWaiting is wrapped by the error of a request to the client
// (elicitation, sampling, roots) that a call on a stdio or WebSocket
// connection does not send, because the calls waiting for their client's
// answers already take as many bytes as one client, or all of them, may
// hold (Options.MaxWaitingBytesPerClient, Options.MaxWaitingBytes).
// The error also wraps a *[domain.ProtocolError] (-32603, data.limit
// naming the bound), which a handler that returns it sends.
var ErrTooManyWaiting = errors.New("hexmcp: too many calls wait for the client")

// URLElicitationRequiredError is the error of
// RequestContext.RequireURLElicitation in revision 2025-11-25: the
// engine answers the request with -32042 and data.elicitations.
type URLElicitationRequiredError struct {
	Elicitations []domain.ElicitParams
}

// Error lists the elicitations by id.
func (e *URLElicitationRequiredError) Error() string {
	ids := make([]string, len(e.Elicitations))
	for i, el := range e.Elicitations {
		ids[i] = el.ElicitationID
	}
	return "URL elicitation required: " + strings.Join(ids, ", ")
}
