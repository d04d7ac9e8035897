package porttest

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

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
	runSuite(t, busSuite{newBus: newBus})
}

// busSuite holds the subtests of [TestBus], one method each.
type busSuite struct {
	newBus busMaker
}

func (suite busSuite) ReachesEverySubscriberIntact(t *testing.T) {
	bs := twoOrMore(t, suite.newBus)
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
}

func (suite busSuite) OrderOfOnePublisher(t *testing.T) {
	bs := twoOrMore(t, suite.newBus)
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
}

func (suite busSuite) SeveralSubscribersOnOneBus(t *testing.T) {
	bs := twoOrMore(t, suite.newBus)
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
}

func (suite busSuite) StopWaitsForRunningFunction(t *testing.T) {
	bs := twoOrMore(t, suite.newBus)
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
}

func (suite busSuite) NoCallAfterStop(t *testing.T) {
	bs := twoOrMore(t, suite.newBus)
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
}

func (suite busSuite) SubscribeAgain(t *testing.T) {
	bs := twoOrMore(t, suite.newBus)
	for round := range 3 {
		c := &collector{}
		stop := bs[1].Subscribe(c.fn)
		id := fmt.Sprintf("r-%d", round)
		publish(t, bs[0], ports.Notice{Kind: ports.NoticeToolsChanged, ID: id, Origin: "r"})
		c.waitID(t, fmt.Sprintf("round %d", round), id)
		stop()
	}
}

func (suite busSuite) HugeNoticeRefused(t *testing.T) {
	bs := twoOrMore(t, suite.newBus)
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
}

func (suite busSuite) SlowSubscriberHoldsNobodyUp(t *testing.T) {
	bs := twoOrMore(t, suite.newBus)
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
}

func (suite busSuite) Concurrent(t *testing.T) {
	bs := twoOrMore(t, suite.newBus)
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
}

// busMaker makes buses on one fresh backend.
type busMaker = func(t *testing.T) []ports.NotificationBus
