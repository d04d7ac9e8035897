package memory_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// busGoroutines names the goroutines of the bus, for testtools.NoGoroutines.
const busGoroutines = "adapters/memory.(*busSub)"

func TestBusContract(t *testing.T) {
	newBus := func(t *testing.T) []ports.NotificationBus {
		t.Cleanup(func() { testtools.NoGoroutines(t, busGoroutines) })
		b := memory.NewBus(memory.BusOptions{})
		return []ports.NotificationBus{b, b}
	}
	porttest.TestBus(t, newBus)
	porttest.TestBusSizeLimit(t, portlimits.DefaultMaxNoticeBytes, newBus)
	t.Run("SmallerLimit", func(t *testing.T) {
		porttest.TestBusSizeLimit(t, 4096, func(t *testing.T) []ports.NotificationBus {
			b := memory.NewBus(memory.BusOptions{MaxNoticeBytes: 4096})
			return []ports.NotificationBus{b, b}
		})
	})
	t.Run("Addressed", func(t *testing.T) {
		porttest.TestAddressedBus(t, func(t *testing.T) []ports.AddressedBus {
			t.Cleanup(func() { testtools.NoGoroutines(t, busGoroutines) })
			b := memory.NewBus(memory.BusOptions{})
			return []ports.AddressedBus{b, b}
		})
	})
}

// stuck subscribes a function that blocks on its first notice until
// free is called, and records what it gets; entered is closed when the
// first notice arrived. Its stop frees it first.
type stuck struct {
	entered, release chan struct{}
	once             sync.Once
	mu               sync.Mutex
	got              []string
}

func (s *stuck) free() { s.once.Do(func() { close(s.release) }) }

func subscribeStuck(b *memory.Bus) (*stuck, func()) {
	s := &stuck{entered: make(chan struct{}), release: make(chan struct{})}
	var once sync.Once
	stop := b.Subscribe(func(n ports.Notice) {
		once.Do(func() {
			close(s.entered)
			<-s.release
		})
		s.mu.Lock()
		s.got = append(s.got, n.ID)
		s.mu.Unlock()
	})
	return s, func() { s.free(); stop() }
}

func (s *stuck) ids() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

func waitIDs(t *testing.T, s *stuck, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := s.ids()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d notices, want %d: %v", len(got), n, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func id(i int) ports.Notice {
	return ports.Notice{Kind: ports.NoticeToolsChanged, ID: fmt.Sprintf("n%03d", i), Origin: "o"}
}

// A full queue drops the newest notices for that subscriber only, counts
// them, warns once per overflow, and delivers what it kept in order.
func TestBusQueueBoundDropsNewest(t *testing.T) {
	defer testtools.NoGoroutines(t, busGoroutines)
	log := &testtools.LogRecorder{}
	b := memory.NewBus(memory.BusOptions{MaxQueuedNotices: 10, Logger: log})
	ctx := context.Background()
	s, stop := subscribeStuck(b)
	defer stop()
	if err := b.Publish(ctx, id(0)); err != nil {
		t.Fatal(err)
	}
	<-s.entered // n000 is being handled; the queue is empty
	for i := 1; i <= 100; i++ {
		if err := b.Publish(ctx, id(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.Dropped(); got != 90 {
		t.Fatalf("Dropped() = %d, want 90 (10 of 100 queued)", got)
	}
	warnings := len(log.Messages())
	if warnings != 1 || !log.Has("queue is full") {
		t.Fatalf("warnings %q, want one about the full queue", log.Messages())
	}
	s.free()
	got := waitIDs(t, s, 11)
	want := []string{"n000", "n001", "n002", "n003", "n004", "n005", "n006", "n007", "n008", "n009", "n010"}
	if !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	// caught up: new notices are delivered, and a new overflow would warn
	// again
	if err := b.Publish(ctx, id(200)); err != nil {
		t.Fatal(err)
	}
	if got := waitIDs(t, s, 12); got[11] != "n200" {
		t.Fatalf("after catching up got %v", got)
	}
	if b.Dropped() != 90 || len(log.Messages()) != 1 {
		t.Fatalf("Dropped() = %d, %d warnings after catching up", b.Dropped(), len(log.Messages()))
	}
}

// The other subscribers of a bus keep everything while one is stuck.
func TestBusOneStuckSubscriberOthersComplete(t *testing.T) {
	defer testtools.NoGoroutines(t, busGoroutines)
	b := memory.NewBus(memory.BusOptions{MaxQueuedNotices: 4})
	s, stop := subscribeStuck(b)
	defer stop()
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	defer b.Subscribe(func(n ports.Notice) {
		mu.Lock()
		got = append(got, n.ID)
		if len(got) == 50 {
			close(done)
		}
		mu.Unlock()
	})()
	ctx := context.Background()
	for i := range 50 {
		if err := b.Publish(ctx, id(i)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-s.entered
		}
		// the other subscriber keeps up: its queue of 4 never fills
		waitLen(t, &mu, &got, i+1)
	}
	<-done
	if b.Dropped() != 50-1-4 {
		t.Fatalf("Dropped() = %d, want %d (the stuck one's)", b.Dropped(), 50-1-4)
	}
	s.free()
}

func waitLen(t *testing.T, mu *sync.Mutex, got *[]string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		l := len(*got)
		mu.Unlock()
		if l >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d notices, want %d", l, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// The queue is bounded in bytes too (NoticeSize), never below one notice
// of MaxNoticeBytes.
func TestBusQueueByteBound(t *testing.T) {
	defer testtools.NoGoroutines(t, busGoroutines)
	ctx := context.Background()
	sized := func(i, size int) ports.Notice {
		n := id(i) // Kind "tools_changed" (13) + ID (4) + Origin (1)
		n.Data = make([]byte, size-18)
		if portlimits.NoticeSize(n) != size {
			t.Fatalf("NoticeSize = %d, want %d", portlimits.NoticeSize(n), size)
		}
		return n
	}
	b := memory.NewBus(memory.BusOptions{MaxNoticeBytes: 500, MaxQueuedNoticeBytes: 1000})
	s, stop := subscribeStuck(b)
	if err := b.Publish(ctx, id(0)); err != nil {
		t.Fatal(err)
	}
	<-s.entered
	for i := 1; i <= 5; i++ { // 4 × 250 fill 1000 bytes; the 5th is dropped
		if err := b.Publish(ctx, sized(i, 250)); err != nil {
			t.Fatal(err)
		}
	}
	if b.Dropped() != 1 {
		t.Fatalf("Dropped() = %d, want 1", b.Dropped())
	}
	s.free()
	if got := waitIDs(t, s, 5); !slices.Equal(got, []string{"n000", "n001", "n002", "n003", "n004"}) {
		t.Fatalf("delivered %v", got)
	}
	stop()

	// a byte bound below MaxNoticeBytes is raised to it
	b = memory.NewBus(memory.BusOptions{MaxNoticeBytes: 5000, MaxQueuedNoticeBytes: 100})
	s, stop = subscribeStuck(b)
	defer stop()
	if err := b.Publish(ctx, id(0)); err != nil {
		t.Fatal(err)
	}
	<-s.entered
	if err := b.Publish(ctx, sized(1, 5000)); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, sized(2, 18)); err != nil { // no room left
		t.Fatal(err)
	}
	if b.Dropped() != 1 {
		t.Fatalf("Dropped() = %d, want 1: a notice of MaxNoticeBytes fits an empty queue, nothing beside it", b.Dropped())
	}
	s.free()
	if got := waitIDs(t, s, 2); !slices.Equal(got, []string{"n000", "n001"}) {
		t.Fatalf("delivered %v", got)
	}
}

// Zero and negative options take the defaults: MaxNoticeBytes counts
// NoticeSize exactly.
func TestBusDefaults(t *testing.T) {
	ctx := context.Background()
	for _, opts := range []memory.BusOptions{{}, {MaxNoticeBytes: -1, MaxQueuedNotices: -1, MaxQueuedNoticeBytes: -1}} {
		b := memory.NewBus(opts)
		n := ports.Notice{Kind: ports.NoticeClientResponse, ID: "i", Origin: "o", Session: "s"}
		n.Data = make([]byte, portlimits.DefaultMaxNoticeBytes-portlimits.NoticeSize(n))
		if err := b.Publish(ctx, n); err != nil {
			t.Fatalf("a notice of DefaultMaxNoticeBytes: %v", err)
		}
		n.Data = append(n.Data, 0)
		if err := b.Publish(ctx, n); !errors.Is(err, ports.ErrNoticeTooLarge) {
			t.Fatalf("a notice of DefaultMaxNoticeBytes+1: %v", err)
		}
		// the queue takes DefaultMaxQueuedNotices besides the one handled
		s, stop := subscribeStuck(b)
		for i := range portlimits.DefaultMaxQueuedNotices + 10 {
			if err := b.Publish(ctx, id(i)); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				<-s.entered
			}
		}
		if b.Dropped() != 9 {
			t.Fatalf("Dropped() = %d, want 9", b.Dropped())
		}
		s.free()
		waitIDs(t, s, portlimits.DefaultMaxQueuedNotices+1)
		stop()
	}
	testtools.NoGoroutines(t, busGoroutines)
}

// A done context publishes nothing.
func TestBusPublishDoneContext(t *testing.T) {
	b := memory.NewBus(memory.BusOptions{})
	var calls atomic.Int64
	stop := b.Subscribe(func(ports.Notice) { calls.Add(1) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Publish(ctx, id(0)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Publish with a canceled context: %v", err)
	}
	stop()
	if calls.Load() != 0 {
		t.Fatal("a notice published with a canceled context was delivered")
	}
}
