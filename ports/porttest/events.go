package porttest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/ports"
)

// collect replays after id and returns the events seen.
func collect(t *testing.T, s ports.EventStore, id string) (string, []ports.Event, error) {
	t.Helper()
	var got []ports.Event
	stream, err := s.Replay(ctx, id, func(e ports.Event) error {
		e.Data = append([]byte(nil), e.Data...)
		got = append(got, e)
		return nil
	})
	return stream, got, err
}

// replayed is collect of a replay that must succeed.
func replayed(t *testing.T, s ports.EventStore, id string) (string, []ports.Event) {
	t.Helper()
	stream, got, err := collect(t, s, id)
	if err != nil {
		t.Fatal(err)
	}
	return stream, got
}

// appendN appends n events "<prefix><i>" to stream and returns their ids.
func appendN(t *testing.T, s ports.EventStore, stream, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		id, err := s.Append(ctx, stream, fmt.Appendf(nil, "%s%d", prefix, i))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

// check verifies that got holds, in order, the events ids[from:] of stream
// with data "<prefix><i>".
func checkEvents(t *testing.T, got []ports.Event, stream, prefix string, ids []string, from int) {
	t.Helper()
	if len(got) != len(ids)-from {
		t.Fatalf("replayed %d events, want %d: %v", len(got), len(ids)-from, got)
	}
	for k, e := range got {
		i := from + k
		if e.ID != ids[i] || e.StreamID != stream || string(e.Data) != fmt.Sprintf("%s%d", prefix, i) {
			t.Fatalf("event %d = {ID:%q StreamID:%q Data:%q}, want {ID:%q StreamID:%q Data:%q}",
				k, e.ID, e.StreamID, e.Data, ids[i], stream, fmt.Sprintf("%s%d", prefix, i))
		}
	}
}

// payload returns size bytes of JSON text that name stream and i.
func eventPayload(stream string, i, size int) []byte {
	b := fmt.Appendf(nil, `"%s|%d|`, stream, i)
	for len(b) < size-1 {
		b = append(b, byte('a'+(len(b)+i)%26))
	}
	return append(b, '"')
}

// wantSuffix replays after ids[from] and checks that it delivered
// datas[from+1:] with their ids, in order. When mustFind is false, a
// replay that fails with ErrEventNotFound before calling fn is accepted
// too (the store dropped events it needed).
func wantSuffix(t *testing.T, s ports.EventStore, ids []string, datas [][]byte, from int, mustFind bool) {
	t.Helper()
	i := from + 1
	_, err := s.Replay(ctx, ids[from], func(e ports.Event) error {
		switch {
		case i >= len(ids):
			return fmt.Errorf("event %q after the last one", e.ID)
		case e.ID != ids[i]:
			return fmt.Errorf("event %d has id %q, Append returned %q", i, e.ID, ids[i])
		case string(e.Data) != string(datas[i]):
			return fmt.Errorf("event %d: %d bytes that differ from the %d appended", i, len(e.Data), len(datas[i]))
		}
		i++
		return nil
	})
	switch {
	case err == nil && i != len(ids):
		t.Fatalf("Replay after event %d of %d stopped after event %d: events lost", from, len(ids), i-1)
	case errors.Is(err, ports.ErrEventNotFound) && !mustFind && i == from+1:
	case err != nil:
		t.Fatalf("Replay after event %d of %d: %v", from, len(ids), err)
	}
}

// wantNotFound checks that a replay after each of ids fails with
// ErrEventNotFound without calling fn; what says which ids they are.
func wantNotFound(t *testing.T, s ports.EventStore, what string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		called := false
		_, err := s.Replay(ctx, id, func(ports.Event) error { called = true; return nil })
		if !errors.Is(err, ports.ErrEventNotFound) || called {
			t.Errorf("Replay(%q)%s = %v (fn called: %v), want ErrEventNotFound", id, what, err, called)
		}
	}
}

// TestEventStore checks a store made fresh by newStore for each subtest. The
// store must keep at least 500 small events per stream and 100 streams for
// as long as a subtest runs. Some subtests append large events (up to 9 MiB,
// about 20 MiB in all): the store may drop old events to stay within its
// bounds, and decline to keep an event too large for them, but it must never
// lose an event inside a replay (see [ports.EventStore]).
func TestEventStore(t *testing.T, newStore func(t *testing.T) ports.EventStore) {
	runSuite(t, eventStoreSuite{newStore: newStore})
}

// eventStoreSuite holds the subtests of [TestEventStore], one method each.
type eventStoreSuite struct {
	newStore eventStoreMaker
}

func (suite eventStoreSuite) LargeEventNeverSkipped(t *testing.T) {
	for _, size := range []int{64 << 10, 9 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			s := suite.newStore(t)
			var ids []string
			var datas [][]byte
			add := func(data []byte) {
				t.Helper()
				id, err := s.Append(ctx, "g/large", data)
				if err != nil {
					t.Fatalf("Append of %d bytes: %v", len(data), err)
				}
				ids, datas = append(ids, id), append(datas, data)
			}
			add([]byte(`"a0"`))
			add([]byte(`"a1"`))
			add(eventPayload("g/large", 2, size))
			add([]byte(`"a3"`))
			// After the large event: the rest, whether it was kept or
			// not.
			wantSuffix(t, s, ids, datas, 2, true)
			wantSuffix(t, s, ids, datas, 3, true)
			// Before it: all of the rest, or not found; never a replay
			// that skips it.
			wantSuffix(t, s, ids, datas, 0, false)
			wantSuffix(t, s, ids, datas, 1, false)
		})
	}
}

func (suite eventStoreSuite) BoundsNeverLoseInsideReplay(t *testing.T) {
	s := suite.newStore(t)
	// Three streams of one group and one of another, with events of
	// 256 KiB and small ones: about 20 MiB in all, more than a store
	// may want to keep for one group.
	streams := []string{"sess/a", "sess/b", "sess/c", "other/a"}
	ids := map[string][]string{}
	datas := map[string][][]byte{}
	for i := range 80 {
		st := streams[i%len(streams)]
		size := 256 << 10
		if i%3 == 0 {
			size = 16
		}
		data := eventPayload(st, len(ids[st]), size)
		id, err := s.Append(ctx, st, data)
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		ids[st], datas[st] = append(ids[st], id), append(datas[st], data)
	}
	for _, st := range streams {
		// The latest event of each stream resumes (with nothing).
		wantSuffix(t, s, ids[st], datas[st], len(ids[st])-1, true)
		for from := range ids[st] {
			wantSuffix(t, s, ids[st], datas[st], from, false)
		}
	}
}

func (suite eventStoreSuite) IDsUniqueAcrossStreams(t *testing.T) {
	s := suite.newStore(t)
	// Names that a naive "<stream>:<seq>" id would confuse.
	streams := []string{"a", "b", "a:1", "1:a", "a:1:1", "", "a.1", "a_1", "a-1", "a/1 b", "é"}
	seen := map[string]string{}
	ids := map[string][]string{}
	for i := range 5 {
		for _, st := range streams {
			id, err := s.Append(ctx, st, fmt.Appendf(nil, "%s|%d", st, i))
			if err != nil {
				t.Fatal(err)
			}
			if id == "" || strings.ContainsAny(id, "\r\n\x00") {
				t.Fatalf("id %q cannot be an SSE id", id)
			}
			if prev, dup := seen[id]; dup {
				t.Fatalf("id %q given to streams %q and %q", id, prev, st)
			}
			seen[id] = st
			ids[st] = append(ids[st], id)
		}
	}
	for _, st := range streams {
		name, got, err := collect(t, s, ids[st][0])
		if err != nil {
			t.Fatalf("stream %q: %v", st, err)
		}
		if name != st {
			t.Fatalf("Replay of an id of %q returned stream %q", st, name)
		}
		if len(got) != 4 {
			t.Fatalf("stream %q: replayed %d events, want 4", st, len(got))
		}
		for k, e := range got {
			if e.ID != ids[st][k+1] || e.StreamID != st || string(e.Data) != fmt.Sprintf("%s|%d", st, k+1) {
				t.Fatalf("stream %q event %d = %+v", st, k, e)
			}
		}
	}
}

func (suite eventStoreSuite) ReplayAfterMiddle(t *testing.T) {
	s := suite.newStore(t)
	ids := appendN(t, s, "s", "m", 10)
	name, got := replayed(t, s, ids[4])
	if name != "s" {
		t.Fatalf("stream = %q, want s", name)
	}
	checkEvents(t, got, "s", "m", ids, 5)
	// Replaying again gives the same events, and the ones appended since.
	ids = append(ids, appendN(t, s, "s", "x", 1)...)
	_, got = replayed(t, s, ids[4])
	if len(got) != 6 || got[5].ID != ids[10] || string(got[5].Data) != "x0" || string(got[0].Data) != "m5" {
		t.Fatalf("second replay = %v", got)
	}
	_, got = replayed(t, s, ids[0])
	if len(got) != 10 || got[0].ID != ids[1] {
		t.Fatalf("replay after the first = %v", got)
	}
}

func (suite eventStoreSuite) ReplayAfterLast(t *testing.T) {
	s := suite.newStore(t)
	ids := appendN(t, s, "last", "e", 3)
	name, got := replayed(t, s, ids[2])
	if name != "last" || len(got) != 0 {
		t.Fatalf("Replay after the last = %q, %v; want \"last\" and no events", name, got)
	}
}

func (suite eventStoreSuite) UnknownIDIsNotFound(t *testing.T) {
	s := suite.newStore(t)
	appendN(t, s, "s", "e", 2)
	other := suite.newStore(t)
	foreign := appendN(t, other, "s", "e", 1)[0]
	wantNotFound(t, s, "", "", "no-such-id")
	empty := suite.newStore(t)
	if _, err := empty.Replay(ctx, foreign, func(ports.Event) error { return nil }); !errors.Is(err, ports.ErrEventNotFound) {
		t.Errorf("Replay on an empty store = %v, want ErrEventNotFound", err)
	}
}

func (suite eventStoreSuite) TwoStreamsDontMix(t *testing.T) {
	s := suite.newStore(t)
	var a, b []string
	for i := range 6 {
		a = append(a, appendN(t, s, "A", fmt.Sprintf("a%d_", i), 1)...)
		b = append(b, appendN(t, s, "B", fmt.Sprintf("b%d_", i), 1)...)
	}
	for _, tc := range []struct {
		name string
		ids  []string
	}{{"A", a}, {"B", b}} {
		name, got := replayed(t, s, tc.ids[1])
		if name != tc.name || len(got) != 4 {
			t.Fatalf("Replay from %s's second = %q, %v", tc.name, name, got)
		}
		for k, e := range got {
			want := fmt.Sprintf("%s%d_0", strings.ToLower(tc.name), k+2)
			if e.StreamID != tc.name || e.ID != tc.ids[k+2] || string(e.Data) != want {
				t.Fatalf("stream %s event %d = %+v, want data %q", tc.name, k, e, want)
			}
		}
	}
}

func (suite eventStoreSuite) AppendCopiesData(t *testing.T) {
	s := suite.newStore(t)
	first := appendN(t, s, "s", "e", 1)[0]
	buf := []byte(`{"jsonrpc":"2.0"}`)
	if _, err := s.Append(ctx, "s", buf); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXX")
	_, got := replayed(t, s, first)
	if len(got) != 1 || string(got[0].Data) != `{"jsonrpc":"2.0"}` {
		t.Fatalf("replayed %v", got)
	}
}

func (suite eventStoreSuite) FnErrorStopsReplay(t *testing.T) {
	s := suite.newStore(t)
	ids := appendN(t, s, "s", "e", 5)
	stop := errors.New("client gone")
	calls := 0
	name, err := s.Replay(ctx, ids[0], func(ports.Event) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Fatalf("Replay = %q, %v after %d calls; want fn's error after 2", name, err, calls)
	}
	// The store is still usable.
	if _, got, err := collect(t, s, ids[0]); err != nil || len(got) != 4 {
		t.Fatalf("Replay after a stopped one = %v, %v", got, err)
	}
}

func (suite eventStoreSuite) DeleteStream(t *testing.T) {
	s := suite.newStore(t)
	gone := appendN(t, s, "gone", "g", 3)
	kept := appendN(t, s, "kept", "k", 3)
	// A name that a prefix match would confuse with the deleted one.
	near := appendN(t, s, "gone/1", "n", 2)
	if err := s.DeleteStream(ctx, "gone"); err != nil {
		t.Fatalf("DeleteStream: %v", err)
	}
	wantNotFound(t, s, " of a deleted stream", gone...)
	// The other streams are whole.
	name, got, err := collect(t, s, kept[0])
	if err != nil || name != "kept" {
		t.Fatalf("Replay of another stream = %q, %v", name, err)
	}
	checkEvents(t, got, "kept", "k", kept, 1)
	name, got, err = collect(t, s, near[0])
	if err != nil || name != "gone/1" {
		t.Fatalf("Replay of another stream = %q, %v", name, err)
	}
	checkEvents(t, got, "gone/1", "n", near, 1)
	// Deleting an unknown stream, or the same one again, is not an error.
	for _, st := range []string{"never-appended", "gone"} {
		if err := s.DeleteStream(ctx, st); err != nil {
			t.Errorf("DeleteStream(%q) = %v, want nil", st, err)
		}
	}
}

func (suite eventStoreSuite) Concurrent(t *testing.T) {
	s := suite.newStore(t)
	seed := appendN(t, s, "shared", "seed", 1)[0]
	const writers, n = 8, 50
	own := make([][]string, writers)
	var mu sync.Mutex
	sharedIDs := map[string]string{} // data -> id
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream := fmt.Sprintf("own%d", w)
			for i := range n {
				id, err := s.Append(ctx, stream, fmt.Appendf(nil, "o%d", i))
				if err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				own[w] = append(own[w], id)
				data := fmt.Sprintf("w%d_%d", w, i)
				id, err = s.Append(ctx, "shared", []byte(data))
				if err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				mu.Lock()
				sharedIDs[data] = id
				mu.Unlock()
				if i%10 == 0 {
					if _, err := s.Replay(ctx, seed, func(ports.Event) error { return nil }); err != nil {
						t.Errorf("Replay during appends: %v", err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for w := range writers {
		_, got := replayed(t, s, own[w][0])
		if len(got) != n-1 {
			t.Fatalf("own%d: replayed %d events, want %d", w, len(got), n-1)
		}
		for k, e := range got {
			if e.ID != own[w][k+1] || string(e.Data) != fmt.Sprintf("o%d", k+1) {
				t.Fatalf("own%d event %d = %+v", w, k, e)
			}
		}
	}
	_, got := replayed(t, s, seed)
	checkWriters(t, got, "w%d_%d", writers, n, sharedIDs)
}

// checkWriters checks that got holds the events that writers appended, n
// each, with data format (of the writer's number and the event's), every one
// once, each writer's in its order, and with the id Append returned (ids, by
// data).
func checkWriters(t *testing.T, got []ports.Event, format string, writers, n int, ids map[string]string) {
	t.Helper()
	if len(got) != writers*n {
		t.Fatalf("replayed %d events, want %d", len(got), writers*n)
	}
	next := make([]int, writers)
	seen := map[string]bool{}
	for _, e := range got {
		var w, i int
		if _, err := fmt.Sscanf(string(e.Data), format, &w, &i); err != nil || w < 0 || w >= writers || i != next[w] {
			t.Fatalf("event %q out of order", e.Data)
		}
		next[w]++
		if seen[e.ID] || ids[string(e.Data)] != e.ID {
			t.Fatalf("event %q: id %q repeated or not the one Append returned (%q)", e.Data, e.ID, ids[string(e.Data)])
		}
		seen[e.ID] = true
	}
}

// eventStoreMaker makes a fresh event store.
type eventStoreMaker = func(t *testing.T) ports.EventStore
