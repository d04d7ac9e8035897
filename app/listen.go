package app

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
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
// The engine ends a stream the same way by itself when it has delivered
// nothing for [Options.ListenIdleTimeout]. Any other end gets no response:
// the client cancelled (notifications/cancelled, closing its HTTP stream)
// and a cancelled request is not answered, or the peer went away and
// nothing can be written, or the server aborted (Engine.Abort).
var ErrEndedByServer = errors.New("hexmcp: the server ended the request")

// Defaults of the limits on subscriptions/listen streams in [Options].
const (
	// defaultMaxListeners bounds the listen streams open at once on an
	// engine, over every transport.
	defaultMaxListeners = 1000
	// defaultMaxListenersPerClient bounds the listen streams one client
	// may have open at once.
	defaultMaxListenersPerClient = 16
	// DefaultMaxListenSubscriptions bounds the resource URIs one listen
	// stream may subscribe to (notifications.resourceSubscriptions).
	defaultMaxListenSubscriptions = 100
	// defaultListenIdleTimeout is how long a listen stream may deliver
	// nothing before the server ends it.
	defaultListenIdleTimeout = 10 * time.Minute
)

// CodeListenLimit is the JSON-RPC error code with which a
// subscriptions/listen request is refused because a cap on open streams is
// reached: [Options.MaxListeners] (the whole server) or
// [Options.MaxListenersPerClient] (its client). MCP defines no code for
// this; -32050 lies in the range JSON-RPC 2.0 leaves to servers (-32000 to
// -32099), away from -32000 and -32001, which SDKs use for their own
// connection-closed and timeout errors. The error's data names the limit:
//
//	{"code":-32050,"message":"Too many listen streams: ...","data":{"limit":"maxListenersPerClient","max":16}}
//
// The client may listen again once one of its streams has ended, or later.
// The HTTP transport answers it with 429 Too Many Requests and Retry-After.
const CodeListenLimit = -32050

// The kinds of notification a subscriptions/listen stream can ask for.
type listenKind int

const (
	listenTools listenKind = iota
	listenPrompts
	listenResources
)

// listenClient is who a listen stream is counted against for
// Options.MaxListenersPerClient: the transport's client key (see
// hexmcp.TransportInfo.ClientKey) or, when the transport names none, the
// connection that carries the stream.
type listenClient struct {
	key  string
	conn *session
}

// notice is one notification waiting for a listen stream: its method and,
// for notifications/resources/updated, the resource's URI.
type notice struct {
	method string
	uri    string
	// topic and id name an extension's notification (ListenTopic): the
	// newest payload for them waits in listener.payloads.
	topic, id string
}

// listener is one open subscriptions/listen stream (2026-07-28): the
// notifications it asked for, and those waiting to be written.
//
// Notifiers (a tool registered, a resource updated) only queue a notice
// and wake the stream; the listen request's own goroutine writes, so a
// stream whose client does not read delays nobody else. The queue holds a
// notice at most once: an identical notice still waiting already tells the
// client what a second would (fetch the list again, read the resource
// again), so a stalled stream holds, besides the one write in progress, at
// most one notice per kind and one per subscribed URI (3 +
// Options.MaxListenSubscriptions small entries, each URI at most
// Options.MaxURILength bytes), and the client misses nothing once it reads
// again.
type listener struct {
	client listenClient
	view   *handlerapi.Viewer // who listens (Visibility, scopes)
	seen   seenLists          // fingerprints of the lists it saw
	kinds  [3]bool            // by listenKind
	uris   map[string]struct{}
	topics map[string]map[string]struct{} // extension topic → ids

	mu       sync.Mutex
	queue    []notice
	waiting  map[notice]struct{}
	payloads map[notice][]byte // an extension notice's newest params
	wake     chan struct{}     // capacity 1
}

// push queues n unless an identical notice is waiting already. An
// extension's notice (a topic's) carries params: a waiting one takes the
// newest, since it tells the state as it now is.
func (l *listener) push(n notice, params []byte) {
	l.mu.Lock()
	if n.topic != "" {
		if l.payloads == nil {
			l.payloads = make(map[notice][]byte)
		}
		l.payloads[n] = params
	}
	if _, dup := l.waiting[n]; dup {
		l.mu.Unlock()
		return
	}
	if l.waiting == nil {
		l.waiting = make(map[notice]struct{})
	}
	l.waiting[n] = struct{}{}
	l.queue = append(l.queue, n)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// next takes the oldest waiting notice; false when none is waiting. A
// notice stays in the queue, and so absorbs identical ones, until its
// write begins.
func (l *listener) next() (notice, []byte, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queue) == 0 {
		return notice{}, nil, false
	}
	n := l.queue[0]
	l.queue[0] = notice{}
	l.queue = l.queue[1:]
	delete(l.waiting, n)
	params := l.payloads[n]
	delete(l.payloads, n)
	return n, params, true
}

// pending reports how many notices are waiting (for tests).
func (l *listener) pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}

// listenFilter is the notifications object of subscriptions/listen.
type listenFilter struct {
	toolsListChanged      bool
	promptsListChanged    bool
	resourcesListChanged  bool
	resourceSubscriptions []string
	topics                map[string][]string // the extensions' topics asked for
}

// errStreamLost reports a listen stream that can no longer be written.
var errStreamLost = errors.New("hexmcp: the listen stream is lost")

// serve serves subscriptions/listen: it acknowledges the filter (the part
// the server honors), then delivers the matching notifications, tagged
// with the request's id, until ctx ends. When the server ended it (ctx's
// cause is [ErrEndedByServer], or the stream was idle for
// Options.ListenIdleTimeout) it answers with the completion result, the
// stream's last message; otherwise (the client cancelled or went away, a
// hard stop, a write failed) it answers nothing: the stream just ends.
//
// Past Options.MaxListeners or Options.MaxListenersPerClient the request
// is refused at once with [CodeListenLimit].
func (ls *listeners) serve(ctx context.Context, s *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	// A stream may last for hours: it keeps copies of the little it needs
	// (id, revision, filter), not the request (which may be as large as the
	// transport allows).
	id := jsontext.Value(bytes.Clone(m.id))
	// The stream's revision is the request's, as dispatch resolved it
	// (subscriptions/listen exists only in the stateless era).
	var rev string
	if ci.era == domain.EraStateless {
		rev = string(ci.rev)
	}
	l, f, acked, rerr := ls.newListener(id, p.Notifications)
	if rerr != nil {
		return nil, rerr
	}
	l.view = viewerOf(ctx, ci)
	if rerr := ls.followable(ctx, id, l, acked); rerr != nil {
		return nil, rerr
	}
	if rerr := ls.acceptTopics(ctx, s, m, p, ci, l, f, acked); rerr != nil {
		return nil, rerr
	}
	ack, err := encodeNotification("notifications/subscriptions/acknowledged",
		map[string]any{"_meta": map[string]any{metaSubscriptionID: id}, "notifications": acked})
	if err != nil {
		return nil, newRPCError(id, domain.CodeInternalError, "Internal error", nil)
	}
	var write func(msg []byte) error
	related, _ := ctx.Value(relatedKey{}).(ports.MessageWriter)
	switch {
	case related != nil:
		write = func(msg []byte) error { return related.WriteMessage(ctx, msg) }
	case s != nil:
		write = func(msg []byte) error {
			if !s.trySend(msg) {
				return errStreamLost
			}
			return nil
		}
	default:
		return nil, newRPCError(id, domain.CodeInternalError, "Internal error: subscriptions/listen needs a stream to deliver on", nil)
	}
	trans, _ := ctx.Value(transportKey{}).(handlerapi.TransportInfo)
	l.client = listenClient{key: trans.ClientKey()}
	if l.client.key == "" && s != nil {
		l.client.conn = s
	}
	if ls.vis.filtersAny() {
		ls.vis.recordSeen(l.view, nil, l)
	}
	if rerr := ls.add(id, l); rerr != nil {
		return nil, rerr
	}
	defer ls.remove(l)

	// Notices queued from here on wait for the acknowledgement, which is
	// thus the stream's first message.
	if write(ack) != nil {
		return nil, nil
	}
	idle := ls.idle
	var timeout <-chan time.Time
	var timer *time.Timer
	if idle > 0 {
		timer = time.NewTimer(idle)
		defer timer.Stop()
		timeout = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			if !errors.Is(context.Cause(ctx), ErrEndedByServer) {
				return nil, nil
			}
			return ls.complete(id, rev)
		case <-timeout:
			// Nothing delivered for that long: the server ends the stream,
			// cleanly; a client still there listens again.
			return ls.complete(id, rev)
		case <-l.wake:
			delivered := false
			for ctx.Err() == nil { // nothing follows the end of the stream
				n, params, ok := l.next()
				if !ok {
					break
				}
				if n.uri != "" && !ls.resources.mayFollow(ctx, l.view, n.uri) {
					continue // hidden (or gone) since it was queued
				}
				msg := encodeNotice(id, n)
				if n.topic != "" {
					msg = encodeTopicNotice(id, n.method, params)
				}
				if msg == nil {
					continue
				}
				if write(msg) != nil {
					return nil, nil // the stream is lost
				}
				delivered = true
			}
			if timer != nil && delivered {
				timer.Reset(idle)
			}
		}
	}
}

// encodeNotice encodes a notification of a listen stream, tagged with the
// subscription id.
func encodeNotice(id jsontext.Value, n notice) []byte {
	meta := map[string]any{metaSubscriptionID: id}
	var msg []byte
	var err error
	if n.uri != "" {
		msg, err = encodeNotification(n.method, map[string]any{"uri": n.uri, "_meta": meta})
	} else {
		msg, err = encodeNotification(n.method, map[string]any{"_meta": meta})
	}
	if err != nil {
		return nil
	}
	return msg
}

// complete encodes the completion result that answers a listen
// request the server ends (2026-07-28, "Graceful Closure"): resultType
// "complete" and, like every message of the stream, the subscription id in
// _meta, next to the serverInfo of every stateless result.
func (ls *listeners) complete(id jsontext.Value, rev string) ([]byte, *rpcError) {
	meta := ls.res.meta(domain.Revision(rev))
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
