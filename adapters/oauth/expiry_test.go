package mcpoauth_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// TestTokenExpiryEndsLongLivedExchanges opens, with a token of a real
// authorization server that expires in a few seconds, every exchange that
// outlives one HTTP request: a WebSocket connection, a handshake-era GET
// stream and a subscriptions/listen stream. Once the same token is refused
// over HTTP (401), none of them may go on serving it: the WebSocket
// connection answers no tools/call but is closed with 4401 (the access
// token expired: authenticate again and reconnect), and the streams have
// ended instead of carrying the next notification.
func TestTokenExpiryEndsLongLivedExchanges(t *testing.T) {
	as := startAS(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resource := srv.URL + "/mcp"
	v, err := mcpoauth.NewJWTVerifier(context.Background(), mcpoauth.JWTOptions{
		Issuer: as.Issuer, Audience: resource,
		Leeway: time.Millisecond, // the token is refused as soon as it expires
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := hexmcp.New(hexmcp.Options{
		Info:  hexmcp.Implementation{Name: "whoami", Version: "1"},
		Tools: []hexmcp.Tool{hexmcp.Func(whoami, hexmcp.WithName("whoami"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	bearer := mcphttp.RequireBearer(v, mcphttp.AuthOptions{Logger: slog.New(slog.DiscardHandler)})
	mux.Handle("/mcp", bearer(s.HTTPHandler(mcphttp.Options{})))
	ws := s.WebSocketHandler(websocket.Options{Logger: slog.New(slog.DiscardHandler)})
	mux.Handle("/ws", bearer(ws))
	defer func() { _ = ws.Shutdown(context.Background()) }()

	// Valid for a few more seconds.
	now := time.Now().Unix()
	token := as.sign(t, signReq{Claims: map[string]any{"iss": as.Issuer, "aud": resource, "sub": "alice", "scope": "mcp:tools",
		"iat": now, "nbf": now - 10, "exp": now + 5}})
	auth := "Bearer " + token

	// A WebSocket connection, which answers.
	conn, _, err := (&gws.Dialer{Subprotocols: []string{"mcp"}}).Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws",
		http.Header{"Authorization": {auth}})
	if err != nil {
		t.Fatalf("upgrade with a valid token: %v", err)
	}
	defer conn.Close()
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if err := conn.WriteMessage(gws.TextMessage, []byte(call)); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := conn.ReadMessage(); err != nil || !strings.Contains(string(msg), "alice|mcp:tools") {
		t.Fatalf("a call on the connection: %s %v", msg, err)
	}

	// A handshake-era session and its GET stream.
	post := func(body string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, resource, strings.NewReader(body))
		testtools.MCPHeaders(req, map[string]string{"Authorization": auth}, hdr)
		return testtools.Do(t, nil, req)
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	sess := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	resp = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sess)
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, resource, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", auth)
	for k, v := range sess {
		req.Header.Set(k, v)
	}
	get := testtools.Do(t, nil, req)
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", get.StatusCode)
	}
	getEvents := testtools.SSEData(get.Body)

	// A listen stream (2026-07-28), acknowledged.
	listen := post(`{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
	defer listen.Body.Close()
	listenEvents := testtools.SSEData(listen.Body)
	if first := testtools.NextData(t, listenEvents, 30*time.Second); !strings.Contains(first, "notifications/subscriptions/acknowledged") {
		t.Fatalf("listen: %d %q", listen.StatusCode, first)
	}

	// Wait until the token is refused over HTTP.
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, _ := mcpCall(t, resource, auth)
		if resp.StatusCode == http.StatusUnauthorized {
			break
		}
		if resp.StatusCode != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("the token is still answered %d", resp.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A notification for both streams: they must have ended without it.
	if err := s.AddTools(hexmcp.Func(whoami, hexmcp.WithName("late"))); err != nil {
		t.Fatal(err)
	}
	for name, events := range map[string]<-chan string{"GET": getEvents, "listen": listenEvents} {
	read:
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					break read // ended
				}
				if strings.Contains(ev, "list_changed") {
					t.Errorf("the %s stream of the expired token carried %s", name, ev)
					break read
				}
			case <-time.After(30 * time.Second):
				t.Errorf("the %s stream of the expired token is still open", name)
				break read
			}
		}
	}

	// The WebSocket connection answers no call: it is closed with 4401.
	_ = conn.WriteMessage(gws.TextMessage, []byte(strings.Replace(call, `"id":1`, `"id":2`, 1)))
	_, msg, err := conn.ReadMessage()
	var ce *gws.CloseError
	if !errors.As(err, &ce) || ce.Code != 4401 {
		t.Fatalf("the connection of the expired token: %s, %v; want close 4401", msg, err)
	}
}
