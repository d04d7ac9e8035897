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

// A batch member the engine refuses is answered with its id when it has
// one, whether it names a method or not; a refused notification is not
// answered; the valid members are served.
func TestBatchRefusedMembers(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}))
	c.initialize("2025-03-26")
	got := c.roundTrip(`[` +
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":5},` +
		`{"jsonrpc":"2.0","id":2},` +
		`{"jsonrpc":"2.0","method":"notifications/progress","params":5},` +
		`{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
	equalJSON(t, got, `[`+
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: \"params\" must be an object"}},`+
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request: \"method\" is missing"}},`+
		`{"jsonrpc":"2.0","id":3,"result":{}}]`)
}

// LookupTool finds the registered tools, and only them.
func TestLookupTool(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, hexmcp.Func(func(context.Context, struct{}) (string, error) { return "", nil }, hexmcp.WithName("known")))
	if def, ok := e.LookupTool("known"); !ok || def == nil || def.Name != "known" {
		t.Errorf("LookupTool(known) = %v, %v", def, ok)
	}
	if def, ok := e.LookupTool("unknown"); ok || def != nil {
		t.Errorf("LookupTool(unknown) = %v, %v", def, ok)
	}
}
