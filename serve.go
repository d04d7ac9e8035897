package hexmcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/internal/httpguard"
	"github.com/hexmcp/hexmcp/internal/serving"
	"github.com/hexmcp/hexmcp/ports"
)

// DefaultShutdownTimeout is how long [Server.ServeStdio], [Server.Serve]
// and [Server.ListenAndServe] let the calls in flight finish once their
// context is cancelled, before they cancel those calls.
const DefaultShutdownTimeout = 10 * time.Second

// ServeStdio serves the server on standard input and output (one JSON-RPC
// message per line; the log goes to standard error) until standard input
// closes, which is how a client ends a stdio server, or ctx is cancelled.
// Either way the calls in flight finish first (for at most
// [DefaultShutdownTimeout] after ctx is cancelled). It returns nil when
// the client went away.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.Serve(ctx, stdio.New(stdio.Options{}))
}

// Serve serves the server on t until t ends or ctx is cancelled, as
// [Server.ServeStdio] does on stdio.
func (s *Server) Serve(ctx context.Context, t ports.Transport) error {
	srv := serving.New(s.eng, t)
	if err := srv.Start(ctx); err != nil {
		return err
	}
	return runUntil(ctx, srv, nil)
}

// HTTPOptions configure [Server.ListenAndServe]. The zero value serves
// Streamable HTTP at /mcp and the HTTP+SSE transport of 2024-11-05 at /sse
// and /message, open to whoever reaches the address, with the SDK's
// defaults. Requests pass, from the outside in: Middleware, then Mux, whose
// /mcp, /sse, /message (and /ws) require the Authenticator's bearer
// tokens, then the endpoint.
type HTTPOptions struct {
	// Endpoint configures the Streamable HTTP endpoint at /mcp: its
	// session and event stores (the server's shared ones by default,
	// Options.Shared), the allowed hosts and origins, its limits. See
	// mcphttp.Options.
	Endpoint mcphttp.Options
	// WebSocket, when not nil, serves MCP over WebSocket at /ws too, on
	// the same listener, with these options (a pointer to the zero
	// websocket.Options takes every default). A connection carries the
	// principal the Authenticator admitted at its upgrade, and is closed
	// when that principal expires.
	WebSocket *websocket.Options
	// SSE configures the HTTP+SSE transport of 2024-11-05 (a GET to /sse
	// opens a stream, its client POSTs to /message), served by default for
	// the clients that speak only it: its limits, allowed hosts and
	// origins (those of Endpoint when it lists neither), its MessagePath
	// (/message by default), which is mounted too. See
	// mcphttp.SSEOptions.
	SSE mcphttp.SSEOptions
	// DisableSSE turns /sse and /message off: only Streamable HTTP (and
	// WebSocket) are served.
	DisableSSE bool
	// Authenticator, when set, lets through to /mcp, /sse, /message and
	// /ws only requests
	// with a valid "Authorization: Bearer" token (mcphttp.RequireBearer):
	// an OAuth 2.1 verifier of adapters/oauth (mcpoauth.NewJWTVerifier,
	// mcpoauth.NewIntrospector), a fixed table of tokens
	// (mcphttp.StaticTokens, for a local server of one user) or any
	// ports.Authenticator. The principal
	// reaches the handlers ([RequestContext.Transport], [Viewer]) and the
	// scopes of [WithScopes] are checked against it. Without one, bind a
	// loopback address: anyone who reaches the address is served
	// (ListenAndServe logs a warning when it listens beyond loopback
	// without one).
	Authenticator ports.Authenticator
	// Auth configures the bearer check: the URL of the protected resource
	// metadata named in every challenge (mcpoauth.Mount returns it), the
	// scopes every token must grant, the logger of the refusals and of the
	// authenticator's failures (here the server's logger when left nil).
	// See mcphttp.AuthOptions.
	// It is used only with an Authenticator.
	Auth mcphttp.AuthOptions
	// Mux, when not nil, is the mux /mcp, /sse, /message (and /ws) are
	// mounted on, beside
	// what it already serves without authentication: the OAuth Protected
	// Resource Metadata that mcpoauth.Mount puts there, a health check.
	// A mux that already serves one of them is ListenAndServe's error.
	// Default: a mux of their own.
	Mux *http.ServeMux
	// Middleware, when set, wraps everything served (every path, before
	// the authentication): CORS, access logs, tracing, any
	// func(http.Handler) http.Handler. Compose several with a function
	// of your own.
	Middleware func(http.Handler) http.Handler
	// Server configures the http.Server: its timeouts and connection
	// bounds (mcphttp.ServerOptions). When its TrustedProxies are set,
	// everything served is wrapped in mcphttp.TrustProxies with the same
	// prefixes too, so that the per-client bounds count the clients behind
	// those proxies.
	Server mcphttp.ServerOptions
	// OnListen, when set, is called once the server listens, with the
	// address it listens on (port 0 in addr picks a free port; this is
	// where to learn which).
	OnListen func(addr string)
}

// ListenAndServe listens on addr ("127.0.0.1:8080") and serves the server
// over Streamable HTTP at http://addr/mcp, over the HTTP+SSE transport of
// 2024-11-05 at http://addr/sse (unless opts.DisableSSE), and over
// WebSocket at ws://addr/ws when opts.WebSocket is set, until ctx is
// cancelled or the
// listener fails; then it shuts down gracefully: the calls in flight
// finish and deliver their answers, for at most [DefaultShutdownTimeout],
// after which they are cancelled. It returns nil after a stop by ctx.
//
// Authentication and net/http middleware are part of the same call
// ([HTTPOptions]): with an OAuth verifier of adapters/oauth,
//
//	verifier, err := mcpoauth.NewJWTVerifier(ctx, mcpoauth.JWTOptions{Issuer: issuer, Audience: resource})
//	mux := http.NewServeMux()
//	metaURL, err := mcpoauth.Mount(mux, mcpoauth.Metadata{Resource: resource, AuthorizationServers: []string{issuer}})
//	err = srv.ListenAndServe(ctx, ":8080", hexmcp.HTTPOptions{Mux: mux, Authenticator: verifier,
//		Auth: mcphttp.AuthOptions{ResourceMetadataURL: metaURL}})
//
// Without an Authenticator bind a loopback address: a loopback listener
// also refuses requests whose Host or Origin names another site (DNS
// rebinding). To serve on a server of your own, mount [Server.HTTPHandler],
// [Server.SSEHandler] and [Server.WebSocketHandler] instead.
func (s *Server) ListenAndServe(ctx context.Context, addr string, opts HTTPOptions) error {
	var auth func(http.Handler) http.Handler
	if opts.Authenticator != nil {
		ao := opts.Auth
		if ao.Logger == nil {
			ao.Logger = s.eng.Logger()
		}
		auth = mcphttp.RequireBearer(opts.Authenticator, ao)
	}
	mux := opts.Mux
	if mux == nil {
		mux = http.NewServeMux()
	}
	mount := func(pattern string, h http.Handler) error {
		if auth != nil {
			h = auth(h)
		}
		return handle(mux, pattern, h)
	}
	if err := mount("/mcp", s.HTTPHandler(opts.Endpoint)); err != nil {
		return err
	}
	var stops []func(context.Context) error
	if !opts.DisableSSE {
		so := opts.SSE
		if so.AllowedHosts == nil && so.AllowedOrigins == nil {
			// The same names as /mcp, which a client of both reaches alike.
			so.AllowedHosts, so.AllowedOrigins = opts.Endpoint.AllowedHosts, opts.Endpoint.AllowedOrigins
		}
		sse := s.SSEHandler(so)
		if err := mount(mcphttp.DefaultSSEPath, sse); err != nil {
			return err
		}
		if err := mount(cmp.Or(opts.SSE.MessagePath, mcphttp.DefaultSSEMessagePath), sse); err != nil {
			return err
		}
		stops = append(stops, sse.Shutdown)
	}
	if opts.WebSocket != nil {
		ws := s.WebSocketHandler(*opts.WebSocket)
		if err := mount("/ws", ws); err != nil {
			return err
		}
		stops = append(stops, ws.Shutdown)
	}
	var root http.Handler = mux
	if opts.Middleware != nil {
		root = opts.Middleware(root)
	}
	if len(opts.Server.TrustedProxies) > 0 {
		root = mcphttp.TrustProxies(root, opts.Server.TrustedProxies...)
	}
	srv := mcphttp.NewServer(addr, root, opts.Server)
	if err := srv.Start(ctx); err != nil {
		return fmt.Errorf("hexmcp: listening on %s: %w", addr, err)
	}
	if exposed(opts, srv.Addr()) {
		s.eng.Logger().LogAttrs(ctx, slog.LevelWarn, "hexmcp: serving HTTP beyond this machine without an Authenticator: anyone who reaches the address is served, unless Middleware or a proxy in front authenticates",
			slog.String("addr", srv.Addr()))
	}
	if opts.OnListen != nil {
		opts.OnListen(srv.Addr())
	}
	return runUntil(ctx, srv, func(ctx context.Context) error {
		var err error
		for _, stop := range stops {
			err = errors.Join(err, stop(ctx))
		}
		return err
	})
}

// exposed reports whether a listener on addr serves anyone who reaches it
// beyond this machine: no Authenticator, and not a loopback address.
func exposed(opts HTTPOptions, addr string) bool {
	return opts.Authenticator == nil && !httpguard.LoopbackAddr(addr)
}

// handle is mux.Handle, with the panic of a pattern the mux already serves
// (HTTPOptions.Mux is the caller's) turned into an error.
func handle(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("hexmcp: mounting %s on HTTPOptions.Mux: %v", pattern, r)
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// HTTPHandler returns the Streamable HTTP endpoint of the server (both
// protocol eras on one URL), to mount on a mux of your own ("/mcp" by
// convention), behind mcphttp.RequireBearer when it needs authentication.
// The zero opts take the server's shared session and event stores
// (Options.Shared) or in-memory ones, the server's logger and the
// DNS-rebinding guard of a loopback listener; see mcphttp.Options.
func (s *Server) HTTPHandler(opts mcphttp.Options) *mcphttp.Handler {
	return mcphttp.NewHandler(s.eng, opts)
}

// SSEHandler returns the HTTP+SSE transport of 2024-11-05 for the server,
// for the clients that speak only it, to mount on a mux of your own at
// both "/sse" (the stream) and opts.MessagePath ("/message" by default),
// behind mcphttp.RequireBearer when it needs authentication. A
// mcphttp.Server serving it ends its streams on its Shutdown; on a server
// of your own, call the handler's Shutdown too.
func (s *Server) SSEHandler(opts mcphttp.SSEOptions) *mcphttp.SSEHandler {
	return mcphttp.NewSSEHandler(s.eng, opts)
}

// WebSocketHandler returns the MCP-over-WebSocket endpoint of the server
// ("/ws" by convention), with the server's logger unless opts names one.
// Shut it down with its Shutdown as well as the HTTP server it is mounted
// on: upgraded connections are invisible to http.Server.Shutdown.
func (s *Server) WebSocketHandler(opts websocket.Options) *websocket.Handler {
	return websocket.NewHandler(s.eng, opts)
}

// lifecycle is what Serve and ListenAndServe run: a serving.Server or an
// mcphttp.Server, started.
type lifecycle interface {
	Done() <-chan struct{}
	Err() error
	Shutdown(context.Context) error
}

// runUntil waits until run stops by itself (its error is returned) or ctx
// ends, and then shuts run down, and extra when not nil, within
// DefaultShutdownTimeout.
func runUntil(ctx context.Context, run lifecycle, extra func(context.Context) error) error {
	select {
	case <-run.Done():
		return run.Err()
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultShutdownTimeout)
	defer cancel()
	err := run.Shutdown(sctx)
	if extra != nil {
		err = errors.Join(err, extra(sctx))
	}
	if err != nil {
		return fmt.Errorf("hexmcp: stopping: %w", err)
	}
	return run.Err()
}
