package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"github.com/hexmcp/hexmcp/app"
)

// A stateless-era request inside a 2025-03-26 batch on a stream connection is
// refused with its id, as over HTTP; the batch's other members are served and
// the tool never runs.
func TestBatchRefusesStatelessMembers(t *testing.T) {
	ran := 0
	tool := app.Func(func(context.Context, struct{}) (string, error) { ran++; return "ran", nil }, app.WithName("count"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, tool))
	c.initialize("2025-03-26")
	got := c.roundTrip(`[` +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	equalJSON(t, got, `[{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: stateless requests cannot be batched: a request naming a protocol version in _meta must be sent on its own"}},{"jsonrpc":"2.0","id":2,"result":{}}]`)
	if ran != 0 || strings.Contains(got, `"ran"`) {
		t.Fatalf("the stateless member ran (%d times)", ran)
	}
}
