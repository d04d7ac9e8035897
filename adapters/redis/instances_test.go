package mcpredis_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/internal/redistest"
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
	post := func(url, sid, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := post(a, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize on A: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(b, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized on B: %d %s", resp.StatusCode, body)
	}
	for i, url := range []string{b, a, b} {
		resp, body := post(url, sid, `{"jsonrpc":"2.0","id":`+string(rune('2'+i))+`,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"}}}`)
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
	if resp, body := post(a, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"}}}`); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a session deleted through B still served by A: %d %s", resp.StatusCode, body)
	}
}
