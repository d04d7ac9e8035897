package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of the queue of notices waiting for Options.Bus.
const (
	// defaultMaxBusQueue is the default of [Options.MaxBusQueue]: 1,024
	// notices waiting to be published.
	defaultMaxBusQueue = 1_024
	// defaultMaxBusQueueBytes is the default of
	// [Options.MaxBusQueueBytes]: 16 MiB of notices waiting to be
	// published.
	defaultMaxBusQueueBytes = 16 << 20
	// minBusQueueBytes is the least MaxBusQueueBytes: one notice
	// carrying a client's response of 4 MiB (the largest message the
	// transports take by default).
	minBusQueueBytes = 4<<20 + 1<<10
)

// instanceBytes is the length of an engine's random instance name, in
// bytes (twice as many hex digits).
const instanceBytes = 8

// noticeBus raises the engine's notices (list changes, resource updates,
// a client's response or cancellation for another instance, ...): it
// delivers each here at once (deliver) and publishes it to the other
// instances over Options.Bus, through a bounded queue fed by one
// goroutine, and delivers here what the others publish.
type noticeBus struct {
	bus ports.NotificationBus // nil: one instance, nothing shared
	// instance names this engine on bus (empty without one).
	instance string
	pub      *publisher
	stop     func() // ends the subscription and the publisher (nil: none)
	// deliver serves a notice on the sessions and streams held here and
	// reports how many were told.
	deliver func(ports.Notice) int
}

// start subscribes the engine to the bus, as its instance (a bus that can
// address notices then carries those addressed to it only to it), and
// starts the publisher, whose queue holds at most maxQueue notices of
// maxBytes bytes in all.
func (b *noticeBus) start(maxQueue, maxBytes int, log ports.Logger) {
	if b.bus == nil {
		return
	}
	b.instance = randomHex(instanceBytes)
	b.pub = newPublisher(b.bus, maxQueue, maxBytes, log)
	var unsubscribe func()
	if ab, ok := b.bus.(ports.AddressedBus); ok {
		unsubscribe = ab.SubscribeAs(b.instance, b.onNotice)
	} else {
		unsubscribe = b.bus.Subscribe(b.onNotice)
	}
	var once sync.Once
	b.stop = func() {
		once.Do(func() {
			unsubscribe()
			b.pub.close()
		})
	}
}

// close ends the subscription and the publisher.
func (b *noticeBus) close() {
	if b.stop != nil {
		b.stop()
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
func (b *noticeBus) raise(n ports.Notice) int {
	if b.bus != nil {
		n.ID, n.Origin = randomHex(16), b.instance
	}
	told := b.deliver(n)
	b.publish(n)
	return told
}

// publish queues n for the bus (see publisher): the caller never waits on
// it.
func (b *noticeBus) publish(n ports.Notice) {
	if b.pub != nil {
		b.pub.enqueue(n)
	}
}

// DroppedNotices returns how many notices the engine raised were not
// published to the other instances because the queue for the bus was full
// ([Options.MaxBusQueue], [Options.MaxBusQueueBytes]).
func (e *Engine) DroppedNotices() uint64 {
	if e.bus.pub == nil {
		return 0
	}
	return e.bus.pub.dropped.Load()
}

// publisher feeds Options.Bus from one goroutine, in the order notices
// were raised, so that nothing the engine does (a registration, a resource
// update, a client's response) waits on the bus: a bus that is down or
// hangs costs a bounded queue and a few log lines. A notice that only
// says "look again" (a list change, a visibility change, the update of
// one resource) is not queued while the same one waits, unsent: the one
// waiting tells the same once published.
type publisher struct {
	bus      ports.NotificationBus
	maxQueue int // Options.MaxBusQueue
	maxBytes int // Options.MaxBusQueueBytes
	log      ports.Logger

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

func newPublisher(bus ports.NotificationBus, maxQueue, maxBytes int, log ports.Logger) *publisher {
	p := &publisher{bus: bus, maxQueue: maxQueue, maxBytes: maxBytes, log: log, wake: make(chan struct{}, 1), done: make(chan struct{}),
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
	case !within(len(p.queue)+1, p.maxQueue) || !within(p.bytes+size, p.maxBytes):
		p.mu.Unlock()
		if k := p.dropped.Add(1); bits.OnesCount64(k) == 1 {
			logf(p.log, context.Background(), slog.LevelWarn, "hexmcp: the queue of notices for the other instances is full (the bus is slow or down); a notice is dropped: their sessions miss it",
				slog.Any("kind", string(n.Kind)), slog.Any("max_bus_queue", p.maxQueue), slog.Any("max_bus_queue_bytes", p.maxBytes),
				slog.Any("dropped_total", k))
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
	err := p.bus.Publish(p.ctx, n)
	if p.ctx.Err() != nil {
		return // closing
	}
	if err == nil {
		if p.failures > 0 {
			logf(p.log, p.ctx, slog.LevelInfo, "hexmcp: publishing notices to the other instances works again",
				slog.Any("failed_before", p.failures))
			p.failures = 0
		}
		return
	}
	p.failures++
	if bits.OnesCount64(p.failures) == 1 {
		logf(p.log, p.ctx, slog.LevelWarn, "hexmcp: publishing a notice to the other instances failed; their sessions miss it",
			slog.Any("kind", string(n.Kind)), slog.Any("error", err), slog.Any("failures_in_a_row", p.failures))
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
func (b *noticeBus) onNotice(n ports.Notice) {
	if n.Origin == b.instance || n.To != "" && n.To != b.instance {
		return
	}
	b.deliver(n)
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
	return e.bus.raise(ports.Notice{Kind: ports.NoticeElicitationComplete, Session: sessionID, URI: elicitationID})
}
