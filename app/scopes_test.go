package app_test

import (
	"context"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/ports"
)

// A tool or resource that declares scopes (WithScopes) is served to a
// principal granted all of them, and refused with -32052, naming those
// missing, to one that lacks any, and to a request with no principal.
func TestScopesRefuseWhatThePrincipalLacks(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), ResourceRegistry: memory.NewResourceRegistry()},
		app.NewTool(func(context.Context) (string, error) { return "written", nil },
			app.WithName("write"), app.WithScopes("files:read", "files:write")))
	if err := e.AddResource(app.TextResource("test://secret", "secret", "s3cr3t", app.WithScopes("files:read"))); err != nil {
		t.Fatal(err)
	}
	const (
		call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{}}}`
		read = `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://secret"}}`
	)
	for _, tc := range []struct {
		name            string
		principal       *ports.Principal
		wantCall, wantR string
	}{
		{"granted all", &ports.Principal{Subject: "u", Scopes: []string{"files:write", "files:read", "other"}},
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"written"}]}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"test://secret","mimeType":"text/plain","text":"s3cr3t"}]}}`},
		{"lacks one", &ports.Principal{Subject: "u", Scopes: []string{"files:read"}},
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32052,"message":"Insufficient scope: needs files:write","data":{"scopes":["files:read","files:write"],"missing":["files:write"]}}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"test://secret","mimeType":"text/plain","text":"s3cr3t"}]}}`},
		{"no principal", nil,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32052,"message":"Insufficient scope: needs files:read files:write","data":{"scopes":["files:read","files:write"],"missing":["files:read","files:write"]}}}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32052,"message":"Insufficient scope: needs files:read","data":{"scopes":["files:read"],"missing":["files:read"]}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := serveAs(t, e, app.TransportInfo{Principal: tc.principal})
			c.initialize("2025-11-25")
			equalJSON(t, c.roundTrip(call), tc.wantCall)
			equalJSON(t, c.roundTrip(read), tc.wantR)
		})
	}
}
