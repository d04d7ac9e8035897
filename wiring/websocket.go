package wiring

import (
	"go.uber.org/fx"

	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/app"
)

// webSocketParams are what the WebSocket module takes from the graph.
type webSocketParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	Engine    *app.Engine
	Options   *websocket.Options `optional:"true"`
}

// newWebSocketHandler returns the WebSocket handler serving the engine,
// configured by an optional *websocket.Options in the graph. Its Logger
// defaults to the engine's. On the application's stop it shuts
// the handler down gracefully, within the stop deadline, and then cancels
// its calls still running.
func newWebSocketHandler(p webSocketParams) *websocket.Handler {
	var o websocket.Options
	if p.Options != nil {
		o = *p.Options
	}
	h := websocket.NewHandler(p.Engine, o)
	p.Lifecycle.Append(fx.Hook{OnStop: stopTransport(p.Engine, "WebSocket", h.Shutdown)})
	return h
}

// WebSocket provides *websocket.Handler, the MCP-over-WebSocket endpoint of
// the engine. It starts no listener: an HTTP listener module mounts the
// handler (at /ws by convention) next to its other endpoints, e.g.
//
//	fx.Invoke(func(mux *http.ServeMux, ws *websocket.Handler) { mux.Handle("/ws", ws) })
//
// Supply a *websocket.Options to configure it:
//
//	fx.Supply(&websocket.Options{AllowedOrigins: []string{"http://localhost:6274"}})
//
// Its Host and Origin rules are those of the HTTP module's handler, and
// each handler reads its own options: a name listed in
// mcphttp.Options.AllowedHosts (or AllowedOrigins) must be listed in the
// websocket.Options too for /ws to accept it.
var WebSocket = fx.Module("hexmcp.websocket",
	fx.Provide(newWebSocketHandler),
)
