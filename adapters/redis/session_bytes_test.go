package mcpredis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/internal/redistest"
)

// paddedInit is an initialize with about pad bytes of capabilities.
func paddedInit(pad int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"pad":{"x":"%s"}}},"clientInfo":{"name":"c","version":"1"}}}`,
		strings.Repeat("a", pad))
}

// redisPerClientBudget is the Redis store's default budget of one client's
// sessions (mcpredis.DefaultMaxSessionBytesPerClient).
const redisPerClientBudget = 1 << 20

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
