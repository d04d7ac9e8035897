package bench

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	mcpclient "github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
)

// The client's HTTP+SSE transport (2024-11-05) against the SSE servers of
// go-sdk v1.8.0 and mcp-go v1.2.1, every revision the client may pin and
// its own choice.
func TestSSEClientInterop(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler func() http.Handler
		path    string
	}{
		{"go-sdk", func() http.Handler {
			s := newGoSDKServer(true)
			return gosdk.NewSSEHandler(func(*http.Request) *gosdk.Server { return s }, nil)
		}, "/"},
		{"mcp-go", func() http.Handler {
			return server.NewSSEServer(newMcpGoServer(true), server.WithUseFullURLForMessageEndpoint(false))
		}, "/sse"},
	} {
		for _, rev := range []domain.Revision{"", domain.Revision20241105, domain.Revision20250326, domain.Revision20250618, domain.Revision20251125} {
			t.Run(tc.name+"/"+string(rev), func(t *testing.T) {
				ts := httptest.NewServer(tc.handler())
				t.Cleanup(ts.Close)
				ctx := t.Context()
				s, err := mcpclient.New(mcpclient.Options{Revision: rev, ProbeTimeout: 2 * time.Second}).Connect(ctx, mcpclient.SSETransport(ts.URL+tc.path, mcpclient.SSEOptions{}))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				t.Logf("%s speaks %s", s.ServerInfo().Name, s.Revision())
				wantCalculator(t, s)
				if err := s.Ping(ctx); err != nil {
					t.Errorf("ping: %v", err)
				}
			})
		}
	}
}
