package memstore

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// BusOptions configures [NewBus]. Zero (or negative) fields take their
// defaults: no field turns a bound off.
type BusOptions struct {
	// MaxNoticeBytes bounds one notice (the lengths of its fields together); Publish
	// refuses a larger one with an error wrapping
	// [ports.ErrNoticeTooLarge]. Default 4 MiB.
	MaxNoticeBytes int
	// MaxQueuedNotices bounds the notices waiting for one subscriber
	// (besides the one its function is handling). Default
	// 1,024.
	MaxQueuedNotices int
	// MaxQueuedNoticeBytes bounds the bytes of the notices waiting for one
	// subscriber (besides the one its function is handling); never less
	// than MaxNoticeBytes, so that a notice Publish accepts fits an empty
	// queue. Default 16 MiB.
	MaxQueuedNoticeBytes int
	// Logger gets a warning when a subscriber's queue is full and notices
	// start being dropped for it: one per overflow (the next comes after
	// its queue emptied). Default slog.New(slog.DiscardHandler).
	Logger ports.Logger
}

// Bus is a [ports.NotificationBus] in memory: it carries notices between
// the engines of one process, for a server that runs as several instances
// in one process (tests, or one process serving several listeners).
// Instances share a bus by sharing the value: hand the same *Bus to each
// engine. A single-instance server needs no bus at all.
//
// Publish never blocks: it checks the notice's size (see
// [BusOptions].MaxNoticeBytes), copies its Data once and queues the notice
// for every subscriber. Each subscription has a goroutine of its own that
// calls its function with the queued notices in order, and a bounded
// queue (MaxQueuedNotices, MaxQueuedNoticeBytes): a notice that finds it
// full is dropped for that subscriber (the newest is dropped: the ones
// queued before it are delivered, in order) and counted by
// [Bus.Dropped]. This is the at-most-once delivery of the port: a stuck
// subscriber misses notices, it never holds up a publisher or the other
// subscribers.
//
// A notice addressed to one instance ([ports.Notice].To) is queued only
// for the subscriptions made as that instance ([Bus.SubscribeAs]).
//
// The subscribers of one notice share its Data: they must not modify it.
// A subscription's stop function must not be called from its own
// function (stop waits for that function to return).
//
// Use [NewBus]; the zero value is not ready to use.
type Bus struct {
	maxNotice      int
	maxQueued      int
	maxQueuedBytes int
	logger         ports.Logger

	mu      sync.RWMutex
	subs    map[*busSub]struct{}
	dropped atomic.Uint64
}

var _ ports.AddressedBus = (*Bus)(nil)

// NewBus returns an empty bus.
func NewBus(opts BusOptions) *Bus {
	b := &Bus{
		maxNotice:      portlimits.Positive(opts.MaxNoticeBytes, portlimits.DefaultMaxNoticeBytes),
		maxQueued:      portlimits.Positive(opts.MaxQueuedNotices, portlimits.DefaultMaxQueuedNotices),
		maxQueuedBytes: portlimits.Positive(opts.MaxQueuedNoticeBytes, portlimits.DefaultMaxQueuedNoticeBytes),
		logger:         opts.Logger,
		subs:           make(map[*busSub]struct{}),
	}
	b.maxQueuedBytes = max(b.maxQueuedBytes, b.maxNotice)
	if b.logger == nil {
		b.logger = slog.New(slog.DiscardHandler)
	}
	return b
}

// Publish queues n for every subscriber, the caller's own included (for
// those of the instance n.To only, when it is not empty). It
// refuses, with an error wrapping [ports.ErrNoticeTooLarge], a notice over
// MaxNoticeBytes, and does nothing when ctx is done. It never blocks; the
// caller may reuse n.Data once it returns.
func (b *Bus) Publish(ctx context.Context, n ports.Notice) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hexmcp: memory bus: publishing a notice: %w", err)
	}
	size := portlimits.NoticeSize(n)
	if size > b.maxNotice {
		return fmt.Errorf("hexmcp: memory bus: %w: %d bytes, the bus carries %d", ports.ErrNoticeTooLarge, size, b.maxNotice)
	}
	n.Data = bytes.Clone(n.Data) // nil stays nil, empty stays empty
	var overflowed []*busSub
	b.mu.RLock()
	for s := range b.subs {
		if n.To != "" && s.name != n.To {
			continue
		}
		dropped, first := s.push(n, size, b.maxQueued, b.maxQueuedBytes)
		if dropped {
			b.dropped.Add(1)
		}
		if first {
			overflowed = append(overflowed, s)
		}
	}
	b.mu.RUnlock()
	for range overflowed {
		b.logger.LogAttrs(ctx, slog.LevelWarn, "hexmcp: memory bus: a subscriber's queue is full; notices are dropped for it until it catches up",
			slog.Any("max_queued_notices", b.maxQueued), slog.Any("max_queued_bytes", b.maxQueuedBytes),
			slog.Any("dropped_total", b.dropped.Load()))
	}
	return nil
}

// Subscribe calls fn, from a goroutine of the subscription's own, with
// every notice published from now on, in the order they were published.
// The returned function stops the subscription: fn is not called once it
// returned, and it waits for a running fn to return. It may be called
// more than once, but not from fn.
func (b *Bus) Subscribe(fn func(ports.Notice)) (stop func()) {
	return b.subscribe("", fn)
}

// SubscribeAs is [Bus.Subscribe] for the instance called name: fn also
// gets the notices addressed to name ([ports.Notice].To), and no others.
// An empty name is Subscribe.
func (b *Bus) SubscribeAs(name string, fn func(ports.Notice)) (stop func()) {
	return b.subscribe(name, fn)
}

func (b *Bus) subscribe(name string, fn func(ports.Notice)) (stop func()) {
	s := &busSub{
		name:   name,
		fn:     fn,
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	go s.run()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, s)
			b.mu.Unlock()
			close(s.done)
		})
		<-s.exited
		s.mu.Lock()
		s.ring, s.head, s.n, s.bytes = nil, 0, 0, 0
		s.mu.Unlock()
	}
}

// Dropped returns how many notices were dropped because a subscriber's
// queue was full, counted once for each subscriber that missed one.
func (b *Bus) Dropped() uint64 { return b.dropped.Load() }

// busSub is one subscription: a bounded FIFO queue (a ring that grows up
// to the bound as needed) and the goroutine that drains it.
type busSub struct {
	name   string // the instance it was made for ("": none)
	fn     func(ports.Notice)
	wake   chan struct{} // holds one value when the queue may be non-empty
	done   chan struct{} // closed by stop
	exited chan struct{} // closed when run returned

	mu       sync.Mutex
	ring     []ports.Notice
	head     int  // index of the oldest queued notice
	n        int  // queued notices
	bytes    int  // their sizes (portlimits.NoticeSize) together
	dropping bool // a notice was dropped since the queue was last empty
}

// minRing is the ring's first size, and the largest one kept once the
// queue empties (a larger one, grown by a burst, is released).
const minRing = 16

// push queues n, or drops it when the queue is full; first reports a drop
// that begins an overflow (the first since the queue was last empty).
func (s *busSub) push(n ports.Notice, size, maxQueued, maxBytes int) (dropped, first bool) {
	s.mu.Lock()
	if s.n >= maxQueued || s.bytes+size > maxBytes {
		first = !s.dropping
		s.dropping = true
		s.mu.Unlock()
		return true, first
	}
	if s.n == len(s.ring) {
		grown := make([]ports.Notice, min(max(2*len(s.ring), minRing), maxQueued))
		for i := range s.n {
			grown[i] = s.ring[(s.head+i)%len(s.ring)]
		}
		s.ring, s.head = grown, 0
	}
	s.ring[(s.head+s.n)%len(s.ring)] = n
	s.n++
	s.bytes += size
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return false, false
}

// pop takes the oldest queued notice.
func (s *busSub) pop() (ports.Notice, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 {
		s.dropping = false
		return ports.Notice{}, false
	}
	n := s.ring[s.head]
	s.ring[s.head] = ports.Notice{}
	s.head = (s.head + 1) % len(s.ring)
	s.n--
	s.bytes -= portlimits.NoticeSize(n)
	if s.n == 0 {
		s.dropping = false
		s.head = 0
		if len(s.ring) > minRing {
			s.ring = nil
		}
	}
	return n, true
}

func (s *busSub) run() {
	defer close(s.exited)
	for {
		select {
		case <-s.done:
			return
		case <-s.wake:
		}
		for {
			select {
			case <-s.done:
				return
			default:
			}
			n, ok := s.pop()
			if !ok {
				break
			}
			s.fn(n)
		}
	}
}
