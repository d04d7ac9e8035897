package wiring

import (
	"cmp"
	"context"
	"errors"
	"net/http"

	"go.uber.org/fx"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/ports"
)

// DefaultHTTPAddr is where [HTTPServer] listens unless an *HTTPConfig says
// otherwise: the loopback interface only, as the spec advises for local
// servers.
const DefaultHTTPAddr = "127.0.0.1:8080"

// HTTPConfig configures [HTTPServer]; supply it with
// fx.Supply(&wiring.HTTPConfig{...}) or [Listen].
type HTTPConfig struct {
	// Addr is the address to listen on (default 127.0.0.1:8080). Listening
	// on all interfaces (":8080") exposes the server to the network: put
	// authentication in front of it ([mcphttp.RequireBearer]).
	Addr string
	// Server holds the HTTP server's timeouts.
	Server mcphttp.ServerOptions
	// Middleware, when set, wraps the MCP handlers (at /mcp, /sse and
	// /message), e.g. mcphttp.RequireBearer(auth, mcphttp.AuthOptions{...}).
	Middleware func(http.Handler) http.Handler
	// ServerMiddleware, when set, wraps the server's whole handler (every
	// path: /mcp, /sse and /message after Middleware, and /ws alike), for
	// what stands in
	// front of both endpoints or beside them: mcphttp.RequireBearer for
	// /mcp and /ws (a WebSocket connection carries the principal of its
	// upgrade request) with the OAuth metadata of mcpoauth.Mount served
	// unauthenticated, say.
	ServerMiddleware func(http.Handler) http.Handler
	// SSE configures the HTTP+SSE transport of 2024-11-05, served by
	// default at /sse (the stream) and its MessagePath (/message by
	// default) for the clients that speak only it. When it lists no
	// allowed hosts or origins it takes those of the graph's
	// *mcphttp.Options. See mcphttp.SSEOptions.
	SSE mcphttp.SSEOptions
	// DisableSSE turns /sse and /message off.
	DisableSSE bool
}

// Listen sets the address [HTTPServer] listens on.
func Listen(addr string) fx.Option {
	return fx.Supply(&HTTPConfig{Addr: addr})
}

// httpParams are what the HTTP module takes from the graph; all but the
// engine are optional.
type httpParams struct {
	fx.In

	Engine       *app.Engine
	Options      *mcphttp.Options   `optional:"true"`
	SessionStore ports.SessionStore `optional:"true"`
	EventStore   ports.EventStore   `optional:"true"`
}

// newHTTPHandler returns the Streamable HTTP handler of the engine,
// configured by an optional *mcphttp.Options in the graph. Stores the
// options leave unset come from the graph (a ports.SessionStore or
// ports.EventStore, to share sessions between instances), else are
// in-memory; its Logger defaults to the engine's.
func newHTTPHandler(p httpParams) *mcphttp.Handler {
	var o mcphttp.Options
	if p.Options != nil {
		o = *p.Options
	}
	o.SessionStore = cmp.Or(o.SessionStore, p.SessionStore)
	o.EventStore = cmp.Or(o.EventStore, p.EventStore)
	return mcphttp.NewHandler(p.Engine, o)
}

// HTTP provides *mcphttp.Handler, the Streamable HTTP endpoint of the
// engine (both protocol eras on one URL). It starts no listener: add
// [HTTPServer], or mount the handler in a server of your own.
var HTTP = fx.Module("hexmcp.http",
	fx.Provide(newHTTPHandler),
)

// httpServerParams are what newHTTPServer takes from the graph.
type httpServerParams struct {
	fx.In

	Lifecycle  fx.Lifecycle
	Shutdowner fx.Shutdowner
	Engine     *app.Engine
	Handler    *mcphttp.Handler
	WebSocket  *websocket.Handler `optional:"true"`
	Config     *HTTPConfig        `optional:"true"`
	// Options are the Streamable HTTP handler's, whose allowed hosts and
	// origins the HTTP+SSE transport takes when HTTPConfig.SSE lists
	// neither.
	Options *mcphttp.Options `optional:"true"`
}

// newHTTPServer returns the HTTP server of the application, hooked into its
// lifecycle. It mounts the Streamable HTTP handler at /mcp, the HTTP+SSE
// transport of 2024-11-05 at /sse and /message (unless
// HTTPConfig.DisableSSE) and, when the graph holds one ([WebSocket]), the
// WebSocket handler at /ws. It listens
// on start (an address in use fails the start) and, on stop, shuts down
// gracefully: GET streams end, the calls in flight answer until the stop
// deadline, after which they are cancelled. With an event store shared by
// several instances, the SSE streams of the calls in flight end at once
// too, for their clients to resume them at another instance while the
// calls finish here (see [mcphttp.Server.Shutdown]). The HTTP+SSE streams
// end once their calls have answered. The
// WebSocket connections are shut down by the WebSocket module's own hook.
// A server that stops by itself (a listener failure) stops the
// application.
func newHTTPServer(p httpServerParams) *mcphttp.Server {
	cfg := HTTPConfig{Addr: DefaultHTTPAddr}
	if p.Config != nil {
		cfg = *p.Config
		if cfg.Addr == "" {
			cfg.Addr = DefaultHTTPAddr
		}
	}
	wrap := func(h http.Handler) http.Handler {
		if cfg.Middleware != nil {
			return cfg.Middleware(h)
		}
		return h
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", wrap(p.Handler))
	var sse *mcphttp.SSEHandler
	if !cfg.DisableSSE {
		so := cfg.SSE
		if so.AllowedHosts == nil && so.AllowedOrigins == nil && p.Options != nil {
			so.AllowedHosts, so.AllowedOrigins = p.Options.AllowedHosts, p.Options.AllowedOrigins
		}
		sse = mcphttp.NewSSEHandler(p.Engine, so)
		mux.Handle(mcphttp.DefaultSSEPath, wrap(sse))
		mux.Handle(cmp.Or(cfg.SSE.MessagePath, mcphttp.DefaultSSEMessagePath), wrap(sse))
	}
	if p.WebSocket != nil {
		mux.Handle("/ws", p.WebSocket)
	}
	var root http.Handler = mux
	if cfg.ServerMiddleware != nil {
		root = cfg.ServerMiddleware(mux)
	}
	srv := mcphttp.NewServer(cfg.Addr, root, cfg.Server)
	p.Lifecycle.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			if err := srv.Start(ctx); err != nil {
				return err
			}
			go func() {
				<-srv.Done()
				if srv.Err() != nil {
					_ = p.Shutdowner.Shutdown(fx.ExitCode(1))
				}
			}()
			return nil
		},
		OnStop: stopTransport(p.Engine, "HTTP", func(ctx context.Context) error {
			err := srv.Shutdown(ctx)
			if sse != nil {
				err = errors.Join(err, sse.Shutdown(ctx))
			}
			return err
		}),
	})
	return srv
}

// HTTPServer serves the engine over HTTP on the address of an optional
// *HTTPConfig (default 127.0.0.1:8080; see [Listen]): the Streamable HTTP
// handler of [HTTP] at /mcp, the HTTP+SSE transport of 2024-11-05 at /sse
// and /message and, with [WebSocket] in the application, the WebSocket
// handler at /ws. It needs [HTTP]:
//
//	fx.New(wiring.Core, wiring.HTTP, wiring.HTTPServer, wiring.Listen("127.0.0.1:3000"), wiring.Tools(tools...)).Run()
var HTTPServer = fx.Module("hexmcp.httpserver",
	fx.Provide(newHTTPServer),
	fx.Invoke(func(*mcphttp.Server) {}),
)
