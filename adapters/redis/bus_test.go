package mcpredis_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// busGoroutines name the goroutines of a Bus: its reader, go-redis's
// Pub/Sub goroutines, and the subscriptions' (memory.Bus).
var busGoroutines = []string{"adapters/redis.(*Bus)", "go-redis/v9.(*channel)", "adapters/memory.(*busSub)"}

var busPrefixes atomic.Int64

// busPrefix returns a prefix no other test uses.
func busPrefix() string {
	return fmt.Sprintf("bus%d-%d:", time.Now().UnixNano(), busPrefixes.Add(1))
}

// newBuses returns n buses on srv, each on a client of its own (n
// instances), closed when t ends, after which no goroutine of theirs is
// left.
func newBuses(t *testing.T, srv *redistest.Server, n int, opts mcpredis.BusOptions) []*mcpredis.Bus {
	t.Helper()
	t.Cleanup(func() { testtools.NoGoroutines(t, busGoroutines...) })
	if opts.Prefix == "" {
		opts.Prefix = busPrefix()
	}
	bs := make([]*mcpredis.Bus, n)
	for i := range bs {
		b := mcpredis.NewBus(client(t, srv), opts)
		t.Cleanup(func() { b.Close() })
		bs[i] = b
	}
	return bs
}

func ports2(bs []*mcpredis.Bus) []ports.NotificationBus {
	out := make([]ports.NotificationBus, len(bs))
	for i, b := range bs {
		out[i] = b
	}
	return out
}

// Two buses on two clients of one Redis are two instances: they pass the
// contract of every bus.
func TestBusContract(t *testing.T) {
	srv := redistest.Start(t)
	newBus := func(opts mcpredis.BusOptions) func(t *testing.T) []ports.NotificationBus {
		return func(t *testing.T) []ports.NotificationBus { return ports2(newBuses(t, srv, 2, opts)) }
	}
	porttest.TestBus(t, newBus(mcpredis.BusOptions{}))
	t.Run("DefaultLimit", func(t *testing.T) {
		// 4 MiB notices: a Timeout that waits, not the 1 s default (a
		// loaded machine under -race took longer)
		porttest.TestBusSizeLimit(t, portlimits.DefaultMaxNoticeBytes, newBus(mcpredis.BusOptions{Timeout: bigPayloadTimeout}))
	})
	t.Run("SmallerLimit", func(t *testing.T) {
		porttest.TestBusSizeLimit(t, 4096, newBus(mcpredis.BusOptions{MaxNoticeBytes: 4096}))
	})
	t.Run("Addressed", func(t *testing.T) {
		porttest.TestAddressedBus(t, func(t *testing.T) []ports.AddressedBus {
			bs := newBuses(t, srv, 2, mcpredis.BusOptions{})
			return []ports.AddressedBus{bs[0], bs[1]}
		})
	})
}

// recorder collects notices (Add is a subscriber).
type recorder struct {
	testtools.Collector[ports.Notice]
}

func (r *recorder) ids() []string {
	got := r.All()
	ids := make([]string, len(got))
	for i, n := range got {
		ids[i] = n.ID
	}
	return ids
}

func (r *recorder) has(id string) bool {
	for _, got := range r.ids() {
		if got == id {
			return true
		}
	}
	return false
}

// eventually polls ok for hangGuard (a deadline for what must happen, not
// a measure of its speed).
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	testtools.Eventually(t, hangGuard, what, ok)
}

func tick(id string) ports.Notice {
	return ports.Notice{Kind: ports.NoticeToolsChanged, ID: id, Origin: "test"}
}

// Redis down: Publish fails (within Timeout); a subscription made
// meanwhile returns. Redis back: every subscription receives again,
// without a restart of anything, in order.
func TestBusRedisDownAndBack(t *testing.T) {
	srv := redistest.Start(t)
	log := &testtools.LogRecorder{}
	opts := mcpredis.BusOptions{Prefix: busPrefix(), Timeout: 300 * time.Millisecond, Logger: log}
	bs := newBuses(t, srv, 3, opts)
	a, b, c := bs[0], bs[1], bs[2]
	ctx := context.Background()
	ra, rb, rc := &recorder{}, &recorder{}, &recorder{}
	defer a.Subscribe(ra.Add)()
	defer b.Subscribe(rb.Add)()
	if err := a.Publish(ctx, tick("before")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a notice before Redis went down", func() bool { return ra.has("before") && rb.has("before") })

	srv.Stop()
	for _, bus := range []*mcpredis.Bus{a, b} {
		if err := bus.Publish(ctx, tick("down")); err == nil {
			t.Fatal("Publish with Redis down succeeded")
		}
	}
	// the first subscription of c, Redis down: returns, with a warning
	defer c.Subscribe(rc.Add)()
	if !log.Has("not confirmed") {
		t.Fatalf("no warning for an unconfirmed subscription: %q", log.Messages())
	}

	srv.Restart(t)
	// publish until each subscriber got one (the clients reconnect on
	// their own; a Publish before they did may fail or reach nobody)
	k := 0
	eventually(t, "notices after Redis came back", func() bool {
		k++
		_ = a.Publish(ctx, tick(fmt.Sprintf("after-%d", k)))
		time.Sleep(20 * time.Millisecond)
		return ra.has(fmt.Sprintf("after-%d", k)) && rb.has(fmt.Sprintf("after-%d", k)) && rc.has(fmt.Sprintf("after-%d", k))
	})
	// and then every notice, in order
	for i := range 20 {
		if err := b.Publish(ctx, tick(fmt.Sprintf("seq-%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for name, r := range map[string]*recorder{"a": ra, "b": rb, "c": rc} {
		eventually(t, "the notices after the link came back, on "+name, func() bool { return r.has("seq-19") })
		var seq []string
		for _, id := range r.ids() {
			if strings.HasPrefix(id, "seq-") {
				seq = append(seq, id)
			}
		}
		if len(seq) != 20 {
			t.Fatalf("%s got %v", name, seq)
		}
		for i, id := range seq {
			if id != fmt.Sprintf("seq-%02d", i) {
				t.Fatalf("%s got %v: out of order", name, seq)
			}
		}
		if r.has("down") {
			t.Fatalf("%s got a notice whose Publish failed", name)
		}
	}
	if !log.Has("re-established") {
		t.Fatalf("no warning about the link re-established: %q", log.Messages())
	}
}

// numsub returns how many connections subscribe to channel.
func numsub(t *testing.T, c *redis.Client, channel string) int64 {
	t.Helper()
	m, err := c.PubSubNumSub(context.Background(), channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[channel]
}

// A Bus holds one Pub/Sub connection for all its subscriptions, from the
// first Subscribe to the last stop.
func TestBusOneConnectionPerBus(t *testing.T) {
	srv := redistest.Start(t)
	admin := client(t, srv)
	prefix := busPrefix()
	channel := prefix + "bus"
	bs := newBuses(t, srv, 2, mcpredis.BusOptions{Prefix: prefix})
	a, b := bs[0], bs[1]
	if n := numsub(t, admin, channel); n != 0 {
		t.Fatalf("%d subscribers before any Subscribe", n)
	}
	var stops []func()
	for range 3 {
		stops = append(stops, a.Subscribe(func(ports.Notice) {}))
	}
	if n := numsub(t, admin, channel); n != 1 {
		t.Fatalf("three subscriptions of one bus hold %d connections, want 1", n)
	}
	stopB := b.Subscribe(func(ports.Notice) {})
	if n := numsub(t, admin, channel); n != 2 {
		t.Fatalf("two buses hold %d connections, want 2", n)
	}
	stops[0]()
	stops[1]()
	if n := numsub(t, admin, channel); n != 2 {
		t.Fatalf("%d connections with a subscription left on each bus, want 2", n)
	}
	stops[2]()
	eventually(t, "the last stop on a closes its connection", func() bool { return numsub(t, admin, channel) == 1 })
	// Close stops b's subscription and closes its connection
	b.Close()
	eventually(t, "Close closes the connection", func() bool { return numsub(t, admin, channel) == 0 })
	stopB() // after Close: nothing to do
	// a opens a new one
	r := &recorder{}
	defer a.Subscribe(r.Add)()
	if n := numsub(t, admin, channel); n != 1 {
		t.Fatalf("a new subscription after the last stopped: %d connections", n)
	}
	if err := a.Publish(context.Background(), tick("again")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a notice on the new connection", func() bool { return r.has("again") })
}

// After Close: Publish fails, Subscribe never calls its function, the
// subscriptions made before were stopped; a second Close is fine.
func TestBusClose(t *testing.T) {
	srv := redistest.Start(t)
	bs := newBuses(t, srv, 2, mcpredis.BusOptions{})
	a, b := bs[0], bs[1]
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	var calls, returned atomic.Int64
	stopA := a.Subscribe(func(ports.Notice) {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
			returned.Add(1)
		}
	})
	if err := b.Publish(ctx, tick("x")); err != nil {
		t.Fatal(err)
	}
	<-entered
	closed := make(chan struct{})
	go func() {
		a.Close()
		close(closed)
	}()
	time.Sleep(50 * time.Millisecond) // gives a Close that does not wait time to return
	select {
	case <-closed:
		t.Fatal("Close returned while a subscriber's function was running")
	default:
	}
	close(release)
	<-closed
	if returned.Load() != 1 {
		t.Fatal("Close returned before the running function did")
	}
	n := calls.Load()
	if err := a.Publish(ctx, tick("y")); err == nil {
		t.Fatal("Publish after Close succeeded")
	}
	var late atomic.Int64
	stopLate := a.Subscribe(func(ports.Notice) { late.Add(1) })
	r := &recorder{}
	defer b.Subscribe(r.Add)()
	if err := b.Publish(ctx, tick("z")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a notice on the other bus", func() bool { return r.has("z") })
	if calls.Load() != n || late.Load() != 0 {
		t.Fatalf("a closed bus called %d functions", calls.Load()-n+late.Load())
	}
	stopLate()
	stopA()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// Messages on the channel that are no notice (another program's, a
// hostile one's, a frame over MaxNoticeBytes) are dropped and counted, with
// a warning at the 1st, 2nd, 4th... of them; the notices after them are
// delivered.
func TestBusHostileMessages(t *testing.T) {
	srv := redistest.Start(t)
	log := &testtools.LogRecorder{}
	prefix := busPrefix()
	b := newBuses(t, srv, 1, mcpredis.BusOptions{Prefix: prefix, MaxNoticeBytes: 1000, Logger: log})[0]
	raw := client(t, srv)
	r := &recorder{}
	defer b.Subscribe(r.Add)()
	big := tick("big")
	big.Data = make([]byte, 1000)
	overBy1 := tick("o") // NoticeSize 1001
	overBy1.Data = make([]byte, 1001-len(overBy1.Kind)-len(overBy1.ID)-len(overBy1.Origin))
	hostile := []string{
		"",
		"hello",
		`{"k":"tools_changed","i":"json","o":"x"}`,
		"\x01",
		"\x02" + string(mcpredis.EncodeNotice(tick("v2"))[1:]),
		"\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",     // a length of 2^64-1
		"\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", // a varint too long
		"\x01\x05abc", // cut short
		string(mcpredis.EncodeNotice(tick("trailing"))) + "x",                 // bytes after a nil Data
		strings.TrimSuffix(string(mcpredis.EncodeNotice(tick("nf"))), "\x00"), // no Data flag
		string(mcpredis.EncodeNotice(tick("flag")))[:len(mcpredis.EncodeNotice(tick("flag")))-1] + "\x07",
		string(mcpredis.EncodeNotice(big)),     // over the bound by its Data
		string(mcpredis.EncodeNotice(overBy1)), // by one byte
		strings.Repeat("\x01", 5000),           // a frame longer than any notice of the bound
	}
	ctx := context.Background()
	for _, m := range hostile {
		if err := raw.Publish(ctx, prefix+"bus", m).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Publish(ctx, tick("good")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a notice after the hostile messages", func() bool { return r.has("good") })
	if ids := r.ids(); len(ids) != 1 {
		t.Fatalf("delivered %q, want only good", ids)
	}
	if got := b.Dropped(); got != uint64(len(hostile)) {
		t.Fatalf("Dropped() = %d, want %d", got, len(hostile))
	}
	want := bits.Len(uint(len(hostile))) // 1, 2, 4, 8 of 14
	if got := len(log.Messages()); got != want {
		t.Fatalf("%d warnings, want %d: %q", got, want, log.Messages())
	}
}

// A frame decodes back to the notice it was made of, nil Data and empty
// Data apart, To included, and adds at most 62 bytes; a notice to every
// instance is framed as version 1, which earlier releases read.
func TestEncodeDecodeNotice(t *testing.T) {
	for _, n := range []ports.Notice{
		{},
		{Kind: ports.NoticeResourceUpdated, ID: "i", Origin: "o", URI: "file:///\u00e9\x00"},
		{Kind: ports.NoticeClientResponse, ID: "i", Origin: "o", Session: "s", Data: []byte{}},
		{Kind: ports.NoticeClientResponse, ID: "i", Origin: "o", Session: "s", Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		{Kind: "k", ID: strings.Repeat("i", 200), Origin: strings.Repeat("o", 20000), Data: make([]byte, 70000)},
		{Kind: ports.NoticeClientResponse, ID: "i", Origin: "o", To: "0123456789abcdef", Session: "s", Data: []byte(`{}`)},
		{Kind: "k", To: strings.Repeat("t", 20000), URI: "u"},
	} {
		frame := mcpredis.EncodeNotice(n)
		if v := byte(1 + min(len(n.To), 1)); frame[0] != v {
			t.Fatalf("a frame of version %d for %+v, want %d", frame[0], n, v)
		}
		if len(frame) > portlimits.NoticeSize(n)+62 {
			t.Fatalf("a frame of %d bytes for a notice of %d", len(frame), portlimits.NoticeSize(n))
		}
		got, err := mcpredis.DecodeNotice(string(frame), portlimits.NoticeSize(n))
		if err != nil || !reflect.DeepEqual(got, n) {
			t.Fatalf("DecodeNotice(EncodeNotice(%+v)) = %+v, %v", n, got, err)
		}
		if portlimits.NoticeSize(n) > 0 {
			if _, err := mcpredis.DecodeNotice(string(frame), portlimits.NoticeSize(n)-1); !errors.Is(err, ports.ErrNoticeTooLarge) {
				t.Fatalf("a notice one byte over the bound: %v", err)
			}
		}
	}
}

// refDecode decodes a frame with encoding/binary, as a second reading of
// the format.
func refDecode(frame []byte) (ports.Notice, bool) {
	if len(frame) == 0 || frame[0] != 1 && frame[0] != 2 {
		return ports.Notice{}, false
	}
	rest := frame[1:]
	var f [6]string
	for i := range 4 + int(frame[0]) {
		l, k := binary.Uvarint(rest)
		if k <= 0 || l > uint64(len(rest)-k) {
			return ports.Notice{}, false
		}
		f[i] = string(rest[k : k+int(l)])
		rest = rest[k+int(l):]
	}
	n := ports.Notice{Kind: ports.NoticeKind(f[0]), ID: f[1], Origin: f[2], URI: f[3], Session: f[4], To: f[5]}
	switch {
	case len(rest) == 1 && rest[0] == 0:
	case len(rest) > 0 && rest[0] == 1:
		n.Data = append([]byte{}, rest[1:]...)
	default:
		return ports.Notice{}, false
	}
	return n, true
}

// DecodeNotice never panics, agrees with a decoder on encoding/binary, and
// what it decodes encodes back to a frame it decodes alike.
func FuzzDecodeNotice(f *testing.F) {
	for _, n := range []ports.Notice{
		{},
		tick("x"),
		{Kind: ports.NoticeClientResponse, ID: "i", Origin: "o", Session: "s", Data: []byte{}},
		{Kind: ports.NoticeResourceUpdated, ID: "i", Origin: "o", URI: "u", Session: "s", Data: []byte(`{"a":1}`)},
		{Kind: ports.NoticeClientResponse, ID: "i", Origin: "o", To: "t", Session: "s", Data: []byte(`{}`)},
	} {
		f.Add(mcpredis.EncodeNotice(n), 1<<20)
	}
	f.Add([]byte("\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), 1<<20)
	f.Add([]byte("\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"), 1<<20)
	f.Add([]byte("\x01\x81\x00\x00\x00\x00\x00\x00"), 10)
	f.Fuzz(func(t *testing.T, frame []byte, maxBytes int) {
		maxBytes = max(1, min(maxBytes, 1<<20))
		n, err := mcpredis.DecodeNotice(string(frame), maxBytes)
		ref, ok := refDecode(frame)
		if ok && portlimits.NoticeSize(ref) > maxBytes {
			ok = false
		}
		if (err == nil) != ok {
			t.Fatalf("DecodeNotice: %v; the reference decoder: %v", err, ok)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(n, ref) {
			t.Fatalf("DecodeNotice = %+v, the reference decoder %+v", n, ref)
		}
		again, err := mcpredis.DecodeNotice(string(mcpredis.EncodeNotice(n)), maxBytes)
		if err != nil || !reflect.DeepEqual(again, n) {
			t.Fatalf("re-encoded: %+v, %v; want %+v", again, err, n)
		}
	})
}

// A notice addressed to one instance goes to the channel of that
// instance alone, which only its Bus subscribes to while it has a
// subscription as that name: the other instances never read it.
func TestBusAddressedChannel(t *testing.T) {
	srv := redistest.Start(t)
	admin := client(t, srv)
	prefix := busPrefix()
	bs := newBuses(t, srv, 2, mcpredis.BusOptions{Prefix: prefix})
	a, b := bs[0], bs[1]
	ra, rb := &recorder{}, &recorder{}
	stopA := a.SubscribeAs("inst-a", ra.Add)
	defer a.Subscribe(func(ports.Notice) {})() // keeps a's connection
	defer b.SubscribeAs("inst-b", rb.Add)()
	if n := numsub(t, admin, prefix+"bus:inst-a"); n != 1 {
		t.Fatalf("%d connections on the channel of inst-a, want 1", n)
	}
	if n := numsub(t, admin, prefix+"bus"); n != 2 {
		t.Fatalf("%d connections on the bus's channel, want 2", n)
	}
	// what the connection of b reads: the bus's channel and its own
	spy := admin.Subscribe(context.Background(), prefix+"bus", prefix+"bus:inst-b")
	defer spy.Close()
	for range 2 {
		if _, err := spy.Receive(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	to := ports.Notice{Kind: ports.NoticeClientResponse, ID: "to-a", Origin: "b", To: "inst-a", Session: "s", Data: []byte(`{}`)}
	if err := b.Publish(ctx, to); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, tick("after")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the notices", func() bool { return ra.has("to-a") && ra.has("after") && rb.has("after") })
	if rb.has("to-a") {
		t.Fatal("a notice addressed to inst-a reached inst-b")
	}
	m, err := spy.ReceiveMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := mcpredis.DecodeNotice(m.Payload, 1<<20); err != nil || n.ID != "after" {
		t.Fatalf("the connection of another instance read %+v (%v) first, want only the notice to every instance", n, err)
	}
	stopA()
	eventually(t, "the last subscription as inst-a unsubscribes its channel", func() bool { return numsub(t, admin, prefix+"bus:inst-a") == 0 })
	if n := numsub(t, admin, prefix+"bus"); n != 3 {
		t.Fatalf("%d connections on the bus's channel after a stop, want 3 (a, b and the spy)", n)
	}
	// subscribed anew: the channel is subscribed again
	rc := &recorder{}
	defer a.SubscribeAs("inst-a", rc.Add)()
	if err := b.Publish(ctx, ports.Notice{Kind: ports.NoticeToolsChanged, ID: "again", Origin: "b", To: "inst-a"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a notice to inst-a subscribed anew", func() bool { return rc.has("again") })
}

// publishes returns how many PUBLISH commands Redis has served.
func publishes(t *testing.T, c *redis.Client) int { return commandCalls(t, c)["publish"] }

// commandCalls returns how many times Redis has served each command, by
// its lower-case name (INFO commandstats).
func commandCalls(t *testing.T, c *redis.Client) map[string]int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := make(map[string]int)
	for line := range strings.SplitSeq(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		name, ok2 := strings.CutPrefix(name, "cmdstat_")
		if !ok || !ok2 {
			continue
		}
		n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		if err != nil {
			t.Fatal(err)
		}
		calls[name] = n
	}
	return calls
}

// busWatch follows every channel of a bus prefix (PSUBSCRIBE), to see
// when a marker notice has gone through Redis.
type busWatch struct {
	t  *testing.T
	ps *redis.PubSub
	ch <-chan *redis.Message
}

func watchBus(t *testing.T, c *redis.Client, prefix string) *busWatch {
	t.Helper()
	ps := c.PSubscribe(context.Background(), prefix+"bus*")
	if _, err := ps.Receive(context.Background()); err != nil { // the confirmation
		t.Fatal(err)
	}
	t.Cleanup(func() { ps.Close() })
	return &busWatch{t: t, ps: ps, ch: ps.Channel(redis.WithChannelSize(1 << 16))}
}

// mark makes s publish a resource update of a URI of its own and waits
// until it went through Redis: everything s published before it has,
// whether it publishes at once or from a queue in order.
func (w *busWatch) mark(s *hexmcp.Server, uri string) {
	w.t.Helper()
	s.NotifyResourceUpdated(uri)
	deadline := time.After(hangGuard)
	for {
		select {
		case m := <-w.ch:
			n, err := mcpredis.DecodeNotice(m.Payload, 4<<20)
			if err == nil && n.Kind == ports.NoticeResourceUpdated && n.URI == uri {
				return
			}
		case <-deadline:
			w.t.Fatalf("the marker %s never went through Redis", uri)
		}
	}
}

// Responses to server requests that were never sent, and cancellations of
// requests that run nowhere, posted in 2025-03-26 batches to one
// instance, are not amplified onto the bus: the instance forwards only
// what can match elsewhere, and a bounded number of those per batch and
// per client (each of them once was a PUBLISH that every instance read).
func TestUnmatchedResponsesAndCancelsAreNotAmplified(t *testing.T) {
	srv := redistest.Start(t)
	const prefix = "fwd:"
	var servers []*hexmcp.Server
	var urls []string
	for range 2 {
		shared := mcpredis.Share(client(t, srv), mcpredis.ShareOptions{Prefix: prefix})
		t.Cleanup(func() { mcpredis.CloseShared(shared) })
		s, err := hexmcp.New(hexmcp.Options{Shared: shared, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		hs := httptest.NewServer(s.HTTPHandler(mcphttp.Options{}))
		t.Cleanup(hs.Close)
		servers, urls = append(servers, s), append(urls, hs.URL)
	}
	a := urls[0]
	hdr := func(sid string) map[string]string {
		return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26"}
	}
	resp, body := post(t, a, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"sampling":{},"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, a, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr(sid)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", resp.StatusCode, body)
	}

	rc := client(t, srv)
	w := watchBus(t, rc, prefix)
	// Whatever the instances published at start has gone through.
	w.mark(servers[0], "test://before-a")
	w.mark(servers[1], "test://before-b")
	before := publishes(t, rc)

	const perBatch, batches = 5_000, 3
	for k := range batches {
		var rb, cb strings.Builder
		rb.WriteByte('[')
		cb.WriteByte('[')
		for i := range perBatch {
			if i > 0 {
				rb.WriteByte(',')
				cb.WriteByte(',')
			}
			// ids of every shape a server request id could have: numbers,
			// strings, and strings shaped like the ids of a bus instance
			// ("<instance>-<n>") that never sent them.
			var id string
			switch i % 3 {
			case 0:
				id = strconv.Itoa(k*perBatch + i + 1_000)
			case 1:
				id = fmt.Sprintf(`"r-%d-%d"`, k, i)
			default:
				id = fmt.Sprintf(`"%016x-%d"`, uint64(k*perBatch+i)*0x9e3779b97f4a7c15, i)
			}
			fmt.Fprintf(&rb, `{"jsonrpc":"2.0","id":%s,"result":{"roots":[]}}`, id)
			fmt.Fprintf(&cb, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}`, id)
		}
		rb.WriteByte(']')
		cb.WriteByte(']')
		for what, b := range map[string]string{"responses": rb.String(), "cancellations": cb.String()} {
			resp, body := post(t, a, b, hdr(sid))
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("a batch of %s: %d %.200s", what, resp.StatusCode, body)
			}
		}
	}
	w.mark(servers[0], "test://after")
	got := publishes(t, rc) - before - 1 // the marker
	// 30,000 messages that can match nothing: the responses whose ids name
	// another instance (the third of them) and the cancellations may be
	// forwarded, at most MaxForwardsPerMessage of them per batch.
	if limit := 2 * batches * app.DefaultMaxForwardsPerMessage; got > limit {
		t.Fatalf("%d unmatched responses and cancellations made %d PUBLISH, want at most %d", 2*perBatch*batches, got, limit)
	}
	t.Logf("%d PUBLISH for %d unmatched messages", got, 2*perBatch*batches)
	if d := servers[0].Engine().DroppedForwards(); d == 0 {
		t.Fatal("DroppedForwards() = 0 after batches over the bound")
	}
}
