package mcphttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// A call the engine refuses for a scope the token lacks (a tool's
// WithScopes) is a 403 whose WWW-Authenticate challenge names the scopes
// the tool needs, with the resource metadata URL of RequireBearer's
// AuthOptions when it has one, in both eras; a token with the scopes is
// served.
func TestToolScopeChallenge(t *testing.T) {
	e, err := app.NewEngine(app.Options{Info: domain.Implementation{Name: "t", Version: "1"}, ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddTool(app.NewTool(func(context.Context) (string, error) { return "written", nil },
		app.WithName("write"), app.WithScopes("files:read", "files:write"))); err != nil {
		t.Fatal(err)
	}
	ev := envFor(t, e, mcphttp.Options{})
	tokens := mcphttp.StaticTokens{
		"reader": {Subject: "r", Scopes: []string{"files:read"}},
		"writer": {Subject: "w", Scopes: []string{"files:read", "files:write"}},
	}
	const metaURL = "https://mcp.example/.well-known/oauth-protected-resource"
	for _, tc := range []struct {
		name, metaURL, challenge string
	}{
		{"with metadata", metaURL, `Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="` + metaURL + `"`},
		{"without metadata", "", `Bearer error="insufficient_scope", scope="files:read files:write"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{ResourceMetadataURL: tc.metaURL})(ev.h))
			defer srv.Close()
			auth := func(token string) hdr { return hdr{"Authorization": "Bearer " + token} }

			// Stateless era.
			call := statelessCall(1, "write", `{}`)
			h := statelessHdr("tools/call", "write")
			resp := request(t, context.Background(), http.MethodPost, srv.URL, call, mergeHdr(h, auth("reader")))
			expect(t, resp, http.StatusForbidden, `"code":-32052`, `"missing":["files:write"]`)
			if got := resp.Header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Fatalf("stateless challenge %q, want %q", got, tc.challenge)
			}
			expect(t, request(t, context.Background(), http.MethodPost, srv.URL, call, mergeHdr(h, auth("writer"))), http.StatusOK, `"text":"written"`)

			// Handshake era: the session is the reader's.
			resp = request(t, context.Background(), http.MethodPost, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, auth("reader"))
			expect(t, resp, http.StatusOK)
			sh := mergeHdr(sessHdr(resp.Header.Get(mcphttp.HeaderSessionID), "2025-11-25"), auth("reader"))
			expect(t, request(t, context.Background(), http.MethodPost, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sh), http.StatusAccepted)
			resp = request(t, context.Background(), http.MethodPost, srv.URL, callBody(2, "write", `{}`), sh)
			expect(t, resp, http.StatusForbidden, `"code":-32052`)
			if got := resp.Header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Fatalf("session challenge %q, want %q", got, tc.challenge)
			}
		})
	}
}
