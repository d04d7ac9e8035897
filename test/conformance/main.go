// Command conformance serves the tools of the official MCP conformance suite
// over Streamable HTTP, both protocol eras (2025-11-25 sessions and the
// 2026-07-28 stateless revision) on one URL, for run.sh. It listens on a
// loopback address only (127.0.0.1 in run.sh).
//
//	go run ./test/conformance -addr 127.0.0.1:0
//
// prints "listening on http://127.0.0.1:PORT/mcp" on standard error and
// serves until SIGINT or SIGTERM, then shuts down gracefully.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on; the host must be a loopback address (port 0 picks a free port)")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "conformance server:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-addr %q: the conformance server listens on a loopback address only (e.g. 127.0.0.1:0)", addr)
	}

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	engine, err := newEngine(log)
	if err != nil {
		return err
	}
	defer engine.Close()

	mux := http.NewServeMux()
	mux.Handle("/mcp", mcphttp.NewHandler(engine, mcphttp.Options{Logger: log}))
	srv := mcphttp.NewServer(addr, mux, mcphttp.ServerOptions{})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", srv.Addr())
	select {
	case <-ctx.Done():
	case <-srv.Done():
		return fmt.Errorf("serving stopped: %v", srv.Err())
	}
	stop()

	fmt.Fprintln(os.Stderr, "shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newEngine builds the engine with the suite's tools, resources and prompts.
func newEngine(log *slog.Logger) (*app.Engine, error) {
	skillsExt, err := conformanceSkills()
	if err != nil {
		return nil, err
	}
	tasksExt, taskTools := conformanceTasks()
	e, err := app.NewEngine(app.Options{
		Info:             domain.Implementation{Name: "hexmcp-conformance-server", Version: "0.0.0"},
		ToolRegistry:     memory.NewRegistry(),
		ResourceRegistry: memory.NewResourceRegistry(),
		PromptRegistry:   memory.NewPromptRegistry(),
		Validator:        jsonschema.New(),
		Logger:           log,
		Extensions:       []app.Extension{skillsExt, tasksExt.Extension()},
	})
	if err != nil {
		return nil, err
	}
	if err := e.AddTools(append(conformanceTools(e), taskTools...)...); err != nil {
		_ = e.Close()
		return nil, err
	}
	if err := e.AddResources(conformanceResources()...); err != nil {
		_ = e.Close()
		return nil, err
	}
	if err := e.AddPrompts(conformancePrompts()...); err != nil {
		_ = e.Close()
		return nil, err
	}
	return e, nil
}
