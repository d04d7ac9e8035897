// Package sessiontest is the contract suite of the [ports.SessionStore]
// port: every session store adapter (the in-memory one, or one a host app
// writes on a shared store) must pass Run. It also holds [FakeClock], a
// clock tests move by hand, so that expiry is tested without sleeping.
package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// FakeClock is a [ports.Clock] that only moves when told to. It is safe for
// concurrent use.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock returns a clock that reads start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start} }

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Start is the time the clocks Run hands to newStore start at: a whole
// second in UTC, so that a store that keeps times at a coarser precision
// still round-trips them.
var Start = time.Date(2025, 6, 18, 12, 0, 0, 0, time.UTC)

func state(id string) ports.SessionState {
	return ports.SessionState{
		ID:          id,
		Owner:       "owner-" + id,
		Initialized: true,
		Revision:    domain.Revision20251125,
		Client: domain.Implementation{
			Name:        "client-" + id,
			Title:       "Client",
			Version:     "1.2.3",
			Description: "a test client",
			WebsiteURL:  "https://example.com",
			Icons:       []domain.Icon{{Src: "https://example.com/i.png", MimeType: "image/png", Sizes: []string{"48x48", "any"}, Theme: "dark"}},
		},
		Capabilities:        json.RawMessage(`{"roots":{"listChanged":true},"sampling":{}}`),
		Subscriptions:       []string{"file:///a.txt", "test://b/" + id},
		ResourcesAdvertised: true,
		PromptsAdvertised:   true,
		LogLevel:            domain.LogWarning,
	}
}

// sameJSON reports whether a and b hold the same JSON value (a store may
// re-encode the capabilities).
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// checkState compares everything but the times. Subscriptions must keep
// their order; an empty list may come back as nil and the other way round.
func checkState(t *testing.T, got, want ports.SessionState) {
	t.Helper()
	if got.ID != want.ID || got.Owner != want.Owner || got.Initialized != want.Initialized || got.Revision != want.Revision {
		t.Errorf("state = {ID:%q Owner:%q Initialized:%v Revision:%q}, want {ID:%q Owner:%q Initialized:%v Revision:%q}",
			got.ID, got.Owner, got.Initialized, got.Revision, want.ID, want.Owner, want.Initialized, want.Revision)
	}
	if !slices.Equal(got.Subscriptions, want.Subscriptions) {
		t.Errorf("Subscriptions = %q, want %q", got.Subscriptions, want.Subscriptions)
	}
	if got.ResourcesAdvertised != want.ResourcesAdvertised || got.PromptsAdvertised != want.PromptsAdvertised || got.LogLevel != want.LogLevel {
		t.Errorf("state = {ResourcesAdvertised:%v PromptsAdvertised:%v LogLevel:%q}, want {ResourcesAdvertised:%v PromptsAdvertised:%v LogLevel:%q}",
			got.ResourcesAdvertised, got.PromptsAdvertised, got.LogLevel, want.ResourcesAdvertised, want.PromptsAdvertised, want.LogLevel)
	}
	if !reflect.DeepEqual(got.Client, want.Client) {
		t.Errorf("Client = %+v, want %+v", got.Client, want.Client)
	}
	if !sameJSON(got.Capabilities, want.Capabilities) {
		t.Errorf("Capabilities = %s, want %s", got.Capabilities, want.Capabilities)
	}
}

// Run checks a store made fresh by newStore for each subtest. The store
// must tell the time with clock (a [*FakeClock] starting at [Start]); Run
// moves it by seconds only, far less than any idle timeout, and does not
// depend on expiry (see [RunExpiry]). The store must have room for 500
// sessions.
func Run(t *testing.T, newStore func(t *testing.T, clock ports.Clock) ports.SessionStore) {
	ctx := context.Background()
	fresh := func(t *testing.T) (ports.SessionStore, *FakeClock) {
		c := NewFakeClock(Start)
		return newStore(t, c), c
	}

	t.Run("CreateGetUpdateDelete", func(t *testing.T) {
		s, _ := fresh(t)
		want := state("a")
		if err := s.Create(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		checkState(t, got, want)

		want.Revision = domain.Revision20250618
		want.Initialized = false
		want.Client.Name = "renamed"
		want.Capabilities = json.RawMessage(`{}`)
		want.Owner = "new-owner"
		want.Subscriptions = []string{"file:///a.txt", "file:///c.txt", "test://z"}
		want.ResourcesAdvertised = false
		want.LogLevel = domain.LogDebug
		if err := s.Update(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err = s.Get(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		checkState(t, got, want)

		// Everything unsubscribed, the log level and the prompts flag
		// cleared: the store forgets them.
		want.Subscriptions = nil
		want.PromptsAdvertised = false
		want.LogLevel = ""
		if err := s.Update(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err = s.Get(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		checkState(t, got, want)

		if err := s.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "a"); !errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatalf("Get after Delete = %v, want ErrSessionNotFound", err)
		}
		if err := s.Update(ctx, want); !errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatalf("Update after Delete = %v, want ErrSessionNotFound", err)
		}
		if err := s.Delete(ctx, "a"); err != nil {
			t.Fatalf("second Delete = %v, want nil", err)
		}
		// A deleted id can be used again.
		if err := s.Create(ctx, state("a")); err != nil {
			t.Fatalf("Create after Delete = %v", err)
		}
	})

	t.Run("UnknownIsNotFound", func(t *testing.T) {
		s, _ := fresh(t)
		if _, err := s.Get(ctx, "nope"); !errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatalf("Get = %v, want ErrSessionNotFound", err)
		}
		if err := s.Update(ctx, state("nope")); !errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatalf("Update = %v, want ErrSessionNotFound", err)
		}
		if _, err := s.Get(ctx, "nope"); !errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatalf("Update created the session: Get = %v", err)
		}
		if err := s.Delete(ctx, "nope"); err != nil {
			t.Fatalf("Delete = %v, want nil", err)
		}
	})

	t.Run("DuplicateCreateRefused", func(t *testing.T) {
		s, _ := fresh(t)
		if err := s.Create(ctx, state("a")); err != nil {
			t.Fatal(err)
		}
		other := state("a")
		other.Client.Name = "intruder"
		if err := s.Create(ctx, other); err == nil {
			t.Fatal("duplicate Create succeeded")
		}
		got, err := s.Get(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		checkState(t, got, state("a"))
	})

	t.Run("StateRoundTrips", func(t *testing.T) {
		s, _ := fresh(t)
		want := state("rt")
		created := Start.Add(-time.Minute)
		want.Created, want.LastSeen = created, created
		if err := s.Create(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "rt")
		if err != nil {
			t.Fatal(err)
		}
		checkState(t, got, want)
		if !got.Created.Equal(created) {
			t.Errorf("Created = %v, want %v", got.Created, created)
		}
		// A state with nothing but an id round-trips too.
		if err := s.Create(ctx, ports.SessionState{ID: "bare"}); err != nil {
			t.Fatal(err)
		}
		got, err = s.Get(ctx, "bare")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != "bare" || got.Owner != "" || got.Initialized || got.Revision != "" || got.Client.Name != "" || len(got.Client.Icons) != 0 ||
			len(got.Subscriptions) != 0 || got.ResourcesAdvertised || got.PromptsAdvertised || got.LogLevel != "" {
			t.Errorf("bare state = %+v", got)
		}
		if len(got.Capabilities) != 0 && string(got.Capabilities) != "null" {
			t.Errorf("bare Capabilities = %s", got.Capabilities)
		}
	})

	t.Run("TimesFromClock", func(t *testing.T) {
		s, c := fresh(t)
		if err := s.Create(ctx, state("a")); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Created.Equal(Start) || !got.LastSeen.Equal(Start) {
			t.Fatalf("zero times became Created %v, LastSeen %v; want the clock's %v", got.Created, got.LastSeen, Start)
		}
		// Get counts as activity.
		c.Advance(5 * time.Second)
		if _, err := s.Get(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		got, err = s.Get(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Created.Equal(Start) {
			t.Errorf("Get changed Created to %v", got.Created)
		}
		if want := Start.Add(5 * time.Second); !got.LastSeen.Equal(want) {
			t.Errorf("LastSeen after Get = %v, want %v", got.LastSeen, want)
		}
	})

	t.Run("StoreCopiesState", func(t *testing.T) {
		s, _ := fresh(t)
		in := state("a")
		if err := s.Create(ctx, in); err != nil {
			t.Fatal(err)
		}
		in.Capabilities[2] = 'X'
		in.Client.Icons[0].Sizes[0] = "mutated"
		in.Subscriptions[0] = "mutated://in"
		got, err := s.Get(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		checkState(t, got, state("a"))
		got.Capabilities[2] = 'Y'
		got.Client.Icons[0].Src = "mutated"
		got.Subscriptions[1] = "mutated://got"
		again, err := s.Get(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		checkState(t, again, state("a"))
	})

	t.Run("Concurrent", func(t *testing.T) {
		s, c := fresh(t)
		if err := s.Create(ctx, state("shared")); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var dupOK sync.Map
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 50 {
					id := fmt.Sprintf("s%d_%d", i, j)
					if err := s.Create(ctx, state(id)); err != nil {
						t.Errorf("Create %s: %v", id, err)
						return
					}
					if _, err := s.Get(ctx, id); err != nil {
						t.Errorf("Get %s: %v", id, err)
					}
					st := state(id)
					st.Client.Name = "updated"
					if err := s.Update(ctx, st); err != nil {
						t.Errorf("Update %s: %v", id, err)
					}
					if j%2 == 0 {
						if err := s.Delete(ctx, id); err != nil {
							t.Errorf("Delete %s: %v", id, err)
						}
					}
					if _, err := s.Get(ctx, "shared"); err != nil {
						t.Errorf("Get shared: %v", err)
					}
					if err := s.Update(ctx, state("shared")); err != nil {
						t.Errorf("Update shared: %v", err)
					}
					// Only one of the racing Creates of a new id wins.
					if s.Create(ctx, state(fmt.Sprintf("race%d", j))) == nil {
						if _, loaded := dupOK.LoadOrStore(j, true); loaded {
							t.Errorf("two Creates of race%d succeeded", j)
						}
					}
					if j%10 == 0 {
						c.Advance(time.Millisecond)
					}
				}
			}()
		}
		wg.Wait()
		for i := range 8 {
			for j := range 50 {
				id := fmt.Sprintf("s%d_%d", i, j)
				got, err := s.Get(ctx, id)
				if j%2 == 0 {
					if !errors.Is(err, ports.ErrSessionNotFound) {
						t.Errorf("deleted %s: Get = %v", id, err)
					}
					continue
				}
				if err != nil || got.Client.Name != "updated" {
					t.Errorf("Get %s = %+v, %v", id, got.Client, err)
				}
			}
		}
	})
}

// RunExpiry checks the idle expiry of a store that expires a session whose
// LastSeen is more than idle ago, by the clock handed to newStore (a
// [*FakeClock] starting at [Start]), and counts Get and Update as activity.
func RunExpiry(t *testing.T, idle time.Duration, newStore func(t *testing.T, clock ports.Clock) ports.SessionStore) {
	ctx := context.Background()

	t.Run("IdleSessionExpires", func(t *testing.T) {
		c := NewFakeClock(Start)
		s := newStore(t, c)
		if err := s.Create(ctx, state("a")); err != nil {
			t.Fatal(err)
		}
		c.Advance(idle)
		if _, err := s.Get(ctx, "a"); err != nil {
			t.Fatalf("Get after exactly the idle timeout = %v, want the session", err)
		}
		c.Advance(idle + time.Second)
		if _, err := s.Get(ctx, "a"); !errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatalf("Get of an expired session = %v, want ErrSessionNotFound", err)
		}
		if err := s.Update(ctx, state("a")); !errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatalf("Update of an expired session = %v, want ErrSessionNotFound", err)
		}
		// The id of an expired session can be used again.
		if err := s.Create(ctx, state("a")); err != nil {
			t.Fatalf("Create over an expired session = %v", err)
		}
	})

	t.Run("ActivityKeepsSessionAlive", func(t *testing.T) {
		c := NewFakeClock(Start)
		s := newStore(t, c)
		for _, id := range []string{"got", "updated", "idle"} {
			if err := s.Create(ctx, state(id)); err != nil {
				t.Fatal(err)
			}
		}
		step := idle/2 + time.Second
		for range 4 {
			c.Advance(step)
			if _, err := s.Get(ctx, "got"); err != nil {
				t.Fatalf("Get of an active session = %v", err)
			}
			if err := s.Update(ctx, state("updated")); err != nil {
				t.Fatalf("Update of an active session = %v", err)
			}
		}
		if _, err := s.Get(ctx, "idle"); !errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatalf("Get of an idle session = %v, want ErrSessionNotFound", err)
		}
	})
}
