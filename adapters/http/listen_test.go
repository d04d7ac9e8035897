package mcphttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

const listenParams = `"notifications":{"toolsListChanged":true}`

// A POST subscriptions/listen becomes an SSE stream that starts with the
// acknowledgement and carries the list changes, tagged with the request id,
// until the client goes away.
func TestListenStream(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := request(t, ctx, http.MethodPost, ev.url, statelessBody(5, "subscriptions/listen", listenParams), statelessHdr("subscriptions/listen", ""))
	defer resp.Body.Close()
	stream := newSSE(t, resp)
	if ev0 := stream.nextEvent(t); ev0.data != `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5},"notifications":{"toolsListChanged":true}}}` {
		t.Fatalf("first event %q", ev0.data)
	}
	if err := ev.e.AddTool(app.NewTool(func() string { return "x" }, app.WithName("late"))); err != nil {
		t.Fatal(err)
	}
	if ev1 := stream.nextEvent(t); ev1.data != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5}}}` {
		t.Fatalf("second event %q", ev1.data)
	}
	// other requests are served meanwhile
	expect(t, ev.post(statelessCall(6, "echo", `{"text":"hi"}`), statelessHdr("tools/call", "echo")), http.StatusOK, "echo: hi")
}

// A client that accepts only JSON cannot listen.
func TestListenNeedsSSE(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	h := statelessHdr("subscriptions/listen", "")
	h["Accept"] = "application/json"
	expect(t, ev.post(statelessBody(5, "subscriptions/listen", listenParams), h), http.StatusNotAcceptable, "text/event-stream")
}

// Server.Shutdown ends the listen streams (they never end by themselves),
// each with the completion result of its listen request (2026-07-28,
// "Graceful Closure"), and returns without waiting for its deadline.
func TestListenEndsOnShutdown(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	srv, url := startServer(t, ev)
	resp := request(t, context.Background(), http.MethodPost, url, statelessBody(5, "subscriptions/listen", listenParams), statelessHdr("subscriptions/listen", ""))
	defer resp.Body.Close()
	stream := newSSE(t, resp)
	stream.nextEvent(t) // the acknowledgement
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
	// the server ended it: the completion result is the last event
	if last := stream.nextEvent(t); last.data != listenDone5 {
		t.Fatalf("last event %q", last.data)
	}
	if _, err := stream.next(); err != io.EOF {
		t.Fatalf("stream after Shutdown: %v", err)
	}
}

// CloseStreams (for a handler on a server of one's own) ends them too,
// with the completion result.
func TestListenEndsOnCloseStreams(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	resp := ev.post(statelessBody(5, "subscriptions/listen", listenParams), statelessHdr("subscriptions/listen", ""))
	defer resp.Body.Close()
	stream := newSSE(t, resp)
	stream.nextEvent(t)
	ev.h.CloseStreams()
	if last := stream.nextEvent(t); last.data != listenDone5 {
		t.Fatalf("last event %q", last.data)
	}
	if ev, err := stream.next(); err != io.EOF {
		t.Fatalf("after the completion result: %q, %v", ev.data, err)
	}
}

// listenDone5 is the completion result of the listen request of id 5: the
// server ended the subscription.
const listenDone5 = `{"jsonrpc":"2.0","id":5,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"1.0.0"},"io.modelcontextprotocol/subscriptionId":5}}}`

// A client that closes its listen stream cancels the subscription: no
// response is written, not even when the server's streams close next. The
// handler is served directly, to see what it writes after the client left.
func TestListenClientCancelGetsNoResponse(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(statelessBody(5, "subscriptions/listen", listenParams)))
	req.Host = "127.0.0.1"
	testtools.MCPHeaders(req, statelessHdr("subscriptions/listen", ""))
	w := &streamRecorder{header: http.Header{}, wrote: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ev.h.ServeHTTP(w, req)
	}()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(w.body(), "notifications/subscriptions/acknowledged") {
		select {
		case <-w.wrote:
		case <-deadline:
			t.Fatalf("no acknowledgement: %q", w.body())
		}
	}
	cancel() // the client goes away
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the listen request did not end when the client went away")
	}
	ev.h.CloseStreams()
	if body := w.body(); strings.Contains(body, `"id":5`) || strings.Contains(body, `"result"`) {
		t.Fatalf("response after the client cancelled: %q", body)
	}
}

// streamRecorder is an http.ResponseWriter (and Flusher) whose body can be
// read while the handler writes.
type streamRecorder struct {
	header http.Header
	mu     sync.Mutex
	buf    strings.Builder
	wrote  chan struct{}
}

func (w *streamRecorder) Header() http.Header { return w.header }
func (w *streamRecorder) WriteHeader(int)     {}
func (w *streamRecorder) Flush()              {}

func (w *streamRecorder) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(b)
	w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(b), nil
}

func (w *streamRecorder) body() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
