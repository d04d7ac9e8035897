package mcpoauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
)

// metadataServer serves an authorization server's metadata at one path,
// 404 elsewhere (or status everywhere when set), and records the paths
// asked for.
type metadataServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	at     string            // the path the metadata is at
	doc    map[string]string // the document; "issuer" "{self}" is the server's URL + issuerPath
	status int
	asked  []string
	jwks   *jwksServer
}

func newMetadataServer(t *testing.T, at, issuerPath string) *metadataServer {
	t.Helper()
	m := &metadataServer{at: at, jwks: &jwksServer{}}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/jwks" {
			m.jwks.ServeHTTP(w, r)
			return
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.asked = append(m.asked, r.URL.Path)
		if m.status != 0 {
			w.WriteHeader(m.status)
			return
		}
		if r.URL.Path != m.at {
			http.NotFound(w, r)
			return
		}
		doc := map[string]string{}
		for k, v := range m.doc {
			doc[k] = strings.ReplaceAll(v, "{self}", "http://"+r.Host)
		}
		_ = json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(m.srv.Close)
	m.doc = map[string]string{"issuer": "{self}" + issuerPath, "jwks_uri": "{self}/jwks"}
	return m
}

// update changes the server under its lock.
func (m *metadataServer) update(fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fn()
}

func (m *metadataServer) paths() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.asked...)
}

func TestDiscovery(t *testing.T) {
	ctx := context.Background()
	key := newRSA(t, "k1", 2048)
	verify := func(t *testing.T, m *metadataServer, issuer string) error {
		t.Helper()
		m.jwks.set(key.jwk(t, nil))
		_, err := mcpoauth.NewJWTVerifier(ctx, mcpoauth.JWTOptions{Issuer: issuer, Audience: "https://mcp.example.com/mcp"})
		return err
	}
	// The order the MCP authorization spec gives, for issuers with and
	// without a path: each URL is tried until the metadata is found.
	for _, c := range []struct {
		name, issuerPath, at string
		tried                []string
	}{
		{"root, RFC 8414", "", "/.well-known/oauth-authorization-server", []string{"/.well-known/oauth-authorization-server"}},
		{"root, OpenID", "", "/.well-known/openid-configuration", []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}},
		{"path, RFC 8414 inserted", "/tenant1", "/.well-known/oauth-authorization-server/tenant1", []string{"/.well-known/oauth-authorization-server/tenant1"}},
		{"path, OpenID inserted", "/tenant1", "/.well-known/openid-configuration/tenant1",
			[]string{"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1"}},
		{"path, OpenID appended", "/realms/a", "/realms/a/.well-known/openid-configuration",
			[]string{"/.well-known/oauth-authorization-server/realms/a", "/.well-known/openid-configuration/realms/a", "/realms/a/.well-known/openid-configuration"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMetadataServer(t, c.at, c.issuerPath)
			if err := verify(t, m, m.srv.URL+c.issuerPath); err != nil {
				t.Fatal(err)
			}
			if got := m.paths(); !reflect.DeepEqual(got, c.tried) {
				t.Fatalf("tried %q, want %q", got, c.tried)
			}
		})
	}
	// An issuer written with a trailing slash is that issuer: the metadata
	// must say so, and it is found without a doubled slash.
	m := newMetadataServer(t, "/.well-known/oauth-authorization-server/t", "/t/")
	if err := verify(t, m, m.srv.URL+"/t/"); err != nil {
		t.Fatal(err)
	}

	// The metadata names another issuer: refused (RFC 8414 section 3.3),
	// without trying further.
	m = newMetadataServer(t, "/.well-known/oauth-authorization-server", "")
	m.update(func() { m.doc["issuer"] = "https://evil.example" })
	if err := verify(t, m, m.srv.URL); err == nil || errors.Is(err, mcpoauth.ErrUnavailable) || !strings.Contains(err.Error(), "evil") {
		t.Fatalf("error %v", err)
	}
	m.update(func() { m.doc["issuer"] = "{self}/" }) // not character for character
	if err := verify(t, m, m.srv.URL); err == nil {
		t.Fatal("accepted an issuer with a trailing slash added")
	}
	// No jwks_uri, a jwks_uri over http off loopback.
	m.update(func() { m.doc = map[string]string{"issuer": "{self}"} })
	if err := verify(t, m, m.srv.URL); err == nil || !strings.Contains(err.Error(), "jwks_uri") {
		t.Fatalf("error %v", err)
	}
	m.update(func() { m.doc = map[string]string{"issuer": "{self}", "jwks_uri": "http://keys.example/jwks"} })
	if err := verify(t, m, m.srv.URL); err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("error %v", err)
	}
	// Nowhere: not found (a configuration error), vs failing: unavailable.
	m = newMetadataServer(t, "/elsewhere", "")
	if err := verify(t, m, m.srv.URL); err == nil || errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
	m.update(func() { m.status = http.StatusBadGateway })
	if err := verify(t, m, m.srv.URL); !errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
	m.update(func() { m.status, m.at = 0, "/.well-known/oauth-authorization-server" })
	m.jwks.mu.Lock()
	m.jwks.status = http.StatusInternalServerError
	m.jwks.mu.Unlock()
	if _, err := mcpoauth.NewJWTVerifier(ctx, mcpoauth.JWTOptions{Issuer: m.srv.URL, Audience: "x"}); !errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}

	// Issuers that are refused before anything is fetched.
	for _, issuer := range []string{"", "auth.example.com", "http://auth.example.com", "http://192.168.1.1", "https://auth.example.com?x=1",
		"https://auth.example.com#f", "ftp://auth.example.com", "https://u@auth.example.com"} {
		if _, err := mcpoauth.NewJWTVerifier(ctx, mcpoauth.JWTOptions{Issuer: issuer, Audience: "x"}); err == nil || errors.Is(err, mcpoauth.ErrUnavailable) {
			t.Fatalf("%q: %v", issuer, err)
		}
	}
}
