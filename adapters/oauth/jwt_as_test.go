package mcpoauth_test

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
	"github.com/hexmcp/hexmcp/internal/mockas"
	"github.com/hexmcp/hexmcp/ports"
)

// protected is an MCP server (hexmcp.New, its Streamable HTTP handler)
// behind RequireBearer with a JWTVerifier of a real authorization server,
// and its metadata mounted beside it.
type protected struct {
	as       *authServer
	srv      *httptest.Server
	url      string // the MCP endpoint: the resource
	metaURL  string
	verifier ports.Authenticator
	clock    *fakeClock
	fetches  *countingClient
}

func newProtected(t *testing.T) *protected {
	t.Helper()
	as := startAS(t)
	p := &protected{as: as, clock: &fakeClock{}, fetches: &countingClient{}}
	mux := http.NewServeMux()
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	p.url = p.srv.URL + "/mcp"
	v, err := mcpoauth.NewJWTVerifier(context.Background(), mcpoauth.JWTOptions{
		Issuer:     as.Issuer,
		Audience:   p.url,
		HTTPClient: p.fetches.client(),
		Clock:      p.clock,
		KeysMaxAge: 10 * time.Minute, // the tokens of the token endpoint live an hour
	})
	if err != nil {
		t.Fatal(err)
	}
	p.verifier = v
	p.metaURL, err = mcpoauth.Mount(mux, mcpoauth.Metadata{
		Resource:             p.url,
		AuthorizationServers: []string{as.Issuer},
		ScopesSupported:      []string{"mcp:tools", "mcp:admin"},
		ResourceName:         "whoami",
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := hexmcp.New(hexmcp.Options{
		Info: hexmcp.Implementation{Name: "whoami", Version: "1"},
		Tools: []hexmcp.Tool{
			hexmcp.Func(whoami, hexmcp.WithName("whoami")),
			hexmcp.Func(whoami, hexmcp.WithName("admin"), hexmcp.WithScopes("mcp:tools", "mcp:admin")),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/mcp", mcphttp.RequireBearer(v, mcphttp.AuthOptions{
		ResourceMetadataURL: p.metaURL,
		RequiredScopes:      []string{"mcp:tools"},
		Logger:              slog.New(slog.DiscardHandler),
	})(s.HTTPHandler(mcphttp.Options{})))
	return p
}

// claims are valid claims for p's resource, changed by over (a nil value
// removes a claim).
func (p *protected) claims(over map[string]any) map[string]any {
	now := time.Now().Unix()
	return overlay(map[string]any{"iss": p.as.Issuer, "aud": p.url, "sub": "alice", "client_id": "app",
		"scope": "mcp:tools", "iat": now, "nbf": now - 10, "exp": now + 600}, over)
}

// expectRefused checks that token gets 401 invalid_token through the
// server, and that the verifier's reason contains reason.
func (p *protected) expectRefused(t *testing.T, token, reason string) {
	t.Helper()
	resp, body := mcpCall(t, p.url, "Bearer "+token)
	if resp.StatusCode != http.StatusUnauthorized || body != `{"error":"invalid_token"}` {
		t.Fatalf("status %d, body %s", resp.StatusCode, body)
	}
	want := `Bearer error="invalid_token", scope="mcp:tools", resource_metadata="` + p.metaURL + `"`
	if got := resp.Header.Get("WWW-Authenticate"); got != want {
		t.Fatalf("challenge %q, want %q", got, want)
	}
	_, err := p.verifier.Authenticate(context.Background(), token)
	if !errors.Is(err, ports.ErrUnauthenticated) || errors.Is(err, mcpoauth.ErrUnavailable) || !strings.Contains(err.Error(), reason) {
		t.Fatalf("error %v, want one about %q", err, reason)
	}
}

func (p *protected) expectOK(t *testing.T, token, want string) {
	t.Helper()
	resp, body := mcpCall(t, p.url, "Bearer "+token)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
		t.Fatalf("status %d, body %s, want %s", resp.StatusCode, body, want)
	}
}

func TestJWTAgainstAuthorizationServer(t *testing.T) {
	p := newProtected(t)

	// A token from the token endpoint, for this resource, with the scope.
	good := p.as.ClientCredentials(t, "app", "mcp:tools mcp:admin", p.url)
	p.expectOK(t, good, `app|mcp:tools,mcp:admin|app`)

	// No token: 401 naming the metadata and the scope, no error code.
	resp, body := mcpCall(t, p.url, "")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	if got, want := resp.Header.Get("WWW-Authenticate"), `Bearer scope="mcp:tools", resource_metadata="`+p.metaURL+`"`; got != want {
		t.Fatalf("challenge %q, want %q", got, want)
	}
	if want := p.srv.URL + "/.well-known/oauth-protected-resource/mcp"; p.metaURL != want {
		t.Fatalf("resource_metadata %q, want %q", p.metaURL, want)
	}

	// A token in the query string: 400 invalid_request, even a good one.
	resp, body = mcpCall(t, p.url+"?access_token="+good, "Bearer "+good)
	if resp.StatusCode != http.StatusBadRequest || body != `{"error":"invalid_request"}` {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}

	// Tokens the authorization server signed with its own key, but wrong.
	past := time.Now().Add(-time.Hour).Unix()
	p.expectRefused(t, p.as.sign(t, signReq{Claims: p.claims(map[string]any{"exp": past, "iat": past - 60, "nbf": past - 60})}), "expired")
	p.expectRefused(t, p.as.sign(t, signReq{Claims: p.claims(nil), Remove: []string{"exp"}}), "no expiry")
	p.expectRefused(t, p.as.sign(t, signReq{Claims: p.claims(map[string]any{"iss": "http://127.0.0.1:1"})}), "issuer")
	p.expectRefused(t, p.as.sign(t, signReq{Claims: p.claims(map[string]any{"aud": "http://127.0.0.1:1/mcp"})}), "not for this resource")
	p.expectRefused(t, p.as.sign(t, signReq{Claims: p.claims(map[string]any{"aud": []string{"https://other.example", "urn:x"}})}), "not for this resource")
	p.expectRefused(t, p.as.sign(t, signReq{Claims: p.claims(nil), Remove: []string{"aud"}}), "not for this resource")
	p.expectRefused(t, p.as.sign(t, signReq{Claims: p.claims(map[string]any{"nbf": time.Now().Add(time.Hour).Unix()})}), "not valid before")
	p.expectRefused(t, p.as.sign(t, signReq{Claims: p.claims(nil), Remove: []string{"sub"}}), "no subject")
	// ...and right: aud as an array naming this resource (in upper case),
	// scp as an array.
	p.expectOK(t, p.as.sign(t, signReq{Claims: p.claims(map[string]any{
		"aud":   []string{"https://other.example", "HTTP://" + strings.TrimPrefix(p.url, "http://")},
		"scope": nil, "scp": []string{"mcp:tools", "x"},
	})}), `alice|mcp:tools,x|app`)

	// Missing scope: 403 naming it (step-up).
	resp, body = mcpCall(t, p.url, "Bearer "+p.as.ClientCredentials(t, "app", "other", p.url))
	if resp.StatusCode != http.StatusForbidden || body != `{"error":"insufficient_scope"}` {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	if got, want := resp.Header.Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="mcp:tools", resource_metadata="`+p.metaURL+`"`; got != want {
		t.Fatalf("challenge %q, want %q", got, want)
	}

	// A tool that needs a scope the token lacks: the engine's 403 names
	// the tool's scopes and the metadata; with the scope it answers.
	resp, body = mcpCallTool(t, p.url, "admin", "Bearer "+p.as.ClientCredentials(t, "app", "mcp:tools", p.url))
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	if got, want := resp.Header.Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="`+p.metaURL+`"`; got != want {
		t.Fatalf("challenge %q, want %q", got, want)
	}
	if resp, body := mcpCallTool(t, p.url, "admin", "Bearer "+good); resp.StatusCode != http.StatusOK || !strings.Contains(body, "app|mcp:tools,mcp:admin|app") {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}

	// Tampered: the payload changed under the authorization server's
	// signature.
	parts := strings.Split(good, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	evil := strings.Replace(string(payload), `"sub":"app"`, `"sub":"admin"`, 1)
	if evil == string(payload) {
		t.Fatalf("payload %s", payload)
	}
	p.expectRefused(t, parts[0]+"."+base64.RawURLEncoding.EncodeToString([]byte(evil))+"."+parts[2], "signature")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sig[len(sig)/2] ^= 1
	p.expectRefused(t, parts[0]+"."+parts[1]+"."+base64.RawURLEncoding.EncodeToString(sig), "signature")

	// alg none, with and without the server's kid.
	var hdr struct{ Kid string }
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(hb, &hdr); err != nil || hdr.Kid == "" {
		t.Fatalf("header %s: %v", hb, err)
	}
	claims, _ := json.Marshal(p.claims(nil))
	p.expectRefused(t, rawJWS(`{"alg":"none","typ":"JWT"}`, string(claims), nil), `algorithm "none"`)
	p.expectRefused(t, rawJWS(`{"alg":"none","kid":"`+hdr.Kid+`"}`, string(claims), nil), `algorithm "none"`)
	p.expectRefused(t, strings.TrimSuffix(rawJWS(`{"alg":"none"}`, string(claims), nil), "."), "compact")

	// HS256 with the authorization server's public key as the secret, in
	// every form an attacker could guess the verifier uses.
	for _, secret := range p.publicKeyForms(t, hdr.Kid) {
		head := `{"alg":"HS256","typ":"JWT","kid":"` + hdr.Kid + `"}`
		signing := base64.RawURLEncoding.EncodeToString([]byte(head)) + "." + base64.RawURLEncoding.EncodeToString(claims)
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(signing))
		p.expectRefused(t, signing+"."+base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), `algorithm "HS256"`)
	}

	// Unknown key: a token signed by a key the server never published,
	// under a made-up kid and under the server's own kid.
	stranger := newRSA(t, "stranger", 2048)
	p.clock.advance(time.Minute) // past the refetch interval
	before := p.fetches.count("/jwks")
	p.expectRefused(t, stranger.sign(t, p.claims(nil), nil), "not in the authorization server's key set")
	if got := p.fetches.count("/jwks") - before; got != 1 {
		t.Fatalf("an unknown kid fetched the key set %d times, want 1", got)
	}
	// Rate-limited: more unknown kids within the interval fetch nothing.
	for i := range 5 {
		s := stranger
		s.kid = "stranger-" + string(rune('a'+i))
		p.expectRefused(t, s.sign(t, p.claims(nil), nil), "not in the authorization server's key set")
	}
	if got := p.fetches.count("/jwks") - before; got != 1 {
		t.Fatalf("unknown kids fetched the key set %d times within the interval, want 1", got)
	}
	impostor := stranger
	impostor.kid = hdr.Kid
	p.expectRefused(t, impostor.sign(t, p.claims(nil), nil), "signature")
}

// publicKeyForms returns the authorization server's public key kid as the
// bytes a confused verifier might use as an HMAC secret: its JWK, its
// PKIX DER and PEM, its modulus.
func (p *protected) publicKeyForms(t *testing.T, kid string) [][]byte {
	t.Helper()
	resp, err := http.Get(p.as.Issuer + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var set struct{ Keys []map[string]any }
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	for _, k := range set.Keys {
		if k["kid"] != kid {
			continue
		}
		jb, _ := json.Marshal(k)
		s := signerFromJWK(t, jb)
		der, err := x509.MarshalPKIXPublicKey(s)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := base64.RawURLEncoding.DecodeString(k["n"].(string))
		return [][]byte{jb, der, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), n, []byte(k["n"].(string))}
	}
	t.Fatalf("no key %q in %s", kid, raw)
	return nil
}

func TestJWTKeyRotation(t *testing.T) {
	p := newProtected(t)
	old := p.as.ClientCredentials(t, "app", "mcp:tools", p.url)
	p.expectOK(t, old, `app|mcp:tools|app`)

	// The server rotates, keeping the old key published: a token of the
	// new key verifies after one refetch, the old one still verifies.
	p.clock.advance(time.Minute)
	newKid, oldKid := p.as.rotate(t, false)
	fresh := p.as.ClientCredentials(t, "app", "mcp:tools", p.url)
	if kidOf(t, fresh) != newKid || kidOf(t, old) != oldKid {
		t.Fatalf("kids %q %q, want %q %q", kidOf(t, fresh), kidOf(t, old), newKid, oldKid)
	}
	before := p.fetches.count("/jwks")
	p.expectOK(t, fresh, `app|mcp:tools|app`)
	p.expectOK(t, old, `app|mcp:tools|app`)
	if got := p.fetches.count("/jwks") - before; got != 1 {
		t.Fatalf("%d fetches for the new key, want 1", got)
	}

	// Rotated again, the previous key retired: once the set is fetched
	// again (the next new kid), tokens of a retired key are refused.
	p.clock.advance(time.Minute)
	newest, retired := p.as.rotate(t, true)
	if retired != newKid {
		t.Fatalf("retired %q, want %q", retired, newKid)
	}
	p.expectOK(t, fresh, `app|mcp:tools|app`) // nothing fetched yet: still known
	p.expectOK(t, p.as.ClientCredentials(t, "app", "mcp:tools", p.url), `app|mcp:tools|app`)
	p.expectRefused(t, fresh, "not in the authorization server's key set")
	p.expectOK(t, old, `app|mcp:tools|app`) // the first key is still published
	_ = newest

	// An ES256 key added to the set verifies the tokens it signs.
	p.clock.advance(time.Minute)
	ec := p.as.addKey(t, "ES256")
	p.expectOK(t, p.as.sign(t, signReq{Kid: ec, Claims: p.claims(nil)}), `alice|mcp:tools|app`)

	// The set ages out: after KeysMaxAge the next token fetches it again.
	before = p.fetches.count("/jwks")
	p.clock.advance(11 * time.Minute)
	p.expectOK(t, old, `app|mcp:tools|app`)
	if got := p.fetches.count("/jwks") - before; got != 1 {
		t.Fatalf("%d fetches of an aged set, want 1", got)
	}
}

func TestJWTAuthorizationServerDown(t *testing.T) {
	p := newProtected(t)
	good := p.as.ClientCredentials(t, "app", "mcp:tools", p.url)
	p.expectOK(t, good, `app|mcp:tools|app`)
	p.as.Stop(t)

	// Known keys still verify (the set is not old).
	p.expectOK(t, good, `app|mcp:tools|app`)
	// An unknown kid cannot be judged: 503, never a 200, not a 401.
	p.clock.advance(time.Minute)
	token := newRSA(t, "rotated-while-down", 2048).sign(t, p.claims(nil), nil)
	resp, body := mcpCall(t, p.url, "Bearer "+token)
	if resp.StatusCode != http.StatusServiceUnavailable || body != `{"error":"temporarily_unavailable"}` {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	_, err := p.verifier.Authenticate(context.Background(), token)
	if !errors.Is(err, mcpoauth.ErrUnavailable) || errors.Is(err, ports.ErrUnauthenticated) {
		t.Fatalf("error %v", err)
	}
	// Within the refetch interval the last failure stands: still 503.
	if _, err := p.verifier.Authenticate(context.Background(), token); !errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
	// An aged set whose refetch fails keeps its keys.
	p.clock.advance(11 * time.Minute)
	p.expectOK(t, good, `app|mcp:tools|app`)

	// A verifier cannot be made without the server.
	_, err = mcpoauth.NewJWTVerifier(context.Background(), mcpoauth.JWTOptions{Issuer: p.as.Issuer, Audience: p.url})
	if !errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
}

func TestMetadataServed(t *testing.T) {
	p := newProtected(t)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(p.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %q %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Cache-Control") != "public, max-age=3600" {
			t.Fatalf("%s: headers %v", path, resp.Header)
		}
		checkMetadataDocument(t, raw, map[string]any{
			"resource":                 p.url,
			"authorization_servers":    []any{p.as.Issuer},
			"scopes_supported":         []any{"mcp:tools", "mcp:admin"},
			"bearer_methods_supported": []any{"header"},
			"resource_name":            "whoami",
		})
	}
	// The authorization server it names is one a client can discover: its
	// metadata names the same issuer.
	resp, err := http.Get(p.as.Issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md struct{ Issuer string }
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil || md.Issuer != p.as.Issuer {
		t.Fatalf("issuer %q: %v", md.Issuer, err)
	}
}

// kidOf returns the kid of a JWS's header.
func kidOf(t *testing.T, token string) string {
	t.Helper()
	hb, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Kid string }
	if err := json.Unmarshal(hb, &h); err != nil {
		t.Fatal(err)
	}
	return h.Kid
}

// TestJWTTokenType sends tokens of the authorization server's own key,
// valid in every claim, whose typ header says they are not access tokens
// (RFC 8725 section 3.11: explicit typing): a security event, a logout
// token, an ID token, a DPoP proof. Each is refused with 401. The types an
// access token has (at+jwt of RFC 9068, JWT that many servers still write,
// in any case and with or without "application/") are accepted.
func TestJWTTokenType(t *testing.T) {
	p := newProtected(t)
	for _, typ := range []string{"secevent+jwt", "logout+jwt", "id_token+jwt", "dpop+jwt", "application/secevent+jwt",
		"token-introspection+jwt", "oauth-authz-req+jwt", "Logout+JWT"} {
		token := p.as.sign(t, signReq{Header: map[string]any{"typ": typ}, Claims: p.claims(nil)})
		p.expectRefused(t, token, "typ")
	}
	for _, typ := range []string{"JWT", "jwt", "application/jwt", "at+jwt", "AT+JWT", "application/at+jwt"} {
		token := p.as.sign(t, signReq{Header: map[string]any{"typ": typ}, Claims: p.claims(nil)})
		p.expectOK(t, token, `alice|mcp:tools|app`)
	}

	// RequireATJWT: only at+jwt.
	strict, err := mcpoauth.NewJWTVerifier(context.Background(), mcpoauth.JWTOptions{Issuer: p.as.Issuer, Audience: p.url, RequireATJWT: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mcphttp.RequireBearer(strict, mcphttp.AuthOptions{Logger: slog.New(slog.DiscardHandler)})(p.srv.Config.Handler))
	defer srv.Close()
	for typ, want := range map[string]int{"at+jwt": http.StatusOK, "application/AT+JWT": http.StatusOK, "JWT": http.StatusUnauthorized,
		"logout+jwt": http.StatusUnauthorized} {
		token := p.as.sign(t, signReq{Header: map[string]any{"typ": typ}, Claims: p.claims(nil)})
		if resp, body := mcpCall(t, srv.URL+"/mcp", "Bearer "+token); resp.StatusCode != want {
			t.Fatalf("RequireATJWT, typ %q: %d %s, want %d", typ, resp.StatusCode, body, want)
		}
	}
}

// authServer is a real OAuth 2.0 authorization server (internal/mockas:
// oauth2-mock-server on Node 22 from testdata/as, on a free loopback port)
// with this package's helpers for its control endpoint.
type authServer struct{ *mockas.Server }

// startAS starts the authorization server for t and stops it when t ends.
// Without `npm ci` in testdata/as it skips t, unless CI is set: then it
// fails (CI runs make deps).
func startAS(t *testing.T) *authServer {
	t.Helper()
	return &authServer{mockas.Start(t, mockas.Options{})}
}

// signReq asks the authorization server to sign a token with its own key
// (kid, or the current one): its default claims (iss, iat, exp, nbf), then
// claims, less remove; header members added to its header.
type signReq struct {
	Kid       string         `json:"kid,omitempty"`
	ExpiresIn int            `json:"expiresIn,omitempty"`
	Header    map[string]any `json:"header,omitempty"`
	Claims    map[string]any `json:"claims,omitempty"`
	Remove    []string       `json:"remove,omitempty"`
}

func (as *authServer) sign(t *testing.T, r signReq) string {
	t.Helper()
	var out struct{ Token string }
	as.Call(t, "/sign", r, &out)
	return out.Token
}

// addKey adds a key of alg to the set (not the one /token signs with).
func (as *authServer) addKey(t *testing.T, alg string) string {
	t.Helper()
	var out struct{ Kid string }
	as.Call(t, "/keys", map[string]any{"alg": alg}, &out)
	return out.Kid
}

// rotate makes a new RS256 key the one /token signs with; retire drops the
// old one from the set.
func (as *authServer) rotate(t *testing.T, retire bool) (kid, old string) {
	t.Helper()
	var out struct{ Kid, Old string }
	as.Call(t, "/rotate", map[string]any{"retire": retire}, &out)
	return out.Kid, out.Old
}

// setIntrospection makes the introspection endpoint answer status and body.
func (as *authServer) setIntrospection(t *testing.T, status int, body any) {
	t.Helper()
	as.Call(t, "/introspection", map[string]any{"statusCode": status, "body": body}, nil)
}

// introspectionAuth returns the Authorization headers the introspection
// endpoint received.
func (as *authServer) introspectionAuth(t *testing.T) []string {
	t.Helper()
	var out struct{ Auth []string }
	as.Call(t, "/introspection-auth", map[string]any{}, &out)
	return out.Auth
}

// TestJWTKeyRotationConcurrent rotates the authorization server's key
// many times while callers with tokens of the new key keep arriving, some
// before the refetch their first caller started has ended, some while it
// ends, some after. Every one of them must be accepted: a caller that
// found the key unknown in the set it read, and asks for a refetch just
// after another caller's refetch brought the key, must look at the new
// set rather than be refused because the refetch interval has not passed.
// Exactly one fetch happens per rotation.
func TestJWTKeyRotationConcurrent(t *testing.T) {
	const (
		rotations = 300
		callers   = 64
	)
	keys := make([]signer, 2)
	tokens := make([]string, 2)
	for i := range keys {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = signer{kid: []string{"even", "odd"}[i], alg: jwa.EdDSA(), key: priv}
		tokens[i] = keys[i].sign(t, testClaims(map[string]any{"exp": time.Now().Add(time.Hour).Unix()}), nil)
	}
	jwks := &jwksServer{}
	jwks.set(keys[1].jwk(t, nil))
	srv := httptest.NewServer(jwks)
	defer srv.Close()
	clock := &fakeClock{}
	v, err := mcpoauth.NewJWTVerifier(context.Background(), mcpoauth.JWTOptions{
		Issuer: testIssuer, Audience: testAudience, JWKSURI: srv.URL, Clock: clock,
		KeysMaxAge: 1000 * time.Hour, // only unknown keys refetch
	})
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int64
	var firstErr atomic.Value
	for r := range rotations {
		// The server publishes only the new key; the verifier may fetch.
		jwks.set(keys[r%2].jwk(t, nil))
		clock.advance(mcpoauth.DefaultRefreshMinInterval)
		token := tokens[r%2]
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				if _, err := v.Authenticate(context.Background(), token); err != nil {
					refused.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			})
		}
		wg.Wait()
	}
	if n := refused.Load(); n > 0 {
		t.Fatalf("%d of %d valid tokens refused over %d rotations; the first: %v", n, rotations*callers, rotations, firstErr.Load())
	}
	if got, want := jwks.fetches.Load(), int32(rotations+1); got != want {
		t.Fatalf("%d fetches of the key set for %d rotations, want %d (one per rotation, one at start)", got, rotations, want)
	}
}
