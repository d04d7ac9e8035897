package hexmcp_test

import (
	"context"
	"log"
	"os/signal"
	"syscall"

	"github.com/hexmcp/hexmcp"
)

// AddInput is the input of the add tool; its fields are the input schema.
type AddInput struct {
	A float64 `json:"a" description:"First addend"`
	B float64 `json:"b" description:"Second addend"`
}

func add(ctx context.Context, in AddInput) (float64, error) { return in.A + in.B, nil }

// A stdio server with one typed, validated tool, logging to standard error:
// the README's first example (examples/quickstart).
func Example() {
	srv, err := hexmcp.New(hexmcp.Options{
		Info:  hexmcp.Implementation{Name: "calc", Version: "1.0.0"},
		Tools: []hexmcp.Tool{hexmcp.Func(add, hexmcp.WithDescription("Adds two numbers."))},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.ServeStdio(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// The same server over Streamable HTTP at http://127.0.0.1:8080/mcp,
// stopping gracefully on Ctrl-C.
func ExampleServer_ServeHTTP() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv, err := hexmcp.New(hexmcp.Options{
		Info:  hexmcp.Implementation{Name: "calc", Version: "1.0.0"},
		Tools: []hexmcp.Tool{hexmcp.Func(add, hexmcp.WithDescription("Adds two numbers."))},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.ServeHTTP(ctx, "127.0.0.1:8080"); err != nil {
		log.Fatal(err)
	}
}
