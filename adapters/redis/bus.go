package mcpredis

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp/internal/memstore"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// BusOptions configure [Bus]. Zero (or negative) fields take the
// defaults.
type BusOptions struct {
	// Prefix begins the Redis channel of the bus, "<Prefix>bus" (default
	// "hexmcp:"): the instances of one server use one Prefix.
	Prefix string
	// Timeout bounds each Publish (one round trip), and how long the
	// first Subscribe waits for Redis to confirm the subscription (default
	// 1 second).
	Timeout time.Duration
	// MaxNoticeBytes bounds one notice (the lengths of its fields together): Publish
	// refuses a larger one with an error wrapping
	// [ports.ErrNoticeTooLarge], and a larger one read from the channel
	// is dropped. Default 4 MiB (the
	// largest message the transports accept by default); keep it the same
	// on every instance, and below Redis's client-output-buffer-limit for
	// pubsub (32 MB hard by default).
	MaxNoticeBytes int
	// MaxQueuedNotices bounds the notices waiting for one subscriber of
	// this instance (default 1,024).
	MaxQueuedNotices int
	// MaxQueuedNoticeBytes bounds their bytes, never below MaxNoticeBytes
	// (default 16 MiB).
	MaxQueuedNoticeBytes int
	// Logger gets the bus's warnings: a subscriber whose queue is full,
	// messages on the channel that are no notice, a subscription Redis did
	// not confirm in time, and a link re-established after it was down
	// (notices published meanwhile were missed). Default
	// slog.New(slog.DiscardHandler).
	Logger ports.Logger
}

// Bus is a [ports.NotificationBus] on Redis Pub/Sub: every instance on the
// same Redis and Prefix publishes to, and subscribes to, the channel
// "<Prefix>bus". Make one Bus per instance (per engine).
//
// It is a [ports.AddressedBus]: a notice addressed to one instance
// ([ports.Notice].To) is published to the channel "<Prefix>bus:<To>",
// which only the Bus of an instance that subscribed as To
// ([Bus.SubscribeAs]) subscribes to: the other instances never read it.
//
// Publish is one PUBLISH, bounded by Timeout: with Redis down it fails
// within Timeout, and the instances miss the notice (the port's delivery
// is at most once).
//
// A Bus holds one Pub/Sub connection, shared by all its subscriptions:
// opened by the first Subscribe, closed when the last subscription stops
// and by Close. go-redis re-establishes it after Redis went away (it pings
// it every few seconds) and subscribes again, with a warning; the
// subscriptions then go on receiving, and what was published while it
// was down is lost. One goroutine reads the connection and hands each
// notice to the subscriptions of this Bus through an in-memory bus (the
// one memory.Bus is): each with a goroutine and a bounded queue of its
// own; a notice that finds a subscriber's queue full is dropped for that
// subscriber and counted by [Bus.Dropped]; a slow subscriber never holds
// up the connection, the other subscribers, or Redis (the connection is
// read as fast as Redis writes, so its output buffer for it does not
// grow). On a Redis Cluster (a [redis.ClusterClient]) the bus uses
// sharded Pub/Sub (SPUBLISH, SSUBSCRIBE, Redis 7 or later) on the channel
// "{<Prefix>bus}bus" and its addressed ones "{<Prefix>bus}bus:<To>", one
// slot: a notice goes to the master of that slot and its replicas, not to
// every node, and the Bus's one connection is to that master (after a
// failover, go-redis connects to the new one and subscribes again, as
// after a Redis restart: while the connection is open, the client reloads
// the cluster's layout every 2 seconds, so that it knows the new one).
//
// A notice travels as a small binary frame (a version byte, then each
// field as its varint length and its bytes); a message on the channel
// that is not one, or is over MaxNoticeBytes, is dropped and counted. The subscribers of one notice share its Data: they must not
// modify it. A subscription's stop must not be called from its own
// function.
type Bus struct {
	c       redis.UniversalClient
	opts    BusOptions
	channel string
	local   *memstore.Bus
	closed  atomic.Bool
	bad     atomic.Uint64 // messages that were no notice this bus carries

	mu     sync.Mutex
	subs   map[*busSub]struct{}
	names  map[string]int // the subscriptions of each name (SubscribeAs)
	ps     *redis.PubSub
	reader chan struct{} // closed when the reader of ps returned

	// confirms holds, for each channel whose subscription is awaited, the
	// channel closed when Redis confirms it (by the reader, which never
	// takes mu).
	cmu      sync.Mutex
	confirms map[string]chan struct{}
}

var _ ports.AddressedBus = (*Bus)(nil)

// errBusClosed is the error of Publish after Close.
var errBusClosed = errors.New("hexmcp: mcpredis: the bus is closed")

// NewBus returns the bus of c.
func NewBus(c redis.UniversalClient, opts BusOptions) *Bus {
	opts.Prefix = cmp.Or(opts.Prefix, defaultPrefix)
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	if opts.MaxNoticeBytes <= 0 {
		opts.MaxNoticeBytes = portlimits.DefaultMaxNoticeBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Bus{
		c:       c,
		opts:    opts,
		channel: keyPrefix(c, opts.Prefix, "bus") + "bus",
		local: memstore.NewBus(memstore.BusOptions{
			MaxNoticeBytes:       opts.MaxNoticeBytes,
			MaxQueuedNotices:     opts.MaxQueuedNotices,
			MaxQueuedNoticeBytes: opts.MaxQueuedNoticeBytes,
			Logger:               opts.Logger,
		}),
	}
}

// Publish sends n to every subscriber of every instance, this one's
// included (to the subscribers of the instance n.To, when it is not
// empty): one PUBLISH, bounded by Timeout. It refuses a notice over
// MaxNoticeBytes with an error wrapping [ports.ErrNoticeTooLarge].
func (b *Bus) Publish(ctx context.Context, n ports.Notice) error {
	if b.closed.Load() {
		return errBusClosed
	}
	if size := portlimits.NoticeSize(n); size > b.opts.MaxNoticeBytes {
		return fmt.Errorf("hexmcp: mcpredis: %w: %d bytes, the bus carries %d", ports.ErrNoticeTooLarge, size, b.opts.MaxNoticeBytes)
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	defer cancel()
	channel := b.channel
	if n.To != "" {
		channel = b.addressed(n.To)
	}
	frame := encodeNotice(n)
	if _, err := within(ctx, b.c, func(ctx context.Context) (int64, error) { return publish(ctx, b.c, channel, frame) }); err != nil {
		return fmt.Errorf("hexmcp: mcpredis: publishing a notice: %w", err)
	}
	return nil
}

// Subscribe calls fn, from a goroutine of the subscription's own, with
// every notice published from now on by any instance, in the order each
// publisher published them. The first subscription of the Bus opens its
// Pub/Sub connection and waits, up to Timeout, for Redis to confirm it
// (with Redis down it returns at once, a Redis that hangs after Timeout,
// each with a warning, and the subscription begins receiving once Redis
// is back). The returned function
// stops the subscription: fn is not called once it returned, and it waits
// for a running fn to return; the last one closes the connection. After
// [Bus.Close], Subscribe returns a stop that does nothing and never calls
// fn.
func (b *Bus) Subscribe(fn func(ports.Notice)) (stop func()) {
	return b.subscribe("", fn)
}

// SubscribeAs is [Bus.Subscribe] for the instance called name: fn also
// gets the notices addressed to name ([ports.Notice].To), and no other
// addressed notice. The first subscription as name subscribes the Pub/Sub
// connection to the channel "<Prefix>bus:<name>" too, and waits up to
// Timeout for Redis to confirm it; the last one to stop unsubscribes it.
// An empty name is Subscribe.
func (b *Bus) SubscribeAs(name string, fn func(ports.Notice)) (stop func()) {
	return b.subscribe(name, fn)
}

func (b *Bus) subscribe(name string, fn func(ports.Notice)) (stop func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return func() {}
	}
	if b.ps == nil {
		b.open()
	}
	if name != "" {
		if b.names[name] == 0 {
			b.await(b.addressed(name))
		}
		if b.names == nil {
			b.names = make(map[string]int)
		}
		b.names[name]++
	}
	sub := &busSub{name: name, stop: b.local.SubscribeAs(name, fn)}
	if b.subs == nil {
		b.subs = make(map[*busSub]struct{})
	}
	b.subs[sub] = struct{}{}
	return func() {
		sub.once.Do(sub.stop)
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, ok := b.subs[sub]; !ok {
			return // stopped before, or by Close
		}
		delete(b.subs, sub)
		if len(b.subs) == 0 {
			b.shut()
			return
		}
		if name != "" {
			if b.names[name]--; b.names[name] == 0 {
				delete(b.names, name)
				ctx, cancel := context.WithTimeout(context.Background(), b.opts.Timeout)
				defer cancel()
				_ = unsubscribe(ctx, b.c, b.ps, b.addressed(name)) // without Redis: not subscribed again
			}
		}
	}
}

// addressed is the channel of the notices addressed to the instance name.
func (b *Bus) addressed(name string) string { return b.channel + ":" + name }

// await subscribes the Pub/Sub connection to channel and waits, up to
// Timeout, for Redis to confirm it; b.mu is held.
func (b *Bus) await(channel string) {
	confirmed := make(chan struct{})
	b.cmu.Lock()
	if b.confirms == nil {
		b.confirms = make(map[string]chan struct{})
	}
	b.confirms[channel] = confirmed
	b.cmu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.Timeout)
	defer cancel()
	// without Redis: subscribed once it is back
	ps := b.ps
	_, err := within(ctx, b.c, func(ctx context.Context) (struct{}, error) { return struct{}{}, subscribe(ctx, b.c, ps, channel) })
	if err == nil {
		select {
		case <-confirmed:
			return
		case <-ctx.Done():
		}
	}
	b.cmu.Lock()
	delete(b.confirms, channel)
	b.cmu.Unlock()
	b.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, "hexmcp: mcpredis: the bus's subscription is not confirmed by Redis (down or slow); notices reach this instance once it is",
		slog.Any("channel", channel), slog.Any("timeout", b.opts.Timeout), slog.Any("error", err))
}

// busSub is a subscription of a Bus: its name (SubscribeAs) and its stop
// on the local bus.
type busSub struct {
	name string
	stop func()
	once sync.Once
}

// Close stops every subscription of the Bus (waiting for their running
// functions) and closes its Pub/Sub connection; Publish then fails and
// Subscribe does nothing. It does not close the client. A second Close
// does nothing.
func (b *Bus) Close() error {
	b.mu.Lock()
	b.closed.Store(true)
	subs := b.subs
	b.subs = nil
	b.shut()
	b.mu.Unlock()
	for sub := range subs {
		sub.once.Do(sub.stop)
	}
	return nil
}

// Dropped returns how many notices the Bus did not deliver: one for each
// subscriber whose queue was full, and one for each message read from the
// channel that was no notice or was over MaxNoticeBytes.
func (b *Bus) Dropped() uint64 { return b.local.Dropped() + b.bad.Load() }

// open opens the Pub/Sub connection and its reader, subscribes it to the
// bus's channel and waits for the confirmation; b.mu is held.
func (b *Bus) open() {
	b.ps = newPubSub(b.c, b.channel+":") // connects on the first subscription; no instance is named ""
	b.reader = make(chan struct{})
	go b.read(b.ps.ChannelWithSubscriptions(), b.reader)
	followLayout(b.c, b.reader)
	b.await(b.channel)
}

// shut closes the Pub/Sub connection, if open, and waits for its reader;
// b.mu is held.
func (b *Bus) shut() {
	b.names = nil
	if b.ps == nil {
		return
	}
	_ = b.ps.Close()
	<-b.reader
	b.ps, b.reader = nil, nil
}

// read hands the notices of ch to the local subscribers until ch is
// closed (by PubSub.Close), and signals the confirmations of
// subscriptions. It never blocks on the subscribers, so that go-redis
// never waits to hand it a message.
func (b *Bus) read(ch <-chan any, done chan struct{}) {
	defer close(done)
	confirmed := false // the bus's channel was subscribed to once
	for m := range ch {
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind != confirmKind(b.c) {
				continue
			}
			b.cmu.Lock()
			awaited := b.confirms[m.Channel]
			delete(b.confirms, m.Channel)
			b.cmu.Unlock()
			if awaited != nil {
				close(awaited)
			}
			if m.Channel != b.channel {
				continue
			}
			if confirmed {
				b.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn,
					"hexmcp: mcpredis: the bus's link to Redis was re-established; notices published while it was down were missed",
					slog.Any("channel", b.channel))
			}
			confirmed = true
		case *redis.Message:
			b.receive(m.Payload)
		}
	}
}

func (b *Bus) receive(payload string) {
	n, err := decodeNotice(payload, b.opts.MaxNoticeBytes)
	if err == nil {
		err = b.local.Publish(context.Background(), n)
	}
	if err != nil {
		// a warning at the 1st, 2nd, 4th, 8th... such message: a flood of
		// them does not flood the log
		if k := b.bad.Add(1); bits.OnesCount64(k) == 1 {
			b.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, "hexmcp: mcpredis: a message on the bus's channel is not a notice this bus carries; dropped",
				slog.Any("channel", b.channel), slog.Any("bytes", len(payload)), slog.Any("error", err), slog.Any("dropped_messages", k))
		}
	}
}

// The first byte of a frame of [encodeNotice]: its version.
const (
	// noticeVersion: a notice to every instance (an empty To), five
	// fields.
	noticeVersion = 1
	// addressedVersion: a notice addressed to one instance, six fields
	// (To last).
	addressedVersion = 2
)

// frameOverhead bounds what a frame adds to [portlimits.NoticeSize]: the
// version, six lengths and the Data flag.
const frameOverhead = 1 + 6*binary.MaxVarintLen64 + 1

// encodeNotice returns the frame a [Bus] publishes for n: the byte 1 (the
// frame's version), or 2 when n.To is not empty; Kind, ID, Origin, URI and
// Session, then To in a frame of version 2, each as its length (an
// unsigned varint, encoding/binary's) then its bytes; then the byte 0
// when Data is nil, or the byte 1 followed by Data, to the end of the
// frame. It adds at most 62 bytes to the notice, and keeps nil Data apart
// from empty Data. A binary frame rather than JSON: Data goes byte for
// byte whatever it holds, without escaping or base64, and decoding it is a
// few bounds checks. A notice to every instance is framed as before
// addressed notices existed (version 1), so that instances of an earlier
// release read it.
func encodeNotice(n ports.Notice) []byte {
	b := make([]byte, 0, portlimits.NoticeSize(n)+frameOverhead)
	fields := []string{string(n.Kind), n.ID, n.Origin, n.URI, n.Session}
	if n.To == "" {
		b = append(b, noticeVersion)
	} else {
		b = append(b, addressedVersion)
		fields = append(fields, n.To)
	}
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	if n.Data == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	return append(b, n.Data...)
}

// decodeNotice decodes a frame of [encodeNotice] holding a notice of at
// most maxNoticeBytes ([portlimits.NoticeSize]). It returns an error for
// anything else (a frame of another version, cut short, with bytes left
// over, or too large), never panics, and keeps no reference to frame.
func decodeNotice(frame string, maxNoticeBytes int) (ports.Notice, error) {
	if len(frame) > maxNoticeBytes+frameOverhead {
		return ports.Notice{}, fmt.Errorf("hexmcp: mcpredis: a frame of %d bytes: %w", len(frame), ports.ErrNoticeTooLarge)
	}
	if len(frame) == 0 || frame[0] != noticeVersion && frame[0] != addressedVersion {
		return ports.Notice{}, errors.New("hexmcp: mcpredis: not a notice frame (version)")
	}
	count := 5
	if frame[0] == addressedVersion {
		count = 6
	}
	rest := frame[1:]
	var fields [6]string
	for i := range count {
		l, k := uvarint(rest)
		if k <= 0 || l > uint64(len(rest)-k) {
			return ports.Notice{}, fmt.Errorf("hexmcp: mcpredis: a notice frame cut short (field %d)", i+1)
		}
		fields[i] = strings.Clone(rest[k : k+int(l)])
		rest = rest[k+int(l):]
	}
	n := ports.Notice{Kind: ports.NoticeKind(fields[0]), ID: fields[1], Origin: fields[2], URI: fields[3], Session: fields[4], To: fields[5]}
	switch {
	case rest == "\x00":
	case len(rest) > 0 && rest[0] == 1:
		n.Data = []byte(rest[1:])
	default:
		return ports.Notice{}, errors.New("hexmcp: mcpredis: a notice frame with a bad Data flag")
	}
	if size := portlimits.NoticeSize(n); size > maxNoticeBytes {
		return ports.Notice{}, fmt.Errorf("hexmcp: mcpredis: a notice of %d bytes: %w", size, ports.ErrNoticeTooLarge)
	}
	return n, nil
}

// uvarint is binary.Uvarint on a string.
func uvarint(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, -(i + 1) // overflow
			}
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return 0, 0
}
