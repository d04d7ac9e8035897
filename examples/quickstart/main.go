// Command quickstart is the README's first server: one typed tool over
// stdio, with its arguments validated and its log on standard error.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"log"

	"github.com/hexmcp/hexmcp"
)

func add(ctx context.Context, in struct{ A, B float64 }) (float64, error) { return in.A + in.B, nil }

func main() {
	srv, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(add, hexmcp.WithDescription("Adds A and B."))}})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.ServeStdio(context.Background()); err != nil {
		log.Fatal(err)
	}
}
