package ports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hexmcp/hexmcp/domain"
)

// SessionState is what a handshake-era session must remember between
// requests of a transport that has no connection of its own (Streamable
// HTTP). Keeping it in a shared store lets any server instance behind a load
// balancer serve the session.
type SessionState struct {
	// ID is the session id the transport minted (Mcp-Session-Id).
	ID string
	// Owner is who the session belongs to (for HTTP, the authenticated
	// subject; empty without authentication). A transport refuses the
	// session to requests from anyone else, on every instance.
	Owner string
	// Initialized is set once initialize has been answered.
	Initialized bool
	// Ready is set once the client sent notifications/initialized, the
	// last step of the handshake. A session that is not Ready yet is
	// pending: a store may expire it much sooner than a ready one (a
	// client that completes the handshake sends the notification right
	// after the initialize response), and evict it first.
	Ready bool
	// Peer is the client the session counts against for a store's
	// per-client limit: for HTTP, the authenticated principal's subject,
	// else the remote address (see the transport's documentation). Empty:
	// the session counts against no client. It is set at Create; a store
	// keeps the Peer the session was created with (Update does not change
	// it).
	Peer string
	// Revision is the negotiated protocol revision.
	Revision domain.Revision
	// Client is the client's self-reported identity.
	Client domain.Implementation
	// Capabilities are the client's declared capabilities (a JSON object).
	Capabilities json.RawMessage
	// Subscriptions are the resource URIs the client subscribed to with
	// resources/subscribe and has not unsubscribed from: sorted, without
	// duplicates, nil when there are none.
	Subscriptions []string
	// ResourcesAdvertised and PromptsAdvertised record whether initialize
	// advertised the resources and the prompts capabilities: only then does
	// the session get their list-changed notifications.
	ResourcesAdvertised, PromptsAdvertised bool
	// LogLevel is the level the client asked for with logging/setLevel:
	// log messages of that severity and above are sent to it. Empty when
	// it asked for none (nothing is sent).
	LogLevel domain.LogLevel
	// Created and LastSeen drive idle expiry.
	Created, LastSeen time.Time
}

// sessionStateOverhead is what [SessionState.Size] counts for a session
// besides its strings: its times, flags and a store's links to it.
const sessionStateOverhead = 256

// Size is the number of bytes a session store counts for st against its
// byte budgets (see [SessionStore]): the lengths of its strings (id,
// owner, peer, revision, log level, the client's identity and icons, every
// subscribed URI) and of its capabilities' JSON, and 256 for the rest. A
// store that keeps st in another form may count that form instead (the
// Redis one counts the JSON it stores).
func (st SessionState) Size() int {
	n := sessionStateOverhead + len(st.ID) + len(st.Owner) + len(st.Peer) + len(st.Revision) + len(st.LogLevel) + len(st.Capabilities)
	c := &st.Client
	n += len(c.Name) + len(c.Title) + len(c.Version) + len(c.Description) + len(c.WebsiteURL)
	for _, ic := range c.Icons {
		n += len(ic.Src) + len(ic.MimeType) + len(ic.Theme)
		for _, s := range ic.Sizes {
			n += len(s)
		}
	}
	for _, uri := range st.Subscriptions {
		n += len(uri)
	}
	return n
}

// The settings that turn a bound of a [SessionStore] of the SDK (the
// in-memory one and mcpredis's) off.
const (
	// UnlimitedSessionsPerClient, as a store's MaxSessionsPerClient, lets
	// one client hold up to the store's MaxSessions sessions.
	UnlimitedSessionsPerClient = -1
	// UnlimitedSessionBytes, as a store's MaxSessionBytes or
	// MaxSessionBytesPerClient, removes that byte budget (the number of
	// sessions stays bounded).
	UnlimitedSessionBytes = -1
)

// SessionStore keeps session states. Implementations must be safe for
// concurrent use and bounded: an in-memory one expires idle sessions
// (pending ones sooner), bounds their number and the bytes they hold
// ([SessionState.Size]) in total and per client (SessionState.Peer), and
// evicts an idle session rather than refuse a new one.
type SessionStore interface {
	// Create stores a new session. An error wrapping
	// ErrTooManySessionsForClient refuses it because its Peer holds too
	// many sessions, or too many bytes; one wrapping ErrTooManySessions
	// (but not ErrTooManySessionsForClient) because the store is full (in
	// number or in bytes). To make room a store may instead drop other
	// sessions (of the same Peer first when that Peer is at its limit).
	Create(ctx context.Context, s SessionState) error
	// Get returns a live session, or an error wrapping ErrSessionNotFound
	// for an unknown, expired or deleted one. It counts as activity.
	Get(ctx context.Context, id string) (SessionState, error)
	// Update replaces a session's state. A state larger than the stored
	// one (more subscriptions) may be refused as Create refuses a session
	// past a byte budget, with an error wrapping
	// ErrTooManySessionsForClient or ErrTooManySessions; the stored state
	// is then left as it was. A store may drop other sessions to make
	// room, never the one updated.
	Update(ctx context.Context, s SessionState) error
	// Delete ends a session; deleting an unknown one is not an error.
	Delete(ctx context.Context, id string) error
}

// Errors of the session store.
var (
	// ErrSessionNotFound: no live session has the id.
	ErrSessionNotFound = errors.New("session not found")
	// ErrTooManySessions: the store refuses a new session (or a larger
	// state), because it is full, in number or in bytes, or (see
	// ErrTooManySessionsForClient, which wraps it) because the session's
	// client holds too many.
	ErrTooManySessions = errors.New("too many sessions")
	// ErrTooManySessionsForClient: the store refuses a new session (or a
	// larger state) because its Peer holds as many sessions, or as many
	// bytes of them, as one client may. It wraps ErrTooManySessions, so
	// code that knows only that error still refuses the session; check
	// for this one first to tell the client that the limit is its own.
	ErrTooManySessionsForClient = fmt.Errorf("%w for one client", ErrTooManySessions)
)

// SessionRemovalNotifier is an optional interface of a [SessionStore]
// that drops sessions by itself (idle or pending expiry, eviction to make
// room). A transport that keeps a copy of each live session in memory
// (Streamable HTTP) registers with it to drop a copy as soon as its
// session leaves the store, rather than when (if ever) the client comes
// back: otherwise its memory would grow with sessions the store no longer
// holds.
type SessionRemovalNotifier interface {
	// OnRemoved registers fn, called with the id of every session that
	// leaves the store (expired, evicted or deleted), after the fact and
	// outside the store's locks, in the goroutine of the store call that
	// removed it (or, for a store that learns of removals otherwise, in
	// one of its own): fn may use the store, and should not block for
	// long. A store that replaces an expired session by a new one of the
	// same id does not report it. The returned function unregisters fn.
	OnRemoved(fn func(id string)) (unregister func())
}

// Event is one server-sent event kept for resumability.
type Event struct {
	// ID is the event's id (the SSE "id:" field), unique across streams.
	ID string
	// StreamID names the stream the event was sent on.
	StreamID string
	// Data is the JSON-RPC message.
	Data []byte
}

// EventStore keeps the events sent on SSE streams so that a client that
// lost a stream can resume it with Last-Event-ID: nothing lost, nothing
// repeated. Implementations must be safe for concurrent use and bounded.
//
// To stay within its bounds a store drops old events (and whole streams),
// and it may decline to keep an event too large for them. It never loses
// an event inside a replay: Replay from an id either delivers every later
// event of its stream or fails with ErrEventNotFound. An event it declined
// to keep still gets its id, from which a replay resumes (with the events
// that came after it); a replay from an earlier id fails.
//
// A stream id may name a group: the part before its first '/' (or the
// whole id when it has none). A store may bound the events a group holds together, so
// that one group (for the Streamable HTTP transport, whose stream ids are
// "<session id>/<stream>", one session) cannot crowd the others out. The
// group is a documented naming rule of this port, not a guess about one
// transport's names: an id without '/' is the name of its group.
type EventStore interface {
	// Append stores data as the next event of streamID and returns its id.
	// The store copies data.
	Append(ctx context.Context, streamID string, data []byte) (id string, err error)
	// Replay calls fn, in order, for every event of the stream that holds
	// lastEventID that came after it, and returns that stream's id. An
	// unknown or expired id is an error wrapping ErrEventNotFound. Each
	// Event names its stream (Event.StreamID), so fn can refuse a stream
	// before it copies anything: an error from fn stops the replay and is
	// returned.
	Replay(ctx context.Context, lastEventID string, fn func(Event) error) (streamID string, err error)
	// DeleteStream forgets a stream's events (its session ended); deleting
	// an unknown stream is not an error.
	DeleteStream(ctx context.Context, streamID string) error
}

// ErrEventNotFound is wrapped by Replay's error for an id the store does
// not hold.
var ErrEventNotFound = errors.New("event not found")

// Principal is who an authenticated request comes from.
type Principal struct {
	// Subject identifies the user or client.
	Subject string
	// Scopes the credential grants.
	Scopes []string
	// Claims holds whatever else the authenticator knows.
	Claims map[string]any
	// Expires is when the credential stops being accepted: from then on
	// the authenticator refuses it (for an OAuth access token, its "exp"
	// plus the authenticator's clock-skew leeway). Zero: not known, or
	// never. What outlives one request ends then: a WebSocket connection
	// is closed (websocket.CloseTokenExpired), an HTTP GET or
	// subscriptions/listen stream behind mcphttp.RequireBearer ends, so
	// that nothing goes on being served on a credential no longer
	// accepted.
	Expires time.Time
}

// Authenticator validates a bearer token.
type Authenticator interface {
	// Authenticate returns the token's principal, or an error (wrapping
	// ErrUnauthenticated for a bad or expired token).
	Authenticate(ctx context.Context, token string) (Principal, error)
}

// ErrUnauthenticated is wrapped by an Authenticator's error for a token it
// rejects.
var ErrUnauthenticated = errors.New("unauthenticated")

type principalKey struct{}

// WithPrincipal returns ctx carrying the authenticated principal of a
// request (an HTTP request, or the upgrade request of a WebSocket
// connection). Authentication middleware (mcphttp.RequireBearer) sets it;
// the transports hand it to the engine, which checks scopes against it and
// passes it to handlers (hexmcp.TransportInfo.Principal).
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, &p)
}

// PrincipalFrom returns the principal in ctx, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// PeerPrincipal is implemented by a [Conn] whose peer was authenticated
// when the connection was opened (a WebSocket connection behind
// mcphttp.RequireBearer): the engine takes it as the principal of every
// request on the connection.
type PeerPrincipal interface {
	Principal() *Principal
}

type accessTokenKey struct{}

// WithAccessToken returns ctx carrying the raw bearer token of a request,
// which authentication middleware (mcphttp.RequireBearer) records. The
// engine hands it only to the tools that ask for it by name
// (hexmcp.WithAccessToken): tools see the principal, not the token, so that
// a token issued for this server is not passed on to another.
func WithAccessToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, accessTokenKey{}, token)
}

// AccessTokenFrom returns the token WithAccessToken recorded, or "".
func AccessTokenFrom(ctx context.Context) string {
	t, _ := ctx.Value(accessTokenKey{}).(string)
	return t
}
