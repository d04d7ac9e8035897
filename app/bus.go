package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of the bounds on what the engine forwards to the other
// instances over Options.Bus.
const (
	// DefaultMaxForwardsPerMessage is the default of
	// [Options.MaxForwardsPerMessage]: 16 client responses and
	// cancellations forwarded per message (a batch counts as one).
	DefaultMaxForwardsPerMessage = 16
	// DefaultMaxForwardsPerClient is the default of
	// [Options.MaxForwardsPerClient]: 64 forwarded per client per second.
	DefaultMaxForwardsPerClient = 64
)

// Defaults of the queue of notices waiting for Options.Bus.
const (
	// DefaultMaxBusQueue is the default of [Options.MaxBusQueue]: 1,024
	// notices waiting to be published.
	DefaultMaxBusQueue = 1_024
	// DefaultMaxBusQueueBytes is the default of
	// [Options.MaxBusQueueBytes]: 16 MiB of notices waiting to be
	// published.
	DefaultMaxBusQueueBytes = 16 << 20
	// minBusQueueBytes is the least MaxBusQueueBytes: one notice
	// carrying a client's response of 4 MiB (the largest message the
	// transports take by default).
	minBusQueueBytes = 4<<20 + 1<<10
)

// instanceBytes is the length of an engine's random instance name, in
// bytes (twice as many hex digits).
const instanceBytes = 8

// startBus subscribes the engine to Options.Bus, as its instance (a bus
// that can address notices then carries those addressed to it only to
// it).
func (e *Engine) startBus() {
	if e.opts.Bus == nil {
		return
	}
	e.instance = randomHex(instanceBytes)
	e.pub = newPublisher(e)
	var unsubscribe func()
	if ab, ok := e.opts.Bus.(ports.AddressedBus); ok {
		unsubscribe = ab.SubscribeAs(e.instance, e.onNotice)
	} else {
		unsubscribe = e.opts.Bus.Subscribe(e.onNotice)
	}
	var once sync.Once
	e.stopBus = func() {
		once.Do(func() {
			unsubscribe()
			e.pub.close()
		})
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// raise serves a notice raised here: it is delivered to the sessions and
// listen streams held here at once, then published to the other
// instances (Options.Bus). It returns what delivery returns (the number of
// sessions and streams told, for a resource update).
func (e *Engine) raise(n ports.Notice) int {
	if e.opts.Bus != nil {
		n.ID, n.Origin = randomHex(16), e.instance
	}
	told := e.deliver(n)
	e.publish(n)
	return told
}

// publish queues n for the bus (see publisher): the caller never waits on
// it.
func (e *Engine) publish(n ports.Notice) {
	if e.pub != nil {
		e.pub.enqueue(n)
	}
}

// DroppedNotices returns how many notices the engine raised were not
// published to the other instances because the queue for the bus was full
// ([Options.MaxBusQueue], [Options.MaxBusQueueBytes]).
func (e *Engine) DroppedNotices() uint64 {
	if e.pub == nil {
		return 0
	}
	return e.pub.dropped.Load()
}

// publisher feeds Options.Bus from one goroutine, in the order notices
// were raised, so that nothing the engine does (a registration, a resource
// update, a client's response) waits on the bus: a bus that is down or
// hangs costs a bounded queue and a few log lines. A notice that only
// says "look again" (a list change, a visibility change, the update of
// one resource) is not queued while the same one waits, unsent: the one
// waiting tells the same once published.
type publisher struct {
	e      *Engine
	ctx    context.Context // cancelled by close: a Publish in flight ends
	cancel context.CancelFunc
	wake   chan struct{} // holds one value when the queue may be non-empty
	done   chan struct{} // closed when run returned

	mu       sync.Mutex
	queue    []ports.Notice
	bytes    int
	kinds    map[ports.NoticeKind]bool // list changes queued
	uris     map[string]bool           // resource updates queued
	closed   bool
	failures uint64 // Publish failures in a row (run's goroutine only)
	dropped  atomic.Uint64
}

func newPublisher(e *Engine) *publisher {
	p := &publisher{e: e, wake: make(chan struct{}, 1), done: make(chan struct{}),
		kinds: make(map[ports.NoticeKind]bool), uris: make(map[string]bool)}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	go p.run()
	return p
}

// coalescing reports whether n, queued, makes another of its kind
// redundant (a list change: the lists are read again either way).
func coalescing(n ports.Notice) bool {
	switch n.Kind {
	case ports.NoticeToolsChanged, ports.NoticeResourcesChanged, ports.NoticePromptsChanged, ports.NoticeVisibilityChanged:
		return n.To == ""
	}
	return false
}

// updating reports whether n is the update of a resource (queued once per
// URI).
func updating(n ports.Notice) bool { return n.Kind == ports.NoticeResourceUpdated && n.To == "" }

func noticeSize(n ports.Notice) int {
	return len(n.Kind) + len(n.ID) + len(n.Origin) + len(n.To) + len(n.URI) + len(n.Session) + len(n.Data)
}

// enqueue queues n, unless the same waits already or the queue is full.
func (p *publisher) enqueue(n ports.Notice) {
	size := noticeSize(n)
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		return
	case coalescing(n) && p.kinds[n.Kind], updating(n) && p.uris[n.URI]:
		p.mu.Unlock()
		return
	case !within(len(p.queue)+1, p.e.opts.MaxBusQueue) || !within(p.bytes+size, p.e.opts.MaxBusQueueBytes):
		p.mu.Unlock()
		if k := p.dropped.Add(1); bits.OnesCount64(k) == 1 {
			p.e.logf(context.Background(), ports.LevelWarn, "hexmcp: the queue of notices for the other instances is full (the bus is slow or down); a notice is dropped: their sessions miss it",
				ports.F("kind", string(n.Kind)), ports.F("max_bus_queue", p.e.opts.MaxBusQueue), ports.F("max_bus_queue_bytes", p.e.opts.MaxBusQueueBytes),
				ports.F("dropped_total", k))
		}
		return
	}
	if coalescing(n) {
		p.kinds[n.Kind] = true
	} else if updating(n) {
		p.uris[n.URI] = true
	}
	p.queue = append(p.queue, n)
	p.bytes += size
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// next takes the oldest queued notice.
func (p *publisher) next() (ports.Notice, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 || p.closed {
		return ports.Notice{}, false
	}
	n := p.queue[0]
	p.queue[0] = ports.Notice{}
	p.queue = p.queue[1:]
	if len(p.queue) == 0 {
		p.queue = nil // the array a burst grew is released
	}
	p.bytes -= noticeSize(n)
	if coalescing(n) {
		delete(p.kinds, n.Kind)
	} else if updating(n) {
		delete(p.uris, n.URI)
	}
	return n, true
}

func (p *publisher) run() {
	defer close(p.done)
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-p.wake:
		}
		for {
			n, ok := p.next()
			if !ok {
				break
			}
			p.send(n)
		}
	}
}

// send publishes n. A failure is logged at the 1st, 2nd, 4th, 8th...
// failure in a row (the instances that missed a notice have no way to
// learn of it: the bus delivers at most once), and the first success
// after failures says so.
func (p *publisher) send(n ports.Notice) {
	err := p.e.opts.Bus.Publish(p.ctx, n)
	if p.ctx.Err() != nil {
		return // closing
	}
	if err == nil {
		if p.failures > 0 {
			p.e.logf(p.ctx, ports.LevelInfo, "hexmcp: publishing notices to the other instances works again",
				ports.F("failed_before", p.failures))
			p.failures = 0
		}
		return
	}
	p.failures++
	if bits.OnesCount64(p.failures) == 1 {
		p.e.logf(p.ctx, ports.LevelWarn, "hexmcp: publishing a notice to the other instances failed; their sessions miss it",
			ports.F("kind", string(n.Kind)), ports.F("error", err), ports.F("failures_in_a_row", p.failures))
	}
}

// close stops the goroutine (a Publish in flight is cancelled) and drops
// what is still queued.
func (p *publisher) close() {
	p.mu.Lock()
	p.closed = true
	p.queue, p.bytes = nil, 0
	p.mu.Unlock()
	p.cancel()
	<-p.done
}

// onNotice serves a notice from the bus. The engine's own were delivered
// when they were raised; one addressed to another instance is not its
// own (a bus that cannot address notices hands it to everyone).
func (e *Engine) onNotice(n ports.Notice) {
	if n.Origin == e.instance || n.To != "" && n.To != e.instance {
		return
	}
	e.deliver(n)
}

// deliver serves a notice on the sessions and listen streams held here.
// Notifications to sessions carry the notice's ID as key, so that a session
// held by several instances gets each once.
func (e *Engine) deliver(n ports.Notice) int {
	switch n.Kind {
	case ports.NoticeToolsChanged:
		e.tools.cache.invalidate()
		e.listChanged(listenTools, "notifications/tools/list_changed", (*session).wantsListChanged, n.ID)
	case ports.NoticeResourcesChanged:
		e.resources.cache.Clear()
		e.listChanged(listenResources, "notifications/resources/list_changed", (*session).wantsResourceListChanged, n.ID)
	case ports.NoticePromptsChanged:
		e.prompts.cache.Clear()
		e.listChanged(listenPrompts, "notifications/prompts/list_changed", (*session).wantsPromptListChanged, n.ID)
	case ports.NoticeVisibilityChanged:
		e.visibilityChanged(n.ID)
	case ports.NoticeResourceUpdated:
		return e.resourceUpdated(n.URI, n.ID)
	case ports.NoticeClientResponse:
		e.remoteResponse(n)
	case ports.NoticeClientCancel:
		e.remoteCancel(n)
	case ports.NoticeTopic:
		return e.listen.deliverTopic(n.Data)
	case ports.NoticeElicitationComplete:
		return e.elicitationComplete(n)
	}
	return 0
}

// NotifyElicitationComplete tells the client of the handshake-era session
// sessionID ([RequestContext.SessionID]) that the out-of-band interaction
// of its URL-mode elicitation elicitationID ended
// (notifications/elicitation/complete, 2025-11-25 on), so that it may
// retry at once. It serves the case where the interaction ends somewhere
// else than in the request (an OAuth callback reaching any instance): with
// [Options.Bus], every instance holding the session is told, and a session
// stream shared by several gets it once. It reports how many sessions were
// told here. Within the request, [RequestContext.NotifyElicitationComplete]
// does the same.
func (e *Engine) NotifyElicitationComplete(sessionID, elicitationID string) int {
	if sessionID == "" {
		return 0
	}
	return e.raise(ports.Notice{Kind: ports.NoticeElicitationComplete, Session: sessionID, URI: elicitationID})
}

// elicitationComplete delivers a NoticeElicitationComplete to the session
// it names, if held here and its revision has URL-mode elicitation.
func (e *Engine) elicitationComplete(n ports.Notice) int {
	msg, err := encodeNotification("notifications/elicitation/complete", map[string]string{"elicitationId": n.URI})
	if err != nil {
		return 0
	}
	told := 0
	for _, s := range e.sessions.list() {
		s.mu.Lock()
		ok := s.id == n.Session && s.initialized && e.policy.Features(s.rev).ElicitationURL
		s.mu.Unlock()
		if ok && s.write(msg, n.ID) {
			told++
		}
	}
	return told
}

// forwardResponse publishes a client's response that answers no request
// of this instance, for the instance whose request it answers (the
// client's requests of one session may reach any instance): only when
// its id names another instance ("<instance>-<n>", see outbound), to that
// instance alone, and within the forwarding bounds. It reports false for
// a response that can match nowhere (its id names no instance, or this
// one).
func (e *Engine) forwardResponse(ctx context.Context, s *session, m message) bool {
	if e.opts.Bus == nil || s == nil {
		return false
	}
	to, ok := requestOrigin(m.id)
	if !ok || to == e.instance {
		return false
	}
	sid, peer, _ := s.forwardInfo()
	if sid == "" {
		return false
	}
	if !e.mayForward(ctx, ports.NoticeClientResponse, sid, peer) {
		return true
	}
	msg := make([]byte, 0, len(m.id)+len(m.payload)+40)
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = append(msg, m.id...)
	if m.isError {
		msg = append(msg, `,"error":`...)
	} else {
		msg = append(msg, `,"result":`...)
	}
	msg = append(msg, m.payload...)
	msg = append(msg, '}')
	e.publish(ports.Notice{Kind: ports.NoticeClientResponse, ID: randomHex(16), Origin: e.instance, To: to, Session: sid, Data: msg})
	return true
}

// remoteResponse hands a response forwarded by another instance to the
// request of the session held here that waits for it, if any: only a
// response to a request of this instance.
func (e *Engine) remoteResponse(n ports.Notice) {
	m, rerr := decodeMessage(n.Data)
	if rerr != nil || !m.isResponse || n.Session == "" {
		return
	}
	if origin, ok := requestOrigin(m.id); !ok || origin != e.instance {
		return
	}
	for _, s := range e.sessions.list() {
		if s.sessionID() == n.Session && s.out.deliver(m) {
			return
		}
	}
}

// forwardCancel publishes a client's cancellation of a request that is
// not in flight here, for the instance serving it: only the cancellation
// of a request id (a string or a number, of at most 1,024 bytes) of an
// initialized session, and within the forwarding bounds.
func (e *Engine) forwardCancel(ctx context.Context, s *session, id jsontext.Value) {
	if e.opts.Bus == nil || s == nil || len(id) > 1024 {
		return
	}
	if k := id.Kind(); k != '"' && k != '0' {
		return
	}
	sid, peer, initialized := s.forwardInfo()
	if sid == "" || !initialized || !e.mayForward(ctx, ports.NoticeClientCancel, sid, peer) {
		return
	}
	e.publish(ports.Notice{Kind: ports.NoticeClientCancel, ID: randomHex(16), Origin: e.instance, Session: sid, Data: canonicalID(id)})
}

// remoteCancel cancels the request a cancellation forwarded by another
// instance names, if a session held here serves it.
func (e *Engine) remoteCancel(n ports.Notice) {
	if n.Session == "" || len(n.Data) == 0 {
		return
	}
	for _, s := range e.sessions.list() {
		if s.sessionID() == n.Session && s.cancelRequest(jsontext.Value(n.Data)) {
			return
		}
	}
}

// requestOrigin returns the instance a server request id names: the ids
// of an engine with a bus are strings "<instance>-<n>" (see outbound),
// the instance being 16 lowercase hex digits and n decimal digits.
func requestOrigin(id jsontext.Value) (string, bool) {
	const name = 2 * instanceBytes
	if len(id) < name+4 || len(id) > name+23 || id[0] != '"' || id[len(id)-1] != '"' || id[name+1] != '-' {
		return "", false
	}
	for _, c := range id[1 : name+1] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	for _, c := range id[name+2 : len(id)-1] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return string(id[1 : name+1]), true
}

// forwardBudget is what one message of a client may still forward
// (Options.MaxForwardsPerMessage), carried by the context of its
// members.
type forwardBudget struct{ left atomic.Int64 }

type forwardBudgetKey struct{}

// withForwardBudget gives the members of one message (a batch) served
// with the returned context one budget of Options.MaxForwardsPerMessage.
func (e *Engine) withForwardBudget(ctx context.Context) context.Context {
	if e.opts.Bus == nil || e.opts.MaxForwardsPerMessage < 0 {
		return ctx
	}
	b := &forwardBudget{}
	b.left.Store(int64(e.opts.MaxForwardsPerMessage))
	return context.WithValue(ctx, forwardBudgetKey{}, b)
}

// forwardGate counts what each client forwarded in the current second
// (Options.MaxForwardsPerClient), and what was dropped.
type forwardGate struct {
	mu      sync.Mutex
	second  int64
	counts  map[string]int // forwards of each client in second
	dropped atomic.Uint64
}

// allow counts one forward of client at now, unless it already made
// limit of them this second (a negative limit: no bound).
func (g *forwardGate) allow(client string, limit int, now time.Time) bool {
	if limit < 0 {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if sec := now.Unix(); sec != g.second || g.counts == nil {
		g.second, g.counts = sec, make(map[string]int) // the last second's counts are dropped
	}
	if g.counts[client] >= limit {
		return false
	}
	g.counts[client]++
	return true
}

// mayForward takes one forward of the session sid of client peer from
// the message's budget and the client's: when either is spent, it counts
// and logs the drop (a warning at the 1st, 2nd, 4th, 8th... drop, so that
// a flood does not flood the log) and reports false.
func (e *Engine) mayForward(ctx context.Context, kind ports.NoticeKind, sid, peer string) bool {
	bound := ""
	if b, ok := ctx.Value(forwardBudgetKey{}).(*forwardBudget); ok && b.left.Add(-1) < 0 {
		bound = "MaxForwardsPerMessage"
	} else if !e.fwd.allow(cmp.Or(peer, "session:"+sid), e.opts.MaxForwardsPerClient, e.opts.Clock.Now()) {
		bound = "MaxForwardsPerClient"
	}
	if bound == "" {
		return true
	}
	if k := e.fwd.dropped.Add(1); bits.OnesCount64(k) == 1 {
		e.logf(ctx, ports.LevelWarn, "hexmcp: a client's responses and cancellations past a bound are not forwarded to the other instances",
			ports.F("kind", string(kind)), ports.F("bound", bound), ports.F("client", peer), ports.F("session", sid),
			ports.F("max_per_message", e.opts.MaxForwardsPerMessage), ports.F("max_per_client_per_second", e.opts.MaxForwardsPerClient),
			ports.F("dropped_total", k))
	}
	return false
}

// DroppedForwards returns how many client responses and cancellations
// the engine did not forward to the other instances because a bound
// ([Options.MaxForwardsPerMessage], [Options.MaxForwardsPerClient]) was
// reached.
func (e *Engine) DroppedForwards() uint64 { return e.fwd.dropped.Load() }

// forwardInfo returns what forwarding needs of the session: its id ("" for
// a connection's session), its client (Peer) and whether it is
// initialized.
func (s *session) forwardInfo() (sid, peer string, initialized bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id, s.peer, s.initialized
}

// sessionID is the session's id ("" for a connection's session).
func (s *session) sessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}
