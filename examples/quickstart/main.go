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

// AddInput is the input of the add tool; its fields are the input schema.
type AddInput struct {
	A float64 `json:"a" description:"First addend"`
	B float64 `json:"b" description:"Second addend"`
}

func add(ctx context.Context, in AddInput) (float64, error) { return in.A + in.B, nil }

func main() {
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
