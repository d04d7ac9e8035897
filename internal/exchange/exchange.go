// Package exchange is the seam between the protocol engine (package app)
// and a transport that frames each exchange itself rather than handing the
// engine a connection: Streamable HTTP, where every POST carries one
// message (or a batch) and the transport chooses an HTTP status, checks
// headers against the body and picks its response mode.
//
// stdio and WebSocket reach the engine through [ports.ConnHandler]; HTTP
// reaches it through a [Port], which the engine hands out (the HTTP
// adapter asks for it once, when it is built). Nothing here is public API:
// the package is internal to the module, so that the engine's
// request-level plumbing (the inspected message, the answer with its code,
// the session handle) is shared by the two packages that need it and by
// nobody else.
package exchange

import (
	"context"
	"encoding/json"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// Kind classifies an incoming message.
type Kind int

// Kinds of message.
const (
	Invalid      Kind = iota // not a valid JSON-RPC message
	Request                  // has an id and a method
	Notification             // has a method and no id
	Response                 // a result or error from the client
)

// MaxNestingDepth is the deepest nesting of objects and arrays an incoming
// message may have (the engine's decoder refuses deeper ones, as
// encoding/json does past the same bound).
const MaxNestingDepth = 10000

// Info is what a transport may need to know about a message before the
// engine serves it (Streamable HTTP checks headers against it and picks its
// response mode), as [Port.Inspect] decoded it. It holds parts of the
// buffer it was inspected from, which must not be written again.
type Info struct {
	Kind Kind
	// ID is the request's id; for an Invalid message, the id its error
	// answers when it could still be read (a request refused for
	// duplicate member names or invalid UTF-8 in its params), nil when it
	// could not.
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
}

// Stateless reports whether the message is a stateless-era request or
// notification: it names a protocol version in _meta. (An initialize that
// does is stateless too, and answered -32601: the method does not exist in
// the stateless era.)
func (i Info) Stateless() bool { return i.ProtocolVersion != "" }

// Message is a message as [Port.Inspect] decoded it: its [Info], and the
// engine's decoding, which the transport hands back with it.
type Message struct {
	Info
	// Decoded is the engine's own decoding of the message, handed back to
	// it so that it does not decode again; a transport leaves it alone.
	Decoded Decoded
}

// Decoded is the engine's part of a [Message]. Its fields are the
// engine's; a transport neither reads nor sets them.
type Decoded struct {
	ID         json.RawMessage // the id as decoded (Message.ID is the one an error answers)
	Params     json.RawMessage // params as sent; nil when absent or null
	ParamsErr  string          // what is wrong with params' members ("" when nothing is)
	IsResponse bool            // a response from the client
	IsError    bool            // that response is an error
	Payload    json.RawMessage // the response's result or error
	// Pre is what the decoder already made of params, Checked params as
	// the engine will read them, Err the error an invalid message is
	// answered with: pointers of the engine's types.
	Pre, Checked, Err any
}

// RetainedSize is how many bytes of the buffer the message was inspected
// from it refers to while it is served: its id and its params (the members
// the engine reads are parts of them). The rest of the buffer (other
// members, whitespace) is of no use once the message is inspected, yet
// stays in memory as long as the message refers to any part of it; see
// [Port.Detach].
func (m Message) RetainedSize() int { return len(m.Decoded.ID) + len(m.Decoded.Params) }

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
	// Malformed marks an error answering a request that lacks a field the
	// revision requires on every request (2026-07-28: the per-request
	// _meta protocolVersion and clientCapabilities), which is "malformed"
	// (HTTP 400), unlike other -32602 errors, which are answers (200).
	Malformed bool
	// Scopes, for an insufficient-scope error, are the scopes the request
	// needs: a transport that can challenge for them (HTTP's
	// WWW-Authenticate) names them.
	Scopes []string
}

// MethodSpec describes one request method of the engine's method table
// (app.MethodSpec is this type).
type MethodSpec struct {
	// Name is the JSON-RPC method name.
	Name string
	// Handshake and Stateless tell the eras the method exists in: ping,
	// initialize, logging/setLevel and resources/(un)subscribe belong to
	// the handshake era only (2026-07-28 removed them), server/discover
	// and subscriptions/listen to the stateless era only.
	Handshake, Stateless bool
	// Call marks the methods that run apart from a connection's reader,
	// cancellable (notifications/cancelled): those whose handlers may take
	// long or wait for the client, and the long-lived listen stream. The
	// others are answered in order by the reader.
	Call bool
	// Stream marks a long-lived request answered by a stream of
	// notifications (subscriptions/listen).
	Stream bool
	// NameParam names the member of params that the stateless era's
	// Mcp-Name header carries ("name" or "uri"); empty when none does.
	NameParam string
	// ParamHeaders marks the method whose arguments may be mirrored in
	// Mcp-Param-{Name} headers (x-mcp-header; tools/call).
	ParamHeaders bool
}

// Transport is what the transport knows about a request: the engine's
// TransportInfo (hexmcp.TransportInfo), with its ClientKey.
type Transport = handlerapi.TransportInfo

// Port is what the engine offers a transport that frames each exchange
// itself. A nil [Session] serves a message outside any session (the
// stateless era, or a message that names none).
type Port interface {
	// Inspect decodes raw as the engine would, strictly, and reports what
	// it is. A message that is not valid yields Kind Invalid; serve it
	// anyway with Serve to get the right error response.
	Inspect(raw []byte) Message
	// Detach returns m inspected again from a new buffer that holds only
	// what it refers to (its id, method and params), so that the buffer it
	// was inspected from can be freed while it is served. Responses and
	// invalid messages are returned unchanged.
	Detach(m Message) Message
	// Method returns the entry of the method table for a request method,
	// and whether the engine knows the method at all.
	Method(name string) (MethodSpec, bool)
	// Tool returns the definition of a registered tool.
	Tool(name string) (*domain.Tool, bool)
	// WithTransport returns a copy of ctx that tells the engine what the
	// transport knows about the request.
	WithTransport(ctx context.Context, t Transport) context.Context

	// Serve serves a message Inspect decoded and tells what the answer
	// is. related receives what the server sends meanwhile about the
	// request (progress, its own requests to the client).
	Serve(ctx context.Context, s Session, m Message, related ports.MessageWriter) Answer
	// ServeBatch serves the members of a JSON-RPC batch of a
	// handshake-era session, each as Inspect decoded it, and returns their
	// responses in order (nil where a member has none).
	ServeBatch(ctx context.Context, s Session, members []Message, related ports.MessageWriter) [][]byte
	// Initialize serves an initialize in the new session s: commit runs
	// once the engine has accepted it, with the session's state to store,
	// before its answer leaves the engine and inside its middleware; an
	// error from commit becomes the answer (a *domain.ProtocolError as it
	// is, any other -32603) and s stays uninitialized.
	Initialize(ctx context.Context, s Session, m Message, related ports.MessageWriter, commit func(ctx context.Context, st ports.SessionState) error) Answer

	// NewSession returns a new, uninitialized session with id, which
	// belongs to owner and counts against the client peer.
	NewSession(id, owner, peer string) Session
	// RestoreSession rebuilds a session from a stored state.
	RestoreSession(st ports.SessionState) Session
}

// Session is a handshake-era conversation, kept in the session store the
// port was made with. The engine holds its state, and knows what the store
// holds of it; the transport holds what is its own (streams, ids, budgets).
type Session interface {
	// Refresh takes st, the session's state as the store holds it now:
	// when it differs from what the session knows the store holds
	// (another instance changed the session), the session takes it, and
	// Refresh reports true.
	Refresh(st ports.SessionState) bool
	// Sync writes the session's state to the store when a request changed
	// it, and reports whether what the store holds changed. A store's
	// refusal of a larger state (an error wrapping
	// ports.ErrTooManySessions) is undone in the session too, and
	// returned; so are other failures, but for ports.ErrSessionNotFound.
	Sync(ctx context.Context) (bool, error)
	// Size is the size of the session's state as the store holds it
	// (ports.SessionState.Size).
	Size() int
	// Revision is the session's negotiated revision.
	Revision() domain.Revision
	// SetWriter attaches (or, with nil, detaches) the writer that
	// receives the session's server-initiated messages.
	SetWriter(w ports.MessageWriter)
	// Deleted and Removed report that the session itself ended (a DELETE;
	// the store dropped it), not only this copy: the engine's
	// OnSessionEnd is told once. The transport still closes the session.
	Deleted()
	Removed()
	// Close ends this copy of the session, cancelling its running
	// requests.
	Close()
}

// portOf is the engine's constructor of its Port, which package app sets
// when it is loaded (see [SetEngine]).
var portOf func(engine any, store ports.SessionStore) (Port, bool)

// SetEngine is for package app alone: it tells this package how to reach
// the engine's Port (a hook, so that the engine need not export a method
// whose types are internal to the module, and this package need not import
// the engine's).
func SetEngine(f func(engine any, store ports.SessionStore) (Port, bool)) { portOf = f }

// PortOf returns the Port of engine (an *app.Engine) whose sessions are
// kept in store; false when engine is none (nil, or not an engine).
func PortOf(engine any, store ports.SessionStore) (Port, bool) {
	if portOf == nil {
		return nil, false
	}
	return portOf(engine, store)
}
