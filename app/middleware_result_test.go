package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/app"
)

// A middleware that replaces what next answered is heard, even when its
// result is as long as the engine's; one that passes it on unchanged
// answers the engine's result.
func TestMiddlewareReplacesTheResult(t *testing.T) {
	rewrite := func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, req *app.Request) (json.RawMessage, error) {
			res, err := next(ctx, req)
			if err != nil || req.Method != "tools/call" || req.Name != "add" {
				return res, err
			}
			// The same length, another buffer: 3 becomes 7.
			return bytes.Replace(res, []byte(`"text":"3"`), []byte(`"text":"7"`), 1), nil
		}
	}
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{rewrite}}, addTool())
	c := serve(t, e)
	c.initialize("2025-11-25")
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"7"}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":2}}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"4"}]}}`)
	equalJSON(t, c.roundTrip(ping), pingResp)
}
