package domain

import (
	"errors"
	"fmt"
)

// ToolError is an error a tool reports to the model: the call is answered
// with a normal result {content:[text(message)], isError:true}, so the model
// can read the message and correct itself. It is the counterpart of the PHP
// SDK's ToolCallException. A handler may return it wrapped
// (fmt.Errorf("...: %w", toolErr)); the SDK finds it with errors.As and sends
// the ToolError's own message.
//
// Any other error a handler returns is a server failure: the client gets a
// JSON-RPC -32603 with a generic message and the error goes only to the
// server log.
type ToolError struct {
	// Message is what the model reads.
	Message string
	// Content, when set, replaces the single text block of Message.
	Content []Content
	// Err is an optional underlying cause, kept for errors.Is/As and logs;
	// it is never sent to the client.
	Err error
}

// Error returns the message.
func (e *ToolError) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *ToolError) Unwrap() error { return e.Err }

// JSON-RPC and MCP error codes.
const (
	CodeParseError                 = -32700
	CodeInvalidRequest             = -32600
	CodeMethodNotFound             = -32601
	CodeInvalidParams              = -32602
	CodeInternalError              = -32603
	CodeResourceNotFound           = -32002 // up to 2025-11-25; see RevisionPolicy.ResourceNotFoundCode
	CodeHeaderMismatch             = -32020 // 2026-07-28, HTTP only
	CodeMissingClientCapability    = -32021 // 2026-07-28
	CodeURLElicitationRequired     = -32042 // 2025-11-25 only
	CodeUnsupportedProtocolVersion = -32022 // 2026-07-28
)

// ProtocolError is a JSON-RPC error sent to the client as it is. Handlers
// may return one (possibly wrapped) to answer with a specific JSON-RPC error
// instead of a tool result; its Message and Data reach the client, so they
// must not hold internal details.
type ProtocolError struct {
	Code    int
	Message string
	Data    any
}

// Error returns "code: message".
func (e *ProtocolError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// NewProtocolError returns a ProtocolError.
func NewProtocolError(code int, message string, data any) *ProtocolError {
	return &ProtocolError{Code: code, Message: message, Data: data}
}

// DefinitionError reports a tool, prompt, resource or resource template
// that cannot be registered: a bad name, URI, schema, argument, icon or
// _meta, a missing handler, or a duplicate. Registration returns it (New,
// AddTool and the rest wrap it); it never panics. Kind says what was being
// registered; errors.As finds it whatever the kind.
type DefinitionError struct {
	// Kind is "tool", "prompt" or "resource" (templates included).
	Kind string
	// Name is the tool's or prompt's name, the resource's URI or the
	// template's URI template; empty when the declaration has none yet.
	Name string
	// Reason says what is wrong.
	Reason string
	// Err is the cause, when there is one (ErrDuplicateTool, a schema's
	// compile error, ...).
	Err error
}

// Error returns `hexmcp: invalid <kind> "<name>": <reason>`.
func (e *DefinitionError) Error() string {
	if e.Name == "" {
		return "hexmcp: invalid " + e.Kind + ": " + e.Reason
	}
	return fmt.Sprintf("hexmcp: invalid %s %q: %s", e.Kind, e.Name, e.Reason)
}

// Unwrap returns the cause.
func (e *DefinitionError) Unwrap() error { return e.Err }

// ErrDuplicateTool is wrapped by the error a registry returns for a name that
// is already registered.
var ErrDuplicateTool = errors.New("a tool with this name is already registered")

// ErrDuplicateResource is wrapped by the error a resource registry returns
// for a URI (or URI template) that is already registered.
var ErrDuplicateResource = errors.New("a resource with this URI is already registered")

// ErrResourceNotFound tells the engine that a resource does not exist. A
// resource handler returns it (possibly wrapped), for example when a
// template's variables name nothing; the client gets the revision's
// resource-not-found error ([RevisionPolicy.ResourceNotFoundCode]) with
// data {"uri": ...}.
var ErrResourceNotFound = errors.New("resource not found")
