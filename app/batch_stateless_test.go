package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"github.com/hexmcp/hexmcp/app"
)

// A stateless-era request inside a 2025-03-26 batch on a stream connection is
// refused with its id, as over HTTP; the batch's other members are served and
// the tool never runs.
func TestBatchRefusesStatelessMembers(t *testing.T) {
	ran := 0
	tool := hexmcp.Func(func(context.Context, struct{}) (string, error) { ran++; return "ran", nil }, hexmcp.WithName("count"))
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

// A batch nested deeper than app.MaxNestingDepth is valid JSON: it is
// refused naming the limit (no member can be told apart, so no id), and
// the connection goes on.
func TestBatchNestedTooDeep(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}))
	c.initialize("2025-03-26")
	k := app.MaxNestingDepth
	got := c.roundTrip(`[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":` + strings.Repeat("[", k) + strings.Repeat("]", k) + `}}]`)
	equalJSON(t, got, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: the message nests objects and arrays deeper than 10000 levels, the most this server reads","data":{"limit":"maxNestingDepth","max":10000}}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), `{"jsonrpc":"2.0","id":2,"result":{}}`)
}
