package mcphttp

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// liveStreams returns how many POST streams the handler holds for
// resumption.
func (h *Handler) liveStreams() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.streams)
}

// A POST answered as an SSE stream is held while it runs (a resumption
// finds it) and let go when it ends: a server that answers many streamed
// calls does not keep one entry per call forever.
func TestEndedPostStreamsAreLetGo(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{Info: domain.Implementation{Name: "t", Version: "1"}})
	t.Cleanup(func() { e.Close() })
	if err := e.AddTool(decl.NewTool(func(ctx context.Context, rc *app.RequestContext, _ struct{}) (string, error) {
		if err := rc.ReportProgress(ctx, 1, 2, "one"); err != nil {
			return "", err
		}
		return "done", nil
	}, decl.WithName("step"))); err != nil {
		t.Fatal(err)
	}
	h := NewHandler(e, Options{EventStore: memory.NewEventStore(memory.EventStoreOptions{})})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	hdr := sharedSession(t, hs.URL, hs.URL)
	for i := range 3 {
		resp := sharedDo(t, "POST", hs.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"step","arguments":{},"_meta":{"progressToken":"p"}}}`, hdr)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(resp.Header.Get("Content-Type"), "text/event-stream") || !strings.Contains(string(body), "notifications/progress") || !strings.Contains(string(body), `"done"`) {
			t.Fatalf("call %d: %s %q, want an SSE stream with the progress and the result", i, resp.Header.Get("Content-Type"), body)
		}
		if n := h.liveStreams(); n != 0 {
			t.Fatalf("after call %d ended the handler holds %d streams, want 0", i, n)
		}
	}
}

// A stream that ends lets go of its id only if the id is still its own:
// a newer stream registered under the same id stays.
func TestUnregisterKeepsANewerStream(t *testing.T) {
	h := &Handler{streams: map[string]*stream{}}
	old, newer := &stream{id: "s/1"}, &stream{id: "s/1"}
	h.registerStream(old)
	h.registerStream(newer)
	h.unregisterStream(old)
	if h.liveStream("s/1") != newer {
		t.Fatal("the end of the older stream removed the newer one")
	}
	h.unregisterStream(newer)
	if h.liveStream("s/1") != nil {
		t.Fatal("the stream is still held after it ended")
	}
}
