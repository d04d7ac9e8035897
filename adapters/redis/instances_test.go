package mcpredis_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

type echoIn struct {
	S string `json:"s"`
}

// A session initialized through one instance is served by another: both
// keep their sessions in one Redis.
func TestSessionAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	instance := func() string {
		s, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(func(_ context.Context, in echoIn) (string, error) {
			return "echo " + in.S, nil
		}, hexmcp.WithName("echo"))}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		h := s.HTTPHandler(mcphttp.Options{SessionStore: mcpredis.NewSessionStore(client(t, srv), mcpredis.SessionStoreOptions{})})
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		return hs.URL
	}
	a, b := instance(), instance()
	resp, body := post(t, a, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize on A: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHeaders(sid)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized on B: %d %s", resp.StatusCode, body)
	}
	for i, url := range []string{b, a, b} {
		resp, body := post(t, url, `{"jsonrpc":"2.0","id":`+string(rune('2'+i))+`,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"}}}`, sessionHeaders(sid))
		if resp.StatusCode != 200 || !strings.Contains(body, `echo x`) {
			t.Fatalf("call %d through %s: %d %s", i, url, resp.StatusCode, body)
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, b, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE on B: %v %v", err, resp)
	}
	if resp, body := post(t, a, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"}}}`, sessionHeaders(sid)); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a session deleted through B still served by A: %d %s", resp.StatusCode, body)
	}
}

// Redis down: session requests get 503 with Retry-After and the request's
// id, stateless calls (which need no store) go on; Redis back: sessions
// work again without a restart.
func TestSessionStoreRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	s, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(func(_ context.Context, in echoIn) (string, error) {
		return "echo " + in.S, nil
	}, hexmcp.WithName("echo"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	store := mcpredis.NewSessionStore(client(t, srv), mcpredis.SessionStoreOptions{Timeout: 300 * time.Millisecond})
	hs := httptest.NewServer(s.HTTPHandler(mcphttp.Options{SessionStore: store, Logger: slog.New(slog.DiscardHandler)}))
	defer hs.Close()
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	resp, body := post(t, hs.URL, initialize, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	srv.Stop()
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"}}}`
	for name, r := range map[string]func() (*http.Response, string){
		"initialize": func() (*http.Response, string) { return post(t, hs.URL, initialize, nil) },
		"session call": func() (*http.Response, string) {
			return post(t, hs.URL, call, sessionHeaders(sid))
		},
	} {
		resp, body := r()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, `"error"`) {
			t.Fatalf("%s with Redis down: %d Retry-After=%q %s", name, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if name == "session call" && !strings.Contains(body, `"id":7`) {
			t.Fatalf("the 503 lacks the request's id: %s", body)
		}
	}
	stateless := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"s":"y"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	if resp, body := post(t, hs.URL, stateless, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}); resp.StatusCode != 200 || !strings.Contains(body, "echo y") {
		t.Fatalf("a stateless call with Redis down: %d %s", resp.StatusCode, body)
	}
	srv.Restart(t)
	var ok bool
	for range 50 { // the client's pool reconnects
		if resp, _ := post(t, hs.URL, initialize, nil); resp.StatusCode == 200 {
			ok = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !ok {
		t.Fatal("sessions did not come back with Redis")
	}
}

// post sends one JSON-RPC message to an MCP endpoint, with headers, and
// returns the response and its body.
func post(t *testing.T, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	testtools.MCPHeaders(req, hdr)
	resp := testtools.Do(t, nil, req)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func sessionHeaders(sid string) map[string]string {
	if sid == "" {
		return nil
	}
	return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
}
