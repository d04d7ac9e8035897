package porttest

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// collector records the notices a subscription gets.
type collector struct {
	mu    sync.Mutex
	got   []ports.Notice
	calls atomic.Int64
}

func (c *collector) fn(n ports.Notice) {
	c.calls.Add(1)
	c.mu.Lock()
	c.got = append(c.got, n)
	c.mu.Unlock()
}

func (c *collector) notices() []ports.Notice {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ports.Notice(nil), c.got...)
}

// wait polls until ok holds for the notices got, failing t at waitFor.
func (c *collector) wait(t *testing.T, what string, ok func([]ports.Notice) bool) []ports.Notice {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		got := c.notices()
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; got %d notices: %s", what, waitFor, len(got), noticeSummary(got))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitN waits for at least n notices.
func (c *collector) waitN(t *testing.T, what string, n int) []ports.Notice {
	t.Helper()
	return c.wait(t, what, func(got []ports.Notice) bool { return len(got) >= n })
}

// waitID waits for the notice id.
func (c *collector) waitID(t *testing.T, what, id string) []ports.Notice {
	t.Helper()
	return c.wait(t, what, func(got []ports.Notice) bool { return hasID(got, id) })
}

func hasID(got []ports.Notice, id string) bool {
	for _, n := range got {
		if n.ID == id {
			return true
		}
	}
	return false
}

func noticeSummary(got []ports.Notice) string {
	var b strings.Builder
	for i, n := range got {
		if i == 20 {
			fmt.Fprintf(&b, " ... (%d more)", len(got)-i)
			break
		}
		fmt.Fprintf(&b, " %s", describeNotice(n))
	}
	return b.String()
}

func describeNotice(n ports.Notice) string {
	data := "nil"
	if n.Data != nil {
		data = fmt.Sprintf("%d bytes", len(n.Data))
	}
	return fmt.Sprintf("{Kind:%q ID:%q Origin:%q URI:%q Session:%q Data:%s}", n.Kind, n.ID, n.Origin, n.URI, n.Session, data)
}

// reaches publishes marks on b until c gets one, which it does once its
// queue has room (a mark that finds it full may be dropped), and returns
// what c got; it fails t at waitFor.
func reaches(t *testing.T, b ports.NotificationBus, c *collector, name, what string) []ports.Notice {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for k := 0; ; k++ {
		id := fmt.Sprintf("mark-%s-%d", name, k)
		publish(t, b, ports.Notice{Kind: ports.NoticeToolsChanged, ID: id, Origin: "mark"})
		for range 10 {
			if got := c.notices(); hasID(got, id) {
				return got
			}
			time.Sleep(5 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no new notice within %v", what, waitFor)
		}
	}
}

func publish(t *testing.T, b ports.NotificationBus, n ports.Notice) {
	t.Helper()
	if err := b.Publish(ctx, n); err != nil {
		t.Fatalf("Publish %s: %v", describeNotice(n), err)
	}
}

func notice(origin string, i int) ports.Notice {
	return ports.Notice{Kind: ports.NoticeToolsChanged, ID: origin + "-" + strconv.Itoa(i), Origin: origin}
}

// seq returns the number i of a notice "<origin>-<i>" of origin, or -1.
func seq(n ports.Notice, origin string) int {
	rest, ok := strings.CutPrefix(n.ID, origin+"-")
	if !ok || n.Origin != origin {
		return -1
	}
	i, err := strconv.Atoi(rest)
	if err != nil {
		return -1
	}
	return i
}

// inOrder checks that the notices of origin in got are numbered
// increasingly; complete asks for every one of 0..total-1.
func inOrder(t *testing.T, who string, got []ports.Notice, origin string, total int, complete bool) {
	t.Helper()
	last, count := -1, 0
	for _, n := range got {
		i := seq(n, origin)
		if i < 0 {
			continue
		}
		if i <= last {
			t.Fatalf("%s: notice %s-%d after %s-%d: the order of one publisher was not kept (or a notice came twice)", who, origin, i, origin, last)
		}
		if complete && i != last+1 {
			t.Fatalf("%s: notice %s-%d after %s-%d: %d lost", who, origin, i, origin, last, i-last-1)
		}
		last = i
		count++
	}
	if complete && count != total {
		t.Fatalf("%s: %d notices of %s, want %d", who, count, origin, total)
	}
}

// bigData returns n bytes of every value, not valid UTF-8 nor JSON.
func bigData(n, seed int) []byte {
	b := make([]byte, n)
	x := uint32(seed*2654435761 + 1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// variety returns notices that exercise every field: empty and nil Data,
// binary Data, text with quotes, newlines and non-ASCII letters, an
// unknown kind, and a large Data.
func variety() []ports.Notice {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	return []ports.Notice{
		{Kind: ports.NoticeToolsChanged, ID: "v-0", Origin: "inst-a"},
		{Kind: ports.NoticeResourcesChanged, ID: "v-1", Origin: "inst-a"},
		{Kind: ports.NoticePromptsChanged, ID: "v-2", Origin: "inst-b"},
		{Kind: ports.NoticeVisibilityChanged, ID: "v-3", Origin: "inst-b"},
		{Kind: ports.NoticeResourceUpdated, ID: "v-4", Origin: "inst-a", URI: "file:///tmp/r\u00e9sum\u00e9 \"q\"\n\x00.txt"},
		{Kind: ports.NoticeClientResponse, ID: "v-5", Origin: "inst-b", Session: "sess-\u4e16\u754c",
			Data: []byte(`{"jsonrpc":"2.0","id":7,"result":{"action":"accept","content":{"name":"\u00e9"}}}`)},
		{Kind: ports.NoticeClientResponse, ID: "v-6", Origin: "inst-a", Session: "s", Data: []byte{}},
		{Kind: ports.NoticeClientResponse, ID: "v-7", Origin: "inst-a", Session: "s", Data: all},
		{Kind: "future_kind", ID: "v-8", Origin: strings.Repeat("o", 300), URI: strings.Repeat("u", 1000), Session: strings.Repeat("s", 500), Data: []byte("not json")},
		{Kind: ports.NoticeClientResponse, ID: "v-9", Origin: "inst-b", Session: "s", Data: bigData(1<<20-4<<10, 9)},
		{ID: "v-10"},
	}
}

func cloneNotices(ns []ports.Notice) []ports.Notice {
	out := make([]ports.Notice, len(ns))
	for i, n := range ns {
		n.Data = bytes.Clone(n.Data)
		out[i] = n
	}
	return out
}

// TestBus checks buses made fresh by newBus for each subtest: newBus returns
// at least two buses on one backend, as the instances of one server would
// have them (the same value twice is fine for a bus that instances share
// by sharing the value). Every subscription TestBus makes is stopped before
// its subtest ends.
//
// TestBus expects of a bus: a notice published on any of the buses reaches
// every subscription on every bus, the publisher's own included, with its
// fields intact (Data byte for byte, nil Data as nil and empty Data as
// empty); the notices of one publisher (one goroutine publishing in turn)
// arrive in order; a subscription's queue holds at least 1,000 small
// notices and carries notices of up to 1 MiB; stop waits for a running
// function and no call follows it; a notice with 32 MiB of Data is refused
// with an error wrapping [ports.ErrNoticeTooLarge] (Redis, for one,
// disconnects a subscriber whose output passes 32 MB); and a subscriber
// that does not return holds up neither Publish nor the other
// subscribers. Delivery is at most once: where a bus may drop (a stuck
// subscriber's queue), TestBus asks only for order.
func TestBus(t *testing.T, newBus func(t *testing.T) []ports.NotificationBus) {
	buses := func(t *testing.T) []ports.NotificationBus {
		t.Helper()
		bs := newBus(t)
		if len(bs) < 2 {
			t.Fatalf("newBus returned %d buses, want at least 2", len(bs))
		}
		return bs
	}

	t.Run("ReachesEverySubscriberIntact", func(t *testing.T) {
		bs := buses(t)
		for p := range bs {
			t.Run(fmt.Sprintf("PublishedOn%d", p), func(t *testing.T) {
				cs := make([]*collector, len(bs))
				for i, b := range bs {
					cs[i] = &collector{}
					defer b.Subscribe(cs[i].fn)()
				}
				want := variety()
				sent := cloneNotices(want)
				for _, n := range sent {
					publish(t, bs[p], n)
				}
				// the bus keeps no reference to what the publisher may
				// reuse once Publish returned
				for _, n := range sent {
					for i := range n.Data {
						n.Data[i] ^= 0xff
					}
				}
				for i, c := range cs {
					got := c.waitN(t, fmt.Sprintf("subscriber on bus %d", i), len(want))
					if len(got) != len(want) {
						t.Fatalf("subscriber on bus %d got %d notices, %d were published:%s", i, len(got), len(want), noticeSummary(got))
					}
					for k := range want {
						if !reflect.DeepEqual(got[k], want[k]) {
							t.Fatalf("subscriber on bus %d, notice %d:\n got %s\nwant %s", i, k, describeNotice(got[k]), describeNotice(want[k]))
						}
					}
				}
			})
		}
	})

	t.Run("OrderOfOnePublisher", func(t *testing.T) {
		bs := buses(t)
		cs := make([]*collector, len(bs))
		for i, b := range bs {
			cs[i] = &collector{}
			defer b.Subscribe(cs[i].fn)()
		}
		const total = 500
		for i := range total {
			publish(t, bs[0], notice("p", i))
		}
		for i, c := range cs {
			got := c.waitN(t, fmt.Sprintf("subscriber on bus %d", i), total)
			inOrder(t, fmt.Sprintf("subscriber on bus %d", i), got, "p", total, true)
		}
	})

	t.Run("SeveralSubscribersOnOneBus", func(t *testing.T) {
		bs := buses(t)
		var cs []*collector
		for i, b := range bs {
			n := 1
			if i == 0 {
				n = 3
			}
			for range n {
				c := &collector{}
				cs = append(cs, c)
				defer b.Subscribe(c.fn)()
			}
		}
		const total = 50
		for i := range total {
			publish(t, bs[len(bs)-1], notice("q", i))
		}
		for i, c := range cs {
			got := c.waitN(t, fmt.Sprintf("subscriber %d", i), total)
			inOrder(t, fmt.Sprintf("subscriber %d", i), got, "q", total, true)
		}
	})

	t.Run("StopWaitsForRunningFunction", func(t *testing.T) {
		bs := buses(t)
		entered, release := make(chan struct{}), make(chan struct{})
		var returned, calls atomic.Int64
		stop := bs[1].Subscribe(func(ports.Notice) {
			if calls.Add(1) == 1 {
				close(entered)
				<-release
				time.Sleep(10 * time.Millisecond) // a stop that does not wait returns meanwhile
				returned.Add(1)
			}
		})
		publish(t, bs[0], notice("w", 0))
		select {
		case <-entered:
		case <-time.After(waitFor):
			stop()
			t.Fatal("the notice did not reach the subscriber")
		}
		// more notices queue behind the running function
		for i := 1; i <= 10; i++ {
			publish(t, bs[0], notice("w", i))
		}
		stopped := make(chan struct{})
		go func() {
			stop()
			close(stopped)
		}()
		time.Sleep(50 * time.Millisecond) // gives a stop that does not wait time to return
		select {
		case <-stopped:
			close(release)
			t.Fatal("stop returned while the subscriber's function was running")
		default:
		}
		close(release)
		select {
		case <-stopped:
		case <-time.After(waitFor):
			t.Fatal("stop did not return after the function did")
		}
		if returned.Load() != 1 {
			t.Fatal("stop returned before the running function did")
		}
		after := calls.Load()
		// nothing after stop, neither the queued notices nor new ones
		other := &collector{}
		defer bs[1].Subscribe(other.fn)()
		for i := 11; i < 30; i++ {
			publish(t, bs[0], notice("w", i))
		}
		other.waitID(t, "a subscriber on the same bus", "w-29")
		if n := calls.Load(); n != after {
			t.Fatalf("the function was called %d times after stop returned", n-after)
		}
		stop() // again: returns at once
	})

	t.Run("NoCallAfterStop", func(t *testing.T) {
		bs := buses(t)
		stopped := &collector{}
		live := &collector{}
		defer bs[0].Subscribe(live.fn)()
		stop := bs[0].Subscribe(stopped.fn)
		publish(t, bs[1], notice("s", 0))
		stopped.waitID(t, "the subscriber before stop", "s-0")
		stop()
		stop()
		n := stopped.calls.Load()
		for i := 1; i <= 100; i++ {
			publish(t, bs[i%len(bs)], notice("s", i))
		}
		live.waitID(t, "a subscriber still on", "s-100")
		if got := stopped.calls.Load(); got != n {
			t.Fatalf("a stopped subscription got %d notices", got-n)
		}
	})

	t.Run("SubscribeAgain", func(t *testing.T) {
		bs := buses(t)
		for round := range 3 {
			c := &collector{}
			stop := bs[1].Subscribe(c.fn)
			id := fmt.Sprintf("r-%d", round)
			publish(t, bs[0], ports.Notice{Kind: ports.NoticeToolsChanged, ID: id, Origin: "r"})
			c.waitID(t, fmt.Sprintf("round %d", round), id)
			stop()
		}
	})

	t.Run("HugeNoticeRefused", func(t *testing.T) {
		bs := buses(t)
		c := &collector{}
		defer bs[1].Subscribe(c.fn)()
		huge := ports.Notice{Kind: ports.NoticeClientResponse, ID: "huge", Origin: "h", Session: "s", Data: bigData(32<<20, 1)}
		err := bs[0].Publish(ctx, huge)
		if !errors.Is(err, ports.ErrNoticeTooLarge) {
			t.Fatalf("Publish of a notice with 32 MiB of Data: %v, want an error wrapping ports.ErrNoticeTooLarge", err)
		}
		publish(t, bs[0], notice("h", 0))
		got := c.waitID(t, "a notice after the refused one", "h-0")
		if hasID(got, "huge") {
			t.Fatal("the refused notice was delivered")
		}
	})

	t.Run("SlowSubscriberHoldsNobodyUp", func(t *testing.T) {
		bs := buses(t)
		release := make(chan struct{})
		var releaseOnce sync.Once
		unblock := func() { releaseOnce.Do(func() { close(release) }) }
		entered := make(chan struct{})
		var enteredOnce sync.Once
		slow := &collector{}
		defer bs[1].Subscribe(func(n ports.Notice) {
			enteredOnce.Do(func() { close(entered) })
			<-release
			slow.fn(n)
		})()
		fast := make([]*collector, len(bs))
		for i, b := range bs {
			fast[i] = &collector{}
			defer b.Subscribe(fast[i].fn)()
		}
		defer unblock() // before the stops, which wait for the function
		publish(t, bs[0], notice("slow", 0))
		select {
		case <-entered:
		case <-time.After(waitFor):
			t.Fatal("the first notice did not reach the slow subscriber")
		}
		// well past any queue: Publish must go on, on every bus
		const total = 3000
		done := make(chan error, 1)
		go func() {
			for i := 1; i < total; i++ {
				if err := bs[i%len(bs)].Publish(ctx, notice("slow", i)); err != nil {
					done <- fmt.Errorf("Publish %d: %w", i, err)
					return
				}
			}
			done <- nil
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(waitFor):
			t.Fatalf("Publish blocked behind a subscriber that does not return")
		}
		// the other subscribers go on (they may drop too: at most once)
		for i, c := range fast {
			got := reaches(t, bs[0], c, fmt.Sprintf("fast%d", i), fmt.Sprintf("a fast subscriber on bus %d while another is stuck", i))
			inOrder(t, fmt.Sprintf("fast subscriber on bus %d", i), got, "slow", total, false)
		}
		// the slow one, released, catches up
		unblock()
		got := reaches(t, bs[0], slow, "slow", "the slow subscriber, released")
		inOrder(t, "the slow subscriber", got, "slow", total, false)
	})

	t.Run("Concurrent", func(t *testing.T) {
		bs := buses(t)
		const publishers, each = 4, 100 // per bus: 800 notices for two buses
		cs := make([]*collector, len(bs))
		for i, b := range bs {
			cs[i] = &collector{}
			defer b.Subscribe(cs[i].fn)()
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(bs)*publishers)
		for bi, b := range bs {
			for p := range publishers {
				origin := fmt.Sprintf("b%dp%d", bi, p)
				wg.Go(func() {
					for i := range each {
						if err := b.Publish(ctx, notice(origin, i)); err != nil {
							errs <- err
							return
						}
					}
				})
			}
		}
		// subscriptions come and go meanwhile
		stopChurn := make(chan struct{})
		var churn sync.WaitGroup
		var lateCalls atomic.Int64
		for bi, b := range bs {
			churn.Go(func() {
				for k := 0; ; k++ {
					select {
					case <-stopChurn:
						return
					default:
					}
					var stopped atomic.Bool
					stop := b.Subscribe(func(ports.Notice) {
						if stopped.Load() {
							lateCalls.Add(1)
						}
					})
					if (k+bi)%2 == 0 {
						time.Sleep(time.Millisecond)
					}
					stop()
					stopped.Store(true)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("Publish: %v", err)
		}
		for i, c := range cs {
			got := c.waitN(t, fmt.Sprintf("subscriber on bus %d", i), len(bs)*publishers*each)
			for bi := range bs {
				for p := range publishers {
					inOrder(t, fmt.Sprintf("subscriber on bus %d", i), got, fmt.Sprintf("b%dp%d", bi, p), each, true)
				}
			}
		}
		close(stopChurn)
		churn.Wait()
		if n := lateCalls.Load(); n != 0 {
			t.Fatalf("%d calls after stop returned", n)
		}
	})
}

// TestAddressedBus checks the addressing of buses made by newBus (as for
// [TestBus], two instances at least) that implement [ports.AddressedBus]: a
// notice with an empty To reaches every subscription, those made with
// SubscribeAs and with Subscribe; one addressed to a name reaches the
// subscriptions made as that name only, on whichever bus they were made,
// with every field intact (To included), and a notice addressed to a name
// nobody subscribed as reaches nobody; several subscriptions as one name
// each get it; a name whose subscriptions all stopped gets nothing, and
// gets its notices again once subscribed anew.
func TestAddressedBus(t *testing.T, newBus func(t *testing.T) []ports.AddressedBus) {
	bs := newBus(t)
	if len(bs) < 2 {
		t.Fatalf("newBus returned %d buses, want at least 2", len(bs))
	}
	a, a2, b, plain := &collector{}, &collector{}, &collector{}, &collector{}
	defer bs[0].SubscribeAs("inst-a", a.fn)()
	defer bs[0].SubscribeAs("inst-a", a2.fn)()
	defer bs[1].SubscribeAs("inst-b", b.fn)()
	defer bs[1].Subscribe(plain.fn)()
	for p, pub := range bs {
		sfx := "-" + strconv.Itoa(p)
		sent := []ports.Notice{
			{Kind: ports.NoticeToolsChanged, ID: "all" + sfx, Origin: "o"},
			{Kind: ports.NoticeClientResponse, ID: "to-b" + sfx, Origin: "o", To: "inst-b", Session: "s", Data: []byte(`{"jsonrpc":"2.0","id":"x-1","result":{}}`)},
			{Kind: ports.NoticeClientResponse, ID: "to-a" + sfx, Origin: "o", To: "inst-a", Session: "s", Data: []byte{}},
			{Kind: ports.NoticeClientResponse, ID: "to-nobody" + sfx, Origin: "o", To: "inst-c", Session: "s"},
			{Kind: ports.NoticeToolsChanged, ID: "last" + sfx, Origin: "o"},
		}
		for _, n := range sent {
			publish(t, pub, n)
		}
		want := map[*collector][]string{
			a:     {"all" + sfx, "to-a" + sfx, "last" + sfx},
			a2:    {"all" + sfx, "to-a" + sfx, "last" + sfx},
			b:     {"all" + sfx, "to-b" + sfx, "last" + sfx},
			plain: {"all" + sfx, "last" + sfx},
		}
		names := map[*collector]string{a: "inst-a", a2: "inst-a (second)", b: "inst-b", plain: "a subscription without name"}
		for c, ids := range want {
			// the last notice of the publisher came: the others did too,
			// or never will
			got := c.waitID(t, names[c], "last"+sfx)
			var gotIDs []string
			for _, n := range got {
				if strings.HasSuffix(n.ID, sfx) {
					gotIDs = append(gotIDs, n.ID)
				}
			}
			if !slices.Equal(gotIDs, ids) {
				t.Fatalf("published on bus %d: %s got %v, want %v", p, names[c], gotIDs, ids)
			}
			for _, n := range got {
				for _, s := range sent {
					if s.ID == n.ID && !reflect.DeepEqual(n, s) {
						t.Fatalf("%s got %s, want %s", names[c], describeNotice(n), describeNotice(s))
					}
				}
			}
		}
	}

	// A name whose every subscription stopped gets nothing, and its
	// notices again once subscribed anew.
	c := &collector{}
	stop := bs[1].SubscribeAs("inst-d", c.fn)
	publish(t, bs[0], ports.Notice{Kind: ports.NoticeToolsChanged, ID: "d-0", Origin: "o", To: "inst-d"})
	c.waitID(t, "inst-d", "d-0")
	stop()
	publish(t, bs[0], ports.Notice{Kind: ports.NoticeToolsChanged, ID: "d-1", Origin: "o", To: "inst-d"})
	publish(t, bs[0], ports.Notice{Kind: ports.NoticeToolsChanged, ID: "d-2", Origin: "o"})
	plain.waitID(t, "a subscription without name", "d-2")
	again := &collector{}
	defer bs[1].SubscribeAs("inst-d", again.fn)()
	publish(t, bs[0], ports.Notice{Kind: ports.NoticeToolsChanged, ID: "d-3", Origin: "o", To: "inst-d"})
	got := again.waitID(t, "inst-d subscribed anew", "d-3")
	if hasID(got, "d-1") || hasID(c.notices(), "d-1") {
		t.Fatal("a notice addressed to a name without subscription was delivered")
	}
}

// TestBusSizeLimit checks the size bound of buses made by newBus (as for
// [TestBus]): a notice whose Data is maxNoticeBytes less 512 bytes, with short
// other fields, is carried intact (a bus may count its fields and some
// overhead against the bound); one whose Data alone is over maxNoticeBytes
// is refused with an error wrapping [ports.ErrNoticeTooLarge] and reaches
// nobody.
func TestBusSizeLimit(t *testing.T, maxNoticeBytes int, newBus func(t *testing.T) []ports.NotificationBus) {
	if maxNoticeBytes <= 512 {
		t.Fatalf("TestBusSizeLimit needs a bound over 512 bytes, got %d", maxNoticeBytes)
	}
	bs := newBus(t)
	if len(bs) < 2 {
		t.Fatalf("newBus returned %d buses, want at least 2", len(bs))
	}
	c := &collector{}
	defer bs[1].Subscribe(c.fn)()
	fits := ports.Notice{Kind: ports.NoticeClientResponse, ID: "fits", Origin: "o", Session: "s", Data: bigData(maxNoticeBytes-512, 2)}
	over := ports.Notice{Kind: ports.NoticeClientResponse, ID: "over", Origin: "o", Session: "s", Data: bigData(maxNoticeBytes+1, 3)}
	if err := bs[0].Publish(ctx, over); !errors.Is(err, ports.ErrNoticeTooLarge) {
		t.Fatalf("Publish of %d bytes of Data, the bound being %d: %v, want an error wrapping ports.ErrNoticeTooLarge", len(over.Data), maxNoticeBytes, err)
	}
	publish(t, bs[0], fits)
	got := c.waitID(t, "a notice within the bound", "fits")
	if hasID(got, "over") {
		t.Fatal("the refused notice was delivered")
	}
	for _, n := range got {
		if n.ID == "fits" && !reflect.DeepEqual(n, fits) {
			t.Fatalf("got %s, want %s (or its Data differs)", describeNotice(n), describeNotice(fits))
		}
	}
}

// NoGoroutines fails t when goroutines whose stacks name one of marks (a
// package path, a function) are still running after 5 seconds: an
// adapter's test calls it once every subscription stopped and every bus
// was closed.
func NoGoroutines(t testing.TB, marks ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := goroutinesNaming(marks)
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left running:\n%s", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func goroutinesNaming(marks []string) string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "porttest.goroutinesNaming") {
			continue
		}
		for _, mark := range marks {
			if strings.Contains(g, mark) {
				out = append(out, g)
				break
			}
		}
	}
	return strings.Join(out, "\n\n")
}
