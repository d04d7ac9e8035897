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

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/redistest"
)

// A POST stream begun at one instance and resumed at another is followed
// from the shared store; when nothing comes for followQuiet (its call may
// have died with its instance) the follow ends with an SSE retry field
// rather than hold the connection forever.
func TestFollowOfQuietPostStreamEnds(t *testing.T) {
	old := followQuiet
	followQuiet = 300 * time.Millisecond
	t.Cleanup(func() { followQuiet = old })
	srv := redistest.Start(t)
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{})
	release := make(chan struct{})
	defer close(release)
	instance := func() string {
		e, err := app.NewEngine(app.Options{Info: domain.Implementation{Name: "t", Version: "1"}, ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		if err := e.AddTool(app.NewTool(func(ctx context.Context, rc *app.RequestContext, _ struct{}) (string, error) {
			if err := rc.ReportProgress(ctx, 1, 2, "one"); err != nil {
				return "", err
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return "", ctx.Err()
		}, app.WithName("hold"))); err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { rdb.Close() })
		events := mcpredis.NewEventStore(rdb, mcpredis.EventStoreOptions{})
		t.Cleanup(func() { events.Close() })
		hs := httptest.NewServer(NewHandler(e, Options{SessionStore: sessions, EventStore: events}))
		t.Cleanup(hs.Close)
		return hs.URL
	}
	a, b := instance(), instance()
	do := func(method, url, body string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := do("POST", a, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get(HeaderSessionID)
	hdr := map[string]string{HeaderSessionID: sid, "MCP-Protocol-Version": "2025-11-25"}
	resp = do("POST", b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	resp.Body.Close()
	resp = do("POST", a, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hold","arguments":{},"_meta":{"progressToken":"p"}}}`, hdr)
	r := bufio.NewReader(resp.Body)
	last, id := "", ""
	for last == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the POST stream ended before its progress: %v", err)
		}
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "id:"); ok {
			id = strings.TrimSpace(v)
		}
		if strings.HasPrefix(line, "data:") && strings.Contains(line, "notifications/progress") {
			last = id
		}
	}
	resp.Body.Close()
	hdr["Last-Event-ID"] = last
	resp = do("GET", b, "", hdr)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("resume at b: %d", resp.StatusCode)
	}
	done := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(resp.Body)
		done <- string(b)
	}()
	select {
	case body := <-done:
		if !strings.Contains(body, "retry:") || strings.Contains(body, `"id":2`) {
			t.Fatalf("the quiet follow ended with %q, want an SSE retry field and no response", body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the follow of a quiet POST stream never ended")
	}
}
