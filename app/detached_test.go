package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
	tool := app.Func(func(context.Context, struct{}) (string, error) { return "ran", nil }, app.WithName("work"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{mw}}, tool))
	c.initialize("2025-11-25")
	got := c.roundTrip(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"work","arguments":{}}}`)
	equalJSON(t, got, `{"jsonrpc":"2.0","id":7,"result":{"started":true}}`)
	if res := <-background; !strings.Contains(res, `"text":"ran"`) {
		t.Fatalf("the background run answered %s", res)
	}
}
