package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"testing"
)

func TestBearerChallenge(t *testing.T) {
	for _, tc := range []struct {
		header []string
		want   map[string]string
	}{
		{[]string{`Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/.well-known/oauth-protected-resource"`},
			map[string]string{"error": "insufficient_scope", "scope": "a b", "resource_metadata": "https://x/.well-known/oauth-protected-resource"}},
		{[]string{`Basic realm="x", DPoP algs="ES256", bearer Scope=read, error="a\"b"`},
			map[string]string{"scope": "read", "error": `a"b`}},
		{[]string{`Negotiate abc123==`, `Bearer`}, map[string]string{}},
		// A token68 is skipped whole, '/' and '=' in it: no part of it is
		// taken for a challenge, and the one after it is read.
		{[]string{`Negotiate Bearer/Zm9v==`}, nil},
		{[]string{`Negotiate YII/Aw==, Bearer error="invalid_token"`}, map[string]string{"error": "invalid_token"}},
		{[]string{`Negotiate abc==, Bearer error="x"`}, map[string]string{"error": "x"}},
		{[]string{`Negotiate /abc, Bearer error="x"`}, map[string]string{"error": "x"}},
		{[]string{`Negotiate abc=, Bearer error="x"`}, map[string]string{"error": "x"}},
		{[]string{`Negotiate abc, Bearer error="x"`}, map[string]string{"error": "x"}},
		{[]string{`Bearer realm="r", error=invalid_token`}, map[string]string{"realm": "r", "error": "invalid_token"}},
		{[]string{`Basic realm="x"`}, nil},
		{[]string{`DPoP error="use_dpop_nonce", resource_metadata="https://x/m"`},
			map[string]string{"error": "use_dpop_nonce", "resource_metadata": "https://x/m"}},
	} {
		h := http.Header{"Www-Authenticate": tc.header}
		c := bearerChallenge(h)
		if c.found != (tc.want != nil) || (tc.want != nil && !reflect.DeepEqual(c.params, tc.want)) {
			t.Errorf("%q: %v %v, want %v", tc.header, c.found, c.params, tc.want)
		}
	}
}

func TestWellKnownURLs(t *testing.T) {
	u, _ := url.Parse("https://as.example/tenant/1")
	want := []string{"https://as.example/.well-known/oauth-authorization-server/tenant/1",
		"https://as.example/.well-known/openid-configuration/tenant/1", "https://as.example/tenant/1/.well-known/openid-configuration"}
	if got := wellKnownServerURLs(u); !reflect.DeepEqual(got, want) {
		t.Errorf("%q", got)
	}
	u, _ = url.Parse("https://as.example")
	want = []string{"https://as.example/.well-known/oauth-authorization-server", "https://as.example/.well-known/openid-configuration"}
	if got := wellKnownServerURLs(u); !reflect.DeepEqual(got, want) {
		t.Errorf("%q", got)
	}
	u, _ = url.Parse("https://MCP.example/mcp/")
	want = []string{"https://MCP.example/.well-known/oauth-protected-resource/mcp", "https://MCP.example/.well-known/oauth-protected-resource"}
	if got := wellKnownResourceURLs(u); !reflect.DeepEqual(got, want) {
		t.Errorf("%q", got)
	}
}

func TestResourceMatches(t *testing.T) {
	for _, tc := range []struct {
		prm, res string
		ok       bool
	}{
		{"https://mcp.example/mcp", "https://mcp.example/mcp", true},
		{"https://MCP.example/mcp/", "https://mcp.example/mcp", true},
		{"https://mcp.example", "https://mcp.example/mcp", true},
		{"https://mcp.example/m", "https://mcp.example/mcp", false},
		{"https://mcp.example/other", "https://mcp.example/mcp", false},
		{"https://evil.example/mcp", "https://mcp.example/mcp", false},
		{"http://mcp.example/mcp", "https://mcp.example/mcp", false},
		{"https://mcp.example/mcp?x=1", "https://mcp.example/mcp", false},
	} {
		if got := resourceMatches(tc.prm, tc.res); got != tc.ok {
			t.Errorf("%s for %s: %v", tc.prm, tc.res, got)
		}
	}
}

func TestSecureURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://as.example/x": true, "http://127.0.0.1:8080/x": true, "http://localhost/x": true, "http://[::1]/x": true,
		"http://as.example/x": false, "ftp://as.example": false, "https://u:p@as.example": false, "/relative": false, "https://as.example#f": false,
	} {
		if _, err := secureURL("x", raw); (err == nil) != ok {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

// TestAuthMethod: a client with a secret uses client_secret_basic unless
// the server supports only client_secret_post (RFC 8414's default is
// basic); a client without one uses none.
func TestAuthMethod(t *testing.T) {
	for _, tc := range []struct {
		secret    string
		supported []string
		want      string
	}{
		{"s", nil, "client_secret_basic"},
		{"s", []string{"client_secret_post", "client_secret_basic"}, "client_secret_basic"},
		{"s", []string{"client_secret_post"}, "client_secret_post"},
		{"s", []string{"private_key_jwt"}, "client_secret_basic"},
		{"", []string{"client_secret_basic"}, "none"},
	} {
		if got := authMethod(tc.secret, tc.supported); got != tc.want {
			t.Errorf("authMethod(%q, %q) = %q, want %q", tc.secret, tc.supported, got, tc.want)
		}
	}
}

// TestSameHostRedirects: redirects are followed on the first request's
// scheme and host only, five at the most.
func TestSameHostRedirects(t *testing.T) {
	req := func(raw string) *http.Request {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Request{URL: u}
	}
	first := []*http.Request{req("https://as.example/authorize")}
	if err := sameHostRedirects(req("https://as.example/other"), first); err != nil {
		t.Errorf("a redirect on the same host: %v", err)
	}
	for _, to := range []string{"https://elsewhere.example/x", "http://as.example/x"} {
		if err := sameHostRedirects(req(to), first); err == nil {
			t.Errorf("a redirect to %s is followed", to)
		}
	}
	five := []*http.Request{first[0], first[0], first[0], first[0], first[0]}
	if err := sameHostRedirects(req("https://as.example/6"), five); err == nil {
		t.Error("a sixth redirect is followed")
	}
}

// TestIsTokenChar: RFC 9110's tchar, the digits at both ends included.
func TestIsTokenChar(t *testing.T) {
	for _, c := range []byte("azAZ09!#$%&'*+-.^_`|~") {
		if !isTokenChar(c) {
			t.Errorf("%q is a token character", c)
		}
	}
	for _, c := range []byte(" \t\",;=()/:@[]{}\x00\x7f") {
		if isTokenChar(c) {
			t.Errorf("%q is not a token character", c)
		}
	}
}

// TestSignJWTUnencodable: a header or claims that JSON cannot encode are
// signJWT's error, not a JWT without them.
func TestSignJWTUnencodable(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]any{"x": math.NaN()}
	if s, err := signJWT(key, nil, bad); err == nil {
		t.Errorf("claims with NaN: %q", s)
	}
	if s, err := signJWT(key, bad, map[string]any{}); err == nil {
		t.Errorf("a header with NaN: %q", s)
	}
}
