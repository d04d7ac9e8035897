package ports

import (
	"context"
	"errors"
)

// NoticeKind says what a [Notice] reports.
type NoticeKind string

// The kinds of [Notice].
const (
	// NoticeToolsChanged: the tool list changed (tools list_changed).
	NoticeToolsChanged NoticeKind = "tools_changed"
	// NoticeResourcesChanged: the resource list changed.
	NoticeResourcesChanged NoticeKind = "resources_changed"
	// NoticePromptsChanged: the prompt list changed.
	NoticePromptsChanged NoticeKind = "prompts_changed"
	// NoticeVisibilityChanged: what a Visibility decides may have changed
	// (each session's visible lists are compared with what it saw).
	NoticeVisibilityChanged NoticeKind = "visibility_changed"
	// NoticeResourceUpdated: the resource Notice.URI changed
	// (notifications/resources/updated).
	NoticeResourceUpdated NoticeKind = "resource_updated"
	// NoticeClientResponse: a client's response (Notice.Data) to a
	// request the server sent to the session Notice.Session, received by
	// an instance that did not send the request; Notice.To names the
	// instance that sent it (the engine's server request ids say which).
	NoticeClientResponse NoticeKind = "client_response"
	// NoticeClientCancel: a client cancelled (notifications/cancelled) a
	// request of the session Notice.Session, whose id is Notice.Data (JSON),
	// through an instance that is not serving it.
	NoticeClientCancel NoticeKind = "client_cancel"
	// NoticeElicitationComplete: the out-of-band interaction of the
	// URL-mode elicitation Notice.URI (its elicitationId) of the session
	// Notice.Session ended (notifications/elicitation/complete).
	NoticeElicitationComplete NoticeKind = "elicitation_complete"
	// NoticeStreamMessage: a message a client POSTed to the HTTP+SSE
	// transport of 2024-11-05 (mcphttp.SSEHandler) through an instance
	// that does not hold the stream of its session: Notice.Session is the
	// session, Notice.To the instance holding its stream (the session id
	// names it), Data the message as posted and URI the subject of the
	// principal that posted it ("" without one), which must be the
	// stream's.
	NoticeStreamMessage NoticeKind = "stream_message"
	// NoticeTopic: an extension's notification for the listen streams
	// that listed an id under its topic (app.Engine.NotifyTopic); Data is
	// the engine's encoding of it.
	NoticeTopic NoticeKind = "topic"
)

// Notice is something raised on one instance of a server that concerns
// the sessions and listen streams of every instance: a list changed, a
// resource was updated, a client answered a server request through another
// instance.
type Notice struct {
	// Kind says what happened.
	Kind NoticeKind `json:"k"`
	// ID identifies the notice, the same on every instance: a session that
	// several instances hold (Streamable HTTP) gets the notification it
	// causes once (see [KeyedMessageWriter]).
	ID string `json:"i"`
	// Origin names the instance that published it, so that it can skip
	// its own notices (it delivered them when it raised them).
	Origin string `json:"o"`
	// To, when not empty, names the one instance the notice is for (the
	// name it subscribed with, see [AddressedBus]): a bus that implements
	// AddressedBus delivers it to that instance's subscriptions only;
	// another bus delivers it to every subscriber, and the engines it is
	// not for drop it. Empty: every instance.
	To string `json:"t,omitempty"`
	// URI is the resource of NoticeResourceUpdated, the elicitationId of
	// NoticeElicitationComplete, the poster's subject of
	// NoticeStreamMessage.
	URI string `json:"u,omitempty"`
	// Session is the session of NoticeClientResponse, NoticeClientCancel,
	// NoticeElicitationComplete and NoticeStreamMessage.
	Session string `json:"s,omitempty"`
	// Data is the message of NoticeClientResponse (one JSON-RPC response,
	// compact JSON), the notification of NoticeTopic and the posted message
	// of NoticeStreamMessage.
	Data []byte `json:"d,omitempty"`
}

// NotificationBus carries [Notice]s between the instances of one server
// (each instance's engine publishes and subscribes). Implementations must
// be safe for concurrent use and bounded (a notice too large for them, by
// the lengths of its fields together, is refused by Publish).
//
// Delivery is at most once: a notice published while an instance's link to
// the bus is down does not reach it. A notice reaches every subscriber,
// the publishing instance's own included, in the order one publisher
// published them.
type NotificationBus interface {
	// Publish sends n to every subscriber.
	Publish(ctx context.Context, n Notice) error
	// Subscribe calls fn with every notice published from now on, from
	// one goroutine (fn must not block for long: later notices wait). The
	// returned function stops the subscription and waits for a running fn
	// to return.
	Subscribe(fn func(Notice)) (stop func())
}

// AddressedBus is an optional interface of a [NotificationBus] that
// carries a notice addressed to one instance ([Notice].To) to that
// instance only, so that the others neither receive nor decode it (the
// engine addresses a client's response to the instance that sent the
// request it answers).
type AddressedBus interface {
	NotificationBus
	// SubscribeAs is Subscribe for the instance called name (not empty):
	// fn gets every notice published from now on with an empty To, and
	// those addressed to name; a notice addressed to another name does
	// not reach it. A subscription made with Subscribe gets the notices
	// with an empty To only.
	SubscribeAs(name string, fn func(Notice)) (stop func())
}

// ErrNoticeTooLarge is wrapped by the error of a [NotificationBus]'s
// Publish for a notice larger than the bus carries.
var ErrNoticeTooLarge = errors.New("notice exceeds the bus's size limit")

// KeyedMessageWriter is an optional interface of a [MessageWriter] whose
// destination several instances may write to (the session stream of a
// Streamable HTTP session whose events are shared): a message written with
// a key that was written to the same destination before, by any instance,
// is dropped. The engine writes the notifications a [Notice] causes with
// the notice's ID as key, so that a session held by several instances gets
// each once.
type KeyedMessageWriter interface {
	MessageWriter
	// WriteKeyedMessage writes msg unless a message with key was written
	// to the same destination before.
	WriteKeyedMessage(ctx context.Context, key string, msg []byte) error
}

// EventWatcher is an optional interface of an [EventStore] that several
// instances share: it tells when any instance appends to a stream, so that
// an instance serving a stream it does not produce (a session stream, or
// a stream resumed at another instance than the one that began it) follows
// it without polling.
type EventWatcher interface {
	// Watch returns a channel that gets a value (it holds one; later ones
	// merge) whenever an event is appended to streamID, by any instance,
	// after Watch returned; stop releases it. A watcher may also wake
	// without a new event (after its link to the store was re-established,
	// when events may have been missed): the caller replays to see.
	Watch(streamID string) (wake <-chan struct{}, stop func())
}

// OnceAppender is an optional interface of an [EventStore] that several
// instances share: an event appended with a key is kept once per stream,
// however many instances append it.
type OnceAppender interface {
	// AppendOnce appends data as Append does, unless an event with key
	// was appended to streamID before (for as long as the store keeps the
	// stream's events): then it appends nothing and reports appended
	// false.
	AppendOnce(ctx context.Context, streamID, key string, data []byte) (id string, appended bool, err error)
}

// SharedState is what the instances of one server behind a load balancer
// share, in one value, so that an adapter package can hand all of it over
// in one line (mcpredis.Share): the engine takes StateKeys and Bus from it,
// the Streamable HTTP handler its SessionStore and EventStore, wherever
// their own options leave them nil. A nil field shares nothing of its kind.
type SharedState struct {
	// SessionStore keeps the Streamable HTTP sessions.
	SessionStore SessionStore
	// EventStore keeps the SSE events, for resumption at any instance.
	EventStore EventStore
	// StateKeys signs the requestState of multi round-trip requests.
	StateKeys StateKeys
	// Bus carries notices between the instances.
	Bus NotificationBus
	// Tasks keeps the tasks of the tasks extension (extensions/tasks
	// uses it when its own Options.Store is nil).
	Tasks TaskStore
}

// IsZero reports whether s shares nothing.
func (s SharedState) IsZero() bool {
	return s.SessionStore == nil && s.EventStore == nil && s.StateKeys == nil && s.Bus == nil && s.Tasks == nil
}
