package mcpredis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// paddedInit is an initialize with about pad bytes of capabilities.
func paddedInit(pad int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"pad":{"x":"%s"}}},"clientInfo":{"name":"c","version":"1"}}}`,
		strings.Repeat("a", pad))
}

// redisPerClientBudget is the Redis store's default budget of one client's
// sessions.
const redisPerClientBudget = ports.DefaultMaxSessionBytesPerClient

// Sessions kept in Redis are bounded in bytes per client: one address
// opening sessions of 60 KiB of capabilities is refused (429, Retry-After,
// the initialize's id) once its sessions hold its budget, and Redis holds
// no more of them. Before, 40 sessions of 3.5 MiB from one address put
// 160 MiB in Redis.
func TestRedisSessionBytesPerClient(t *testing.T) {
	srv := redistest.Start(t)
	s, err := hexmcp.New(hexmcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rdb := client(t, srv)
	hs := httptest.NewServer(s.HTTPHandler(mcphttp.Options{SessionStore: mcpredis.NewSessionStore(rdb, mcpredis.SessionStoreOptions{Prefix: "bytes:"})}))
	t.Cleanup(hs.Close)

	const pad = 60 << 10
	var sids []string
	var refused *http.Response
	var body string
	for range 40 {
		resp, b := post(t, hs.URL, paddedInit(pad), nil)
		if resp.StatusCode != http.StatusOK {
			refused, body = resp, b
			break
		}
		sid := resp.Header.Get("Mcp-Session-Id")
		if r, b := post(t, hs.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHeaders(sid)); r.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/initialized: %d %s", r.StatusCode, b)
		}
		sids = append(sids, sid)
	}
	if refused == nil {
		t.Fatalf("one client stored %d sessions of %d KiB (%d KiB) in Redis, past the %d KiB budget", len(sids), pad>>10, len(sids)*pad>>10, redisPerClientBudget>>10)
	}
	if len(sids)*pad > redisPerClientBudget || len(sids) < redisPerClientBudget/(pad+4<<10)-1 {
		t.Fatalf("one client held %d sessions of %d KiB before the refusal; the budget is %d KiB", len(sids), pad>>10, redisPerClientBudget>>10)
	}
	if refused.StatusCode != http.StatusTooManyRequests || refused.Header.Get("Retry-After") == "" {
		t.Fatalf("refusal %d (Retry-After %q): %.300s", refused.StatusCode, refused.Header.Get("Retry-After"), body)
	}
	var e struct {
		ID    json.RawMessage    `json:"id"`
		Error struct{ Code int } `json:"error"`
	}
	if json.Unmarshal([]byte(body), &e) != nil || string(e.ID) != "1" || e.Error.Code != -32600 {
		t.Fatalf("refusal body %.300s", body)
	}
	// What Redis holds of the sessions' states is within the budget.
	keys, err := rdb.Keys(context.Background(), "bytes:sess:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var held int64
	for _, k := range keys {
		n, err := rdb.HStrLen(context.Background(), k, "s").Result()
		if err != nil {
			t.Fatal(err)
		}
		held += n
	}
	if held > redisPerClientBudget {
		t.Fatalf("Redis holds %d bytes of session states for one client, past its %d", held, redisPerClientBudget)
	}
	// Ending a session makes room again.
	req, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
	for k, v := range sessionHeaders(sids[0]) {
		req.Header.Set(k, v)
	}
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", err, resp)
	}
	if resp, b := post(t, hs.URL, paddedInit(pad), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("after a DELETE: %d %.300s", resp.StatusCode, b)
	}
}

// The copies of sessions an instance keeps in memory are bounded in bytes
// (mcphttp.Options.MaxLocalSessionBytes): Redis tells no instance that a
// session expired (or was deleted through another instance), so without
// the budget the copies of sessions Redis dropped stayed for 30 minutes,
// and a client opening pending sessions of 60 KiB every 30 s filled the
// instance's memory with them. Past the budget, copies idle here leave
// memory (a live session's next request restores it from Redis).
func TestLocalSessionCopiesBoundedInBytes(t *testing.T) {
	srv := redistest.Start(t)
	clock := porttest.NewFakeClock(time.Now().Truncate(time.Second))
	open := func(t *testing.T, budget int) (*hexmcp.Server, string) {
		s, err := hexmcp.New(hexmcp.Options{Resources: []hexmcp.Resource{hexmcp.TextResource("test://doc", "doc", "x")}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		store := mcpredis.NewSessionStore(client(t, srv), mcpredis.SessionStoreOptions{Prefix: fmt.Sprintf("copies%d:", budget), Clock: clock})
		hs := httptest.NewServer(s.HTTPHandler(mcphttp.Options{SessionStore: store, MaxLocalSessionBytes: budget}))
		t.Cleanup(hs.Close)
		return s, hs.URL
	}
	const pad = 60 << 10
	// subscribed opens n sessions of pad bytes subscribed to test://doc,
	// ready or pending.
	subscribed := func(t *testing.T, url string, n int, ready bool) {
		t.Helper()
		for range n {
			resp, body := post(t, url, paddedInit(pad), nil)
			sid := resp.Header.Get("Mcp-Session-Id")
			if resp.StatusCode != http.StatusOK || sid == "" {
				t.Fatalf("initialize: %d %.300s", resp.StatusCode, body)
			}
			if ready {
				if r, b := post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHeaders(sid)); r.StatusCode != http.StatusAccepted {
					t.Fatalf("notifications/initialized: %d %s", r.StatusCode, b)
				}
			}
			if r, b := post(t, url, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://doc"}}`, sessionHeaders(sid)); r.StatusCode != http.StatusOK || !strings.Contains(b, `"result":{}`) {
				t.Fatalf("subscribe: %d %s", r.StatusCode, b)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		budget int
		want   int // sessions the instance still holds at the end
	}{{"budget", 200 << 10, 3}, {"unlimited", app.Unlimited, 6}} {
		t.Run(tc.name, func(t *testing.T) {
			s, url := open(t, tc.budget)
			subscribed(t, url, 3, false)
			if n := s.NotifyResourceUpdated("test://doc"); n != 3 {
				t.Fatalf("%d sessions told, want 3", n)
			}
			// Redis drops the pending sessions; the instance is not told.
			clock.Advance(ports.DefaultSessionPendingTimeout + time.Second)
			// Wait until the copies have gone unused for long enough to be
			// dropped (a copy just used is never: its request may be on its
			// way to counting itself in flight).
			time.Sleep(1100 * time.Millisecond)
			subscribed(t, url, 3, true)
			if n := s.NotifyResourceUpdated("test://doc"); n != tc.want {
				t.Fatalf("the instance holds %d sessions' copies, want %d", n, tc.want)
			}
		})
	}
}
