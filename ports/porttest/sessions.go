package porttest

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

// freshSessionStore returns a store newStore made with a clock at [Start],
// and the clock.
func freshSessionStore(t *testing.T, newStore sessionStoreMaker) (ports.SessionStore, *FakeClock) {
	c := newClock()
	return newStore(t, c), c
}

func sessionState(id string) ports.SessionState {
	return ports.SessionState{
		ID:          id,
		Owner:       "owner-" + id,
		Peer:        "peer-" + id,
		Initialized: true,
		Ready:       true,
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

// sameJSONValue reports whether a and b hold the same JSON value (a store may
// re-encode the capabilities).
func sameJSONValue(a, b json.RawMessage) bool {
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
	if got.Ready != want.Ready || got.Peer != want.Peer {
		t.Errorf("state = {Ready:%v Peer:%q}, want {Ready:%v Peer:%q}", got.Ready, got.Peer, want.Ready, want.Peer)
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
	if !sameJSONValue(got.Capabilities, want.Capabilities) {
		t.Errorf("Capabilities = %s, want %s", got.Capabilities, want.Capabilities)
	}
}

// TestSessionStore checks a store made fresh by newStore for each subtest.
// The store must tell the time with clock (a [*FakeClock] starting at
// [Start]); TestSessionStore moves it by seconds only, far less than any
// idle timeout, and does not depend on expiry (see [TestSessionExpiry]). The
// store must have room for 500 sessions.
func TestSessionStore(t *testing.T, newStore func(t *testing.T, clock ports.Clock) ports.SessionStore) {
	runSuite(t, sessionStoreSuite{newStore: newStore})
}

// sessionStoreSuite holds the subtests of [TestSessionStore], one method
// each.
type sessionStoreSuite struct {
	newStore sessionStoreMaker
}

func (suite sessionStoreSuite) CreateGetUpdateDelete(t *testing.T) {
	s, _ := freshSessionStore(t, suite.newStore)
	want := sessionState("a")
	storeAndCheck(t, s, s.Create, want, want)

	want.Revision = domain.Revision20250618
	want.Initialized = false
	want.Ready = false
	want.Client.Name = "renamed"
	want.Capabilities = json.RawMessage(`{}`)
	want.Owner = "new-owner"
	want.Subscriptions = []string{"file:///a.txt", "file:///c.txt", "test://z"}
	want.ResourcesAdvertised = false
	want.LogLevel = domain.LogDebug
	storeAndCheck(t, s, s.Update, want, want)

	// Ready again; the Peer a session was created with is kept.
	want.Ready = true
	moved := want
	moved.Peer = "another-peer"
	storeAndCheck(t, s, s.Update, moved, want)

	// Everything unsubscribed, the log level and the prompts flag
	// cleared: the store forgets them.
	want.Subscriptions = nil
	want.PromptsAdvertised = false
	want.LogLevel = ""
	storeAndCheck(t, s, s.Update, want, want)

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
	if err := s.Create(ctx, sessionState("a")); err != nil {
		t.Fatalf("Create after Delete = %v", err)
	}
}

func (suite sessionStoreSuite) UnknownIsNotFound(t *testing.T) {
	s, _ := freshSessionStore(t, suite.newStore)
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("Get = %v, want ErrSessionNotFound", err)
	}
	if err := s.Update(ctx, sessionState("nope")); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("Update = %v, want ErrSessionNotFound", err)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("Update created the session: Get = %v", err)
	}
	if err := s.Delete(ctx, "nope"); err != nil {
		t.Fatalf("Delete = %v, want nil", err)
	}
}

func (suite sessionStoreSuite) DuplicateCreateRefused(t *testing.T) {
	s, _ := freshSessionStore(t, suite.newStore)
	if err := s.Create(ctx, sessionState("a")); err != nil {
		t.Fatal(err)
	}
	other := sessionState("a")
	other.Client.Name = "intruder"
	if err := s.Create(ctx, other); err == nil {
		t.Fatal("duplicate Create succeeded")
	}
	getAndCheck(t, s, sessionState("a"))
}

func (suite sessionStoreSuite) StateRoundTrips(t *testing.T) {
	s, _ := freshSessionStore(t, suite.newStore)
	want := sessionState("rt")
	created := Start.Add(-time.Minute)
	want.Created, want.LastSeen = created, created
	if err := s.Create(ctx, want); err != nil {
		t.Fatal(err)
	}
	got := getAndCheck(t, s, want)
	if !got.Created.Equal(created) {
		t.Errorf("Created = %v, want %v", got.Created, created)
	}
	// A state with nothing but an id round-trips too.
	if err := s.Create(ctx, ports.SessionState{ID: "bare"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "bare")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "bare" || got.Owner != "" || got.Peer != "" || got.Initialized || got.Ready || got.Revision != "" || got.Client.Name != "" || len(got.Client.Icons) != 0 ||
		len(got.Subscriptions) != 0 || got.ResourcesAdvertised || got.PromptsAdvertised || got.LogLevel != "" {
		t.Errorf("bare state = %+v", got)
	}
	if len(got.Capabilities) != 0 && string(got.Capabilities) != "null" {
		t.Errorf("bare Capabilities = %s", got.Capabilities)
	}
}

func (suite sessionStoreSuite) TimesFromClock(t *testing.T) {
	s, c := freshSessionStore(t, suite.newStore)
	if err := s.Create(ctx, sessionState("a")); err != nil {
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
}

func (suite sessionStoreSuite) StoreCopiesState(t *testing.T) {
	s, _ := freshSessionStore(t, suite.newStore)
	in := sessionState("a")
	if err := s.Create(ctx, in); err != nil {
		t.Fatal(err)
	}
	in.Capabilities[2] = 'X'
	in.Client.Icons[0].Sizes[0] = "mutated"
	in.Subscriptions[0] = "mutated://in"
	got := getAndCheck(t, s, sessionState("a"))
	got.Capabilities[2] = 'Y'
	got.Client.Icons[0].Src = "mutated"
	got.Subscriptions[1] = "mutated://got"
	getAndCheck(t, s, sessionState("a"))
}

func (suite sessionStoreSuite) Concurrent(t *testing.T) {
	s, c := freshSessionStore(t, suite.newStore)
	if err := s.Create(ctx, sessionState("shared")); err != nil {
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
				if err := s.Create(ctx, sessionState(id)); err != nil {
					t.Errorf("Create %s: %v", id, err)
					return
				}
				if _, err := s.Get(ctx, id); err != nil {
					t.Errorf("Get %s: %v", id, err)
				}
				st := sessionState(id)
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
				if err := s.Update(ctx, sessionState("shared")); err != nil {
					t.Errorf("Update shared: %v", err)
				}
				// Only one of the racing Creates of a new id wins.
				if s.Create(ctx, sessionState(fmt.Sprintf("race%d", j))) == nil {
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
}

// storeAndCheck stores st with store (the store's Create or Update), then
// checks that Get reads want back.
func storeAndCheck(t *testing.T, s ports.SessionStore, store func(context.Context, ports.SessionState) error, st, want ports.SessionState) {
	t.Helper()
	if err := store(ctx, st); err != nil {
		t.Fatal(err)
	}
	getAndCheck(t, s, want)
}

// getAndCheck reads the session of want's id and checks it is want.
func getAndCheck(t *testing.T, s ports.SessionStore, want ports.SessionState) ports.SessionState {
	t.Helper()
	got, err := s.Get(ctx, want.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkState(t, got, want)
	return got
}

// sessionStoreMaker makes a fresh session store that tells the time by
// clock.
type sessionStoreMaker = func(t *testing.T, clock ports.Clock) ports.SessionStore
