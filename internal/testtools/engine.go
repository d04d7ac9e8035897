package testtools

import (
	"context"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
)

// Info is the implementation most of the SDK's tests name their engine by.
var Info = domain.Implementation{Name: "test", Version: "1.0.0"}

// NewEngine is the engine of a test: o with, where it leaves them unset,
// an in-memory tool registry and the jsonschema validator, serving tools.
// It fails t when the engine cannot be made or a tool added; closing the
// engine stays with the caller.
func NewEngine(t testing.TB, o app.Options, tools ...decl.Tool) *app.Engine {
	t.Helper()
	if o.ToolRegistry == nil {
		o.ToolRegistry = memory.NewRegistry()
	}
	if o.Validator == nil {
		o.Validator = jsonschema.New()
	}
	e, err := app.NewEngine(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) > 0 {
		if err := e.AddTools(tools...); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// Exchange sends msgs to e one after the other over one in-memory
// connection and returns the message answering each (the first message
// the engine writes after it: a test that expects notifications first
// reads the connection itself).
func Exchange(t testing.TB, e *app.Engine, msgs ...string) [][]byte {
	t.Helper()
	client, server := memory.NewPipe()
	done := make(chan error, 1)
	go func() { done <- e.ServeConn(context.Background(), server) }()
	defer func() {
		client.Close()
		<-done
	}()
	var out [][]byte
	for _, msg := range msgs {
		if err := client.WriteMessage(context.Background(), []byte(msg)); err != nil {
			t.Fatal(err)
		}
		raw, err := client.ReadMessage(context.Background())
		if err != nil {
			t.Fatalf("%s: no answer: %v", msg, err)
		}
		out = append(out, raw)
	}
	return out
}
