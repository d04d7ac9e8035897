package wiring_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/wiring"
)

// Two applications with wiring.Redis on one Redis share their sessions: a
// session initialized through one is served by the other.
func TestRedisSharesSessions(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	instance := func() string {
		var h *mcphttp.Handler
		fxtest.New(t, wiring.Core, wiring.HTTP, wiring.Redis(rdb), wiring.Tools(hexmcp.NewTool(hello)), fx.Populate(&h), fx.NopLogger).RequireStart()
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		return hs.URL
	}
	a, b := instance(), instance()
	post := func(url, sid, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		return testtools.DoRead(t, nil, req)
	}
	resp, body := post(a, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	post(b, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if resp, body := post(b, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello"}}`); resp.StatusCode != 200 || !strings.Contains(body, `"hello"`) {
		t.Fatalf("call through the other instance: %d %s", resp.StatusCode, body)
	}
}
