package websocket_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
	"go.uber.org/fx"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/wiring"
)

// TestWiring checks the fx module: the handler serves the engine of the
// graph with the supplied options, and the application's stop closes its
// connections with 1001.
func TestWiring(t *testing.T) {
	var h *websocket.Handler
	fxApp := fx.New(
		fx.NopLogger,
		fx.Supply(fx.Annotate(slog.New(slog.DiscardHandler), fx.As(new(ports.Logger)))),
		fx.Supply(&websocket.Options{AllowedOrigins: []string{"http://localhost:6274"}, AllowedHosts: []string{"mcp.internal"}}),
		wiring.Core,
		wiring.WebSocket,
		wiring.Tools(hexmcp.NewTool(func() string { return "hi" }, hexmcp.WithName("hi"))),
		fx.Populate(&h),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fxApp.Start(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")

	if _, resp, _ := (&gws.Dialer{}).Dial(url, map[string][]string{"Origin": {"http://evil.example"}}); resp == nil || resp.StatusCode != 403 {
		t.Fatalf("foreign origin: %v, want 403", resp)
	}
	// The Host rule applies by default, with the supplied AllowedHosts.
	port := url[strings.LastIndex(url, ":")+1:]
	if _, resp, _ := (&gws.Dialer{}).Dial(url, map[string][]string{"Host": {"evil.example:" + port}}); resp == nil || resp.StatusCode != 403 {
		t.Fatalf("foreign Host: %v, want 403", resp)
	}
	listed, _, err := (&gws.Dialer{Subprotocols: []string{"mcp"}}).Dial(url, map[string][]string{"Host": {"mcp.internal:" + port}})
	if err != nil {
		t.Fatalf("listed Host: %v", err)
	}
	listed.Close()
	c, _, err := (&gws.Dialer{Subprotocols: []string{"mcp"}}).Dial(url, map[string][]string{"Origin": {"http://localhost:6274"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_ = c.WriteMessage(gws.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	if _, resp, err := c.ReadMessage(); err != nil || !strings.Contains(string(resp), `"text":"hi"`) {
		t.Fatalf("call: %s %v", resp, err)
	}

	// The client reads (and so answers the close frame) while the
	// application stops.
	closed := make(chan error, 1)
	go func() {
		_, _, err := c.ReadMessage()
		closed <- err
	}()
	if err := fxApp.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; !gws.IsCloseError(err, gws.CloseGoingAway) {
		t.Fatalf("after stop: %v, want close 1001", err)
	}
	if n := h.Conns(); n != 0 {
		t.Errorf("%d connections after stop", n)
	}
}
