package mcphttp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// watchedEvents is an in-memory event store shared by several handlers,
// as one instance each, that tells of appends ([ports.EventWatcher]), as a
// shared store (Redis) does.
type watchedEvents struct {
	*memory.EventStore
	mu       sync.Mutex
	watchers map[string]map[chan struct{}]bool
}

var _ ports.EventWatcher = (*watchedEvents)(nil)

func newWatchedEvents() *watchedEvents {
	return &watchedEvents{EventStore: memory.NewEventStore(memory.EventStoreOptions{}), watchers: map[string]map[chan struct{}]bool{}}
}

func (s *watchedEvents) Append(ctx context.Context, streamID string, data []byte) (string, error) {
	id, err := s.EventStore.Append(ctx, streamID, data)
	s.mu.Lock()
	for ch := range s.watchers[streamID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	s.mu.Unlock()
	return id, err
}

func (s *watchedEvents) Watch(streamID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.watchers[streamID] == nil {
		s.watchers[streamID] = map[chan struct{}]bool{}
	}
	s.watchers[streamID][ch] = true
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.watchers[streamID], ch)
		s.mu.Unlock()
	}
}

// stepsEngine is an engine whose tool "steps" reports progress, waits
// for next, reports progress again and returns "done".
func stepsEngine(t *testing.T, next <-chan struct{}) *app.Engine {
	t.Helper()
	e, err := app.NewEngine(app.Options{Info: domain.Implementation{Name: "t", Version: "1"}, ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	if err != nil {
		t.Fatal(err)
	}
	err = e.AddTool(app.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		if err := rc.ReportProgress(ctx, 1, 3, "one"); err != nil {
			return "", err
		}
		select {
		case <-next:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if err := rc.ReportProgress(ctx, 2, 3, "two"); err != nil {
			return "", err
		}
		return "done", nil
	}, app.WithName("steps")))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A POST stream begun at one instance and resumed (GET + Last-Event-ID) at
// another sharing the event store is followed there from the store: the
// call's later events and then its response, after which the stream ends.
func TestResumedPostStreamFollowedToItsResponse(t *testing.T) {
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{})
	events := newWatchedEvents()
	next := make(chan struct{})
	var once sync.Once
	proceed := func() { once.Do(func() { close(next) }) }
	t.Cleanup(proceed)
	opts := mcphttp.Options{SessionStore: sessions, EventStore: events}
	a := envFor(t, stepsEngine(t, next), opts)
	b := envFor(t, stepsEngine(t, next), opts)
	const rev = "2025-11-25"
	sid := initializeAt(t, a.url, rev)

	resp := a.post(progressCallBody(2, "steps"), sessHdr(sid, rev))
	s := newSSE(t, resp)
	last := ""
	for last == "" {
		ev := s.nextEvent(t)
		if strings.Contains(ev.data, "notifications/progress") {
			last = ev.id
		}
	}
	resp.Body.Close() // the client lost the stream at a
	if last == "" {
		t.Fatal("the progress event has no id to resume from")
	}

	h := sessHdr(sid, rev)
	h["Last-Event-ID"] = last
	resp = request(t, context.Background(), http.MethodGet, b.url, "", h)
	defer resp.Body.Close()
	s = newSSE(t, resp)
	proceed()
	if ev := s.nextEvent(t); !strings.Contains(ev.data, `"message":"two"`) {
		t.Fatalf("first event followed at b: %q, want the second progress notification", ev.data)
	}
	if ev := s.nextEvent(t); !strings.Contains(ev.data, `"id":2`) || !strings.Contains(ev.data, `"text":"done"`) {
		t.Fatalf("second event followed at b: %q, want the response", ev.data)
	}
	// After the response the stream ends.
	rest := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(resp.Body)
		rest <- string(b)
	}()
	select {
	case r := <-rest:
		if strings.Contains(r, "data:") {
			t.Fatalf("after the response: %q", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the followed stream did not end after its response")
	}
}

// With a shared event store, a session's GET stream may be held at an
// instance other than the one whose engine sends the session's messages:
// it follows the stream from the store, one GET at a time (a second is
// 409), and a resumption replays what came after its id, then follows on.
func TestSharedSessionStreamFollowedAtAnotherInstance(t *testing.T) {
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{})
	events := newWatchedEvents()
	next := make(chan struct{})
	opts := mcphttp.Options{SessionStore: sessions, EventStore: events}
	a := envFor(t, stepsEngine(t, next), opts)
	b := envFor(t, stepsEngine(t, next), opts)
	const rev = "2025-11-25"
	sid := initializeAt(t, a.url, rev)
	noop := func(name string) app.Tool {
		return app.NewTool(func(context.Context) (string, error) { return "", nil }, app.WithName(name))
	}

	ctx, cancel := context.WithCancel(context.Background())
	resp := request(t, ctx, http.MethodGet, b.url, "", sessHdr(sid, rev))
	s := newSSE(t, resp)
	priming := s.nextEvent(t)
	if priming.id == "" || priming.data != "" {
		t.Fatalf("first event of the session stream: %+v, want a priming event", priming)
	}
	expect(t, request(t, context.Background(), http.MethodGet, b.url, "", sessHdr(sid, rev)), http.StatusConflict)

	if err := a.e.AddTool(noop("one")); err != nil {
		t.Fatal(err)
	}
	changed := s.nextEvent(t)
	if !strings.Contains(changed.data, "notifications/tools/list_changed") || changed.id == "" {
		t.Fatalf("followed at b: %+v, want the list change a's engine sent", changed)
	}
	cancel()
	resp.Body.Close()

	// Resumed from the priming event: the list change again, then what
	// comes next.
	h := sessHdr(sid, rev)
	h["Last-Event-ID"] = priming.id
	resp = request(t, context.Background(), http.MethodGet, b.url, "", h)
	defer resp.Body.Close()
	s = newSSE(t, resp)
	if ev := s.nextEvent(t); ev.id != changed.id || ev.data != changed.data {
		t.Fatalf("replayed: %+v, want %+v", ev, changed)
	}
	if err := a.e.AddTool(noop("two")); err != nil {
		t.Fatal(err)
	}
	if ev := s.nextEvent(t); !strings.Contains(ev.data, "notifications/tools/list_changed") || ev.id == changed.id {
		t.Fatalf("followed after the replay: %+v, want the next list change", ev)
	}
}
