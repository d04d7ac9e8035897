package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/hexmcp/hexmcp/internal/testtools"
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
	as := startIssuer(t)
	issuer := as.url
	const audience = "http://127.0.0.1:8080/mcp"
	mw, metaURL, err := protect(context.Background(), authConfig{issuer: issuer, audience: audience, scopes: []string{"mcp:tools"}}, slog.New(slog.DiscardHandler))
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
	now := time.Now().Unix()
	good := as.sign(t, map[string]any{"iss": issuer, "aud": audience, "sub": "alice", "scope": "mcp:tools", "exp": now + 60})
	other := as.sign(t, map[string]any{"iss": issuer, "aud": "http://127.0.0.1:9999/mcp", "sub": "alice", "scope": "mcp:tools", "exp": now + 60})
	unscoped := as.sign(t, map[string]any{"iss": issuer, "aud": audience, "sub": "alice", "exp": now + 60})
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
	if _, _, err := protect(context.Background(), authConfig{issuer: "http://auth.example.com", audience: audience}, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("an http issuer off loopback was accepted")
	}
	if _, _, err := protect(context.Background(), authConfig{issuer: issuer, audience: "http://mcp.example.com/mcp"}, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("an http audience off loopback was accepted")
	}
}

// TestProtectAuthorizationServerDown starts the -auth-* setup while the
// authorization server cannot be reached (every connection to it is
// dropped): the showcase must start rather than exit (a crash loop of
// every instance that restarts during an outage of the identity
// provider), serve its own metadata, refuse a request without a token with
// the 401 challenge, and answer a request with a token 503 with
// Retry-After. Once the authorization server is back, a client that waits
// as Retry-After says is served, without a restart.
func TestProtectAuthorizationServerDown(t *testing.T) {
	as := startIssuer(t)
	as.up.Store(false)
	issuer := as.url

	inner := http.NewServeMux()
	inner.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("served")) })
	srv := httptest.NewUnstartedServer(nil)
	audience := "http://" + srv.Listener.Addr().String() + "/mcp"
	mw, metaURL, err := protect(context.Background(), authConfig{issuer: issuer, audience: audience, scopes: []string{"mcp:tools"}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("the showcase does not start while its authorization server is down: %v", err)
	}
	srv.Config.Handler = mw(inner)
	srv.Start()
	defer srv.Close()

	token := as.sign(t, map[string]any{"iss": issuer, "aud": audience, "sub": "alice", "scope": "mcp:tools", "exp": time.Now().Unix() + 600})
	get := func(url, auth string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		return testtools.DoRead(t, nil, req)
	}

	// Its own metadata, and the challenge, need no authorization server.
	if resp, body := get(metaURL, ""); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"authorization_servers":["`+issuer+`"]`) {
		t.Fatalf("metadata: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(audience, ""); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), metaURL) {
		t.Fatalf("no token: %d %v", resp.StatusCode, resp.Header)
	}
	// A token cannot be judged: 503 with Retry-After, never a 401 or a 200.
	resp, body := get(audience, "Bearer "+token)
	after, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != http.StatusServiceUnavailable || err != nil || after < 1 || after > 60 {
		t.Fatalf("a token while the authorization server is down: %d, Retry-After %q, %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}

	// The authorization server is back: after Retry-After the same token
	// is served.
	as.up.Store(true)
	time.Sleep(time.Duration(after) * time.Second)
	if resp, body := get(audience, "Bearer "+token); resp.StatusCode != http.StatusOK || body != "served" {
		t.Fatalf("after Retry-After, with the authorization server back: %d %s", resp.StatusCode, body)
	}
}

// testIssuer is an authorization server of the test's own on loopback:
// its metadata and its key set (one RSA key, kid k1). While up is false,
// every connection to it is dropped unanswered.
type testIssuer struct {
	url string
	key *rsa.PrivateKey
	up  atomic.Bool
}

// startIssuer starts a testIssuer, up, and stops it when t ends.
func startIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := jwk.Import(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	_ = pub.Set("kid", "k1")
	is := &testIssuer{key: key}
	is.up.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !is.up.Load() { // unreachable: the connection is dropped unanswered
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = c.Close()
			}
			return
		}
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.url, "jwks_uri": is.url + "/jwks"})
		case "/jwks":
			_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{pub}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	is.url = srv.URL
	return is
}

// sign returns a token with claims, signed with the issuer's key.
func (is *testIssuer) sign(t *testing.T, claims map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(claims)
	hdr := jws.NewHeaders()
	_ = hdr.Set("kid", "k1")
	tok, err := jws.Sign(b, jws.WithKey(jwa.RS256(), is.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(tok)
}
