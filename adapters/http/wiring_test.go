package mcphttp_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/wiring"
)

// The wiring package's HTTP modules: the handler at /mcp, the WebSocket
// handler at /ws, a server on the configured address, started and stopped
// with the application.
func TestWiringHTTPServer(t *testing.T) {
	type In struct {
		Name string `json:"name"`
	}
	greet := hexmcp.Func(func(ctx context.Context, in In) (string, error) { return "Hello, " + in.Name, nil }, hexmcp.WithName("greet"))
	var srv *mcphttp.Server
	fxApp := fxtest.New(t,
		fx.Provide(func() ports.Logger { return slog.New(slog.DiscardHandler) }),
		fx.Supply(&mcphttp.Options{MaxBodyBytes: 1 << 16}),
		wiring.Core,
		wiring.HTTP,
		wiring.WebSocket,
		wiring.HTTPServer,
		wiring.Listen("127.0.0.1:0"),
		wiring.Tools(greet),
		fx.Populate(&srv),
	)
	fxApp.RequireStart()
	base := "http://" + srv.Addr()
	resp := request(t, context.Background(), http.MethodPost, base+"/mcp", statelessCall(1, "greet", `{"name":"fx"}`), statelessHdr("tools/call", "greet"))
	expect(t, resp, http.StatusOK, "Hello, fx")
	sid := initializeAt(t, base+"/mcp", "2025-11-25")
	expect(t, request(t, context.Background(), http.MethodPost, base+"/mcp", callBody(2, "greet", `{"name":"s"}`), sessHdr(sid, "2025-11-25")), http.StatusOK, "Hello, s")
	// /ws is mounted: a plain GET is refused by the WebSocket handshake.
	resp = request(t, context.Background(), http.MethodGet, base+"/ws", "", nil)
	expect(t, resp, http.StatusBadRequest)
	fxApp.RequireStop()
	if _, err := http.Get(base + "/mcp"); err == nil {
		t.Fatal("the server still serves after stop")
	}
}
