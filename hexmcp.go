// Package hexmcp builds Model Context Protocol servers that expose Go
// functions as tools to LLM clients, over stdio, Streamable HTTP and
// WebSocket, for every revision from 2024-11-05 to 2026-07-28 at once.
//
// It is the front door of the SDK: [New] assembles a server with safe
// defaults (in-memory registries, JSON Schema 2020-12 validation of every
// call's arguments, the server's own log on standard error through slog)
// and the definitions of tools, prompts and resources are made here too.
// A complete stdio server:
//
//	func main() {
//		srv, err := hexmcp.New(hexmcp.Options{
//			Info:  hexmcp.Implementation{Name: "calc", Version: "1.0.0"},
//			Tools: []hexmcp.Tool{hexmcp.Func(add, hexmcp.WithDescription("Adds two numbers."))},
//		})
//		if err != nil {
//			log.Fatal(err)
//		}
//		if err := srv.ServeStdio(context.Background()); err != nil {
//			log.Fatal(err)
//		}
//	}
//
// [Server.ServeHTTP] serves the same server over Streamable HTTP. The
// layers underneath stay importable one by one: domain (the model and the
// revision policy), ports (the interfaces), adapters (transports, stores,
// loggers, the validator), app (the protocol engine) and wiring (fx
// modules built on the same defaults as New).
package hexmcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/ports"
)

// Options configure a server: its name, its tools, prompts and resources,
// its limits and its ports. Every field is optional; see [app.Options] for
// each one and its default. [New] fills the ports left nil as [Defaults]
// says.
type Options = app.Options

// DefaultShutdownTimeout is how long [Server.ServeStdio], [Server.ServeHTTP]
// and [Server.ServeWebSocket] let the calls in flight finish once their
// context is cancelled, before they cancel those calls.
const DefaultShutdownTimeout = 10 * time.Second

// Defaults returns opts with every port it leaves nil filled with the SDK's
// adapters: an in-memory tool registry (memory.NewRegistry), in-memory
// resource and prompt registries, and JSON Schema 2020-12 validation
// (jsonschema.New) unless opts.DisableValidation. The engine itself
// ([app.NewEngine]) defaults the rest: the limits, the logger (slog's text
// format on standard error), the clock and the requestState keys. [New]
// and the wiring package's fx modules both build on Defaults, so a server
// gets the same defaults either way.
func Defaults(opts Options) Options {
	if opts.ToolRegistry == nil {
		opts.ToolRegistry = memory.NewRegistry()
	}
	if opts.ResourceRegistry == nil {
		opts.ResourceRegistry = memory.NewResourceRegistry()
	}
	if opts.PromptRegistry == nil {
		opts.PromptRegistry = memory.NewPromptRegistry()
	}
	if opts.Validator == nil && !opts.DisableValidation {
		opts.Validator = jsonschema.New()
	}
	return opts
}

// Server is an MCP server: the protocol engine (whose methods it has: add
// or remove tools, prompts and resources while it runs) and the ways to
// serve it. One Server may serve several transports at once.
type Server struct {
	*app.Engine
}

// New returns a server built from opts, with [Defaults] for the ports
// opts leaves nil. The tools, prompts and resources of opts are registered
// in order; the first bad definition (a bad name or schema, a duplicate)
// is New's error, which wraps a [domain.ToolDefinitionError] (or its
// resource or prompt kin).
func New(opts Options) (*Server, error) {
	e, err := app.NewEngine(Defaults(opts))
	if err != nil {
		return nil, err
	}
	return &Server{Engine: e}, nil
}

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
	srv := app.NewServer(s.Engine, t)
	if err := srv.Start(ctx); err != nil {
		return err
	}
	return runUntil(ctx, srv, nil)
}

// lifecycle is what Serve and listen run: an app.Server or an
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

// HTTPHandler returns the Streamable HTTP endpoint of the server (both
// protocol eras on one URL), to mount on a mux of your own ("/mcp" by
// convention). The zero opts take in-memory session and event stores, the
// server's logger and the DNS-rebinding guard of a loopback listener; see
// [mcphttp.Options].
func (s *Server) HTTPHandler(opts mcphttp.Options) *mcphttp.Handler {
	return mcphttp.NewHandler(s.Engine, opts)
}

// WebSocketHandler returns the MCP-over-WebSocket endpoint of the server
// ("/ws" by convention), with the server's logger unless opts names one.
// Shut it down with its Shutdown as well as the HTTP server it is mounted
// on: upgraded connections are invisible to http.Server.Shutdown.
func (s *Server) WebSocketHandler(opts websocket.Options) *websocket.Handler {
	return websocket.NewHandler(s.Engine, opts)
}

// ServeHTTP serves the server over Streamable HTTP at http://addr/mcp until
// ctx is cancelled or the listener fails, then shuts down gracefully
// (within [DefaultShutdownTimeout]). Bind a loopback address
// ("127.0.0.1:8080") unless authentication stands in front
// ([mcphttp.RequireBearer]); on a loopback listener requests whose Host
// or Origin names another site are refused (DNS rebinding).
func (s *Server) ServeHTTP(ctx context.Context, addr string) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.HTTPHandler(mcphttp.Options{}))
	return s.listen(ctx, addr, mux, nil)
}

// ServeWebSocket serves the server over WebSocket at ws://addr/ws, as
// [Server.ServeHTTP] serves Streamable HTTP.
func (s *Server) ServeWebSocket(ctx context.Context, addr string) error {
	ws := s.WebSocketHandler(websocket.Options{})
	mux := http.NewServeMux()
	mux.Handle("/ws", ws)
	return s.listen(ctx, addr, mux, ws.Shutdown)
}

// listen runs an HTTP server for h on addr until ctx ends or the server
// fails; also shuts down, within the same deadline, what extra stops.
func (s *Server) listen(ctx context.Context, addr string, h http.Handler, extra func(context.Context) error) error {
	srv := mcphttp.NewServer(addr, h, mcphttp.ServerOptions{})
	if err := srv.Start(ctx); err != nil {
		return fmt.Errorf("hexmcp: listening on %s: %w", addr, err)
	}
	return runUntil(ctx, srv, extra)
}
