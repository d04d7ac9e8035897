package auth_test

import (
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/client/auth"
	"github.com/hexmcp/hexmcp/domain"
)

// The package's transport under the MCP client: a session to a protected
// server, in each era, authorizes once (dynamic registration, PKCE) on the
// first 401 and then calls a tool with the token.
func TestWithTheClient(t *testing.T) {
	for _, rev := range []domain.Revision{"", domain.Revision20251125, domain.Revision20260728} {
		name := string(rev)
		if name == "" {
			name = "auto"
		}
		t.Run(name, func(t *testing.T) {
			s := newSetup(t, asConfig{registration: true}, serverOpts{})
			hc, _ := s.client(t, auth.Options{ClientName: "test"})
			sess, err := client.New(client.Options{Revision: rev}).Connect(t.Context(), client.HTTPTransport(s.mcp.url, client.HTTPOptions{Client: hc}))
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			res, err := sess.CallTool(t.Context(), "whoami", nil)
			if err != nil || res.IsError || !strings.HasSuffix(res.Text(), "|mcp:tools") {
				t.Fatalf("whoami = %+v, %v", res, err)
			}
			if n := len(find(s.as.requests(), "token")); n != 1 {
				t.Fatalf("%d token requests, want 1", n)
			}
		})
	}
}
