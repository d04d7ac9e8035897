package mcphttp

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// The sweep of idle sessions (sessions unused for localIdle leave this
// instance's memory) keeps a session whose GET stream is attached, however
// long since its last request: the stream goes on. The sweep runs as if
// two hours had passed; the session without a stream leaves and is
// restored by its next request.
func TestSweepKeepsSessionsWithAGETStream(t *testing.T) {
	e, err := app.NewEngine(app.Options{Info: domain.Implementation{Name: "t", Version: "1"}, ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	h := NewHandler(e, Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.CloseStreams(); srv.Close() })
	const rev = "2025-11-25"
	do := func(ctx context.Context, method, sid, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set(HeaderSessionID, sid)
			req.Header.Set("MCP-Protocol-Version", rev)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	session := func() string {
		t.Helper()
		resp := do(context.Background(), http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		sid := resp.Header.Get(HeaderSessionID)
		resp = do(context.Background(), http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		resp.Body.Close()
		if sid == "" || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("initialize: session %q, initialized %d", sid, resp.StatusCode)
		}
		return sid
	}
	streaming, quiet := session(), session()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get := do(ctx, http.MethodGet, streaming, "")
	defer get.Body.Close()
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		r := bufio.NewReader(get.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(line, "data:") {
				lines <- line
			}
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the GET stream ended")
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no event on the GET stream within 10 s")
		}
		return ""
	}
	if l := next(); strings.TrimSpace(l) != "data:" {
		t.Fatalf("first event %q, want the priming event", l)
	}

	h.mu.Lock()
	idle, removed := h.sweepLocked(time.Now().Add(2 * time.Hour))
	h.mu.Unlock()
	h.endSwept(idle, removed)
	if len(idle) != 1 || idle[0].id != quiet || len(removed) != 0 {
		t.Fatalf("swept %d idle, %d removed; want the session without a stream only", len(idle), len(removed))
	}

	if err := e.AddTool(app.NewTool(func(context.Context) (string, error) { return "", nil }, app.WithName("added"))); err != nil {
		t.Fatal(err)
	}
	if l := next(); !strings.Contains(l, "notifications/tools/list_changed") {
		t.Fatalf("the GET stream got %q, want the list change", l)
	}
	resp := do(context.Background(), http.MethodPost, quiet, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result":{}`) {
		t.Fatalf("ping of the swept session: %d %s", resp.StatusCode, body)
	}
}
