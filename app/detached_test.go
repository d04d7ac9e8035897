package app_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/app"
)

// A middleware answers a tools/call itself and runs the call through next
// on a detached copy in the background: the client gets the middleware's
// answer, and the background run gets the engine's own (the tool ran).
func TestRequestDetached(t *testing.T) {
	background := make(chan string, 1)
	mw := func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, r *app.Request) (json.RawMessage, error) {
			if r.Method != "tools/call" {
				return next(ctx, r)
			}
			d := r.Detached()
			go func() {
				res, err := next(context.WithoutCancel(ctx), d)
				if err != nil {
					background <- "error: " + err.Error()
					return
				}
				background <- string(res)
			}()
			return json.RawMessage(`{"started":true}`), nil
		}
	}
	tool := hexmcp.Func(func(context.Context, struct{}) (string, error) { return "ran", nil }, hexmcp.WithName("work"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{mw}}, tool))
	c.initialize("2025-11-25")
	got := c.roundTrip(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"work","arguments":{}}}`)
	equalJSON(t, got, `{"jsonrpc":"2.0","id":7,"result":{"started":true}}`)
	if res := <-background; !strings.Contains(res, `"text":"ran"`) {
		t.Fatalf("the background run answered %s", res)
	}
}

// A request Derive makes shares no bytes with the message it comes from:
// kept by a background run (a task), it does not keep that message (its
// _meta, however large) alive.
func TestDeriveKeepsNoMessageBytes(t *testing.T) {
	var derived *app.Request
	mw := func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, r *app.Request) (json.RawMessage, error) {
			if r.Method == "tools/call" {
				d, err := r.Derive("tools/call", json.RawMessage(`{"name":"work","arguments":{}}`))
				if err != nil {
					return nil, err
				}
				derived = d
			}
			return next(ctx, r)
		}
	}
	tool := hexmcp.Func(func(context.Context, struct{}) (string, error) { return "ran", nil }, hexmcp.WithName("work"))
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{mw}}, tool)
	raw := []byte(`{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"work","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"pad":"` + strings.Repeat("x", 1<<20) + `"}}}`)
	alive := weak.Make(&raw[0])
	if out := e.HandleMessage(context.Background(), nil, raw, nil); !strings.Contains(string(out), `"text":"ran"`) {
		t.Fatalf("tools/call: %s", out)
	}
	raw = nil
	for range 3 {
		runtime.GC()
	}
	if alive.Value() != nil {
		t.Fatal("the derived request keeps the message it comes from alive")
	}
	if derived == nil || string(derived.ID) != `"call-1"` || string(derived.ClientCapabilities) != `{"elicitation":{}}` {
		t.Fatalf("derived %+v", derived)
	}
	runtime.KeepAlive(derived)
}
