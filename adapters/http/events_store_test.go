package mcphttp_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// promptEngine is an engine with one prompt, "big", whose message is a
// text of size bytes.
func promptEngine(t *testing.T, size int) *app.Engine {
	t.Helper()
	e := testtools.NewEngine(t, app.Options{Info: testtools.Info, PromptRegistry: memory.NewPromptRegistry()})
	text := strings.Repeat("x", size)
	big := func(context.Context, map[string]string) (*domain.GetPromptResult, error) {
		return &domain.GetPromptResult{Messages: []domain.PromptMessage{domain.UserMessage(domain.Text(text))}}, nil
	}
	if err := e.AddPrompt(app.NewPrompt("big", big)); err != nil {
		t.Fatal(err)
	}
	return e
}

// A POST whose SSE stream carries only its final response leaves nothing
// in the event store once that response is written: many large
// prompts/get answers to a client that accepts only SSE used to stay
// there, in memory, until they expired.
func TestOneEventStreamsNotKept(t *testing.T) {
	const size, n = 256 << 10, 40 // 10 MiB in all, within the store's budgets
	for _, rev := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			events := memory.NewEventStore(memory.EventStoreOptions{})
			ev := envFor(t, promptEngine(t, size), mcphttp.Options{EventStore: events})
			sid := ev.initialize(rev)
			for i := range n {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":{"name":"big"}}`, 10+i)
				resp := ev.post(body, mergeHdr(sessHdr(sid, rev), hdr{"Accept": "text/event-stream"}))
				s := newSSE(t, resp)
				e := s.nextEvent(t)
				for e.data == "" { // a priming event, if any
					e = s.nextEvent(t)
				}
				if !strings.Contains(e.data, fmt.Sprintf(`"id":%d`, 10+i)) || len(e.data) < size {
					t.Fatalf("answer %d: %d bytes: %.200s", i, len(e.data), e.data)
				}
				if _, err := s.next(); err == nil {
					t.Fatalf("answer %d: the stream goes on", i)
				}
				resp.Body.Close()
			}
			if b := events.Bytes(); b != 0 {
				t.Fatalf("the event store holds %d bytes after %d one-event streams", b, n)
			}
			if l := events.Len(); l != 0 {
				t.Fatalf("the event store holds %d streams", l)
			}
		})
	}
}

// A POST stream that carried more than its response is kept, response
// included: a client that saw the progress but not the end resumes.
func TestStreamWithProgressKept(t *testing.T) {
	events := memory.NewEventStore(memory.EventStoreOptions{})
	ev := newEnv(t, mcphttp.Options{EventStore: events})
	sid := ev.initialize("2025-11-25")
	resp := ev.post(progressCallBody(2, "progress"), mergeHdr(sessHdr(sid, "2025-11-25"), hdr{"Accept": "text/event-stream"}))
	s := newSSE(t, resp)
	p := s.nextEvent(t)
	r := s.nextEvent(t)
	readAll(t, resp)
	if !strings.Contains(p.data, "notifications/progress") || !strings.Contains(r.data, `"id":2`) || p.id == "" || r.id == "" {
		t.Fatalf("events %+v %+v", p, r)
	}
	if events.Bytes() == 0 {
		t.Fatal("nothing kept")
	}
	resp = request(t, context.Background(), http.MethodGet, ev.url, "", mergeHdr(sessHdr(sid, "2025-11-25"), hdr{"Last-Event-ID": p.id}))
	s = newSSE(t, resp)
	defer resp.Body.Close()
	if again := s.nextEvent(t); again != r {
		t.Fatalf("replayed %+v, want %+v", again, r)
	}
}

// copyCounter counts the events a Replay handed to its callback that the
// callback took (returned nil for).
type copyCounter struct {
	ports.EventStore
	mu    sync.Mutex
	taken int
}

func (c *copyCounter) Replay(ctx context.Context, id string, fn func(ports.Event) error) (string, error) {
	return c.EventStore.Replay(ctx, id, func(e ports.Event) error {
		err := fn(e)
		if err == nil {
			c.mu.Lock()
			c.taken++
			c.mu.Unlock()
		}
		return err
	})
}

func (c *copyCounter) reset() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.taken
	c.taken = 0
	return n
}

// A resumption with an event id of another session's stream is refused
// at that stream's first event, before any of its events is copied.
func TestResumeOtherSessionCopiesNothing(t *testing.T) {
	events := &copyCounter{EventStore: memory.NewEventStore(memory.EventStoreOptions{})}
	ev := newEnv(t, mcphttp.Options{EventStore: events})
	victim := ev.initialize("2025-11-25")
	resp, s := ev.openGet(victim, "2025-11-25", nil)
	prime := s.nextEvent(t)
	ev.addTool("t0")
	ev.addTool("t1")
	for range 2 {
		if e := s.nextEvent(t); !isListChanged(e) {
			t.Fatalf("event %+v", e)
		}
	}
	resp.Body.Close()

	intruder := ev.initialize("2025-11-25")
	events.reset()
	r := request(t, context.Background(), http.MethodGet, ev.url, "", mergeHdr(sessHdr(intruder, "2025-11-25"), hdr{"Last-Event-ID": prime.id}))
	expect(t, r, http.StatusBadRequest, "Last-Event-ID")
	if n := events.reset(); n != 0 {
		t.Fatalf("%d events of another session's stream were taken before the refusal", n)
	}

	// The owner resumes from the same id and gets them (the counter
	// counts).
	resp, s = ev.openGet(victim, "2025-11-25", hdr{"Last-Event-ID": prime.id})
	defer resp.Body.Close()
	for range 2 {
		if e := s.nextEvent(t); !isListChanged(e) {
			t.Fatalf("replayed %+v", e)
		}
	}
	if n := events.reset(); n < 2 {
		t.Fatalf("the owner's replay took %d events", n)
	}
}
