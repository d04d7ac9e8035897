package porttest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// TestEventStoreShared checks two values of one store that share their
// backend, as two instances of a server behind a load balancer do: newPair
// returns them, fresh for each subtest (they may be the same value, for a
// store of one process). Events appended through one resume through the
// other, nothing lost or repeated; DeleteStream through one forgets the
// events appended through the other. When the store implements them it
// checks [ports.EventWatcher] (a watcher through b wakes when a appends; a
// watcher may also wake without an event, so only real appends are checked)
// and [ports.OnceAppender] (a key appended through a and b is kept once);
// otherwise those subtests are skipped.
func TestEventStoreShared(t *testing.T, newPair func(t *testing.T) (a, b ports.EventStore)) {
	runSuite(t, sharedEventStoreSuite{newPair: newPair})
}

// sharedEventStoreSuite holds the subtests of [TestEventStoreShared], one
// method each.
type sharedEventStoreSuite struct {
	newPair eventStorePairMaker
}

func (suite sharedEventStoreSuite) ResumeThroughOther(t *testing.T) {
	a, b := suite.newPair(t)
	ids := appendN(t, a, "sess/r", "a", 5)
	name, got, err := collect(t, b, ids[1])
	if err != nil || name != "sess/r" {
		t.Fatalf("Replay through b of an id from a = %q, %v", name, err)
	}
	checkEvents(t, got, "sess/r", "a", ids, 2)
	// The stream goes on through b, and resumes through a.
	more := appendN(t, b, "sess/r", "b", 3)
	for i, id := range more {
		for _, prev := range ids {
			if id == prev {
				t.Fatalf("b's event %d has the id %q of one of a's", i, id)
			}
		}
	}
	name, got, err = collect(t, a, ids[4])
	if err != nil || name != "sess/r" {
		t.Fatalf("Replay through a after its last = %q, %v", name, err)
	}
	checkEvents(t, got, "sess/r", "b", more, 0)
}

func (suite sharedEventStoreSuite) ConcurrentAppendsThroughBoth(t *testing.T) {
	a, b := suite.newPair(t)
	seed := appendN(t, a, "sess/c", "seed", 1)[0]
	const n = 40
	var mu sync.Mutex
	byData := map[string]string{}
	var wg sync.WaitGroup
	for k, s := range []ports.EventStore{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				data := fmt.Sprintf("%d_%d", k, i)
				id, err := s.Append(ctx, "sess/c", []byte(data))
				if err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				mu.Lock()
				byData[data] = id
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, s := range []ports.EventStore{a, b} {
		_, got := replayed(t, s, seed)
		checkWriters(t, got, "%d_%d", 2, n, byData)
	}
}

func (suite sharedEventStoreSuite) DeleteThroughOther(t *testing.T) {
	a, b := suite.newPair(t)
	gone := appendN(t, a, "sess/d", "g", 3)
	kept := appendN(t, a, "sess/k", "k", 2)
	if err := b.DeleteStream(ctx, "sess/d"); err != nil {
		t.Fatalf("DeleteStream through b: %v", err)
	}
	for _, s := range []ports.EventStore{a, b} {
		wantNotFound(t, s, " of a stream deleted through b", gone...)
		if _, got, err := collect(t, s, kept[0]); err != nil || len(got) != 1 {
			t.Fatalf("another stream after the deletion: %v, %v", got, err)
		}
	}
	// A new stream of the same name does not revive the old ids.
	fresh := appendN(t, a, "sess/d", "n", 2)
	if _, err := b.Replay(ctx, gone[0], func(ports.Event) error { return nil }); !errors.Is(err, ports.ErrEventNotFound) {
		t.Fatalf("Replay of an id of the deleted stream after a new one began = %v", err)
	}
	_, got := replayed(t, b, fresh[0])
	checkEvents(t, got, "sess/d", "n", fresh, 1)
}

func (suite sharedEventStoreSuite) WatchWakesOnOtherAppend(t *testing.T) {
	a, b := suite.newPair(t)
	w, ok := b.(ports.EventWatcher)
	if !ok {
		t.Skip("the store is not a ports.EventWatcher")
	}
	seed := appendN(t, a, "sess/w", "seed", 1)[0]
	wake, stop := w.Watch("sess/w")
	defer stop()
	// Each round needs a wake that only an append can give (a store
	// may wake once more, after it subscribed, but not every round),
	// and the appended event is there to replay when it comes (Append
	// returned before).
	last := seed
	for round := range 4 {
		id := appendN(t, a, "sess/w", fmt.Sprintf("r%d_", round), 1)[0]
		select {
		case <-wake:
		case <-time.After(waitFor):
			t.Fatalf("round %d: no wake after an append through the other store", round)
		}
		_, got, err := collect(t, b, last)
		if err != nil || len(got) != 1 || got[0].ID != id {
			t.Fatalf("round %d: woken, but the replay = %v, %v; want the event %q", round, got, err, id)
		}
		last = id
	}
	// After stop, the channel is released; stopping twice is fine.
	stop()
	stop()
}

func (suite sharedEventStoreSuite) AppendOnceThroughBoth(t *testing.T) {
	a, b := suite.newPair(t)
	oa, okA := a.(ports.OnceAppender)
	ob, okB := b.(ports.OnceAppender)
	if !okA || !okB {
		t.Skip("the store is not a ports.OnceAppender")
	}
	seed := appendN(t, a, "sess/o", "seed", 1)[0]
	id, appended, err := oa.AppendOnce(ctx, "sess/o", "notice-1", []byte(`"first"`))
	if err != nil || !appended || id == "" {
		t.Fatalf("AppendOnce through a = %q, %v, %v; want appended", id, appended, err)
	}
	if _, appended, err := ob.AppendOnce(ctx, "sess/o", "notice-1", []byte(`"again"`)); err != nil || appended {
		t.Fatalf("AppendOnce of the same key through b = %v, %v; want not appended", appended, err)
	}
	if _, appended, err := oa.AppendOnce(ctx, "sess/o", "notice-1", []byte(`"again"`)); err != nil || appended {
		t.Fatalf("AppendOnce of the same key through a again = %v, %v; want not appended", appended, err)
	}
	// Another key, and the same key on another stream, are appended.
	id2, appended, err := ob.AppendOnce(ctx, "sess/o", "notice-2", []byte(`"second"`))
	if err != nil || !appended {
		t.Fatalf("AppendOnce of another key = %v, %v", appended, err)
	}
	if _, appended, err := ob.AppendOnce(ctx, "sess/o2", "notice-1", []byte(`"elsewhere"`)); err != nil || !appended {
		t.Fatalf("AppendOnce of the key on another stream = %v, %v", appended, err)
	}
	for _, s := range []ports.EventStore{a, b} {
		_, got := replayed(t, s, seed)
		if len(got) != 2 || got[0].ID != id || string(got[0].Data) != `"first"` || got[1].ID != id2 || string(got[1].Data) != `"second"` {
			t.Fatalf("replay = %v; want the first and second events once each", got)
		}
	}
}

// eventStorePairMaker makes two values of one fresh event store.
type eventStorePairMaker = func(t *testing.T) (a, b ports.EventStore)
