package memory_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

func TestSessionStorePendingContract(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		porttest.TestSessionPending(t, portlimits.DefaultSessionPendingTimeout, portlimits.DefaultSessionIdleTimeout, func(_ *testing.T, c ports.Clock) ports.SessionStore {
			return memory.NewSessionStore(memory.SessionStoreOptions{Clock: c})
		})
	})
	t.Run("10s of 1m", func(t *testing.T) {
		porttest.TestSessionPending(t, 10*time.Second, time.Minute, func(_ *testing.T, c ports.Clock) ports.SessionStore {
			return memory.NewSessionStore(memory.SessionStoreOptions{PendingTimeout: 10 * time.Second, IdleTimeout: time.Minute, Clock: c})
		})
	})
}

func TestSessionStorePerClientContract(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		porttest.TestSessionPerClientLimit(t, portlimits.DefaultMaxSessionsPerClient, func(_ *testing.T, c ports.Clock) ports.SessionStore {
			return memory.NewSessionStore(memory.SessionStoreOptions{Clock: c})
		})
	})
	t.Run("3", func(t *testing.T) {
		porttest.TestSessionPerClientLimit(t, 3, func(_ *testing.T, c ports.Clock) ports.SessionStore {
			return memory.NewSessionStore(memory.SessionStoreOptions{MaxSessionsPerClient: 3, Clock: c})
		})
	})
}

func newStore(opts memory.SessionStoreOptions) (*memory.SessionStore, *porttest.FakeClock) {
	c := porttest.NewFakeClock(porttest.Start)
	opts.Clock = c
	return memory.NewSessionStore(opts), c
}

// create stores a session of peer, ready or pending.
func create(t *testing.T, s ports.SessionStore, id, peer string, ready bool) {
	t.Helper()
	if err := s.Create(context.Background(), ports.SessionState{ID: id, Peer: peer, Initialized: true, Ready: ready}); err != nil {
		t.Fatalf("Create %s: %v", id, err)
	}
}

func wantLive(t *testing.T, s ports.SessionStore, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := s.Get(context.Background(), id); err != nil {
			t.Fatalf("Get %s = %v, want the session", id, err)
		}
	}
}

func wantGone(t *testing.T, s ports.SessionStore, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := s.Get(context.Background(), id); !errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatalf("Get %s = %v, want ErrSessionNotFound", id, err)
		}
	}
}

// removals records what a store reports through OnRemoved.
type removals struct {
	mu  sync.Mutex
	ids []string
}

func watch(s *memory.SessionStore) (*removals, func()) {
	r := &removals{}
	stop := s.OnRemoved(func(id string) {
		r.mu.Lock()
		r.ids = append(r.ids, id)
		r.mu.Unlock()
	})
	return r, stop
}

// take returns the ids reported since the last take, sorted.
func (r *removals) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := r.ids
	r.ids = nil
	slices.Sort(ids)
	return ids
}

func wantRemoved(t *testing.T, r *removals, want ...string) {
	t.Helper()
	if got := r.take(); !slices.Equal(got, want) {
		t.Fatalf("reported removed %q, want %q", got, want)
	}
}

// A pending session expires after PendingTimeout without activity, a
// ready one after IdleTimeout; activity keeps a pending session alive.
func TestSessionPendingTimeout(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(memory.SessionStoreOptions{IdleTimeout: 10 * time.Minute})
	create(t, s, "pending", "", false)
	create(t, s, "pinged", "", false)
	create(t, s, "ready", "", true)
	c.Advance(20 * time.Second)
	wantLive(t, s, "pinged")
	c.Advance(portlimits.DefaultSessionPendingTimeout - 20*time.Second + time.Second) // pending: 31 s, pinged: 11 s
	if n := s.Sweep(); n != 1 {
		t.Fatalf("Sweep dropped %d sessions, want 1", n)
	}
	wantGone(t, s, "pending")
	wantLive(t, s, "pinged", "ready")

	// Ready, then back to pending (a store restored from an older state):
	// the pending timeout applies again.
	if err := s.Update(ctx, ports.SessionState{ID: "pinged", Ready: true}); err != nil {
		t.Fatal(err)
	}
	c.Advance(5 * time.Minute)
	wantLive(t, s, "pinged", "ready")
	if err := s.Update(ctx, ports.SessionState{ID: "pinged"}); err != nil {
		t.Fatal(err)
	}
	c.Advance(portlimits.DefaultSessionPendingTimeout + time.Second)
	wantGone(t, s, "pinged")
	wantLive(t, s, "ready")
	c.Advance(10*time.Minute + time.Second)
	wantGone(t, s, "ready")
}

func TestSessionPendingTimeoutSettings(t *testing.T) {
	// NoPendingTimeout: pending sessions live as long as ready ones.
	s, c := newStore(memory.SessionStoreOptions{IdleTimeout: 2 * time.Minute, PendingTimeout: memory.NoPendingTimeout})
	create(t, s, "p", "", false)
	c.Advance(2 * time.Minute)
	wantLive(t, s, "p")
	c.Advance(2*time.Minute + time.Second)
	wantGone(t, s, "p")

	// A PendingTimeout longer than IdleTimeout is cut to it.
	s, c = newStore(memory.SessionStoreOptions{IdleTimeout: time.Minute, PendingTimeout: time.Hour})
	create(t, s, "p", "", false)
	c.Advance(time.Minute + time.Second)
	wantGone(t, s, "p")
}

// At MaxSessions, Create evicts the pending session seen least recently
// (idle for MinPendingIdleForEviction), else the ready one (idle for
// MinIdleForEviction), else refuses.
func TestSessionEvictionAtTotalLimit(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(memory.SessionStoreOptions{MaxSessions: 3})
	r, _ := watch(s)
	create(t, s, "r1", "a", true)
	create(t, s, "r2", "b", true)
	create(t, s, "p1", "c", false)
	err := s.Create(ctx, ports.SessionState{ID: "x", Peer: "d"})
	if !errors.Is(err, ports.ErrTooManySessions) || errors.Is(err, ports.ErrTooManySessionsForClient) {
		t.Fatalf("Create at the limit with no session idle = %v, want ErrTooManySessions (not for the client)", err)
	}
	wantRemoved(t, r)

	c.Advance(memory.DefaultMinPendingIdleForEviction)
	create(t, s, "x", "d", false) // p1 goes: pending, idle 5 s
	wantRemoved(t, r, "p1")
	wantGone(t, s, "p1")
	if n := s.Len(); n != 3 {
		t.Fatalf("Len = %d, want 3", n)
	}
	if err := s.Update(ctx, ports.SessionState{ID: "x", Peer: "d", Ready: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, ports.SessionState{ID: "y", Peer: "e", Ready: true}); !errors.Is(err, ports.ErrTooManySessions) {
		t.Fatalf("Create with only ready sessions idle 5 s = %v, want ErrTooManySessions", err)
	}

	c.Advance(25 * time.Second)
	wantLive(t, s, "r2") // r2 active
	c.Advance(memory.DefaultMinIdleForEviction - 30*time.Second)
	// r1 idle 1m, r2 30 s, x 55 s: r1 goes.
	create(t, s, "y", "e", true)
	wantGone(t, s, "r1")
	wantLive(t, s, "r2", "x", "y")
	wantRemoved(t, r, "r1")
	if n := s.Len(); n != 3 {
		t.Fatalf("Len = %d, want 3", n)
	}
}

// At MaxSessionsPerClient, Create evicts one of that client's own sessions
// (pending first), never another client's, or refuses with
// ErrTooManySessionsForClient.
func TestSessionEvictionAtClientLimit(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(memory.SessionStoreOptions{MaxSessionsPerClient: 2})
	r, _ := watch(s)
	create(t, s, "b1", "b", true) // another client's, older than all of a's
	create(t, s, "a1", "a", true)
	create(t, s, "a2", "a", true)
	err := s.Create(ctx, ports.SessionState{ID: "a3", Peer: "a", Ready: true})
	if !errors.Is(err, ports.ErrTooManySessionsForClient) || !errors.Is(err, ports.ErrTooManySessions) {
		t.Fatalf("Create past the client's limit = %v, want ErrTooManySessionsForClient wrapping ErrTooManySessions", err)
	}
	create(t, s, "b2", "b", true) // b is not held back by a
	create(t, s, "n1", "", true)  // nor are sessions without a Peer
	create(t, s, "n2", "", true)
	create(t, s, "n3", "", true)

	c.Advance(30 * time.Second)
	wantLive(t, s, "a2")
	c.Advance(memory.DefaultMinIdleForEviction - 30*time.Second)
	// a1 idle 1m: it goes, not b1 (idle as long, and older).
	create(t, s, "a3", "a", true)
	wantRemoved(t, r, "a1")
	wantGone(t, s, "a1")
	wantLive(t, s, "b1", "a2", "a3")

	// The client's pending session goes before its ready ones, even an
	// older ready one.
	if err := s.Delete(ctx, "a3"); err != nil {
		t.Fatal(err)
	}
	wantRemoved(t, r, "a3")
	create(t, s, "a4", "a", false)
	c.Advance(memory.DefaultMinIdleForEviction)
	create(t, s, "a5", "a", false) // a4, pending for 1m, has expired: room without eviction
	wantRemoved(t, r, "a4")
	c.Advance(memory.DefaultMinPendingIdleForEviction)
	// a2: ready, idle 1m5s; a5: pending, idle 5 s. a5 goes.
	create(t, s, "a6", "a", true)
	wantRemoved(t, r, "a5")
	wantLive(t, s, "a2", "a6")
}

func TestSessionNeverEvict(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(memory.SessionStoreOptions{
		MaxSessions: 2, MaxSessionsPerClient: ports.UnlimitedSessionsPerClient,
		MinIdleForEviction: memory.NeverEvict, MinPendingIdleForEviction: memory.NeverEvict,
	})
	create(t, s, "r", "a", true)
	create(t, s, "p", "a", false)
	c.Advance(portlimits.DefaultSessionPendingTimeout)
	if err := s.Create(ctx, ports.SessionState{ID: "x", Peer: "a", Ready: true}); !errors.Is(err, ports.ErrTooManySessions) {
		t.Fatalf("Create at the limit with NeverEvict = %v, want ErrTooManySessions", err)
	}
	wantLive(t, s, "r", "p")

	// Only ready sessions never evicted: the pending one may go.
	s, c = newStore(memory.SessionStoreOptions{MaxSessions: 2, MinIdleForEviction: memory.NeverEvict})
	create(t, s, "r", "a", true)
	create(t, s, "p", "b", false)
	c.Advance(portlimits.DefaultSessionPendingTimeout)
	create(t, s, "x", "c", true)
	wantGone(t, s, "p")
	c.Advance(29 * time.Minute) // r idle 29m30s, within the idle timeout
	if err := s.Create(ctx, ports.SessionState{ID: "y", Peer: "d", Ready: true}); !errors.Is(err, ports.ErrTooManySessions) {
		t.Fatalf("Create at the limit with ready sessions only = %v, want ErrTooManySessions", err)
	}
	wantLive(t, s, "r", "x")
}

func TestSessionPerClientDefaults(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(memory.SessionStoreOptions{})
	for i := range portlimits.DefaultMaxSessionsPerClient {
		create(t, s, fmt.Sprint(i), "one", true)
	}
	if err := s.Create(ctx, ports.SessionState{ID: "more", Peer: "one", Ready: true}); !errors.Is(err, ports.ErrTooManySessionsForClient) {
		t.Fatalf("Create past the default per-client limit = %v, want ErrTooManySessionsForClient", err)
	}
	create(t, s, "other", "two", true)

	u, _ := newStore(memory.SessionStoreOptions{MaxSessionsPerClient: ports.UnlimitedSessionsPerClient})
	for i := range 2 * portlimits.DefaultMaxSessionsPerClient {
		create(t, u, fmt.Sprint(i), "one", true)
	}
}

// OnRemoved reports expired, evicted and deleted sessions, outside the
// store's lock (the callback may use the store), and stops when
// unregistered.
func TestSessionOnRemoved(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(memory.SessionStoreOptions{IdleTimeout: time.Minute, MaxSessions: 2})
	var seen []int
	stopLen := s.OnRemoved(func(string) { seen = append(seen, s.Len()) }) // re-enters the store
	r, stop := watch(s)

	create(t, s, "a", "", true)
	create(t, s, "b", "", true)
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	wantRemoved(t, r, "a")
	if err := s.Delete(ctx, "a"); err != nil { // unknown: nothing to report
		t.Fatal(err)
	}
	wantRemoved(t, r)

	c.Advance(time.Minute + time.Second)
	wantGone(t, s, "b") // found expired by Get
	wantRemoved(t, r, "b")

	create(t, s, "c", "", true)
	create(t, s, "d", "", true)
	c.Advance(time.Minute)
	create(t, s, "e", "", true) // evicts c
	wantRemoved(t, r, "c")
	c.Advance(time.Minute + time.Second)
	if n := s.Sweep(); n != 2 {
		t.Fatalf("Sweep dropped %d, want 2", n)
	}
	wantRemoved(t, r, "d", "e")

	// An expired session replaced by a new one of its id is not reported:
	// the id names a live session again.
	create(t, s, "f", "", true)
	c.Advance(time.Minute + time.Second)
	create(t, s, "f", "", true)
	wantRemoved(t, r)
	wantLive(t, s, "f")

	stop()
	stopLen()
	if err := s.Delete(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	wantRemoved(t, r)
	if want := []int{1, 0, 2, 0, 0}; !slices.Equal(seen, want) {
		t.Fatalf("the re-entrant watcher saw Len %v at the removals, want %v", seen, want)
	}
}

// Many goroutines creating sessions for a few clients never leave one
// client over its limit.
func TestSessionPerClientConcurrent(t *testing.T) {
	ctx := context.Background()
	const limit = 5
	s, c := newStore(memory.SessionStoreOptions{MaxSessionsPerClient: limit, MaxSessions: 40})
	peers := []string{"a", "b", "c"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				peer := peers[(g+i)%len(peers)]
				id := fmt.Sprintf("%d-%d", g, i)
				err := s.Create(ctx, ports.SessionState{ID: id, Peer: peer, Ready: i%3 != 0})
				if err != nil && !errors.Is(err, ports.ErrTooManySessions) {
					t.Errorf("Create %s: %v", id, err)
				}
				if err == nil && i%4 == 0 {
					_ = s.Update(ctx, ports.SessionState{ID: id, Peer: peer, Ready: true})
				}
				if i%5 == 0 {
					_ = s.Delete(ctx, fmt.Sprintf("%d-%d", g, i-1))
				}
				if i%7 == 0 {
					c.Advance(10 * time.Second)
				}
			}
		})
	}
	wg.Wait()
	count := map[string]int{}
	for g := range 8 {
		for i := range 40 {
			if st, err := s.Get(ctx, fmt.Sprintf("%d-%d", g, i)); err == nil {
				count[st.Peer]++
			}
		}
	}
	for _, p := range peers {
		if count[p] > limit {
			t.Errorf("client %s holds %d sessions, over %d", p, count[p], limit)
		}
	}
}

func TestSessionStoreByteLimitsContract(t *testing.T) {
	porttest.TestSessionByteLimits(t, 64<<10, 512<<10, func(_ *testing.T, c ports.Clock) ports.SessionStore {
		return memory.NewSessionStore(memory.SessionStoreOptions{MaxSessionBytesPerClient: 64 << 10, MaxSessionBytes: 512 << 10, Clock: c})
	})
}

// sizedSession is a ready session of peer with about kib KiB of capabilities.
func sizedSession(id, peer string, kib int) ports.SessionState {
	return ports.SessionState{ID: id, Peer: peer, Initialized: true, Ready: true,
		Capabilities: []byte(`{"x":"` + strings.Repeat("a", kib<<10) + `"}`)}
}

// Past a client's byte budget, Create evicts as many of that client's idle
// sessions as the new one needs, oldest first; when those that may go are
// not enough, it evicts none and refuses. An Update that grows a session
// evicts the others, never the session itself.
func TestSessionStoreEvictsForBytes(t *testing.T) {
	ctx := context.Background()
	s, c := newStore(memory.SessionStoreOptions{MaxSessionBytesPerClient: 40 << 10})
	r, stop := watch(s)
	defer stop()
	for i := range 4 {
		if err := s.Create(ctx, sizedSession(fmt.Sprint("s", i), "p", 9)); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing idle: refused, nothing evicted.
	if err := s.Create(ctx, sizedSession("big", "p", 20)); !errors.Is(err, ports.ErrTooManySessionsForClient) {
		t.Fatalf("Create past the client's bytes = %v, want ErrTooManySessionsForClient", err)
	}
	wantLive(t, s, "s0", "s1", "s2", "s3")
	wantRemoved(t, r)

	c.Advance(memory.DefaultMinIdleForEviction)
	wantLive(t, s, "s2", "s3") // in use again: they stay
	if err := s.Create(ctx, sizedSession("big", "p", 20)); err != nil {
		t.Fatalf("Create with idle sessions to evict = %v", err)
	}
	wantRemoved(t, r, "s0", "s1")
	wantLive(t, s, "s2", "s3", "big")

	// Another client's sessions neither count nor go.
	if err := s.Create(ctx, sizedSession("q0", "q", 30)); err != nil {
		t.Fatal(err)
	}
	// An Update that grows s3 past the budget while the others are in
	// use: refused, s3 unchanged.
	grown := sizedSession("s3", "p", 15)
	if err := s.Update(ctx, grown); !errors.Is(err, ports.ErrTooManySessionsForClient) {
		t.Fatalf("Update past the client's bytes = %v, want ErrTooManySessionsForClient", err)
	}
	if st, err := s.Get(ctx, "s3"); err != nil || len(st.Capabilities) > 10<<10 {
		t.Fatalf("s3 after the refused Update: %d bytes of capabilities, %v", len(st.Capabilities), err)
	}
	// Idle long enough, s3 itself included: s2 makes room, s3 stays.
	c.Advance(memory.DefaultMinIdleForEviction)
	if err := s.Update(ctx, grown); err != nil {
		t.Fatalf("Update with an idle session to evict = %v", err)
	}
	wantRemoved(t, r, "s2")
	wantLive(t, s, "s3", "big", "q0")
}

// A session larger by itself than every session may hold together, or
// than one client's sessions may, is refused as such
// (ErrTooManySessions, ErrTooManySessionsForClient, saying so), whether
// or not other sessions are idle, and none of them is evicted for it.
func TestSessionLargerThanItMayBe(t *testing.T) {
	for _, c := range []struct {
		name, peer string
		opts       memory.SessionStoreOptions
		want       error
		text       string
	}{
		{"the store", "", memory.SessionStoreOptions{MaxSessionBytes: 40 << 10}, ports.ErrTooManySessions,
			"bytes more for one session, past the 40960 the sessions may hold"},
		{"its client", "p", memory.SessionStoreOptions{MaxSessionBytesPerClient: 20 << 10}, ports.ErrTooManySessionsForClient,
			"bytes more for one session, past the 20480 its sessions may hold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			s, clock := newStore(c.opts)
			r, stop := watch(s)
			defer stop()
			for i := range 2 {
				if err := s.Create(ctx, sizedSession(fmt.Sprint("s", i), c.peer, 9)); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(memory.DefaultMinIdleForEviction) // they may go
			err := s.Create(ctx, sizedSession("huge", c.peer, 50))
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("Create of a session past %s's bytes = %v, want %v for one session", c.name, err, c.want)
			}
			wantRemoved(t, r)
			if _, err := s.Get(ctx, "s0"); err != nil {
				t.Fatalf("an idle session went for a session that could never fit: %v", err)
			}
		})
	}
}
