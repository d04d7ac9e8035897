package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/hexmcp/hexmcp/ports"
)

func TestParseAuthFlags(t *testing.T) {
	if _, on, err := parseAuthFlags("", "", ""); on || err != nil {
		t.Fatal(on, err)
	}
	for _, f := range [][3]string{{"https://as", "", ""}, {"", "https://mcp/mcp", ""}, {"", "", "a"}} {
		if _, _, err := parseAuthFlags(f[0], f[1], f[2]); err == nil {
			t.Fatalf("%q accepted", f)
		}
	}
	c, on, err := parseAuthFlags("https://as", "https://mcp/mcp", " a, b ,,")
	if !on || err != nil || strings.Join(c.scopes, "|") != "a|b" {
		t.Fatalf("%+v %v %v", c, on, err)
	}
}

// TestProtect runs the -auth-* setup against an issuer of the test's own
// (metadata and key set on loopback), in front of a stand-in for /mcp and
// /ws.
func TestProtect(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := jwk.Import(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	_ = pub.Set("kid", "k1")
	var issuer string
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": issuer, "jwks_uri": issuer + "/jwks"})
		case "/jwks":
			_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{pub}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer as.Close()
	issuer = as.URL
	const audience = "http://127.0.0.1:8080/mcp"
	mw, metaURL, err := protect(context.Background(), authConfig{issuer: issuer, audience: audience, scopes: []string{"mcp:tools"}}, ports.NopLogger{})
	if err != nil {
		t.Fatal(err)
	}
	if metaURL != "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("metadata URL %q", metaURL)
	}
	inner := http.NewServeMux()
	for _, p := range []string{"/mcp", "/ws"} {
		inner.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("served " + r.URL.Path)) })
	}
	h := mw(inner)
	do := func(path, auth string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080"+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	// The metadata is served without a token, at both paths.
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		rec := do(p, "")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"resource":"`+audience+`"`) ||
			!strings.Contains(rec.Body.String(), `"authorization_servers":["`+issuer+`"]`) {
			t.Fatalf("%s: %d %s", p, rec.Code, rec.Body)
		}
	}
	// /mcp and /ws need a token.
	sign := func(claims map[string]any) string {
		b, _ := json.Marshal(claims)
		hdr := jws.NewHeaders()
		_ = hdr.Set("kid", "k1")
		tok, err := jws.Sign(b, jws.WithKey(jwa.RS256(), key, jws.WithProtectedHeaders(hdr)))
		if err != nil {
			t.Fatal(err)
		}
		return string(tok)
	}
	now := time.Now().Unix()
	good := sign(map[string]any{"iss": issuer, "aud": audience, "sub": "alice", "scope": "mcp:tools", "exp": now + 60})
	other := sign(map[string]any{"iss": issuer, "aud": "http://127.0.0.1:9999/mcp", "sub": "alice", "scope": "mcp:tools", "exp": now + 60})
	unscoped := sign(map[string]any{"iss": issuer, "aud": audience, "sub": "alice", "exp": now + 60})
	for _, p := range []string{"/mcp", "/ws"} {
		rec := do(p, "")
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") != `Bearer scope="mcp:tools", resource_metadata="`+metaURL+`"` {
			t.Fatalf("%s: %d %v", p, rec.Code, rec.Header())
		}
		if rec := do(p, "Bearer "+other); rec.Code != http.StatusUnauthorized {
			t.Fatalf("%s, another resource's token: %d", p, rec.Code)
		}
		if rec := do(p, "Bearer "+unscoped); rec.Code != http.StatusForbidden {
			t.Fatalf("%s, no scope: %d", p, rec.Code)
		}
		if rec := do(p, "Bearer "+good); rec.Code != http.StatusOK || rec.Body.String() != "served "+p {
			t.Fatalf("%s: %d %s", p, rec.Code, rec.Body)
		}
	}
	// An http issuer off loopback is refused before anything is fetched.
	if _, _, err := protect(context.Background(), authConfig{issuer: "http://auth.example.com", audience: audience}, ports.NopLogger{}); err == nil {
		t.Fatal("an http issuer off loopback was accepted")
	}
	if _, _, err := protect(context.Background(), authConfig{issuer: issuer, audience: "http://mcp.example.com/mcp"}, ports.NopLogger{}); err == nil {
		t.Fatal("an http audience off loopback was accepted")
	}
}
