// Package portlimits holds the limits and defaults the SDK's
// implementations of the ports (the in-memory stores and bus of
// internal/memstore, mcpredis's) share, and how they count sizes, so that
// they bound alike. Users set the limits through the stores' Options,
// whose documentation gives each default's value.
package portlimits

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hexmcp/hexmcp/ports"
)

// The limits every [ports.SessionStore] of the SDK (the in-memory one and
// mcpredis's) takes by default. A store's options take these when a field
// is zero.
const (
	// DefaultSessionIdleTimeout is how long a ready session lives without
	// activity.
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultSessionPendingTimeout is how long a pending session (one
	// whose client has not sent notifications/initialized) lives without
	// activity. A client that completes the handshake sends the
	// notification right after the initialize response, one round trip
	// later; 30 s leaves room for the slowest network and a client that
	// stalls briefly, and a session that never completes its handshake
	// holds its place for seconds rather than for the idle timeout.
	DefaultSessionPendingTimeout = 30 * time.Second
	// DefaultMaxSessions bounds the live sessions of a store.
	DefaultMaxSessions = 10_000
	// DefaultMaxSessionsPerClient bounds the live sessions of one client
	// (one SessionState.Peer). An MCP client uses one session per server
	// connection; 100 leaves room for many client applications (or users
	// behind one address) at once, and for a client that opens a session
	// every second without ending any (a store that evicts idle sessions
	// to make room, as the in-memory one does after a minute, replaces its
	// oldest unused one by its 100th). One client fills at most 1% of
	// DefaultMaxSessions.
	DefaultMaxSessionsPerClient = 100
	// DefaultMaxSessionBytes bounds the bytes the live sessions of a store
	// hold together, as the store counts them ([ports.SessionState.Size] in
	// memory): 64 MiB, room for DefaultMaxSessions sessions of 6.5 KiB
	// each (a session with a client's usual capabilities and a few
	// subscriptions takes well under 1 KiB).
	DefaultMaxSessionBytes = 64 << 20
	// DefaultMaxSessionBytesPerClient bounds the bytes of one client's
	// live sessions: 1 MiB, room for DefaultMaxSessionsPerClient sessions
	// of 10 KiB each, or for 8 sessions at the engine's largest (64 KiB of
	// capabilities and clientInfo, the engine's default MaxClientDeclarationBytes,
	// and 64 KiB of subscriptions, its default MaxSubscriptionBytes). One
	// client fills at most 1/64 of DefaultMaxSessionBytes.
	DefaultMaxSessionBytesPerClient = 1 << 20
)

// StreamGroup returns the group of an event stream id: the part before its
// first '/', or the whole id when it has none. See [ports.EventStore].
func StreamGroup(streamID string) string {
	group, _, _ := strings.Cut(streamID, "/")
	return group
}

// The limits every [ports.EventStore] of the SDK (the in-memory one and
// mcpredis's) takes by default. What all the events of a store hold
// together is each store's own (one Redis serves every instance).
const (
	// DefaultMaxEventsPerStream is how many of its latest events a stream
	// keeps.
	DefaultMaxEventsPerStream = 1_000
	// DefaultMaxEventStreams bounds the streams a store keeps; a new one
	// beyond it evicts the least recently appended one.
	DefaultMaxEventStreams = 10_000
	// DefaultEventTTL is how long an event is kept; a stream without an
	// event appended for that long is dropped.
	DefaultEventTTL = 10 * time.Minute
	// DefaultMaxEventBytesPerGroup bounds the bytes of the events of one
	// group of streams ([StreamGroup]; one session of the Streamable HTTP
	// transport): 16 MiB.
	DefaultMaxEventBytesPerGroup = 16 << 20
	// DefaultMaxEventBytesPerStream bounds the bytes of the events of one
	// stream: 8 MiB.
	DefaultMaxEventBytesPerStream = 8 << 20
)

// EventOverhead is what each kept event counts against an event store's
// byte budgets on top of the length of its data: the store's own
// bookkeeping of it, so that many tiny events are bounded too.
const EventOverhead = 128

// The bounds every [ports.NotificationBus] of the SDK (the in-memory one and
// mcpredis's) takes by default. A bus's options take these when a field is
// zero or negative: none of them can be turned off.
const (
	// DefaultMaxNoticeBytes bounds one notice ([NoticeSize]): 4 MiB, the
	// size of the largest message the HTTP and WebSocket transports accept
	// by default (their MaxBodyBytes and MaxMessageSize), so that a
	// client's response (the Data of a NoticeClientResponse: a sampling
	// result may carry an image) that a transport took in can always be
	// handed to the instance that waits for it.
	DefaultMaxNoticeBytes = 4 << 20
	// DefaultMaxQueuedNotices bounds the notices waiting for one
	// subscriber: 1,024. Notices come in bursts (a list changed, a
	// resource updated several times); a subscriber that is 1,024 behind
	// is stuck rather than slow.
	DefaultMaxQueuedNotices = 1_024
	// DefaultMaxQueuedNoticeBytes bounds the bytes ([NoticeSize]) of the
	// notices waiting for one subscriber: 16 MiB, four notices of
	// DefaultMaxNoticeBytes.
	DefaultMaxQueuedNoticeBytes = 16 << 20
)

// NoticeSize is what n counts against a bus's byte bounds (see
// DefaultMaxNoticeBytes): the lengths of its fields together.
func NoticeSize(n ports.Notice) int {
	return len(n.Kind) + len(n.ID) + len(n.Origin) + len(n.To) + len(n.URI) + len(n.Session) + len(n.Data)
}

// Cut returns s cut to at most max bytes, at the start of a rune, so that
// a bounded text (a status message, a logged reason, a quoted argument)
// never ends in half a UTF-8 sequence. s is returned whole when it fits.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
