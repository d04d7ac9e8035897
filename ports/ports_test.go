package ports_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// The value types of the ports carry rules of their own, which every store
// and the engine lean on: these tests hold them apart from any adapter.

func TestTaskStatus(t *testing.T) {
	for _, c := range []struct {
		s               ports.TaskStatus
		valid, terminal bool
	}{
		{ports.TaskWorking, true, false},
		{ports.TaskInputRequired, true, false},
		{ports.TaskCompleted, true, true},
		{ports.TaskFailed, true, true},
		{ports.TaskCancelled, true, true},
		{"", false, false},
		{"done", false, false},
		{"Completed", false, false},
	} {
		if got := c.s.Valid(); got != c.valid {
			t.Errorf("%q.Valid() = %v, want %v", c.s, got, c.valid)
		}
		if got := c.s.Terminal(); got != c.terminal {
			t.Errorf("%q.Terminal() = %v, want %v", c.s, got, c.terminal)
		}
	}
}

func TestTaskUpdateCheck(t *testing.T) {
	payload := json.RawMessage(`{}`)
	ok := []ports.TaskUpdate{
		{Status: ports.TaskWorking},
		{Status: ports.TaskCancelled},
		{Status: ports.TaskInputRequired, InputRequests: payload},
		{Status: ports.TaskCompleted, Result: payload},
		{Status: ports.TaskFailed, Error: payload},
	}
	for _, u := range ok {
		if err := u.Check(); err != nil {
			t.Errorf("Check(%+v) = %v, want nil", u, err)
		}
	}
	bad := []struct {
		u    ports.TaskUpdate
		says string
	}{
		{ports.TaskUpdate{Status: "paused"}, `unknown status "paused"`},
		{ports.TaskUpdate{}, `unknown status ""`},
		{ports.TaskUpdate{Status: ports.TaskInputRequired}, "inputRequests"},
		{ports.TaskUpdate{Status: ports.TaskWorking, InputRequests: payload}, "inputRequests"},
		{ports.TaskUpdate{Status: ports.TaskCompleted}, "a result"},
		{ports.TaskUpdate{Status: ports.TaskFailed, Result: payload, Error: payload}, "a result"},
		{ports.TaskUpdate{Status: ports.TaskFailed}, "an error"},
		{ports.TaskUpdate{Status: ports.TaskCancelled, Error: payload}, "an error"},
	}
	for _, c := range bad {
		err := c.u.Check()
		if !errors.Is(err, ports.ErrInvalidTaskUpdate) {
			t.Errorf("Check(%+v) = %v, want an error wrapping ErrInvalidTaskUpdate", c.u, err)
			continue
		}
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("Check(%+v) = %q, want it to say %q", c.u, err, c.says)
		}
	}
}

func TestTaskTransitionError(t *testing.T) {
	var err error = &ports.TaskTransitionError{From: ports.TaskCompleted, To: ports.TaskWorking}
	if !errors.Is(err, ports.ErrTaskTransition) {
		t.Fatalf("%v does not wrap ErrTaskTransition", err)
	}
	if got, want := err.Error(), ports.ErrTaskTransition.Error()+": completed to working"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestMessageTooLargeError(t *testing.T) {
	if ports.MaxMessageHead != 64<<10 {
		t.Errorf("MaxMessageHead = %d, documented as 64 KiB", ports.MaxMessageHead)
	}
	for _, c := range []struct {
		unit, want string
	}{
		{"", "message of 9 bytes exceeds the limit of 4 bytes: "},
		{"line", "line of 9 bytes exceeds the limit of 4 bytes: "},
	} {
		var err error = &ports.MessageTooLargeError{Size: 9, Limit: 4, Unit: c.unit}
		if want := c.want + ports.ErrMessageTooLarge.Error(); err.Error() != want {
			t.Errorf("unit %q: Error() = %q, want %q", c.unit, err.Error(), want)
		}
		if !errors.Is(err, ports.ErrMessageTooLarge) {
			t.Errorf("unit %q: %v does not wrap ErrMessageTooLarge", c.unit, err)
		}
	}
}

func TestSharedStateIsZero(t *testing.T) {
	if !(ports.SharedState{}).IsZero() {
		t.Fatal("the zero SharedState is not zero")
	}
	// Each port alone makes it share something.
	for name, s := range map[string]ports.SharedState{
		"SessionStore": {SessionStore: struct{ ports.SessionStore }{}},
		"EventStore":   {EventStore: struct{ ports.EventStore }{}},
		"StateKeys":    {StateKeys: struct{ ports.StateKeys }{}},
		"Bus":          {Bus: struct{ ports.NotificationBus }{}},
		"Tasks":        {Tasks: struct{ ports.TaskStore }{}},
	} {
		if s.IsZero() {
			t.Errorf("a SharedState with only %s is zero", name)
		}
	}
}

func TestSessionStateSize(t *testing.T) {
	const overhead = 256
	if got := (ports.SessionState{}).Size(); got != overhead {
		t.Errorf("the empty state's Size = %d, want %d", got, overhead)
	}
	st := ports.SessionState{
		ID:           "i",                        // 1
		Owner:        "oo",                       // 2
		Peer:         "ppp",                      // 3
		Revision:     "rrrr",                     // 4
		LogLevel:     "lllll",                    // 5
		Capabilities: json.RawMessage(`{"a":1}`), // 7
		Client: domain.Implementation{
			Name:        "n",     // 1
			Title:       "tt",    // 2
			Version:     "vvv",   // 3
			Description: "dddd",  // 4
			WebsiteURL:  "wwwww", // 5
			Icons: []domain.Icon{
				{Src: "ssssss", MimeType: "mmmmmmm", Theme: "th", Sizes: []string{"1x1", "22x22"}}, // 6+7+2+3+5
				{Src: "s"}, // 1
			},
		},
		Subscriptions: []string{"file:///a", "b"}, // 9+1
		Initialized:   true,
		Ready:         true,
	}
	want := overhead + (1 + 2 + 3 + 4 + 5 + 7) + (1 + 2 + 3 + 4 + 5) + (6 + 7 + 2 + 3 + 5) + 1 + (9 + 1)
	if got := st.Size(); got != want {
		t.Errorf("Size = %d, want %d", got, want)
	}
}

func TestWithAbort(t *testing.T) {
	ctx := context.Background()
	if got := ports.Aborts(ctx); got != nil {
		t.Fatalf("Aborts of a bare context = %v, want none", got)
	}
	a, cancelA := context.WithCancel(ctx)
	defer cancelA()
	b, cancelB := context.WithCancel(ctx)
	defer cancelB()
	c, cancelC := context.WithCancel(ctx)
	defer cancelC()

	withA := ports.WithAbort(ctx, a)
	withAB := ports.WithAbort(withA, b)
	withAC := ports.WithAbort(withA, c)
	same := func(got []context.Context, want ...context.Context) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i] != want[i] {
				return false
			}
		}
		return true
	}
	if !same(ports.Aborts(withA), a) {
		t.Errorf("Aborts(withA) = %v", ports.Aborts(withA))
	}
	// Signals accumulate, oldest first, and two contexts derived from the
	// same parent do not share their additions.
	if !same(ports.Aborts(withAB), a, b) {
		t.Errorf("Aborts(withAB) = %v, want [a b]", ports.Aborts(withAB))
	}
	if !same(ports.Aborts(withAC), a, c) {
		t.Errorf("Aborts(withAC) = %v, want [a c]", ports.Aborts(withAC))
	}
}

func TestPrincipalAndTokenInContext(t *testing.T) {
	ctx := context.Background()
	if ports.PrincipalFrom(ctx) != nil || ports.AccessTokenFrom(ctx) != "" {
		t.Fatal("a bare context carries a principal or a token")
	}
	p := ports.Principal{Subject: "alice", Scopes: []string{"read"}}
	ctx = ports.WithAccessToken(ports.WithPrincipal(ctx, p), "tok")
	got := ports.PrincipalFrom(ctx)
	if got == nil || got.Subject != "alice" || len(got.Scopes) != 1 || got.Scopes[0] != "read" {
		t.Errorf("PrincipalFrom = %+v, want %+v", got, p)
	}
	if tok := ports.AccessTokenFrom(ctx); tok != "tok" {
		t.Errorf("AccessTokenFrom = %q, want %q", tok, "tok")
	}
}
