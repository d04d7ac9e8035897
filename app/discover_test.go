package app_test

import (
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/internal/testtools"

	"github.com/hexmcp/hexmcp/app"
)

func toolNames(ts []hexmcp.Tool) []string {
	var names []string
	for _, t := range ts {
		names = append(names, t.Definition().Name)
	}
	return names
}

// The tools ToolsOf discovers are served: called over the wire, they call
// the methods, with the request context the engine gives.
func TestToolsOfCallsTheMethods(t *testing.T) {
	calc := &testtools.Calc{}
	ts, err := hexmcp.ToolsOf(calc, hexmcp.WithNamePrefix("calc."))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(toolNames(ts), " "), "calc.add calc.reset calc.urlFetch calc.whoAmI"; got != want {
		t.Fatalf("names = %q, want %q", got, want)
	}
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, ts...))
	c.initialize("2025-11-25")
	for _, tc := range []struct{ call, want string }{
		{`{"name":"calc.add","arguments":{"a":2,"b":3}}`, `{"content":[{"type":"text","text":"5"}]}`},
		{`{"name":"calc.urlFetch","arguments":{"url":"https://example.com"}}`, `{"content":[{"type":"text","text":"fetched https://example.com"}]}`},
		{`{"name":"calc.whoAmI","arguments":{}}`, `{"content":[{"type":"text","text":"calc.whoAmI"}]}`},
		{`{"name":"calc.reset","arguments":{}}`, `{"content":[{"type":"text","text":"(null)"}]}`},
	} {
		resp := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + tc.call + `}`)
		equalJSON(t, resp, `{"jsonrpc":"2.0","id":1,"result":`+tc.want+`}`)
	}
	if calc.Calls != 0 {
		t.Errorf("calls = %d after reset, want 0", calc.Calls)
	}
}
