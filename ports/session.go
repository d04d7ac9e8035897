package ports

import (
	"context"
	"encoding/json"
	"errors"
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

// SessionStore keeps session states. Implementations must be safe for
// concurrent use; an in-memory one expires idle sessions and bounds their
// number.
type SessionStore interface {
	// Create stores a new session; an error wrapping ErrTooManySessions
	// refuses it.
	Create(ctx context.Context, s SessionState) error
	// Get returns a live session, or an error wrapping ErrSessionNotFound
	// for an unknown, expired or deleted one. It counts as activity.
	Get(ctx context.Context, id string) (SessionState, error)
	// Update replaces a session's state.
	Update(ctx context.Context, s SessionState) error
	// Delete ends a session; deleting an unknown one is not an error.
	Delete(ctx context.Context, id string) error
}

// Errors of the session store.
var (
	ErrSessionNotFound = errors.New("session not found")
	ErrTooManySessions = errors.New("too many sessions")
)

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
type EventStore interface {
	// Append stores data as the next event of streamID and returns its id.
	Append(ctx context.Context, streamID string, data []byte) (id string, err error)
	// Replay calls fn, in order, for every event of the stream that holds
	// lastEventID that came after it, and returns that stream's id. An
	// unknown or expired id is an error wrapping ErrEventNotFound.
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
