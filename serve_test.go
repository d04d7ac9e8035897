package hexmcp_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/websocket"
)

// listen runs srv.ListenAndServe on a free loopback port with opts and
// returns the address it listens on; the server stops (and must return
// nil) when the test ends.
func listen(t *testing.T, srv *hexmcp.Server, opts hexmcp.HTTPOptions) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	opts.OnListen = func(addr string) { addrs <- addr }
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx, "127.0.0.1:0", opts) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ListenAndServe after cancel: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("ListenAndServe did not return")
		}
	})
	select {
	case addr := <-addrs:
		return addr
	case err := <-done:
		t.Fatalf("ListenAndServe: %v", err)
	}
	return ""
}

// An address already taken is ListenAndServe's error at once, naming the
// address; OnListen is not called.
func TestListenAndServeAddressTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv, err := hexmcp.New(hexmcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listened := false
	err = srv.ListenAndServe(ctx, ln.Addr().String(), hexmcp.HTTPOptions{OnListen: func(string) { listened = true }})
	if err == nil || !strings.Contains(err.Error(), "listening on "+ln.Addr().String()) || listened {
		t.Fatalf("ListenAndServe on a taken address = %v (OnListen called: %v), want the listen error", err, listened)
	}
}

// One call serves Streamable HTTP and WebSocket behind a bearer check, the
// paths of the caller's mux beside them without it, and everything inside
// the caller's net/http middleware.
func TestListenAndServeAuthenticated(t *testing.T) {
	srv := scopedServer(t, hexmcp.Visibility{})
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	var seen atomic.Int32
	addr := listen(t, srv, hexmcp.HTTPOptions{
		Mux:           mux,
		Authenticator: tokens,
		Auth:          mcphttp.AuthOptions{ResourceMetadataURL: prm, Logger: slog.New(slog.DiscardHandler)},
		WebSocket:     &websocket.Options{},
		Middleware: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen.Add(1)
				w.Header().Set("X-Wrapped", "yes")
				next.ServeHTTP(w, r)
			})
		},
	})

	resp, err := http.Get("http://" + addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Wrapped") != "yes" {
		t.Fatalf("/health: %d, X-Wrapped %q", resp.StatusCode, resp.Header.Get("X-Wrapped"))
	}

	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write","arguments":{},` + statelessMeta + `}}`
	hdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "write"}
	resp, _ = postAs(t, "http://"+addr+"/mcp", "", call, hdr)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+prm+`"`) {
		t.Fatalf("/mcp without a token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp.Header.Get("X-Wrapped") != "yes" {
		t.Fatal("the refusal did not pass the middleware")
	}
	resp, body := postAs(t, "http://"+addr+"/mcp", "reader", call, hdr)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("/mcp as reader: %d %s", resp.StatusCode, body)
	}
	resp, body = postAs(t, "http://"+addr+"/mcp", "writer", call, hdr)
	if resp.StatusCode != 200 || !strings.Contains(body, "written") {
		t.Fatalf("/mcp as writer: %d %s", resp.StatusCode, body)
	}

	dialer := &gws.Dialer{Subprotocols: []string{"mcp"}}
	if c, resp, err := dialer.Dial("ws://"+addr+"/ws", nil); err == nil {
		c.Close()
		t.Fatal("a WebSocket handshake without a token was accepted")
	} else if resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("WebSocket without a token: %v %v", resp, err)
	}
	if b, err := wsCallAs(t, "ws://"+addr+"/ws", "writer", call); err != nil || !strings.Contains(string(b), "written") {
		t.Fatalf("WebSocket as writer: %v %s", err, b)
	}
	if seen.Load() < 5 {
		t.Fatalf("the middleware saw %d requests", seen.Load())
	}
}

// Without options /ws is not served, and nothing asks for a token.
func TestListenAndServeDefaults(t *testing.T) {
	srv := scopedServer(t, hexmcp.Visibility{})
	addr := listen(t, srv, hexmcp.HTTPOptions{})
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read","arguments":{},` + statelessMeta + `}}`
	resp, body := postAs(t, "http://"+addr+"/mcp", "", call, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "read"})
	if resp.StatusCode != 200 || !strings.Contains(body, "read ok") {
		t.Fatalf("/mcp: %d %s", resp.StatusCode, body)
	}
	if c, resp, err := (&gws.Dialer{Subprotocols: []string{"mcp"}}).Dial("ws://"+addr+"/ws", nil); err == nil {
		c.Close()
		t.Fatal("/ws served without HTTPOptions.WebSocket")
	} else if resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/ws: %v %v", resp, err)
	}
}

// A mux that already serves /mcp is an error of ListenAndServe, not a
// panic, and nothing listens.
func TestListenAndServeMuxConflict(t *testing.T) {
	srv := scopedServer(t, hexmcp.Visibility{})
	for _, path := range []string{"/mcp", "/sse", "/message", "/ws"} {
		mux := http.NewServeMux()
		mux.HandleFunc(path, func(http.ResponseWriter, *http.Request) {})
		ctx, cancel := context.WithCancel(context.Background())
		err := srv.ListenAndServe(ctx, "127.0.0.1:0", hexmcp.HTTPOptions{Mux: mux, WebSocket: &websocket.Options{},
			OnListen: func(string) { t.Errorf("a mux that serves %s: listening despite the conflict", path); cancel() }})
		cancel()
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("a mux that serves %s: got %v, want an error naming it", path, err)
		}
	}
}

// With trusted proxies, a request relayed by one is the client's it names
// in X-Forwarded-For, for the handlers (and every bound counted per
// client).
func TestListenAndServeTrustedProxies(t *testing.T) {
	srv, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(func(ctx context.Context, _ noInput) (string, error) {
		return "from " + hexmcp.RequestFrom(ctx).Transport().RemoteAddr, nil
	}, hexmcp.WithName("whereFrom"))}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	addr := listen(t, srv, hexmcp.HTTPOptions{Server: mcphttp.ServerOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"whereFrom","arguments":{},` + statelessMeta + `}}`
	resp, body := postAs(t, "http://"+addr+"/mcp", "", call, map[string]string{"MCP-Protocol-Version": "2026-07-28",
		"Mcp-Method": "tools/call", "Mcp-Name": "whereFrom", "X-Forwarded-For": "203.0.113.7"})
	if resp.StatusCode != 200 || !strings.Contains(body, "from 203.0.113.7") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}
