package app_test

import (
	"context"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
)

// BenchmarkHandleMessageToolsCall is the engine's hot path alone, without
// a transport: decode → dispatch → tools/call (input validated) → encode,
// in one goroutine, in each era. test/bench measures the same over the
// transports, beside the other SDKs.
func BenchmarkHandleMessageToolsCall(b *testing.B) {
	e, err := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New(), Tools: []hexmcp.Tool{addTool()}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	b.Run("2026-07-28", func(b *testing.B) {
		req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		b.ReportAllocs()
		for b.Loop() {
			if out := e.HandleMessage(ctx, nil, req, nil); out == nil {
				b.Fatal("no answer")
			}
		}
	})
	b.Run("2025-11-25", func(b *testing.B) {
		s := e.NewSession(ctx, "s", nil)
		defer s.Close()
		initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`
		if out := e.HandleMessage(ctx, s, []byte(initialize), nil); out == nil {
			b.Fatal("no answer to initialize")
		}
		req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`)
		b.ReportAllocs()
		for b.Loop() {
			if out := e.HandleMessage(ctx, s, req, nil); out == nil {
				b.Fatal("no answer")
			}
		}
	})
}
