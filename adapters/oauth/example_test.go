package mcpoauth_test

import (
	"context"
	"log"
	"net/http"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
)

// An MCP server as an OAuth 2.1 protected resource: its metadata at the
// well-known paths, /mcp behind RequireBearer with the JWT access tokens of
// one authorization server, issued for this server, with the scope
// mcp:tools.
func ExampleMount() {
	const (
		issuer   = "https://auth.example.com"
		resource = "https://mcp.example.com/mcp"
	)
	ctx := context.Background()
	srv, err := hexmcp.New(hexmcp.Options{Info: hexmcp.Implementation{Name: "files", Version: "1.0.0"}})
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := mcpoauth.NewJWTVerifier(ctx, mcpoauth.JWTOptions{Issuer: issuer, Audience: resource})
	if err != nil {
		log.Fatal(err) // wraps mcpoauth.ErrUnavailable when the authorization server cannot be reached
	}
	mux := http.NewServeMux()
	metaURL, err := mcpoauth.Mount(mux, mcpoauth.Metadata{
		Resource:             resource,
		AuthorizationServers: []string{issuer},
		ScopesSupported:      []string{"mcp:tools"},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux.Handle("/mcp", mcphttp.RequireBearer(verifier, mcphttp.AuthOptions{
		ResourceMetadataURL: metaURL,
		RequiredScopes:      []string{"mcp:tools"},
	})(srv.HTTPHandler(mcphttp.Options{})))
	log.Fatal(http.ListenAndServe(":8443", mux)) // behind TLS termination for https://mcp.example.com
}
