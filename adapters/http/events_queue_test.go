package mcphttp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// gateListener hands out server connections whose writes can be held:
// once armed, the next connection it accepts is the gated one, and while
// the gate is shut its writes wait (a client that stops reading, without
// depending on the size of the kernel's socket buffers).
type gateListener struct {
	net.Listener
	stuck chan struct{} // gets a value when a write first waits at the gate

	mu    sync.Mutex
	armed bool
	shut  bool
	open  chan struct{} // closed when the gate opens
}

func newGateListener(l net.Listener) *gateListener {
	return &gateListener{Listener: l, stuck: make(chan struct{}, 1), open: make(chan struct{})}
}

func (l *gateListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.armed {
		l.armed = false
		return &gateConn{Conn: c, l: l}, nil
	}
	return c, nil
}

func (l *gateListener) arm() {
	l.mu.Lock()
	l.armed = true
	l.mu.Unlock()
}

func (l *gateListener) shutGate() {
	l.mu.Lock()
	l.shut = true
	l.mu.Unlock()
}

func (l *gateListener) openGate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shut {
		l.shut = false
		close(l.open)
	}
}

type gateConn struct {
	net.Conn
	l *gateListener
}

func (c *gateConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	shut, open := c.l.shut, c.l.open
	c.l.mu.Unlock()
	if shut {
		select {
		case c.l.stuck <- struct{}{}:
		default:
		}
		<-open
	}
	return c.Conn.Write(b)
}

// A resumed GET stream whose client stops reading queues at most
// Options.MaxStreamQueueBytes of events; past that the connection is
// dropped, and the client gets the rest from the event store by resuming,
// a bounded replay at a time.
func TestQueuedStreamBoundedInBytes(t *testing.T) {
	const (
		queueBytes = 4 << 10
		burst      = 12
		msgSize    = 1000 // each event: about 1.1 KiB
	)
	e := testtools.NewEngine(t, app.Options{Info: testtools.Info})
	start, returned := make(chan struct{}), make(chan struct{})
	var gl *gateListener
	type noIn struct{}
	tool := hexmcp.Func(func(ctx context.Context, _ noIn) (string, error) {
		defer close(returned)
		rc := app.RequestFrom(ctx)
		if err := rc.ReportProgress(ctx, 0, burst, "started"); err != nil {
			return "", err
		}
		select {
		case <-start:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		for i := 1; i <= burst; i++ {
			msg := fmt.Sprintf("m%02d ", i) + strings.Repeat("x", msgSize)
			if err := rc.ReportProgress(ctx, float64(i), burst, msg); err != nil {
				return "", err
			}
			if i == 1 {
				// The GET's writer now holds m01, and waits at the gate:
				// the rest queue behind it.
				select {
				case <-gl.stuck:
				case <-time.After(10 * time.Second):
					return "", fmt.Errorf("the stream's writer never reached the gate")
				}
			}
		}
		return "done", nil
	}, hexmcp.WithName("burst"))
	if err := e.AddTool(tool); err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(e, mcphttp.Options{MaxStreamQueueBytes: queueBytes, KeepAlive: -1})
	srv := httptest.NewUnstartedServer(h) // on 127.0.0.1
	gl = newGateListener(srv.Listener)
	srv.Listener = gl
	srv.Start()
	gated := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	t.Cleanup(func() {
		gl.openGate()
		h.CloseStreams()
		srv.Close()
		gated.CloseIdleConnections()
		_ = e.Close()
	})

	const rev = "2025-11-25"
	sid := initializeAt(t, srv.URL, rev)
	resp := request(t, context.Background(), http.MethodPost, srv.URL, progressCallBody(7, "burst"), sessHdr(sid, rev))
	s := newSSE(t, resp)
	first := s.nextEvent(t)
	if !strings.Contains(first.data, "started") || first.id == "" {
		t.Fatalf("first event %+v", first)
	}
	resp.Body.Close() // the client loses the POST's stream

	// It resumes on a connection of its own, then stops reading.
	gl.arm()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", rev)
	req.Header.Set("Last-Event-ID", first.id)
	resp, err = gated.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	s = newSSE(t, resp)
	gl.shutGate()
	close(start)
	testtools.Recv(t, returned, 10*time.Second, "the tool did not return")
	gl.openGate()

	// The connection was dropped with m01 written: the rest did not fit
	// in the queue.
	got := s.nextEvent(t)
	if !strings.Contains(got.data, `"message":"m01 `) {
		t.Fatalf("event %.100q", got.data)
	}
	if ev, err := s.next(); err != io.EOF {
		t.Fatalf("the slow client's stream went on: %.100q, %v", ev.data, err)
	}

	// Resuming from there, a bounded replay at a time, brings the rest.
	last := got.id
	next := 2
	for resumes := 1; ; resumes++ {
		if resumes > burst+1 {
			t.Fatal("resuming never reached the response")
		}
		r := request(t, context.Background(), http.MethodGet, srv.URL, "", mergeHdr(sessHdr(sid, rev), hdr{"Last-Event-ID": last}))
		rs := newSSE(t, r)
		bytes, n := 0, 0
		for {
			ev, err := rs.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
			bytes += len(ev.data)
			last = ev.id
			if strings.Contains(ev.data, `"id":7`) {
				if next != burst+1 || !strings.Contains(ev.data, "done") {
					t.Fatalf("response after m%02d: %.200s", next-1, ev.data)
				}
				r.Body.Close()
				if resumes < 2 {
					t.Fatalf("%d resumptions: the replays were not bounded", resumes)
				}
				return
			}
			if want := fmt.Sprintf(`"message":"m%02d `, next); !strings.Contains(ev.data, want) {
				t.Fatalf("event %.100q, want %s", ev.data, want)
			}
			next++
		}
		r.Body.Close()
		if n == 0 || rs.retry == "" {
			t.Fatalf("a replay of %d events ended without the response and without retry (%q)", n, rs.retry)
		}
		if bytes > queueBytes+2*msgSize {
			t.Fatalf("one replay sent %d bytes", bytes)
		}
	}
}

// promptEngine is an engine with one prompt, "big", whose message is a
// text of size bytes.
func promptEngine(t *testing.T, size int) *app.Engine {
	t.Helper()
	e := testtools.NewEngine(t, app.Options{Info: testtools.Info, PromptRegistry: memory.NewPromptRegistry()})
	text := strings.Repeat("x", size)
	big := func(context.Context, map[string]string) (*domain.GetPromptResult, error) {
		return &domain.GetPromptResult{Messages: []domain.PromptMessage{hexmcp.UserMessage(hexmcp.Text(text))}}, nil
	}
	if err := e.AddPrompt(hexmcp.NewPrompt("big", big)); err != nil {
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
