package bench

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	mcpclient "github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
)

// The client package against the servers of go-sdk v1.8.0 and mcp-go
// v1.2.1, over their stdio and Streamable HTTP transports, every
// revision: both answer server/discover, except go-sdk's stateful HTTP
// handler, which serves no stateless revision: there the client falls
// back to initialize.
func TestClientInterop(t *testing.T) {
	pipe := func(start startFunc) func(t *testing.T) mcpclient.Transport {
		return func(t *testing.T) mcpclient.Transport {
			toServer, fromClient := io.Pipe()
			toClient, fromServer := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := start(ctx, toServer, fromServer)
			t.Cleanup(func() {
				fromClient.Close()
				cancel()
				<-done
			})
			return mcpclient.IOTransport(toClient, fromClient)
		}
	}
	serveHTTP := func(h http.Handler) func(t *testing.T) mcpclient.Transport {
		return func(t *testing.T) mcpclient.Transport {
			ts := httptest.NewServer(h)
			t.Cleanup(ts.Close)
			return mcpclient.HTTPTransport(ts.URL, mcpclient.HTTPOptions{})
		}
	}
	gosdkHTTP := func(stateless, structured bool) http.Handler {
		s := newGoSDKServer(structured)
		return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, &gosdk.StreamableHTTPOptions{Stateless: stateless})
	}
	mcpgoHTTP := func(validated bool) http.Handler {
		return server.NewStreamableHTTPServer(newMcpGoServer(validated),
			server.WithStreamableHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	}
	for _, tc := range []struct {
		name       string
		dial       func(t *testing.T) mcpclient.Transport
		structured bool
		handshake  bool // a stateful go-sdk handler serves no stateless revision
	}{
		{"go-sdk/stdio", pipe(startGoSDK), false, false},
		{"go-sdk/stdio/structured", pipe(startGoSDKStructured), true, false},
		{"go-sdk/http", serveHTTP(gosdkHTTP(false, false)), false, true},
		{"go-sdk/http/structured", serveHTTP(gosdkHTTP(false, true)), true, true},
		{"go-sdk/http-stateless", serveHTTP(gosdkHTTP(true, true)), true, false},
		{"mcp-go/stdio", pipe(startMcpGoDefault), false, false},
		{"mcp-go/stdio/validated", pipe(startMcpGoValidated), true, false},
		{"mcp-go/http", serveHTTP(mcpgoHTTP(false)), false, false},
		{"mcp-go/http/validated", serveHTTP(mcpgoHTTP(true)), true, false},
	} {
		for _, rev := range []domain.Revision{"", domain.Revision20241105, domain.Revision20250326, domain.Revision20250618, domain.Revision20251125, domain.Revision20260728} {
			t.Run(tc.name+"/"+string(rev), func(t *testing.T) {
				ctx := t.Context()
				s, err := mcpclient.New(mcpclient.Options{Revision: rev}).Connect(ctx, tc.dial(t))
				if tc.handshake && rev == domain.Revision20260728 {
					var re *mcpclient.RPCError
					if !errors.As(err, &re) || re.Code != domain.CodeUnsupportedProtocolVersion {
						t.Fatalf("pinned to %s: %v, want -32022", rev, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				t.Logf("%s speaks %s", s.ServerInfo().Name, s.Revision())
				wantCalculator(t, s)
				out, err := mcpclient.CallToolAs[calcOutput](ctx, s, calcToolName, map[string]any{"a": 1, "b": 2, "operation": "add"})
				if tc.structured && s.Features().StructuredContent && (err != nil || out.Result != 3) {
					t.Errorf("typed calculate = %+v, %v", out, err)
				}
				res, err := s.CallTool(ctx, calcToolName, map[string]any{"a": 1, "b": 0, "operation": "divide"})
				if err != nil || !res.IsError {
					t.Errorf("divide by zero = %+v, %v: want a tool error", res, err)
				}
				if err := s.Ping(ctx); err != nil {
					t.Errorf("ping: %v", err)
				}
			})
		}
	}
}

// wantCalculator checks that s lists the one calculator tool and that it
// multiplies.
func wantCalculator(t *testing.T, s *mcpclient.Session) {
	t.Helper()
	ctx := t.Context()
	tools, err := mcpclient.Collect(s.ListTools(ctx))
	if err != nil || len(tools) != 1 || tools[0].Name != calcToolName {
		t.Fatalf("tools = %+v, %v", tools, err)
	}
	res, err := s.CallTool(ctx, calcToolName, map[string]any{"a": 6, "b": 7, "operation": "multiply"})
	if err != nil || res.IsError || res.Text() != "42" {
		t.Fatalf("calculate = %+v, %v", res, err)
	}
}
