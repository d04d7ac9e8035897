package wiring_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/wiring"
)

// The transports' options are optional in the graph: without them the
// stdio transport and the WebSocket handler take their defaults.
func TestTransportsWithoutOptions(t *testing.T) {
	var tr *stdio.Transport
	var ws *websocket.Handler
	a := fxtest.New(t, wiring.Quiet, wiring.Core, wiring.Stdio, wiring.WebSocket, fx.Populate(&tr, &ws))
	if err := a.Err(); err != nil || tr == nil || ws == nil {
		t.Fatalf("built %v %v: %v", tr != nil, ws != nil, err)
	}
}

// An HTTP server that cannot listen (the address is taken) fails the
// application's start, with the listener's error.
func TestHTTPServerCannotListen(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	a := fx.New(wiring.Quiet, wiring.Core, wiring.HTTP, wiring.HTTPServer, wiring.Listen(taken.Addr().String()))
	err = a.Start(context.Background())
	if err == nil {
		_ = a.Stop(context.Background())
		t.Fatal("the application started on a taken address")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("start: %v, want the listener's error", err)
	}
}

// The engine logs through the ports.Logger in the graph when there is
// one, before a *slog.Logger in the graph.
func TestPortsLoggerFirst(t *testing.T) {
	rec := &testtools.LogRecorder{}
	var e *app.Engine
	fxtest.New(t, wiring.Quiet, wiring.Core,
		fx.Provide(func() ports.Logger { return rec }, func() *slog.Logger { return slog.New(slog.DiscardHandler) }),
		fx.Populate(&e))
	if e == nil || e.Logger() != ports.Logger(rec) {
		t.Fatalf("the engine logs through %T, want the graph's ports.Logger", e.Logger())
	}
}
