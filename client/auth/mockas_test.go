package auth_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
	"github.com/hexmcp/hexmcp/client/auth"
	"github.com/hexmcp/hexmcp/internal/mockas"
	"github.com/hexmcp/hexmcp/ports"
	"golang.org/x/oauth2"
)

// mockSetup is this SDK's server behind RequireBearer with adapters/oauth's
// JWT verifier of a real authorization server, oauth2-mock-server (its
// metadata only at OpenID Connect's well-known URL, no registration, no
// iss): the client is pre-registered.
func mockSetup(t *testing.T) *setup {
	t.Helper()
	as := mockas.Start(t, mockas.Options{})
	var v ports.Authenticator
	m := newMCPServer(t, serverOpts{issuer: as.Issuer, authn: authFunc(func(ctx context.Context, tok string) (ports.Principal, error) {
		return v.Authenticate(ctx, tok)
	})})
	var err error
	v, err = mcpoauth.NewJWTVerifier(context.Background(), mcpoauth.JWTOptions{Issuer: as.Issuer, Audience: m.url})
	if err != nil {
		t.Fatal(err)
	}
	return &setup{mcp: m, rec: &recorder{}}
}

func TestMockASAuthorizationCode(t *testing.T) {
	s := mockSetup(t)
	store := &auth.MemoryStore{}
	c, _ := s.client(t, auth.Options{ClientID: "app", Store: store})
	wantTool(t, c, s.mcp.url, "whoami", "app|mcp:tools")
	lines := s.rec.lines()
	want := []string{"POST /mcp 401", "GET /.well-known/oauth-protected-resource/mcp 200",
		"GET /.well-known/oauth-authorization-server 404", "GET /.well-known/openid-configuration 200",
		"POST /token grant_type=authorization_code 200", "POST /mcp 200"}
	if !slices.Equal(lines, want) {
		t.Fatalf("requests %q, want %q", lines, want)
	}

	// Step-up: admin needs mcp:admin too.
	wantTool(t, c, s.mcp.url, "admin", "app|mcp:tools,mcp:admin")
	if l := s.rec.lines(); l[0] != "POST /mcp 403" || count(l, "grant_type=authorization_code") != 1 {
		t.Fatalf("requests %q", l)
	}

	// A token the server refuses, with a refresh token: refreshed.
	k := auth.Key{Resource: s.mcp.url, Client: "app"}
	tok, _ := store.Get(context.Background(), k)
	if tok == nil || tok.RefreshToken == "" {
		t.Fatalf("stored %v", tok)
	}
	bad := &oauth2.Token{AccessToken: "not-a-jwt", TokenType: "Bearer", RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(time.Hour)}
	if err := store.Put(context.Background(), k, bad); err != nil {
		t.Fatal(err)
	}
	wantTool(t, c, s.mcp.url, "admin", "app|mcp:tools,mcp:admin")
	if l := s.rec.lines(); !slices.Equal(l, []string{"POST /mcp 401", "GET /.well-known/oauth-protected-resource/mcp 200",
		"GET /.well-known/oauth-authorization-server 404", "GET /.well-known/openid-configuration 200",
		"POST /token grant_type=refresh_token 200", "POST /mcp 200"}) {
		t.Fatalf("requests %q", l)
	}
}

func TestMockASClientCredentials(t *testing.T) {
	s := mockSetup(t)
	c, _ := s.client(t, auth.Options{ClientCredentials: true, ClientID: "machine", ClientSecret: "secret"})
	wantTool(t, c, s.mcp.url, "whoami", "machine|mcp:tools")
	if l := s.rec.lines(); count(l, "grant_type=client_credentials 200") != 1 {
		t.Fatalf("requests %q", l)
	}
}

func TestMockASNoClient(t *testing.T) {
	s := mockSetup(t)
	c, _ := s.client(t, auth.Options{})
	_, _, err := callTool(c, s.mcp.url, "whoami")
	if !errors.Is(err, &auth.Error{Reason: auth.ReasonNoClient}) {
		t.Fatalf("error %v", err)
	}
}
