package app_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
)

// FuzzHandleMessage feeds arbitrary bytes to the engine, in a session and
// statelessly: it must never panic, and whatever it answers must be one
// valid JSON value on one line.
func FuzzHandleMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"YWZ0ZXI6YQ"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":4,"method":"server/discover"}`,
		`{"jsonrpc":"2.0","id":1e999,"method":"ping"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}",
		`{"a":{"a":{"a":{"a":[[[[[[[[[[]]]]]]]]]]}}}}`,
	} {
		f.Add([]byte(seed))
	}
	e, err := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	if err != nil {
		f.Fatal(err)
	}
	if err := e.AddTool(addTool()); err != nil {
		f.Fatal(err)
	}
	_, srv := memory.NewPipe()
	sess := e.NewSession(context.Background(), "fuzz", srv)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, msg []byte) {
		for _, s := range []*app.Session{nil, sess} {
			out := e.HandleMessage(ctx, s, msg, nil)
			if out == nil {
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("invalid JSON answer %q to %q", out, msg)
			}
			for _, c := range out {
				if c == '\n' || c == '\r' {
					t.Fatalf("answer with a raw newline: %q", out)
				}
			}
		}
	})
}
