package memory_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

func TestSessionStoreContract(t *testing.T) {
	porttest.TestSessionStore(t, func(_ *testing.T, c ports.Clock) ports.SessionStore {
		return memory.NewSessionStore(memory.SessionStoreOptions{Clock: c})
	})
}

func TestSessionStoreExpiryContract(t *testing.T) {
	for _, idle := range []time.Duration{0, time.Minute} { // 0: the default
		want := idle
		if want == 0 {
			want = portlimits.DefaultSessionIdleTimeout
		}
		t.Run(want.String(), func(t *testing.T) {
			porttest.TestSessionExpiry(t, want, func(_ *testing.T, c ports.Clock) ports.SessionStore {
				return memory.NewSessionStore(memory.SessionStoreOptions{IdleTimeout: idle, Clock: c})
			})
		})
	}
}

func TestEventStoreContract(t *testing.T) {
	porttest.TestEventStore(t, func(*testing.T) ports.EventStore {
		return memory.NewEventStore(memory.EventStoreOptions{})
	})
}

// The shared suite holds for one store value used twice, as one process
// shares it between its handlers (it watches nothing and keys nothing, so
// those subtests skip).
func TestEventStoreShared(t *testing.T) {
	porttest.TestEventStoreShared(t, func(*testing.T) (a, b ports.EventStore) {
		s := memory.NewEventStore(memory.EventStoreOptions{})
		return s, s
	})
}

func newSessions(idle time.Duration, max int) (*memory.SessionStore, *porttest.FakeClock) {
	c := porttest.NewFakeClock(porttest.Start)
	return memory.NewSessionStore(memory.SessionStoreOptions{IdleTimeout: idle, MaxSessions: max, Clock: c}), c
}

// mustCreate creates a ready session (its client completed the handshake).
func mustCreate(t *testing.T, s ports.SessionStore, id string) {
	t.Helper()
	if err := s.Create(context.Background(), ports.SessionState{ID: id, Ready: true}); err != nil {
		t.Fatalf("Create %s: %v", id, err)
	}
}

func TestSessionIdleExpiry(t *testing.T) {
	ctx := context.Background()
	s, c := newSessions(time.Minute, 0)
	mustCreate(t, s, "a")
	mustCreate(t, s, "b")
	c.Advance(40 * time.Second)
	if _, err := s.Get(ctx, "a"); err != nil { // a's LastSeen moves on
		t.Fatal(err)
	}
	c.Advance(20*time.Second + time.Nanosecond) // b idle for 1m+1ns, a for 20s
	if _, err := s.Get(ctx, "b"); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("Get of an idle session = %v", err)
	}
	if n := s.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
	// An old LastSeen given to Create counts.
	if err := s.Create(ctx, ports.SessionState{ID: "old", Ready: true, LastSeen: c.Now().Add(-50 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "new")
	c.Advance(15 * time.Second) // old: 65s, a: 35s, new: 15s
	if n := s.Sweep(); n != 1 {
		t.Fatalf("Sweep dropped %d sessions, want 1", n)
	}
	if _, err := s.Get(ctx, "old"); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("Get of a swept session = %v", err)
	}
	c.Advance(time.Hour)
	if n := s.Sweep(); n != 2 {
		t.Fatalf("Sweep dropped %d sessions, want 2", n)
	}
	if n := s.Len(); n != 0 {
		t.Fatalf("Len = %d, want 0", n)
	}
}

func TestSessionDefaults(t *testing.T) {
	ctx := context.Background()
	s := memory.NewSessionStore(memory.SessionStoreOptions{})
	if err := s.Create(ctx, ports.SessionState{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "a")
	if err != nil || got.Created.IsZero() || got.LastSeen.Before(got.Created) {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if err := s.Create(ctx, ports.SessionState{}); err == nil {
		t.Fatal("Create with an empty id succeeded")
	}
	if err := s.Create(ctx, ports.SessionState{ID: "a"}); !errors.Is(err, memory.ErrDuplicateSession) {
		t.Fatalf("duplicate Create = %v, want ErrDuplicateSession", err)
	}

	// The default bound is 10,000 sessions.
	d, _ := newSessions(0, 0)
	for i := range portlimits.DefaultMaxSessions {
		if err := d.Create(ctx, ports.SessionState{ID: fmt.Sprint(i)}); err != nil {
			t.Fatalf("Create %d: %v", i, err)
		}
	}
	if err := d.Create(ctx, ports.SessionState{ID: "one more"}); !errors.Is(err, ports.ErrTooManySessions) {
		t.Fatalf("Create beyond the default bound = %v", err)
	}
}

func TestSessionMaxSessions(t *testing.T) {
	ctx := context.Background()
	s, c := newSessions(time.Minute, 2)
	mustCreate(t, s, "a")
	c.Advance(30 * time.Second)
	mustCreate(t, s, "b")
	err := s.Create(ctx, ports.SessionState{ID: "c", Ready: true})
	if !errors.Is(err, ports.ErrTooManySessions) {
		t.Fatalf("Create beyond MaxSessions = %v, want ErrTooManySessions", err)
	}
	if _, err := s.Get(ctx, "c"); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("refused session stored: Get = %v", err)
	}
	// Deleting frees a place.
	if err := s.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "b")
	// Expired sessions are reclaimed first: a expires, b does not.
	c.Advance(31 * time.Second)
	mustCreate(t, s, "c")
	if _, err := s.Get(ctx, "a"); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("reclaimed session: Get = %v", err)
	}
	if _, err := s.Get(ctx, "b"); err != nil {
		t.Fatalf("live session lost: %v", err)
	}
	if err := s.Create(ctx, ports.SessionState{ID: "d", Ready: true}); !errors.Is(err, ports.ErrTooManySessions) {
		t.Fatalf("Create beyond MaxSessions = %v, want ErrTooManySessions", err)
	}
}

func newEvents(opts memory.EventStoreOptions) (*memory.EventStore, *porttest.FakeClock) {
	c := porttest.NewFakeClock(porttest.Start)
	opts.Clock = c
	return memory.NewEventStore(opts), c
}

// appendEvents appends n events to stream, whose data are the stream's
// name and their index (s0, s1, …), and returns their ids.
func appendEvents(t *testing.T, s ports.EventStore, stream string, n int) []string {
	t.Helper()
	datas := make([]string, n)
	for i := range datas {
		datas[i] = fmt.Sprintf("%s%d", stream, i)
	}
	return testtools.AppendEvents(t, s, stream, datas...)
}

func TestEventTrimming(t *testing.T) {
	s, _ := newEvents(memory.EventStoreOptions{MaxEventsPerStream: 3})
	ids := appendEvents(t, s, "s", 5)    // keeps s2, s3, s4
	testtools.WantNotFound(t, s, ids[0]) // s1 is gone: resuming would lose it
	testtools.WantReplay(t, s, ids[1], "s2", "s3", "s4")
	testtools.WantReplay(t, s, ids[2], "s3", "s4")
	testtools.WantReplay(t, s, ids[4])
	more := appendEvents(t, s, "s", 1)
	testtools.WantNotFound(t, s, ids[1])
	testtools.WantReplay(t, s, ids[2], "s3", "s4", "s0")
	testtools.WantReplay(t, s, more[0])
}

func TestEventMaxStreams(t *testing.T) {
	s, _ := newEvents(memory.EventStoreOptions{MaxStreams: 2})
	a := appendEvents(t, s, "a", 2)
	b := appendEvents(t, s, "b", 2)
	appendEvents(t, s, "a", 1) // b is now the least recently appended
	c := appendEvents(t, s, "c", 2)
	if n := s.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}
	testtools.WantNotFound(t, s, b[0])
	testtools.WantReplay(t, s, a[0], "a1", "a0")
	testtools.WantReplay(t, s, c[0], "c1")
	// A new stream under an evicted name does not answer the old ids.
	appendEvents(t, s, "b", 3)
	testtools.WantNotFound(t, s, b[0])
	testtools.WantNotFound(t, s, a[0])
}

func TestEventTTL(t *testing.T) {
	s, c := newEvents(memory.EventStoreOptions{TTL: time.Minute})
	old := appendEvents(t, s, "s", 3)
	other := appendEvents(t, s, "other", 1)
	c.Advance(30 * time.Second)
	recent := appendEvents(t, s, "s", 1)
	c.Advance(30 * time.Second) // the first events are exactly a minute old: kept
	testtools.WantReplay(t, s, old[0], "s1", "s2", "s0")
	c.Advance(time.Nanosecond)
	testtools.WantNotFound(t, s, old[0])
	testtools.WantNotFound(t, s, old[1])
	testtools.WantReplay(t, s, old[2], "s0") // the event before the oldest kept: nothing lost
	testtools.WantNotFound(t, s, other[0])   // a stream whose events have all expired is gone
	if n := s.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
	c.Advance(time.Minute)
	testtools.WantNotFound(t, s, recent[0])
	if n := s.Len(); n != 0 {
		t.Fatalf("Len = %d, want 0", n)
	}
	// Appending to an expired stream's name starts afresh.
	fresh := appendEvents(t, s, "s", 2)
	testtools.WantReplay(t, s, fresh[0], "s1")
	testtools.WantNotFound(t, s, recent[0])
}

func TestEventDeleteStream(t *testing.T) {
	s, _ := newEvents(memory.EventStoreOptions{})
	a := appendEvents(t, s, "a", 2)
	b := appendEvents(t, s, "b", 2)
	_ = s.DeleteStream(context.Background(), "a")
	_ = s.DeleteStream(context.Background(), "unknown")
	testtools.WantNotFound(t, s, a[0])
	testtools.WantReplay(t, s, b[0], "b1")
	again := appendEvents(t, s, "a", 2)
	testtools.WantNotFound(t, s, a[0])
	testtools.WantNotFound(t, s, a[1])
	testtools.WantReplay(t, s, again[0], "a1")
	if n := s.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}
}

func TestEventIDs(t *testing.T) {
	s, _ := newEvents(memory.EventStoreOptions{})
	ids := appendEvents(t, s, "s", 3)
	// An id of another store (a restarted server) is unknown to this one.
	other, _ := newEvents(memory.EventStoreOptions{})
	otherIDs := appendEvents(t, other, "s", 3)
	for i := range ids {
		if ids[i] == otherIDs[i] {
			t.Fatalf("two stores gave the same id %q", ids[i])
		}
	}
	testtools.WantNotFound(t, s, otherIDs[0])
	// Made-up ids near real ones.
	for _, id := range []string{ids[0] + "x", ids[0] + ".1", "x" + ids[0], ids[0][:len(ids[0])-1] + "0", ids[0][:len(ids[0])-1] + "9", ids[0][:len(ids[0])-1] + "-1", ids[0][:len(ids[0])-1] + "18446744073709551615"} {
		testtools.WantNotFound(t, s, id)
	}
	// A cancelled context stops a replay.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Replay(ctx, ids[0], func(ports.Event) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Replay with a cancelled context = %v", err)
	}
}

// The contract holds with budgets small enough for its large events to be
// dropped, or not kept at all.
func TestEventStoreContractSmallBudgets(t *testing.T) {
	porttest.TestEventStore(t, func(*testing.T) ports.EventStore {
		return memory.NewEventStore(memory.EventStoreOptions{
			MaxBytesPerStream: 128 << 10, MaxBytesPerGroup: 256 << 10, MaxBytes: 1 << 20,
		})
	})
}

// sized appends n events of size bytes of data each to stream, named
// "<stream>#<i>" at their start, and returns their ids.
func sized(t *testing.T, s *memory.EventStore, stream string, n, size int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		data := fmt.Appendf(nil, "%s#%d", stream, i)
		data = append(data, make([]byte, size-len(data))...)
		id, err := s.Append(context.Background(), stream, data)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

// wantNames checks that a replay after id gives the events named names
// (see sized).
func wantNames(t *testing.T, s ports.EventStore, id string, names ...string) {
	t.Helper()
	got, err := testtools.Replayed(s, id)
	if err != nil {
		t.Fatalf("Replay(%q): %v", id, err)
	}
	for i := range got {
		got[i], _, _ = strings.Cut(got[i], "\x00")
	}
	if fmt.Sprint(got) != fmt.Sprint(names) {
		t.Fatalf("Replay(%q) = %q, want %q", id, got, names)
	}
}

func wantBytes(t *testing.T, s *memory.EventStore, want int64) {
	t.Helper()
	if got := s.Bytes(); got != want {
		t.Fatalf("Bytes = %d, want %d", got, want)
	}
}

// one is what an event of sized(…, 100) counts against the budgets.
const one = 100 + portlimits.EventOverhead

func TestEventMaxBytesPerStream(t *testing.T) {
	s, _ := newEvents(memory.EventStoreOptions{MaxBytesPerStream: 3 * one})
	ids := sized(t, s, "g/s", 5, 100) // keeps #2, #3, #4
	other := sized(t, s, "g/t", 2, 100)
	wantBytes(t, s, 5*one)
	testtools.WantNotFound(t, s, ids[0])
	wantNames(t, s, ids[1], "g/s#2", "g/s#3", "g/s#4")
	wantNames(t, s, ids[4])
	wantNames(t, s, other[0], "g/t#1")
	// A larger event drops as many old ones as it needs.
	big := sized(t, s, "g/s", 1, 2*100+portlimits.EventOverhead)
	testtools.WantNotFound(t, s, ids[2])
	wantNames(t, s, ids[3], "g/s#4", "g/s#0")
	wantNames(t, s, big[0])
	wantBytes(t, s, 3*one+2*one)
}

func TestEventMaxBytesPerGroup(t *testing.T) {
	s, _ := newEvents(memory.EventStoreOptions{MaxBytesPerGroup: 4 * one})
	var a, b []string
	for range 3 {
		a = append(a, sized(t, s, "s1/a", 1, 100)...)
		b = append(b, sized(t, s, "s1/b", 1, 100)...)
	}
	// Other groups keep theirs whatever s1 does: s2, and s3, a stream
	// without '/' (the group named by its whole id).
	x := sized(t, s, "s2/x", 4, 100)
	y := sized(t, s, "s3", 4, 100)
	// s1 held a0 b0 a1 b1, then a2 and b2 dropped a0 and b0; one more
	// drops a1, the oldest of the group, though it is of another stream.
	sized(t, s, "s1/b", 1, 100)
	testtools.WantNotFound(t, s, a[0])
	wantNames(t, s, a[1], "s1/a#0")
	wantNames(t, s, b[0], "s1/b#0", "s1/b#0", "s1/b#0")
	sized(t, s, "s1/a", 1, 100) // drops b1
	testtools.WantNotFound(t, s, b[0])
	wantNames(t, s, b[1], "s1/b#0", "s1/b#0")
	wantNames(t, s, a[1], "s1/a#0", "s1/a#0")
	wantNames(t, s, x[0], "s2/x#1", "s2/x#2", "s2/x#3")
	wantNames(t, s, y[0], "s3#1", "s3#2", "s3#3")
	wantBytes(t, s, 12*one)
}

func TestEventMaxBytes(t *testing.T) {
	s, _ := newEvents(memory.EventStoreOptions{MaxBytes: 5 * one})
	a := sized(t, s, "a/1", 3, 100)
	b := sized(t, s, "b/1", 2, 100)
	c := sized(t, s, "c/1", 1, 100) // the oldest event of all goes: a#0
	wantNames(t, s, a[0], "a/1#1", "a/1#2")
	sized(t, s, "c/1", 1, 100) // a#1
	testtools.WantNotFound(t, s, a[0])
	wantNames(t, s, a[1], "a/1#2")
	wantNames(t, s, b[0], "b/1#1")
	sized(t, s, "c/1", 2, 100) // a#2, then b#0
	testtools.WantNotFound(t, s, a[1])
	wantNames(t, s, a[2]) // a stream whose events all went still resumes from its latest
	wantNames(t, s, b[0], "b/1#1")
	wantNames(t, s, c[0], "c/1#0", "c/1#0", "c/1#1")
	sized(t, s, "c/1", 1, 100) // b#1
	testtools.WantNotFound(t, s, b[0])
	wantBytes(t, s, 5*one)
	if n := s.Len(); n != 3 {
		t.Fatalf("Len = %d, want 3", n)
	}
}

// An event larger than a budget is not kept; it gets an id, from which a
// replay resumes, and the ids before it fail.
func TestEventTooLargeNotKept(t *testing.T) {
	for name, opts := range map[string]memory.EventStoreOptions{
		"stream": {MaxBytesPerStream: 1000},
		"group":  {MaxBytesPerGroup: 1000},
		"total":  {MaxBytes: 1000},
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := newEvents(opts)
			before := sized(t, s, "g/s", 2, 100)
			other := sized(t, s, "g/o", 1, 100)
			big := sized(t, s, "g/s", 1, 1000-portlimits.EventOverhead+1)
			if big[0] == "" || big[0] == before[1] {
				t.Fatalf("id %q", big[0])
			}
			wantBytes(t, s, one) // g/o#0: g/s keeps nothing
			testtools.WantNotFound(t, s, before[0])
			testtools.WantNotFound(t, s, before[1])
			wantNames(t, s, big[0])
			after := sized(t, s, "g/s", 1, 100)
			wantNames(t, s, big[0], "g/s#0")
			wantNames(t, s, after[0])
			wantNames(t, s, other[0])
			wantBytes(t, s, 2*one)
			// Exactly at the budget is kept.
			fits := sized(t, s, "h/s", 2, 1000-portlimits.EventOverhead)
			wantNames(t, s, fits[0], "h/s#1")
		})
	}
}

// Deleting, expiring and evicting streams releases their bytes.
func TestEventBytesReleased(t *testing.T) {
	ctx := context.Background()
	s, c := newEvents(memory.EventStoreOptions{TTL: time.Minute, MaxStreams: 2})
	sized(t, s, "a/1", 3, 100)
	sized(t, s, "a/2", 2, 100)
	wantBytes(t, s, 5*one)
	_ = s.DeleteStream(ctx, "a/1")
	wantBytes(t, s, 2*one)
	sized(t, s, "b/1", 1, 100)
	sized(t, s, "c/1", 1, 100) // evicts a/2, the least recently appended
	wantBytes(t, s, 2*one)
	c.Advance(30 * time.Second)
	sized(t, s, "b/1", 1, 100)
	c.Advance(30*time.Second + time.Nanosecond) // c/1 and b/1's first expire
	wantBytes(t, s, one)
	if n := s.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
	c.Advance(time.Minute)
	wantBytes(t, s, 0)
	if n := s.Len(); n != 0 {
		t.Fatalf("Len = %d, want 0", n)
	}
	// After all that, the budgets count from zero again.
	sized(t, s, "d/1", 2, 100)
	wantBytes(t, s, 2*one)
}

// Zero and negative options take the default byte budgets: none is
// unlimited.
func TestEventByteDefaults(t *testing.T) {
	for _, v := range []int64{0, -1} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			s, _ := newEvents(memory.EventStoreOptions{MaxBytes: v, MaxBytesPerGroup: v, MaxBytesPerStream: v})
			const full = portlimits.DefaultMaxEventBytesPerStream - portlimits.EventOverhead // counts 8 MiB
			// Per stream: one event of 8 MiB fits, a byte more does not.
			a := sized(t, s, "a/1", 1, full)
			wantBytes(t, s, portlimits.DefaultMaxEventBytesPerStream)
			sized(t, s, "a/2", 1, full+1)
			wantBytes(t, s, portlimits.DefaultMaxEventBytesPerStream)
			// Per group: 16 MiB, so a third 8 MiB event of group a drops
			// the first.
			sized(t, s, "a/3", 1, full)
			wantBytes(t, s, portlimits.DefaultMaxEventBytesPerGroup)
			wantNames(t, s, a[0])
			sized(t, s, "a/4", 1, full)
			wantBytes(t, s, portlimits.DefaultMaxEventBytesPerGroup)
			// In all: 64 MiB, eight such events; a ninth drops the oldest.
			var first []string
			for g := range 7 {
				first = append(first, sized(t, s, fmt.Sprintf("g%d/s", g), 1, full)...)
			}
			wantBytes(t, s, memory.DefaultMaxEventBytes)
			wantNames(t, s, first[0])
			sized(t, s, "h/s", 1, 100)
			wantBytes(t, s, memory.DefaultMaxEventBytes-portlimits.DefaultMaxEventBytesPerStream+one)
		})
	}
}

// The in-memory key rings pass the key ring contract: fixed keys shared by
// two instances (the same key bytes), and a random key for one.
func TestStateKeysContract(t *testing.T) {
	porttest.TestStateKeys(t, func(t *testing.T) []ports.StateKeys {
		k := bytes.Repeat([]byte{7}, ports.MinStateKeyLen)
		old := bytes.Repeat([]byte{8}, ports.MinStateKeyLen+8)
		a, err := memory.NewStateKeys(k, old)
		if err != nil {
			t.Fatal(err)
		}
		b, err := memory.NewStateKeys(k, old)
		if err != nil {
			t.Fatal(err)
		}
		return []ports.StateKeys{a, b}
	})
	porttest.TestStateKeys(t, func(*testing.T) []ports.StateKeys { return []ports.StateKeys{memory.NewRandomStateKeys()} })
}
