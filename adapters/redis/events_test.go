package mcpredis_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// TestMain fails the run when a goroutine of the package (the event
// store's watchers) or a go-redis Pub/Sub goroutine outlives the tests:
// Close must stop them.
func TestMain(m *testing.M) {
	os.Exit(testtools.RunWithLeakCheck(m, "hexmcp/adapters/redis.", "go-redis/v9.(*channel)"))
}

// hangGuard bounds a wait for something that must happen, so that a bug
// fails the test instead of hanging it; it is no timing requirement.
const hangGuard = 30 * time.Second

var prefixes atomic.Int64

// freshPrefix returns a Prefix no other store of the test run uses.
func freshPrefix() string { return fmt.Sprintf("ev%d:", prefixes.Add(1)) }

// events returns a store on c, closed when t ends; a zero Prefix gets a
// fresh one.
func events(t *testing.T, c redis.UniversalClient, opts mcpredis.EventStoreOptions) *mcpredis.EventStore {
	t.Helper()
	if opts.Prefix == "" {
		opts.Prefix = freshPrefix()
	}
	s := mcpredis.NewEventStore(c, opts)
	t.Cleanup(func() { s.Close() })
	return s
}

func waitWake(t *testing.T, what string, wake <-chan struct{}) {
	t.Helper()
	testtools.Recv(t, wake, hangGuard, "no wake: "+what)
}

func drain(wake <-chan struct{}) {
	select {
	case <-wake:
	default:
	}
}

// subscribers returns how many connections subscribe to the channel of
// stream under prefix.
func subscribers(t *testing.T, c redis.UniversalClient, prefix, stream string) int64 {
	t.Helper()
	ch := prefix + "ev:" + stream
	n, err := c.PubSubNumSub(context.Background(), ch).Result()
	if err != nil {
		return -1
	}
	return n[ch]
}

// The Redis event store passes the contract of every event store against a
// real redis-server, with the default bounds, with bounds small enough for
// the contract's large events to be dropped or not kept, and with replays
// read one small page at a time.
func TestEventStoreContract(t *testing.T) {
	srv := redistest.Start(t)
	eventStoreContract(t, client(t, srv), freshPrefix)
}

// eventStoreContract runs the event store contract on stores of c, with
// the default bounds, with bounds small enough for the contract's large
// events to be dropped or not kept, and with replays read one small page
// at a time; each store's keys begin with a prefix() of its own.
func eventStoreContract(t *testing.T, c redis.UniversalClient, prefix func() string) {
	for _, tc := range []struct {
		name string
		opts mcpredis.EventStoreOptions
	}{
		{"Defaults", mcpredis.EventStoreOptions{}},
		{"SmallBudgets", mcpredis.EventStoreOptions{MaxBytesPerStream: 128 << 10, MaxBytesPerGroup: 256 << 10, MaxBytes: 1 << 20}},
		{"SmallPages", mcpredis.EventStoreOptions{ReplayPageBytes: 300}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			porttest.TestEventStore(t, func(t *testing.T) ports.EventStore {
				opts := tc.opts
				opts.Prefix = prefix()
				return events(t, c, opts)
			})
		})
	}
}

// Two store values on one Redis and Prefix, each with its own client, as
// two instances have, pass the shared suite.
func TestEventStoreShared(t *testing.T) {
	srv := redistest.Start(t)
	porttest.TestEventStoreShared(t, func(t *testing.T) (a, b ports.EventStore) {
		prefix := freshPrefix()
		opts := mcpredis.EventStoreOptions{Prefix: prefix}
		return events(t, client(t, srv), opts), events(t, client(t, srv), opts)
	})
}

// The ids are opaque, SSE-safe and name their stream; foreign or malformed
// ones are not found.
func TestEventIDs(t *testing.T) {
	srv := redistest.Start(t)
	s := events(t, client(t, srv), mcpredis.EventStoreOptions{})
	ids := testtools.AppendEvents(t, s, "a/b:c d", "1", "2")
	for _, id := range ids {
		if strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != "" {
			t.Fatalf("id %q has characters outside [A-Za-z0-9._-]", id)
		}
	}
	testtools.WantReplay(t, s, ids[0], "2")
	parts := strings.Split(ids[0], ".")
	if len(parts) != 3 {
		t.Fatalf("id %q is not epoch.generation.seq", ids[0])
	}
	for _, bad := range []string{
		parts[0] + "." + parts[1] + ".01", // not canonical
		parts[0] + "." + parts[1] + ".0",
		parts[0] + ".0" + parts[1] + ".1",
		parts[0] + "." + parts[1] + ".3", // not appended yet
		"AAAAAAAAAAAA." + parts[1] + ".1",
		parts[0] + "." + parts[1],
		parts[0] + "." + parts[1] + ".1.1",
		parts[0] + "." + parts[1] + ".99999999999999999999",
	} {
		testtools.WantNotFound(t, s, bad)
	}
}

// The group budget keeps one session from crowding out another: a session
// that appends far more than its budget loses its own oldest events, not
// the other session's.
func TestEventGroupBudget(t *testing.T) {
	srv := redistest.Start(t)
	const group = 64 << 10
	s := events(t, client(t, srv), mcpredis.EventStoreOptions{MaxBytesPerGroup: group, MaxBytes: 1 << 20})
	ctx := context.Background()
	quiet := testtools.AppendEvents(t, s, "quiet/s", "q0", "q1", "q2")
	big := strings.Repeat("x", 2<<10)
	var loud []string
	for i := range 200 {
		loud = append(loud, testtools.AppendEvents(t, s, fmt.Sprintf("loud/%d", i%2), fmt.Sprintf("%d%s", i, big))...)
	}
	testtools.WantReplay(t, s, quiet[0], "q1", "q2")
	// The loud session kept what fits in its budget: its latest events.
	per := int64(len(big) + 3 + portlimits.EventOverhead)
	bytes, err := s.Bytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	quietBytes := int64(3 * (2 + portlimits.EventOverhead))
	if loudBytes := bytes - quietBytes; loudBytes > group || loudBytes < group-per {
		t.Fatalf("the loud session holds %d bytes, want at most %d and within one event of it", loudBytes, group)
	}
	testtools.WantNotFound(t, s, loud[0])
	testtools.WantNotFound(t, s, loud[1])
	// loud[197] is on stream loud/1, whose next event is loud[199].
	testtools.WantReplay(t, s, loud[197], fmt.Sprintf("199%s", big))
}

// The store budget drops the oldest events of the whole store first, and
// its bytes never pass it.
func TestEventStoreBudget(t *testing.T) {
	srv := redistest.Start(t)
	const size = 1024
	const max = 32 << 10
	s := events(t, client(t, srv), mcpredis.EventStoreOptions{MaxBytes: max})
	ctx := context.Background()
	ids := map[int][]string{}
	data := func(g, i int) string { return fmt.Sprintf("%d_%d_%s", g, i, strings.Repeat("y", size-4)) }
	for g := range 10 {
		for i := range 4 {
			ids[g] = append(ids[g], testtools.AppendEvents(t, s, fmt.Sprintf("g%d", g), data(g, i))...)
			if b, err := s.Bytes(ctx); err != nil || b > max {
				t.Fatalf("the store holds %d bytes (%v), more than %d", b, err, max)
			}
		}
	}
	per := size + portlimits.EventOverhead
	kept := max / per // the latest 28 of the 40 events: groups 3 to 9
	if kept != 28 {
		t.Fatalf("the test expects 28 events kept, not %d", kept)
	}
	for g := range 3 {
		for i := range 3 {
			testtools.WantNotFound(t, s, ids[g][i])
		}
		testtools.WantReplay(t, s, ids[g][3]) // the latest resumes, with nothing
	}
	for g := 3; g < 10; g++ {
		testtools.WantReplay(t, s, ids[g][0], data(g, 1), data(g, 2), data(g, 3))
	}
}

// Per stream: its latest MaxEventsPerStream events and MaxBytesPerStream
// bytes; an event larger than the budgets is not kept but resumes, and its
// stream's earlier events go with it.
func TestEventStreamBounds(t *testing.T) {
	srv := redistest.Start(t)
	s := events(t, client(t, srv), mcpredis.EventStoreOptions{MaxEventsPerStream: 5, MaxBytesPerStream: 4 << 10})
	ids := testtools.AppendEvents(t, s, "s", "0", "1", "2", "3", "4", "5", "6", "7")
	testtools.WantReplay(t, s, ids[2], "3", "4", "5", "6", "7")
	testtools.WantNotFound(t, s, ids[1])

	big := strings.Repeat("z", 1500)
	ids = testtools.AppendEvents(t, s, "b", "a", big, big, big)
	testtools.WantNotFound(t, s, ids[0]) // 3 × 1628 bytes > 4 KiB: the first big one went
	testtools.WantReplay(t, s, ids[1], big, big)

	huge := strings.Repeat("h", 5<<10)
	ids = testtools.AppendEvents(t, s, "h", "a", "b", huge, "c")
	testtools.WantNotFound(t, s, ids[0])
	testtools.WantNotFound(t, s, ids[1])
	testtools.WantReplay(t, s, ids[2], "c")
}

// Past MaxStreams, a new stream evicts the least recently appended one.
func TestEventMaxStreams(t *testing.T) {
	srv := redistest.Start(t)
	s := events(t, client(t, srv), mcpredis.EventStoreOptions{MaxStreams: 3})
	ctx := context.Background()
	one := testtools.AppendEvents(t, s, "one", "1a")
	two := testtools.AppendEvents(t, s, "two", "2a")
	testtools.AppendEvents(t, s, "three", "3a")
	testtools.AppendEvents(t, s, "one", "1b")
	four := testtools.AppendEvents(t, s, "four", "4a", "4b")
	if n, err := s.Len(ctx); err != nil || n != 3 {
		t.Fatalf("Len = %d, %v; want 3", n, err)
	}
	testtools.WantNotFound(t, s, two[0])
	testtools.WantReplay(t, s, one[0], "1b")
	testtools.WantReplay(t, s, four[0], "4b")
}

// Expiry follows the Clock: events older than TTL go (a replay that needs
// them fails), and so do streams without an append for that long.
func TestEventExpiry(t *testing.T) {
	srv := redistest.Start(t)
	clock := porttest.NewFakeClock(porttest.Start)
	const ttl = 10 * time.Minute
	s := events(t, client(t, srv), mcpredis.EventStoreOptions{TTL: ttl, Clock: clock})
	ctx := context.Background()
	early := testtools.AppendEvents(t, s, "s", "e0", "e1")
	idle := testtools.AppendEvents(t, s, "idle", "i0", "i1")
	clock.Advance(ttl / 2)
	late := testtools.AppendEvents(t, s, "s", "e2")
	clock.Advance(ttl / 2) // e0, e1 and the idle stream are TTL old, not older
	testtools.WantReplay(t, s, early[0], "e1", "e2")
	testtools.WantReplay(t, s, idle[0], "i1")
	clock.Advance(time.Millisecond)
	testtools.WantNotFound(t, s, early[0])     // needs e1, expired
	testtools.WantReplay(t, s, early[1], "e2") // needs e2, still kept
	testtools.WantNotFound(t, s, idle[1])      // the idle stream expired
	if n, err := s.Len(ctx); err != nil || n != 1 {
		t.Fatalf("Len = %d, %v; want 1 (the idle stream expired)", n, err)
	}
	clock.Advance(ttl / 2)
	if n, err := s.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len = %d, %v; want 0", n, err)
	}
	if b, err := s.Bytes(ctx); err != nil || b != 0 {
		t.Fatalf("Bytes = %d, %v; want 0", b, err)
	}
	// A new stream of an expired one's name does not revive its ids.
	testtools.AppendEvents(t, s, "s", "n0", "n1")
	testtools.WantNotFound(t, s, late[0])
}

// A replay of several pages that loses the events of its next page (the
// stream deleted in between) fails after what it delivered, never skips.
func TestEventReplayPages(t *testing.T) {
	srv := redistest.Start(t)
	s := events(t, client(t, srv), mcpredis.EventStoreOptions{ReplayPageBytes: 1})
	ctx := context.Background()
	ids := testtools.AppendEvents(t, s, "p", "0", "1", "2", "3")
	testtools.WantReplay(t, s, ids[0], "1", "2", "3")
	var got []string
	_, err := s.Replay(ctx, ids[0], func(e ports.Event) error {
		got = append(got, string(e.Data))
		if len(got) == 1 {
			return s.DeleteStream(ctx, "p")
		}
		return nil
	})
	if !errors.Is(err, ports.ErrEventNotFound) || strings.Join(got, ",") != "1" {
		t.Fatalf("Replay with the stream deleted after its first page = %q, %v; want [1] and ErrEventNotFound", got, err)
	}
	// Events appended during a replay are left to the next one.
	ids = testtools.AppendEvents(t, s, "q", "0", "1")
	got = nil
	_, err = s.Replay(ctx, ids[0], func(e ports.Event) error {
		got = append(got, string(e.Data))
		_, err := s.Append(ctx, "q", []byte("more"))
		return err
	})
	if err != nil || strings.Join(got, ",") != "1" {
		t.Fatalf("Replay while appending = %q, %v; want [1]", got, err)
	}
}

// AppendOnce remembers a stream's latest MaxKeysPerStream keys, and a
// deleted stream forgets them.
func TestEventAppendOnceKeys(t *testing.T) {
	srv := redistest.Start(t)
	s := events(t, client(t, srv), mcpredis.EventStoreOptions{MaxKeysPerStream: 2})
	ctx := context.Background()
	once := func(key string, want bool) {
		t.Helper()
		id, appended, err := s.AppendOnce(ctx, "s", key, []byte(key))
		if err != nil || appended != want || (id != "") != want {
			t.Fatalf("AppendOnce(%q) = %q, %v, %v; want appended %v", key, id, appended, err, want)
		}
	}
	long := strings.Repeat("long", 1000)
	once("k1", true)
	once("k2", true)
	once("k1", false)
	once(long, true) // k1 is now the oldest of 3: forgotten
	once("k1", true) // k2 forgotten
	once(long, false)
	once("k2", true) // long forgotten
	once("k1", false)
	if err := s.DeleteStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	once("k1", true)
}

// An event lost from Redis behind the store's back (its entry deleted
// from the stream's data) fails the replay where it was: the events after
// it are not sent as if none were missing.
func TestEventReplayRefusesAGap(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv)
	prefix := freshPrefix()
	s := events(t, c, mcpredis.EventStoreOptions{Prefix: prefix})
	ctx := context.Background()
	ids := testtools.AppendEvents(t, s, "s", "a", "b", "c")
	testtools.WantReplay(t, s, ids[0], "b", "c")
	gen, err := c.Get(ctx, prefix+"ev:name:s").Result()
	if err != nil {
		t.Fatalf("the stream's generation: %v", err)
	}
	if n, err := c.XDel(ctx, prefix+"ev:data:"+gen, "2-0").Result(); err != nil || n != 1 {
		t.Fatalf("deleting the second event: %d, %v", n, err)
	}
	got, err := testtools.Replayed(s, ids[0])
	if err == nil || !strings.HasPrefix(err.Error(), "hexmcp: mcpredis: ") {
		t.Fatalf("Replay over a lost event = %q, %v; want a mcpredis error", got, err)
	}
	if len(got) != 0 {
		t.Fatalf("Replay over a lost event sent %q", got)
	}
}

// Redis down: every call fails with a wrapped error (not ErrEventNotFound,
// which would make a follower give up) within Timeout; Redis back (its
// data lost): calls work again, and ids from before are unknown.
func TestEventStoreRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	s := events(t, client(t, srv), mcpredis.EventStoreOptions{Timeout: 300 * time.Millisecond})
	ctx := context.Background()
	ids := testtools.AppendEvents(t, s, "s", "0", "1")
	srv.Stop()
	if _, err := s.Append(ctx, "s", []byte("x")); err == nil || !strings.HasPrefix(err.Error(), "hexmcp: mcpredis: ") {
		t.Fatalf("Append with Redis down = %v, want a mcpredis error", err)
	}
	if _, _, err := s.AppendOnce(ctx, "s", "k", []byte("x")); err == nil {
		t.Fatal("AppendOnce with Redis down succeeded")
	}
	if _, err := testtools.Replayed(s, ids[0]); err == nil || errors.Is(err, ports.ErrEventNotFound) {
		t.Fatalf("Replay with Redis down = %v, want an error other than ErrEventNotFound", err)
	}
	if err := s.DeleteStream(ctx, "s"); err == nil {
		t.Fatal("DeleteStream with Redis down succeeded")
	}
	if _, err := s.Len(ctx); err == nil {
		t.Fatal("Len with Redis down succeeded")
	}
	srv.Restart(t)
	var fresh string
	eventually(t, "an Append after Redis came back", func() bool {
		id, err := s.Append(ctx, "s", []byte("a"))
		fresh = id
		return err == nil
	})
	testtools.WantNotFound(t, s, ids[0])
	more := testtools.AppendEvents(t, s, "s", "b")
	testtools.WantReplay(t, s, fresh, "b")
	if more[0] == ids[1] || fresh == ids[0] {
		t.Fatalf("ids after the restart (%q, %q) repeat ids from before (%q)", fresh, more[0], ids)
	}
}

// A watcher is woken by appends to its stream only (a message of another
// stream does not wake it), through another store value as well.
func TestEventWatchOwnStream(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv)
	// Each subscription woke its watcher once it took effect; after
	// them, only messages do.
	_, a, wx, wy := watchXY(t, c, client(t, srv), c)
	testtools.AppendEvents(t, a, "y", "1")
	waitWake(t, "an append to y", wy)
	// Messages are delivered in order: once the second one of y is, the
	// first was handled whole.
	testtools.AppendEvents(t, a, "y", "2")
	waitWake(t, "a second append to y", wy)
	select {
	case <-wx:
		t.Fatal("appends to y woke x's watcher")
	default:
	}
	testtools.AppendEvents(t, a, "x", "1")
	waitWake(t, "an append to x", wx)
	// DeleteStream wakes the watchers too (their replay sees it gone).
	if err := a.DeleteStream(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	waitWake(t, "the deletion of x", wx)
}

// Watchers share one subscription per stream, dropped with its last
// watcher; Close drops the connection (and TestMain checks that its
// goroutines end).
func TestEventWatchSubscriptions(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv)
	prefix := freshPrefix()
	s := events(t, client(t, srv), mcpredis.EventStoreOptions{Prefix: prefix})
	_, stop1 := s.Watch("x")
	_, stop2 := s.Watch("x")
	_, stopY := s.Watch("y")
	eventually(t, "x's and y's subscriptions", func() bool { return subscribers(t, c, prefix, "x") == 1 && subscribers(t, c, prefix, "y") == 1 })
	stop1()
	stop1()
	stopY()
	eventually(t, "y's unsubscription", func() bool { return subscribers(t, c, prefix, "y") == 0 })
	if n := subscribers(t, c, prefix, "x"); n != 1 {
		t.Fatalf("x has %d subscribers while one watcher is left", n)
	}
	stop2()
	eventually(t, "x's unsubscription", func() bool { return subscribers(t, c, prefix, "x") == 0 })
	_, stopZ := s.Watch("z")
	defer stopZ()
	eventually(t, "z's subscription", func() bool { return subscribers(t, c, prefix, "z") == 1 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the connection to close", func() bool { return subscribers(t, c, prefix, "z") == 0 })
	if err := s.Close(); err != nil {
		t.Fatalf("a second Close = %v", err)
	}
	// After Close, Watch gives a channel that is never woken; the store
	// still stores.
	w, stop := s.Watch("z")
	stop()
	testtools.AppendEvents(t, s, "z", "1")
	select {
	case <-w:
		t.Fatal("a watcher made after Close was woken")
	default:
	}
}

// Past MaxWatchers, Watch polls: its channel wakes without an append.
func TestEventWatchOverflow(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv)
	prefix := freshPrefix()
	s := events(t, client(t, srv), mcpredis.EventStoreOptions{Prefix: prefix, MaxWatchers: 1})
	_, stop := s.Watch("x")
	over, stopOver := s.Watch("y")
	defer stopOver()
	waitWake(t, "the poll of a watcher past MaxWatchers", over)
	waitWake(t, "a second poll", over)
	if n := subscribers(t, c, prefix, "y"); n != 0 {
		t.Fatalf("a watcher past MaxWatchers subscribed (%d)", n)
	}
	stop()
	// A watcher is free again.
	_, stopZ := s.Watch("z")
	defer stopZ()
	eventually(t, "z's subscription", func() bool { return subscribers(t, c, prefix, "z") == 1 })
}

// Redis restarted: every watcher wakes once the Pub/Sub link is back (what
// was published meanwhile is lost), and appends wake them again.
func TestEventWatchAfterRestart(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv)
	prefix, a, wx, wy := watchXY(t, c, client(t, srv), client(t, srv))
	srv.Stop()
	drain(wx)
	drain(wy)
	srv.Restart(t)
	waitWake(t, "x's watcher after the restart", wx)
	waitWake(t, "y's watcher after the restart", wy)
	eventually(t, "the subscriptions again", func() bool { return subscribers(t, c, prefix, "x") == 1 && subscribers(t, c, prefix, "y") == 1 })
	drain(wx)
	eventually(t, "an Append after Redis came back", func() bool {
		_, err := a.Append(context.Background(), "x", []byte("1"))
		return err == nil
	})
	waitWake(t, "an append to x after the restart", wx)
}

// One Append is one round trip (an EVALSHA); the benchmark shows what it
// costs against a local redis-server, with a small event.
func BenchmarkEventAppend(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`)
	for i := 0; b.Loop(); i++ {
		if _, err := s.Append(ctx, fmt.Sprintf("sess%d/s", i%100), data); err != nil {
			b.Fatal(err)
		}
	}
}

// A replay of 100 small events: one round trip.
func BenchmarkEventReplay(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	first, err := s.Append(ctx, "sess/s", []byte(`"first"`))
	if err != nil {
		b.Fatal(err)
	}
	for range 100 {
		if _, err := s.Append(ctx, "sess/s", []byte(`{"jsonrpc":"2.0","method":"notifications/message"}`)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		n := 0
		if _, err := s.Replay(ctx, first, func(ports.Event) error { n++; return nil }); err != nil || n != 100 {
			b.Fatal(n, err)
		}
	}
}

// Instances behind a load balancer share sessions and SSE events through
// one Redis: a stream cut at one instance resumes at any other, and the
// session's own stream (GET) follows what every instance sends to it. (The
// cross-instance behaviour through mcphttp is tested by the cluster tests
// of this package.)
func ExampleNewEventStore() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	events := mcpredis.NewEventStore(rdb, mcpredis.EventStoreOptions{})
	defer events.Close()
	s, err := hexmcp.New(hexmcp.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	http.Handle("/mcp", s.HTTPHandler(mcphttp.Options{
		SessionStore: mcpredis.NewSessionStore(rdb, mcpredis.SessionStoreOptions{}),
		EventStore:   events,
	}))
}

// watchXY makes two event stores on a fresh prefix, a on ca and b on cb,
// b watching the streams x and y until the test ends; it returns once
// both subscriptions are in effect (counted through c) and have woken
// their watchers.
func watchXY(t *testing.T, c, ca, cb redis.UniversalClient) (prefix string, a *mcpredis.EventStore, wx, wy <-chan struct{}) {
	t.Helper()
	prefix = freshPrefix()
	a = events(t, ca, mcpredis.EventStoreOptions{Prefix: prefix})
	b := events(t, cb, mcpredis.EventStoreOptions{Prefix: prefix})
	wx, stopX := b.Watch("x")
	t.Cleanup(stopX)
	wy, stopY := b.Watch("y")
	t.Cleanup(stopY)
	eventually(t, "the subscriptions", func() bool { return subscribers(t, c, prefix, "x") == 1 && subscribers(t, c, prefix, "y") == 1 })
	waitWake(t, "x's subscription", wx)
	waitWake(t, "y's subscription", wy)
	return prefix, a, wx, wy
}

// benchStore is an event store on a fresh prefix of a local redis-server,
// closed with its client when the benchmark ends.
func benchStore(b *testing.B) *mcpredis.EventStore {
	b.Helper()
	srv := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	b.Cleanup(func() { c.Close() })
	s := mcpredis.NewEventStore(c, mcpredis.EventStoreOptions{Prefix: freshPrefix()})
	b.Cleanup(func() { s.Close() })
	return s
}
