package hexmcp

import (
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
)

// What stands around the handlers: middleware, visibility, scopes,
// extensions. Each name here is the app package's (the protocol engine),
// so that a server needs one import.

// Middleware wraps the handling of every incoming request and notification
// (Options.Middleware; the first is the outermost), as net/http middleware
// wraps an http.Handler: func(next MethodHandler) MethodHandler. It may
// look at the [*Request], call next (or answer itself), and look at or
// replace what next answered; it runs the same on every transport and in
// both eras. [Audit] and [RateLimit] are ready-made.
type Middleware = app.Middleware

// MethodHandler answers a [*Request] with the encoded JSON-RPC result or
// an error: a [*ProtocolError] is sent as that JSON-RPC error, any other
// error is answered -32603 and logged. Its shape:
//
//	func(ctx context.Context, req *Request) (json.RawMessage, error)
type MethodHandler = app.MethodHandler

// Request is one incoming request or notification as [Middleware] sees it:
// Method, ID, Params, Name and URI (of tools/call, resources/read, …),
// Revision, Era, SessionID, Transport ([TransportInfo]: headers and the
// [Principal]), Trace, ClientCapabilities; its ClientKey method names the
// client that per-client limits count. Its fields and methods are listed
// by go doc github.com/hexmcp/hexmcp/app Request.
type Request = app.Request

// ToolMiddleware wraps every tool call, inside [Middleware]
// (Options.ToolMiddleware): func(next ToolHandler) ToolHandler. It sees
// the tool, its validated arguments and the handler's value or error, and
// may answer itself. [ToolTimeout] and [ConfirmDestructive] are ready-made.
type ToolMiddleware = handlerapi.ToolMiddleware

// ToolHandler runs one [*ToolCall] and returns the handler's value or
// error, as [ToolMiddleware] sees it (a [ToolError] is the model's to
// read: an isError result). Its shape:
//
//	func(ctx context.Context, call *ToolCall) (any, error)
type ToolHandler = handlerapi.ToolHandler

// ToolCall is one call of a tool as [ToolMiddleware] sees it:
//
//	type ToolCall struct {
//		Tool      *ToolDefinition // the tool's definition
//		Arguments json.RawMessage // validated against its input schema
//	}
type ToolCall = handlerapi.ToolCall

// Visibility decides, per request, which tools, resources and prompts a
// caller sees (Options.Visibility): each of its funcs returns false to
// hide one, and a nil func hides nothing of its kind.
//
//	type Visibility struct {
//		Tool     func(ctx context.Context, v *Viewer, t *ToolDefinition) bool
//		Resource func(ctx context.Context, v *Viewer, uri string) bool
//		Prompt   func(ctx context.Context, v *Viewer, p *PromptDefinition) bool
//	}
//
// A hidden tool is absent from
// tools/list and answered exactly as an unknown one; list-changed
// notifications follow what each session sees. Keep the funcs fast and
// free of I/O; when what they decide changes, call
// [Server.VisibilityChanged]. [HideUnauthorized] adds the scopes of
// [WithScopes].
type Visibility = handlerapi.Visibility

// Viewer is who a request, session or listen stream is, as a [Visibility]
// filter sees it:
//
//	type Viewer struct {
//		SessionID string         // the handshake-era session's id over Streamable HTTP, else empty
//		Principal *Principal     // the authenticated caller, or nil
//		Client    Implementation // its clientInfo (zero when it sent none)
//		Transport TransportInfo  // of the request, or of the one that opened the session or stream
//		Revision  Revision
//		Era       Era
//	}
type Viewer = handlerapi.Viewer

// HideUnauthorized returns v with the tools, prompts and resources whose
// scopes ([WithScopes]) the viewer's principal lacks hidden as well, so
// that a client does not learn of what it cannot call; without it, they
// are listed and refused with a scope challenge (step-up).
func HideUnauthorized(v Visibility) Visibility { return handlerapi.HideUnauthorized(v) }

// CodeInsufficientScope is the JSON-RPC error code of a request refused
// for lacking the scopes of [WithScopes] (data.scopes names them,
// data.missing those lacking); over Streamable HTTP it is a 403 with a
// WWW-Authenticate challenge.
const CodeInsufficientScope = handlerapi.CodeInsufficientScope

// Extension is an MCP extension the server serves (SEP-2133,
// Options.Extensions): an identifier ("io.modelcontextprotocol/skills"),
// its settings, the methods and resources it adds. Extension packages
// build one (extensions/skills, extensions/tasks, extensions/apps); the
// engine advertises it under capabilities.extensions in both eras. Its
// fields are documented in go doc github.com/hexmcp/hexmcp/app Extension.
type Extension = app.Extension

// SessionEnd describes a handshake-era session that ended, for
// Options.OnSessionEnd: its ID, Revision, Transport, when it Started and
// Ended, and why (Reason).
type SessionEnd = handlerapi.SessionEnd

// The reasons of a [SessionEnd].
const (
	// SessionClosed: the connection that held the session closed (stdio,
	// WebSocket).
	SessionClosed = handlerapi.SessionClosed
	// SessionDeleted: the client ended it (Streamable HTTP DELETE).
	SessionDeleted = handlerapi.SessionDeleted
	// SessionRemoved: the store dropped it (expired or evicted).
	SessionRemoved = handlerapi.SessionRemoved
)

// Unlimited, given to an Options bound that allows it
// (MaxInFlightBytesPerConn, MaxWaitingBytes, …), turns the bound off.
const Unlimited = handlerapi.Unlimited
