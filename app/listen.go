package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

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
// The engine ends a stream the same way by itself when it has delivered
// nothing for [Options.ListenIdleTimeout]. Any other end gets no response:
// the client cancelled (notifications/cancelled, closing its HTTP stream)
// and a cancelled request is not answered, or the peer went away and
// nothing can be written, or the server aborted (Engine.Abort).
var ErrEndedByServer = errors.New("hexmcp: the server ended the request")

// Defaults of the limits on subscriptions/listen streams in [Options].
const (
	// DefaultMaxListeners bounds the listen streams open at once on an
	// engine, over every transport.
	DefaultMaxListeners = 1000
	// DefaultMaxListenersPerClient bounds the listen streams one client
	// may have open at once.
	DefaultMaxListenersPerClient = 16
	// DefaultMaxListenSubscriptions bounds the resource URIs one listen
	// stream may subscribe to (notifications.resourceSubscriptions).
	DefaultMaxListenSubscriptions = 100
	// DefaultListenIdleTimeout is how long a listen stream may deliver
	// nothing before the server ends it.
	DefaultListenIdleTimeout = 10 * time.Minute
)

// Unlimited, as the value of a limit in [Options] (MaxListeners,
// MaxListenersPerClient, MaxListenSubscriptions, ListenIdleTimeout, and
// any other whose doc says "negative: no bound"), turns that limit off.
// Zero takes the default: a limit is never off by omission.
const Unlimited = -1

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
// [TransportInfo.ClientKey]) or, when the transport names none, the
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
	view   *Viewer   // who listens (Visibility, scopes)
	seen   seenLists // fingerprints of the lists it saw
	kinds  [3]bool   // by listenKind
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

// listen serves subscriptions/listen: it acknowledges the filter (the part
// the server honors), then delivers the matching notifications, tagged
// with the request's id, until ctx ends. When the server ended it (ctx's
// cause is [ErrEndedByServer], or the stream was idle for
// Options.ListenIdleTimeout) it answers with the completion result, the
// stream's last message; otherwise (the client cancelled or went away, a
// hard stop, a write failed) it answers nothing: the stream just ends.
//
// Past Options.MaxListeners or Options.MaxListenersPerClient the request
// is refused at once with [CodeListenLimit].
func (e *Engine) listen(ctx context.Context, s *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	// A stream may last for hours: it keeps copies of the little it needs
	// (id, revision, filter), not the request (which may be as large as the
	// transport allows).
	id := jsontext.Value(bytes.Clone(m.id))
	var rev string
	if p.Meta != nil {
		rev, _ = stringParam(p.Meta.ProtocolVersion)
	}
	l, f, acked, rerr := e.newListener(id, p.Notifications)
	if rerr != nil {
		return nil, rerr
	}
	l.view = viewerOf(ctx, ci)
	if rerr := e.followable(ctx, id, l, acked); rerr != nil {
		return nil, rerr
	}
	if rerr := e.acceptTopics(ctx, s, m, p, ci, l, f, acked); rerr != nil {
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
	trans, _ := ctx.Value(transportKey{}).(TransportInfo)
	l.client = listenClient{key: trans.ClientKey()}
	if l.client.key == "" && s != nil {
		l.client.conn = s
	}
	if e.vis.filtersAny() {
		e.vis.recordSeen(l.view, nil, l)
	}
	if rerr := e.addListener(id, l); rerr != nil {
		return nil, rerr
	}
	defer e.removeListener(l)

	// Notices queued from here on wait for the acknowledgement, which is
	// thus the stream's first message.
	if write(ack) != nil {
		return nil, nil
	}
	idle := e.opts.ListenIdleTimeout
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
			return e.listenComplete(id, rev)
		case <-timeout:
			// Nothing delivered for that long: the server ends the stream,
			// cleanly; a client still there listens again.
			return e.listenComplete(id, rev)
		case <-l.wake:
			delivered := false
			for ctx.Err() == nil { // nothing follows the end of the stream
				n, params, ok := l.next()
				if !ok {
					break
				}
				if n.uri != "" && !e.resources.mayFollow(ctx, l.view, n.uri) {
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

// newListener decodes the notifications filter of a listen request, within
// the engine's limits, and returns the listener, the filter and the
// acknowledged notifications (the extensions' topics are acknowledged by
// acceptTopics).
func (e *Engine) newListener(id jsontext.Value, filter jsontext.Value) (*listener, listenFilter, map[string]any, *rpcError) {
	if filter == nil || filter.Kind() != '{' {
		return nil, listenFilter{}, nil, newRPCError(id, domain.CodeInvalidParams, "Invalid params: notifications is required and must be an object", nil)
	}
	f, rerr := e.decodeFilter(id, filter)
	if rerr != nil {
		return nil, listenFilter{}, nil, rerr
	}
	l := &listener{wake: make(chan struct{}, 1)}
	l.kinds[listenTools] = f.toolsListChanged
	l.kinds[listenPrompts] = f.promptsListChanged && e.prompts.registry != nil
	l.kinds[listenResources] = f.resourcesListChanged && e.resources.registry != nil
	uris := f.resourceSubscriptions
	if e.resources.registry != nil && len(uris) > 0 {
		l.uris = make(map[string]struct{}, len(uris))
		for _, u := range uris {
			l.uris[u] = struct{}{}
		}
	}
	acked := map[string]any{}
	if l.kinds[listenTools] {
		acked["toolsListChanged"] = true
	}
	if l.kinds[listenPrompts] {
		acked["promptsListChanged"] = true
	}
	if l.kinds[listenResources] {
		acked["resourcesListChanged"] = true
	}
	if l.uris != nil {
		acked["resourceSubscriptions"] = uris
	}
	return l, f, acked, nil
}

// followable keeps, of the URIs a listen stream asks to follow
// (resourceSubscriptions), those its caller may follow, by the rule of
// resources/subscribe (mayFollow). A URI the server cannot read (unknown)
// and one hidden from the caller (Visibility, HideUnauthorized) are left
// out of the acknowledgement, which lists what the server honors, alike.
// A resource or template whose scopes ([WithScopes]) the caller lacks
// refuses the request, as subscribe does, with [CodeInsufficientScope]:
// data names every scope the refused URIs need and, in "uris", those URIs
// (over HTTP a 403 whose challenge names the scopes: step-up).
func (e *Engine) followable(ctx context.Context, id jsontext.Value, l *listener, acked map[string]any) *rpcError {
	uris, _ := acked["resourceSubscriptions"].([]string)
	if len(uris) == 0 {
		return nil
	}
	viewer := func() *Viewer { return l.view }
	kept := make([]string, 0, len(uris))
	var refused, need []string
	for _, u := range uris {
		_, _, _, scopes, ok := e.resources.resolve(ctx, u, viewer)
		switch {
		case !ok:
			delete(l.uris, u)
		case !viewerHolds(l.view, scopes):
			refused = append(refused, u)
			for _, sc := range scopes {
				if !slices.Contains(need, sc) {
					need = append(need, sc)
				}
			}
		default:
			kept = append(kept, u)
		}
	}
	if refused != nil {
		return insufficientScope(id, need, viewerScopes(l.view), map[string]any{"uris": refused})
	}
	if len(kept) == 0 {
		l.uris = nil
		delete(acked, "resourceSubscriptions")
		return nil
	}
	acked["resourceSubscriptions"] = kept
	return nil
}

// acceptTopics asks each extension whose topic the listen request names
// which of its ids the stream may listen to, and records and acknowledges
// those. An extension's protocol error refuses the request.
func (e *Engine) acceptTopics(ctx context.Context, s *session, m message, p *wireParams, ci callInfo, l *listener, f listenFilter, acked map[string]any) *rpcError {
	if len(f.topics) == 0 {
		return nil
	}
	req := newRequest(ctx, s, m, p, ci)
	for name, ids := range f.topics {
		t := e.topics[name]
		accepted := ids
		if t.Accept != nil {
			var err error
			if accepted, err = t.Accept(ctx, req, slices.Clone(ids)); err != nil {
				var pe *domain.ProtocolError
				if errors.As(err, &pe) {
					return &rpcError{id: m.id, err: pe}
				}
				e.logf(ctx, ports.LevelError, "hexmcp: an extension refused a listen topic", ports.F("topic", name), ports.F("error", err))
				return newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
			}
		}
		set := make(map[string]struct{}, len(accepted))
		list := make([]string, 0, len(accepted))
		for _, id := range accepted {
			if _, dup := set[id]; !dup && slices.Contains(ids, id) {
				set[id] = struct{}{}
				list = append(list, id)
			}
		}
		if l.topics == nil {
			l.topics = make(map[string]map[string]struct{})
		}
		l.topics[name] = set
		acked[name] = list
	}
	return nil
}

// decodeFilter decodes the notifications object in one pass over it,
// without copying it: unknown members are skipped, and
// resourceSubscriptions is read URI by URI, within the limits.
func (e *Engine) decodeFilter(id, filter jsontext.Value) (listenFilter, *rpcError) {
	var f listenFilter
	invalid := func(what string) *rpcError {
		return newRPCError(id, domain.CodeInvalidParams, "Invalid params: notifications"+what, nil)
	}
	// A bytes.Buffer is read in place: values read alias filter.
	dec := jsontext.NewDecoder(bytes.NewBuffer(filter))
	if _, err := dec.ReadToken(); err != nil {
		return f, invalid(" is required and must be an object")
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return f, invalid(" is malformed")
		}
		var flag *bool
		name := tok.String()
		switch name {
		case "toolsListChanged":
			flag = &f.toolsListChanged
		case "promptsListChanged":
			flag = &f.promptsListChanged
		case "resourcesListChanged":
			flag = &f.resourcesListChanged
		case "resourceSubscriptions":
			var rerr *rpcError
			if f.resourceSubscriptions, rerr = e.decodeSubscriptions(id, dec); rerr != nil {
				return f, rerr
			}
			continue
		default:
			if _, ok := e.topics[name]; ok {
				ids, rerr := e.decodeIDs(id, dec, name)
				if rerr != nil {
					return f, rerr
				}
				if ids != nil {
					if f.topics == nil {
						f.topics = make(map[string][]string)
					}
					f.topics[name] = ids
				}
				continue
			}
			if err := dec.SkipValue(); err != nil {
				return f, invalid(" is malformed")
			}
			continue
		}
		switch tok, err := dec.ReadToken(); {
		case err != nil:
			return f, invalid(" is malformed")
		case tok.Kind() == 't':
			*flag = true
		case tok.Kind() == 'f', tok.Kind() == 'n':
			*flag = false
		default:
			return f, invalid("." + name + " must be a boolean")
		}
	}
	return f, nil
}

// decodeSubscriptions reads resourceSubscriptions (null: none) from dec
// and refuses, with -32602 naming the limit, more URIs than
// Options.MaxListenSubscriptions or a URI longer than Options.MaxURILength
// (in bytes). It stops at the first URI too many or too long, so a huge
// list costs no more memory than an allowed one.
func (e *Engine) decodeSubscriptions(id jsontext.Value, dec *jsontext.Decoder) ([]string, *rpcError) {
	return e.decodeIDs(id, dec, "resourceSubscriptions")
}

// decodeIDs reads the array of strings notifications.<name> (null: none;
// an extension's topic, or resourceSubscriptions) within the same limits:
// Options.MaxListenSubscriptions entries of Options.MaxURILength bytes.
func (e *Engine) decodeIDs(id jsontext.Value, dec *jsontext.Decoder, name string) ([]string, *rpcError) {
	notArray := newRPCError(id, domain.CodeInvalidParams, "Invalid params: notifications."+name+" must be an array of strings", nil)
	noun, one := "ids", "id"
	if name == "resourceSubscriptions" {
		noun, one = "URIs", "URI"
	}
	switch dec.PeekKind() {
	case 'n':
		if _, err := dec.ReadToken(); err != nil {
			return nil, notArray
		}
		return nil, nil
	case '[':
	default:
		return nil, notArray
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, notArray
	}
	maxN, maxLen := e.opts.MaxListenSubscriptions, e.opts.MaxURILength
	var out []string
	for dec.PeekKind() != ']' {
		if maxN >= 0 && len(out) >= maxN {
			return nil, newRPCError(id, domain.CodeInvalidParams,
				"Invalid params: notifications."+name+" lists more than "+strconv.Itoa(maxN)+" "+noun+", the most one listen stream may subscribe to",
				map[string]any{"limit": "maxListenSubscriptions", "max": maxN})
		}
		if dec.PeekKind() != '"' {
			return nil, notArray
		}
		val, err := dec.ReadValue()
		if err != nil {
			return nil, notArray
		}
		// An escape stands for at least one byte in at most six: a string
		// that long on the wire is too long decoded, whatever it holds.
		tooLong := maxLen >= 0 && len(val)-2 > 6*maxLen
		var u string
		if !tooLong {
			u = unquote(val)
			tooLong = maxLen >= 0 && len(u) > maxLen
		}
		if tooLong {
			return nil, newRPCError(id, domain.CodeInvalidParams,
				"Invalid params: notifications."+name+"["+strconv.Itoa(len(out))+"] is longer than "+strconv.Itoa(maxLen)+" bytes, the longest "+one+" this server accepts",
				map[string]any{"limit": "maxURILength", "max": maxLen})
		}
		out = append(out, u)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, notArray
	}
	return out, nil
}

// addListener registers l, unless a cap on open streams is reached.
func (e *Engine) addListener(id jsontext.Value, l *listener) *rpcError {
	e.mu.Lock()
	defer e.mu.Unlock()
	if max := e.opts.MaxListeners; max >= 0 && len(e.listeners) >= max {
		return newRPCError(id, CodeListenLimit,
			"Too many listen streams: the server has "+strconv.Itoa(max)+" open, its limit; listen again later",
			map[string]any{"limit": "maxListeners", "max": max})
	}
	if max := e.opts.MaxListenersPerClient; max >= 0 && e.listenClients[l.client] >= max {
		return newRPCError(id, CodeListenLimit,
			"Too many listen streams: this client has "+strconv.Itoa(max)+" open, the limit per client; end one before listening again",
			map[string]any{"limit": "maxListenersPerClient", "max": max})
	}
	if e.listeners == nil {
		e.listeners = make(map[*listener]struct{})
		e.listenClients = make(map[listenClient]int)
	}
	e.listeners[l] = struct{}{}
	e.listenClients[l.client]++
	return nil
}

func (e *Engine) removeListener(l *listener) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.listeners, l)
	if n := e.listenClients[l.client] - 1; n > 0 {
		e.listenClients[l.client] = n
	} else {
		delete(e.listenClients, l.client)
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

// listenComplete encodes the completion result that answers a listen
// request the server ends (2026-07-28, "Graceful Closure"): resultType
// "complete" and, like every message of the stream, the subscription id in
// _meta, next to the serverInfo of every stateless result.
func (e *Engine) listenComplete(id jsontext.Value, rev string) ([]byte, *rpcError) {
	meta := e.res.meta(domain.Revision(rev))
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

// notifyResourceListeners queues notifications/resources/updated for the
// listen streams subscribed to uri whose caller may follow it now
// (mayFollow: visibility and scopes are decided at delivery too) and
// reports how many there were. It never waits for a stream.
func (e *Engine) notifyResourceListeners(uri string) int {
	e.mu.Lock()
	var targets []*listener
	for l := range e.listeners {
		if _, ok := l.uris[uri]; ok {
			targets = append(targets, l)
		}
	}
	e.mu.Unlock()
	told := 0
	for _, l := range targets {
		if !e.resources.mayFollow(context.Background(), l.view, uri) {
			continue
		}
		l.push(notice{method: "notifications/resources/updated", uri: uri}, nil)
		told++
	}
	return told
}

// topicNotice is the Data of a ports.NoticeTopic: an extension's
// notification for the listen streams that listed ID under Topic.
type topicNotice struct {
	Topic  string         `json:"t"`
	ID     string         `json:"i"`
	Method string         `json:"m"`
	Params jsontext.Value `json:"p"`
}

// NotifyTopic sends the notification method, with params (a JSON object),
// to every listen stream, on every instance (Options.Bus), that listed id
// under an extension's topic ([ListenTopic]): the tasks extension tells
// the streams that listen to a task's id of its new status
// (notifications/tasks). Each stream's copy carries its subscription id in
// params._meta. A stream that has not written the previous notification
// of the same topic and id yet gets only the newest. It returns how many
// streams of this instance were told.
func (e *Engine) NotifyTopic(topic, id, method string, params []byte) (int, error) {
	if _, ok := e.topics[topic]; !ok {
		return 0, fmt.Errorf("hexmcp: no extension serves the listen topic %q", topic)
	}
	if v := jsontext.Value(params); v.Kind() != '{' || !v.IsValid() {
		return 0, errors.New("hexmcp: NotifyTopic: params must be a JSON object")
	}
	data, err := json.Marshal(topicNotice{Topic: topic, ID: id, Method: method, Params: bytes.Clone(params)})
	if err != nil {
		return 0, fmt.Errorf("hexmcp: NotifyTopic: %w", err)
	}
	return e.raise(ports.Notice{Kind: ports.NoticeTopic, Data: data}), nil
}

// deliverTopic queues a topic notice for the listen streams held here.
func (e *Engine) deliverTopic(data []byte) int {
	var n topicNotice
	if json.Unmarshal(data, &n) != nil || n.Params.Kind() != '{' {
		return 0
	}
	e.mu.Lock()
	var targets []*listener
	for l := range e.listeners {
		if _, ok := l.topics[n.Topic][n.ID]; ok {
			targets = append(targets, l)
		}
	}
	e.mu.Unlock()
	for _, l := range targets {
		l.push(notice{method: n.Method, topic: n.Topic, id: n.ID}, n.Params)
	}
	return len(targets)
}

// encodeTopicNotice encodes an extension's notification of a listen
// stream: its params with the subscription id added to their _meta.
func encodeTopicNotice(id jsontext.Value, method string, params []byte) []byte {
	var members map[string]jsontext.Value
	if json.Unmarshal(params, &members) != nil {
		return nil
	}
	meta := map[string]any{}
	if m, ok := members["_meta"]; ok {
		var own map[string]jsontext.Value
		if json.Unmarshal(m, &own) == nil {
			for k, v := range own {
				meta[k] = v
			}
		}
	}
	meta[metaSubscriptionID] = id
	out := make(map[string]any, len(members)+1)
	for k, v := range members {
		out[k] = v
	}
	out["_meta"] = meta
	msg, err := encodeNotification(method, out)
	if err != nil {
		return nil
	}
	return msg
}
