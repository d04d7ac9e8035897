package hexmcp_test

import (
	"context"
	"log"
	"net/http"
	"os/signal"
	"syscall"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
	"github.com/hexmcp/hexmcp/adapters/websocket"
)

// AddInput is the input of the add tool; its fields are the input schema.
type AddInput struct {
	A float64 `json:"a" description:"First addend"`
	B float64 `json:"b" description:"Second addend"`
}

func add(ctx context.Context, in AddInput) (float64, error) { return in.A + in.B, nil }

// A stdio server with one typed, validated tool, logging to standard error:
// examples/quickstart (the README's first server) with a name and described
// arguments.
func Example() {
	srv, err := hexmcp.New(hexmcp.Options{
		Info:  hexmcp.Implementation{Name: "calc", Version: "1.0.0"},
		Tools: []hexmcp.Tool{hexmcp.Func(add, hexmcp.WithDescription("Adds two numbers."))},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.ServeStdio(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// The same server over Streamable HTTP at http://127.0.0.1:8080/mcp,
// stopping gracefully on Ctrl-C.
func ExampleServer_ListenAndServe() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv, err := hexmcp.New(hexmcp.Options{
		Info:  hexmcp.Implementation{Name: "calc", Version: "1.0.0"},
		Tools: []hexmcp.Tool{hexmcp.Func(add, hexmcp.WithDescription("Adds two numbers."))},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.ListenAndServe(ctx, "127.0.0.1:8080", hexmcp.HTTPOptions{}); err != nil {
		log.Fatal(err)
	}
}

// A server on the internet, in one call: an OAuth 2.1 protected resource
// whose /mcp and /ws take only the JWT access tokens of one authorization
// server issued for it with the scope mcp:tools, its Protected Resource
// Metadata served beside them without authentication, every request logged
// by a net/http middleware of your own.
func ExampleServer_ListenAndServe_authenticated() {
	const (
		issuer   = "https://auth.example.com"
		resource = "https://mcp.example.com/mcp" // this server's /mcp, behind TLS termination
	)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv, err := hexmcp.New(hexmcp.Options{
		Info:  hexmcp.Implementation{Name: "calc", Version: "1.0.0"},
		Tools: []hexmcp.Tool{hexmcp.Func(add, hexmcp.WithDescription("Adds two numbers."))},
	})
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := mcpoauth.NewJWTVerifier(ctx, mcpoauth.JWTOptions{Issuer: issuer, Audience: resource})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	metaURL, err := mcpoauth.Mount(mux, mcpoauth.Metadata{Resource: resource,
		AuthorizationServers: []string{issuer}, ScopesSupported: []string{"mcp:tools"}})
	if err != nil {
		log.Fatal(err)
	}
	err = srv.ListenAndServe(ctx, ":8080", hexmcp.HTTPOptions{
		Mux:           mux,
		Authenticator: verifier,
		Auth:          mcphttp.AuthOptions{ResourceMetadataURL: metaURL, RequiredScopes: []string{"mcp:tools"}},
		WebSocket:     &websocket.Options{},
		Middleware:    accessLog,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// accessLog is a net/http middleware: one line per request.
func accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Printf("%s %s", r.Method, r.URL.Path)
		next.ServeHTTP(w, r)
	})
}
