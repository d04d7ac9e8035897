// Command showcase is an MCP server exposing the examples of the tools page
// of the MCP PHP SDK, written with this SDK. It serves stdio:
//
//	go run ./examples/showcase
//
// and logs to standard error.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/examples/showcase/tools"
	"github.com/hexmcp/hexmcp/wiring"
)

func main() {
	transport := flag.String("transport", "stdio", "transport to serve: stdio")
	verbose := flag.Bool("v", false, "log fx events and debug records to standard error")
	flag.Parse()
	if *transport != "stdio" {
		fmt.Fprintf(os.Stderr, "showcase: transport %q is not available yet (stdio only)\n", *transport)
		os.Exit(2)
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	app := fx.New(
		fx.Supply(logger),
		fx.Supply(&wiring.Config{
			Info:         domain.Implementation{Name: "hexmcp-showcase", Title: "hexmcp showcase", Version: "0.1.0"},
			Instructions: "Example tools of every kind: scalars, JSON, content blocks, structured output and errors.",
		}),
		wiring.Core,
		wiring.Stdio,
		wiring.Tools(tools.All()...),
		fx.WithLogger(func() fxevent.Logger {
			if *verbose {
				return &fxevent.SlogLogger{Logger: logger}
			}
			return fxevent.NopLogger
		}),
	)
	app.Run()
	if err := app.Err(); err != nil {
		logger.Error("showcase failed to start", "error", err)
		os.Exit(1)
	}
}
