package app

import (
	"context"
	"errors"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// ErrEndedByServer is the cancellation cause with which a transport ends a
// subscriptions/listen request on the server's own initiative (a graceful
// shutdown, its streams being closed), as opposed to the client cancelling
// it or going away:
//
//	ctx, cancel := context.WithCancelCause(ctx)
//	... // serve the request with ctx
//	cancel(app.ErrEndedByServer) // the server stops
//
// A listen request whose context ends with this cause (context.Cause,
// errors.Is) is answered with the completion result of 2026-07-28
// ("Graceful Closure"), which tells the client that the subscription closed
// cleanly rather than dropped:
//
//	{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":<the request's id>, ...}}
//
// Any other end gets no response: the client cancelled
// (notifications/cancelled, closing its HTTP stream) and a cancelled
// request is not answered, or the peer went away and nothing can be
// written, or the server aborted (Engine.Abort).
var ErrEndedByServer = errors.New("app: the server ended the request")

// The kinds of notification a subscriptions/listen stream can ask for.
type listenKind int

const (
	listenTools listenKind = iota
	listenPrompts
	listenResources
)

// listener is one open subscriptions/listen stream (2026-07-28): the
// notifications it asked for, and where they go.
type listener struct {
	id    jsontext.Value // the listen request's JSON-RPC id (the subscription id)
	kinds [3]bool        // by listenKind
	uris  map[string]struct{}
	write func(msg []byte)

	// mu orders the messages of the stream: the acknowledgement is written
	// under it before any notification can be, and closed stops them.
	mu     sync.Mutex
	closed bool
}

// send writes a notification tagged with the subscription id.
func (l *listener) send(method string, params map[string]any) {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{metaSubscriptionID: l.id}
	msg, err := encodeNotification(method, params)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.write(msg)
	}
}

// listenFilter is the notifications object of subscriptions/listen.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged"`
	PromptsListChanged    bool     `json:"promptsListChanged"`
	ResourcesListChanged  bool     `json:"resourcesListChanged"`
	ResourceSubscriptions []string `json:"resourceSubscriptions"`
}

// listen serves subscriptions/listen: it acknowledges the filter (the part
// the server honors), then delivers the matching notifications, tagged
// with the request's id, until ctx ends. When the server ended it (ctx's
// cause is [ErrEndedByServer]) it answers with the completion result, the
// stream's last message; otherwise (the client cancelled or went away, a
// hard stop) it answers nothing: the stream just ends.
func (e *Engine) listen(ctx context.Context, s *session, m message, p *wireParams) ([]byte, *rpcError) {
	if p.Notifications == nil || p.Notifications.Kind() != '{' {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: notifications is required and must be an object", nil)
	}
	var f listenFilter
	if err := json.Unmarshal(p.Notifications, &f); err != nil {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: notifications: "+describeDecodeError(err), nil)
	}
	l := &listener{id: m.id}
	l.kinds[listenTools] = f.ToolsListChanged
	l.kinds[listenPrompts] = f.PromptsListChanged && e.prompts != nil
	l.kinds[listenResources] = f.ResourcesListChanged && e.resources != nil
	if e.resources != nil && len(f.ResourceSubscriptions) > 0 {
		l.uris = make(map[string]struct{}, len(f.ResourceSubscriptions))
		for _, u := range f.ResourceSubscriptions {
			l.uris[u] = struct{}{}
		}
	}
	related, _ := ctx.Value(relatedKey{}).(ports.MessageWriter)
	switch {
	case related != nil:
		l.write = func(msg []byte) { _ = related.WriteMessage(ctx, msg) }
	case s != nil:
		l.write = s.send
	default:
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error: subscriptions/listen needs a stream to deliver on", nil)
	}

	ack := map[string]any{}
	if l.kinds[listenTools] {
		ack["toolsListChanged"] = true
	}
	if l.kinds[listenPrompts] {
		ack["promptsListChanged"] = true
	}
	if l.kinds[listenResources] {
		ack["resourcesListChanged"] = true
	}
	if l.uris != nil {
		ack["resourceSubscriptions"] = f.ResourceSubscriptions
	}
	msg, err := encodeNotification("notifications/subscriptions/acknowledged",
		map[string]any{"_meta": map[string]any{metaSubscriptionID: m.id}, "notifications": ack})
	if err != nil {
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}

	l.mu.Lock()
	e.mu.Lock()
	if e.listeners == nil {
		e.listeners = make(map[*listener]struct{})
	}
	e.listeners[l] = struct{}{}
	e.mu.Unlock()
	l.write(msg)
	l.mu.Unlock()

	<-ctx.Done()

	e.mu.Lock()
	delete(e.listeners, l)
	e.mu.Unlock()
	l.mu.Lock()
	l.closed = true // no notification can follow the completion result
	l.mu.Unlock()
	if !errors.Is(context.Cause(ctx), ErrEndedByServer) {
		return nil, nil
	}
	return e.listenComplete(m.id, p)
}

// listenComplete encodes the completion result that answers a listen
// request the server ends (2026-07-28, "Graceful Closure"): resultType
// "complete" and, like every message of the stream, the subscription id in
// _meta, next to the serverInfo of every stateless result.
func (e *Engine) listenComplete(id jsontext.Value, p *wireParams) ([]byte, *rpcError) {
	var rev string
	if p.Meta != nil {
		rev, _ = stringParam(p.Meta.ProtocolVersion)
	}
	meta := e.resultMeta(domain.Revision(rev))
	meta[metaSubscriptionID] = id
	mb, err := json.Marshal(meta, json.Deterministic(true))
	if err != nil {
		return nil, newRPCError(id, domain.CodeInternalError, "Internal error", nil)
	}
	b := appendResponseHead(make([]byte, 0, len(mb)+80), id)
	b = append(b, `{"resultType":"complete","_meta":`...)
	b = append(b, mb...)
	return append(b, "}}"...), nil
}

// listenersFor returns the open listen streams that asked for kind.
func (e *Engine) listenersFor(kind listenKind) []*listener {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*listener
	for l := range e.listeners {
		if l.kinds[kind] {
			out = append(out, l)
		}
	}
	return out
}

// notifyListeners sends a list-changed notification to the listen streams
// that asked for it.
func (e *Engine) notifyListeners(kind listenKind, method string) {
	for _, l := range e.listenersFor(kind) {
		l.send(method, nil)
	}
}

// notifyResourceListeners sends notifications/resources/updated to the
// listen streams subscribed to uri and reports how many there were.
func (e *Engine) notifyResourceListeners(uri string) int {
	e.mu.Lock()
	var targets []*listener
	for l := range e.listeners {
		if _, ok := l.uris[uri]; ok {
			targets = append(targets, l)
		}
	}
	e.mu.Unlock()
	for _, l := range targets {
		l.send("notifications/resources/updated", map[string]any{"uri": uri})
	}
	return len(targets)
}
