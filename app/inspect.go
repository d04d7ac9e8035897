package app

import (
	"context"
	"encoding/json"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// MessageKind classifies an incoming message.
type MessageKind int

// Kinds of message.
const (
	KindInvalid      MessageKind = iota // not a valid JSON-RPC message
	KindRequest                         // has an id and a method
	KindNotification                    // has a method and no id
	KindResponse                        // a result or error from the client
)

// MessageInfo is what a transport may need to know about a message before
// the engine serves it (Streamable HTTP checks headers against it and picks
// its response mode).
type MessageInfo struct {
	Kind   MessageKind
	ID     json.RawMessage
	Method string
	// ProtocolVersion is params._meta["io.modelcontextprotocol/protocolVersion"]
	// ("" when absent). A request that carries it is served statelessly,
	// unless it is an initialize.
	ProtocolVersion string
	// Name is params.name (tools/call, prompts/get); URI is params.uri
	// (resources/read).
	Name string
	URI  string
	// Arguments is params.arguments (tools/call), as sent.
	Arguments json.RawMessage

	// the decoded message, so that HandleInspected need not decode again
	msg    message
	params *wireParams
	rerr   *rpcError
}

// Stateless reports whether the message is a stateless-era request or
// notification: it names a protocol version in _meta. (An initialize that
// does is stateless too, and answered -32601: the method does not exist in
// the stateless era.)
func (mi MessageInfo) Stateless() bool {
	return mi.ProtocolVersion != ""
}

// Inspect decodes raw as the engine would, strictly, and reports what it
// is. The MessageInfo holds parts of raw (see [Engine.HandleMessage]: raw
// must not be written again). A message that is not valid yields KindInvalid; serve it anyway with
// [Engine.HandleMessage] to get the right error response. Its ID is then
// the request's id when it could still be read (a request refused for
// duplicate member names or invalid UTF-8 in its params), the id that
// error answers; nil when it could not.
func Inspect(raw []byte) MessageInfo {
	m, rerr := decodeMessage(raw)
	if rerr != nil {
		return MessageInfo{Kind: KindInvalid, ID: json.RawMessage(rerr.id), Method: m.method, msg: m, rerr: rerr}
	}
	mi := MessageInfo{ID: json.RawMessage(m.id), Method: m.method, msg: m}
	switch {
	case m.isResponse:
		mi.Kind = KindResponse
		return mi
	case m.id == nil:
		mi.Kind = KindNotification
	default:
		mi.Kind = KindRequest
	}
	p, perr := decodeParams(m.params, m.id)
	if perr != nil {
		return mi
	}
	mi.params = p
	if p.Meta != nil {
		mi.ProtocolVersion, _ = stringParam(p.Meta.ProtocolVersion)
	}
	mi.Name, _ = stringParam(p.Name)
	mi.URI, _ = stringParam(p.URI)
	if p.Arguments != nil {
		mi.Arguments = json.RawMessage(p.Arguments)
	}
	return mi
}

// RetainedSize is how many bytes of the buffer the message was inspected
// from it refers to while it is served: its id and its params (the
// members the engine reads are parts of them). The rest of the buffer
// (other members, whitespace) is of no use once the message is inspected,
// yet stays in memory as long as the message refers to any part of it;
// see [MessageInfo.Detach].
func (mi MessageInfo) RetainedSize() int {
	return len(mi.msg.id) + len(mi.msg.params.raw)
}

// Detach returns the request or notification inspected again from a new
// buffer that holds only what it refers to (its id, method and params),
// so that the buffer it was inspected from can be freed while it is
// served: a transport calls it for a message whose buffer is much larger
// than [MessageInfo.RetainedSize] (padding beside the params) before
// serving a call that may last, such as one that waits for the client's
// answer to an elicitation. It costs a copy and a decoding of those bytes.
// Other messages (responses, invalid messages) are returned unchanged.
func (mi MessageInfo) Detach() MessageInfo {
	if mi.Kind != KindRequest && mi.Kind != KindNotification {
		return mi
	}
	m := mi.msg
	b := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"method":"","params":}`)+len(m.id)+len(m.method)+len(m.params.raw))
	b = append(b, `{"jsonrpc":"2.0"`...)
	if m.id != nil {
		b = append(b, `,"id":`...)
		b = append(b, m.id...)
	}
	b = append(b, `,"method":`...)
	b = domain.AppendJSONString(b, m.method)
	if m.params.raw != nil {
		b = append(b, `,"params":`...)
		b = append(b, m.params.raw...)
	}
	return Inspect(append(b, '}'))
}

// LookupTool returns the definition of a registered tool (transports read
// its input schema for header mapping, for example).
func (e *Engine) LookupTool(name string) (*domain.Tool, bool) {
	rt, ok := e.tools.registry.Get(name)
	if !ok {
		return nil, false
	}
	return rt.Tool, true
}

// Answer is what the engine answered a message with, so that a transport
// that must choose a status (HTTP) knows it without reading the response
// again.
type Answer struct {
	// Response is the encoded response; nil when there is none (a
	// notification, a client's response, a cancelled request).
	Response []byte
	// IsError tells a JSON-RPC error response; Code is its code.
	IsError bool
	Code    int
	// Malformed marks an error answering a request that lacks a field
	// the revision requires on every request (2026-07-28: the per-request
	// _meta protocolVersion and clientCapabilities), which is "malformed"
	// (HTTP 400), unlike other -32602 errors, which are answers (200).
	Malformed bool
	// Scopes, for an error with [CodeInsufficientScope], are the scopes
	// the request needs: a transport that can challenge for them (HTTP's
	// WWW-Authenticate) names them.
	Scopes []string
}

// Answer is HandleInspected telling what the answer is.
func (e *Engine) Answer(ctx context.Context, sess *Session, mi MessageInfo, related ports.MessageWriter) Answer {
	var s *session
	if sess != nil {
		s = sess.s
	}
	return e.handleAnswer(ctx, s, mi.msg, mi.params, mi.rerr, related)
}

// HandleInspected is HandleMessage for a message already decoded by
// [Inspect], which it does not decode again.
func (e *Engine) HandleInspected(ctx context.Context, sess *Session, mi MessageInfo, related ports.MessageWriter) []byte {
	var s *session
	if sess != nil {
		s = sess.s
	}
	return e.handleAnswer(ctx, s, mi.msg, mi.params, mi.rerr, related).Response
}
