package mcpoauth_test

import (
	"context"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"

	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
	"github.com/hexmcp/hexmcp/ports"
)

const (
	testIssuer   = "https://auth.example.com"
	testAudience = "https://mcp.example.com/mcp"
)

// keyed is a JWTVerifier over a JWK set the test serves and changes.
type keyed struct {
	v     ports.Authenticator
	jwks  *jwksServer
	clock *fakeClock
}

func newKeyed(t *testing.T, change func(*mcpoauth.JWTOptions), keys ...map[string]any) *keyed {
	t.Helper()
	k := &keyed{jwks: &jwksServer{}, clock: &fakeClock{}}
	k.jwks.set(keys...)
	srv := httptest.NewServer(k.jwks)
	t.Cleanup(srv.Close)
	opts := mcpoauth.JWTOptions{Issuer: testIssuer, Audience: testAudience, JWKSURI: srv.URL + "/jwks", Clock: k.clock}
	if change != nil {
		change(&opts)
	}
	v, err := mcpoauth.NewJWTVerifier(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	k.v = v
	return k
}

func testClaims(over map[string]any) map[string]any {
	now := time.Now().Unix()
	return overlay(map[string]any{"iss": testIssuer, "aud": testAudience, "sub": "alice", "exp": now + 300, "iat": now}, over)
}

func (k *keyed) refused(t *testing.T, token, reason string) {
	t.Helper()
	_, err := k.v.Authenticate(context.Background(), token)
	if !errors.Is(err, ports.ErrUnauthenticated) || errors.Is(err, mcpoauth.ErrUnavailable) || !strings.Contains(err.Error(), reason) {
		t.Fatalf("error %v, want one about %q", err, reason)
	}
}

func (k *keyed) accepted(t *testing.T, token string) ports.Principal {
	t.Helper()
	p, err := k.v.Authenticate(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestJWTClaims(t *testing.T) {
	rs := newRSA(t, "rs", 2048)
	k := newKeyed(t, func(o *mcpoauth.JWTOptions) { o.Claims = []string{"email", "groups", "missing"} }, rs.jwk(t, map[string]any{"use": "sig", "alg": "RS256"}))
	now := time.Now()

	claims := testClaims(map[string]any{"scope": "a b a", "scp": "b c", "client_id": "app", "azp": "app2",
		"email": "a@example.com", "groups": []string{"g"}, "secret_token": "no"})
	p := k.accepted(t, rs.sign(t, claims, nil))
	want := ports.Principal{Subject: "alice", Scopes: []string{"a", "b", "c"},
		Claims:  map[string]any{"client_id": "app", "azp": "app2", "email": "a@example.com", "groups": []any{"g"}},
		Expires: time.Unix(claims["exp"].(int64), 0).Add(mcpoauth.DefaultLeeway)} // refused from then on
	if !p.Expires.Equal(want.Expires) {
		t.Fatalf("expires %v, want %v", p.Expires, want.Expires)
	}
	p.Expires = want.Expires // the same instant, without the monotonic reading
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("principal %+v, want %+v", p, want)
	}

	// Leeway (30 s by default) on each side.
	k.accepted(t, rs.sign(t, testClaims(map[string]any{"exp": now.Add(-20 * time.Second).Unix()}), nil))
	k.refused(t, rs.sign(t, testClaims(map[string]any{"exp": now.Add(-40 * time.Second).Unix()}), nil), "expired")
	k.accepted(t, rs.sign(t, testClaims(map[string]any{"nbf": now.Add(20 * time.Second).Unix()}), nil))
	k.refused(t, rs.sign(t, testClaims(map[string]any{"nbf": now.Add(40 * time.Second).Unix()}), nil), "not valid before")
	k.accepted(t, rs.sign(t, testClaims(map[string]any{"iat": now.Add(20 * time.Second).Unix()}), nil))
	k.refused(t, rs.sign(t, testClaims(map[string]any{"iat": now.Add(40 * time.Second).Unix()}), nil), "issued in the future")
	k.accepted(t, rs.sign(t, testClaims(map[string]any{"exp": float64(now.Unix()) + 100.5}), nil))

	for name, c := range map[string]struct {
		claims map[string]any
		reason string
	}{
		"no exp":           {map[string]any{"exp": nil}, "no expiry"},
		"string exp":       {map[string]any{"exp": "tomorrow"}, "NumericDate"},
		"negative exp":     {map[string]any{"exp": -1}, "NumericDate"},
		"no iss":           {map[string]any{"iss": nil}, "issuer"},
		"other iss":        {map[string]any{"iss": "https://auth.example.com/"}, "issuer"},
		"numeric iss":      {map[string]any{"iss": 5}, "not a string"},
		"no aud":           {map[string]any{"aud": nil}, "not for this resource"},
		"other aud":        {map[string]any{"aud": "https://mcp.example.com/other"}, "not for this resource"},
		"aud prefix":       {map[string]any{"aud": "https://mcp.example.com"}, "not for this resource"},
		"numeric aud":      {map[string]any{"aud": 5}, "neither a string nor an array"},
		"no sub":           {map[string]any{"sub": nil}, "no subject"},
		"empty sub":        {map[string]any{"sub": ""}, "no subject"},
		"numeric sub":      {map[string]any{"sub": 5}, "not a string"},
		"numeric scope":    {map[string]any{"scope": 5}, "scope"},
		"scp of numbers":   {map[string]any{"scp": []int{1}}, "scp"},
		"aud of numbers":   {map[string]any{"aud": []any{testAudience, 1}}, "aud"},
		"nbf not a number": {map[string]any{"nbf": true}, "NumericDate"},
	} {
		t.Run(name, func(t *testing.T) { k.refused(t, rs.sign(t, testClaims(c.claims), nil), c.reason) })
	}
	// Audiences spelled differently that name this resource.
	for _, aud := range []any{"HTTPS://MCP.EXAMPLE.COM/mcp", "https://mcp.example.com:443/mcp", []string{"x", testAudience}} {
		k.accepted(t, rs.sign(t, testClaims(map[string]any{"aud": aud}), nil))
	}

	// Claims JSON with duplicate names (two readers could disagree) and
	// payloads that are not objects, all properly signed.
	for name, payload := range map[string]string{
		"duplicate aud": fmt.Sprintf(`{"iss":%q,"aud":"https://other.example","aud":%q,"sub":"a","exp":%d}`, testIssuer, testAudience, now.Unix()+60),
		"duplicate exp": fmt.Sprintf(`{"iss":%q,"aud":%q,"sub":"a","exp":%d,"exp":%d}`, testIssuer, testAudience, now.Unix()+60, now.Unix()-3600),
		"array":         `[]`,
		"null":          `null`,
		"not json":      `hello`,
	} {
		t.Run(name, func(t *testing.T) { k.refused(t, rs.signRaw(t, payload), "claims") })
	}
}

func TestJWTHeadersAndKeys(t *testing.T) {
	rs := newRSA(t, "rs", 2048)
	ec := newEC(t, "ec", elliptic.P256(), jwa.ES256())
	ec384 := newEC(t, "ec384", elliptic.P384(), jwa.ES384())
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_ = pub
	ed := signer{kid: "ed", alg: jwa.EdDSA(), key: priv}
	small := newRSA(t, "small", 1024)
	oct := map[string]any{"kty": "oct", "kid": "oct", "k": base64.RawURLEncoding.EncodeToString([]byte("a shared secret of 32 bytes!!!!!")), "alg": "HS256"}
	enc := newRSA(t, "enc", 2048)
	k := newKeyed(t, nil,
		rs.jwk(t, nil), ec.jwk(t, map[string]any{"alg": "ES256"}), ec384.jwk(t, nil), ed.jwk(t, nil), rsaJWK(small), oct,
		enc.jwk(t, map[string]any{"use": "enc"}), map[string]any{"kty": "AKP", "kid": "future", "alg": "ML-DSA-44", "pub": "AAAA"})

	for _, s := range []signer{rs, ec, ec384, ed} {
		k.accepted(t, s.sign(t, testClaims(nil), nil))
	}
	// PS256 and RS512 with the RSA key (its JWK names no alg).
	for _, alg := range []jwa.SignatureAlgorithm{jwa.PS256(), jwa.RS512()} {
		s := rs
		s.alg = alg
		k.accepted(t, s.sign(t, testClaims(nil), nil))
	}
	// The EC key's JWK says ES256: a token claiming ES384 with its kid is
	// refused, as is ES384 on a P-256 key or ES256 on P-384.
	k.refused(t, signed(t, ec384, "ec", testClaims(nil)), "does not fit")
	k.refused(t, signed(t, ec, "ec384", testClaims(nil)), "does not fit")
	// RSA kid, EC signature.
	k.refused(t, signed(t, ec, "rs", testClaims(nil)), "does not fit")
	// Keys that are never used: an HMAC secret, a small RSA key, an
	// encryption key, a key type the package does not know.
	mac := signer{kid: "oct", alg: jwa.HS256()}
	k.refused(t, mac.signHMAC(t, []byte("a shared secret of 32 bytes!!!!!"), testClaims(nil)), `algorithm "HS256"`)
	k.refused(t, small.sign(t, testClaims(nil), nil), "not in the authorization server's key set")
	k.refused(t, enc.sign(t, testClaims(nil), nil), "not in the authorization server's key set")

	// Headers.
	k.refused(t, rs.sign(t, testClaims(nil), map[string]any{"crit": []string{"exp"}, "exp": 1}), "crit")
	k.refused(t, rs.sign(t, testClaims(nil), map[string]any{"b64": true}), "b64")
	noKid := rs
	noKid.kid = ""
	// No kid: of the RSA keys only rs is usable (small and enc are out).
	k.accepted(t, noKid.sign(t, testClaims(nil), nil))
	noKidEC := ec
	noKidEC.kid = ""
	k.accepted(t, noKidEC.sign(t, testClaims(nil), nil))
	k.refused(t, "a.b", "compact")                              // two parts
	k.refused(t, "a.b.c.d.e", "compact")                        // a JWE
	k.refused(t, "!!!.b.c", "base64")                           // not base64url
	k.refused(t, rawJWS(`{"alg":"RS256"`, "{}", nil), "header") // not JSON
	k.refused(t, rawJWS(`{"alg":"RS256","alg":"none"}`, "{}", nil), "header")
	k.refused(t, rawJWS(`{"alg":"HS512","kid":"rs"}`, "{}", []byte("x")), `algorithm "HS512"`)
	k.refused(t, rawJWS(`{"kid":"rs"}`, "{}", []byte("x")), `algorithm ""`)
	k.refused(t, strings.Repeat("a", mcpoauth.DefaultMaxTokenBytes+1), "longer than")
	// A key in the token's own header is not trusted.
	stranger := newRSA(t, "rs", 2048)
	k.refused(t, stranger.sign(t, testClaims(nil), map[string]any{"jwk": stranger.jwk(t, nil)}), "signature")

	// Without a kid, the one key that fits verifies.
	single := newKeyed(t, nil, rs.jwk(t, nil), ec.jwk(t, nil))
	single.accepted(t, noKid.sign(t, testClaims(nil), nil))
	two := newRSA(t, "", 2048)
	ambiguous := newKeyed(t, nil, rs.jwk(t, nil), two.jwk(t, nil))
	ambiguous.refused(t, noKid.sign(t, testClaims(nil), nil), "2 keys fit")

	// typ: none, JWT and at+jwt are access tokens; a non-string typ is
	// refused. RequireATJWT refuses the first two.
	if h := headerOf(t, rs.sign(t, testClaims(nil), nil)); h["typ"] != nil {
		t.Fatalf("the test's tokens have a typ: %v", h)
	}
	k.refused(t, rawJWS(`{"alg":"RS256","kid":"rs","typ":5}`, "{}", []byte("x")), "header")
	k.refused(t, rs.sign(t, testClaims(nil), map[string]any{"typ": "application/x/at+jwt"}), "typ")
	atJWT := newKeyed(t, func(o *mcpoauth.JWTOptions) { o.RequireATJWT = true }, rs.jwk(t, nil))
	atJWT.refused(t, rs.sign(t, testClaims(nil), nil), "no typ")
	atJWT.refused(t, rs.sign(t, testClaims(nil), map[string]any{"typ": "JWT"}), `typ is "JWT"`)
	atJWT.accepted(t, rs.sign(t, testClaims(nil), map[string]any{"typ": "at+jwt"}))

	// An allow-list narrower than the default.
	only := newKeyed(t, func(o *mcpoauth.JWTOptions) { o.Algorithms = []string{"ES256"} }, rs.jwk(t, nil), ec.jwk(t, nil))
	only.accepted(t, ec.sign(t, testClaims(nil), nil))
	only.refused(t, rs.sign(t, testClaims(nil), nil), `algorithm "RS256" is not allowed`)
}

// headerOf returns the protected header of a JWS.
func headerOf(t *testing.T, token string) map[string]any {
	t.Helper()
	hb, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(hb, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// validKeySet returns the JSON of a key set holding s's public key.
func validKeySet(t *testing.T, s signer) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"keys": []any{s.jwk(t, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestJWTMaxTokenBytes: a token of exactly MaxTokenBytes is verified, one
// byte more is refused before anything else is read.
func TestJWTMaxTokenBytes(t *testing.T) {
	rs := newRSA(t, "rs", 2048)
	token := rs.sign(t, testClaims(nil), nil)
	exact := newKeyed(t, func(o *mcpoauth.JWTOptions) { o.MaxTokenBytes = len(token) }, rs.jwk(t, nil))
	exact.accepted(t, token)
	short := newKeyed(t, func(o *mcpoauth.JWTOptions) { o.MaxTokenBytes = len(token) - 1 }, rs.jwk(t, nil))
	short.refused(t, token, "longer than")
}

// TestJWTKeySetCutShort: a key set whose answer ends before the length it
// announced is unavailable, even when what arrived decodes as a key set.
func TestJWTKeySetCutShort(t *testing.T) {
	rs := newRSA(t, "rs", 2048)
	body := validKeySet(t, rs)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)+10))
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	_, err := mcpoauth.NewJWTVerifier(context.Background(), mcpoauth.JWTOptions{Issuer: testIssuer, Audience: testAudience, JWKSURI: srv.URL})
	if !errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("a key set cut short: %v, want ErrUnavailable", err)
	}
}

// rsaJWK writes the public JWK of an RSA signer by hand (jwk.Import
// refuses keys under 2048 bits).
func rsaJWK(s signer) map[string]any {
	pub := s.key.Public().(*rsa.PublicKey)
	return map[string]any{"kty": "RSA", "kid": s.kid, "n": base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes())}
}

// signed signs claims with s under another key's kid.
func signed(t *testing.T, s signer, kid string, claims map[string]any) string {
	t.Helper()
	s.kid = kid
	return s.sign(t, claims, nil)
}

func TestJWTOptions(t *testing.T) {
	rs := newRSA(t, "rs", 2048)
	jwks := &jwksServer{}
	jwks.set(rs.jwk(t, nil))
	srv := httptest.NewServer(jwks)
	defer srv.Close()
	ctx := context.Background()
	base := mcpoauth.JWTOptions{Issuer: testIssuer, Audience: testAudience, JWKSURI: srv.URL}
	for name, change := range map[string]func(*mcpoauth.JWTOptions){
		"none":        func(o *mcpoauth.JWTOptions) { o.Algorithms = []string{"RS256", "none"} },
		"HS256":       func(o *mcpoauth.JWTOptions) { o.Algorithms = []string{"HS256"} },
		"unknown alg": func(o *mcpoauth.JWTOptions) { o.Algorithms = []string{"RS1"} },
		"no audience": func(o *mcpoauth.JWTOptions) { o.Audience = "" },
		"no issuer":   func(o *mcpoauth.JWTOptions) { o.Issuer = "" },
		"http jwks":   func(o *mcpoauth.JWTOptions) { o.JWKSURI = "http://keys.example/jwks" },
	} {
		o := base
		change(&o)
		if _, err := mcpoauth.NewJWTVerifier(ctx, o); err == nil {
			t.Fatalf("%s: accepted", name)
		}
	}
	// Key sets that cannot be used.
	for name, body := range map[string]string{
		"not json":  "<html>",
		"no keys":   `{}`,
		"too many":  `{"keys":[` + strings.TrimSuffix(strings.Repeat(`{"kty":"oct","k":"AA"},`, mcpoauth.MaxKeys+1), ",") + `]}`,
		"too large": `{"keys":[],"pad":"` + strings.Repeat("x", mcpoauth.DefaultMaxResponseBytes) + `"}`,
		// A usable key set whose first MaxResponseBytes bytes decode
		// alone: the bound refuses it, not the JSON decoder.
		"too large, its head valid": validKeySet(t, rs) + strings.Repeat(" ", mcpoauth.DefaultMaxResponseBytes),
	} {
		jwks.mu.Lock()
		jwks.body = body
		jwks.mu.Unlock()
		if _, err := mcpoauth.NewJWTVerifier(ctx, base); !errors.Is(err, mcpoauth.ErrUnavailable) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if !reflect.DeepEqual(mcpoauth.DefaultAlgorithms, []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"}) ||
		mcpoauth.DefaultLeeway != 30*time.Second || mcpoauth.DefaultRefreshMinInterval != 10*time.Second || mcpoauth.DefaultKeysMaxAge != time.Hour ||
		mcpoauth.DefaultMaxTokenBytes != 16<<10 {
		t.Fatal("defaults changed: update the README")
	}
}

func TestJWTKeyRefetch(t *testing.T) {
	a := newRSA(t, "a", 2048)
	b := newRSA(t, "b", 2048)
	k := newKeyed(t, nil, a.jwk(t, nil))
	if got := k.jwks.fetches.Load(); got != 1 {
		t.Fatalf("%d fetches at start", got)
	}
	k.accepted(t, a.sign(t, testClaims(nil), nil))
	// b appears: within the interval after the first fetch, not fetched.
	k.jwks.set(a.jwk(t, nil), b.jwk(t, nil))
	k.refused(t, b.sign(t, testClaims(nil), nil), "not in")
	if got := k.jwks.fetches.Load(); got != 1 {
		t.Fatalf("%d fetches within the interval", got)
	}
	k.clock.advance(mcpoauth.DefaultRefreshMinInterval)
	// Many requests at once naming b: one fetch, all accepted.
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	token := b.sign(t, testClaims(nil), nil)
	for range 20 {
		wg.Go(func() {
			if _, err := k.v.Authenticate(context.Background(), token); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := k.jwks.fetches.Load(); got != 2 {
		t.Fatalf("%d fetches for 20 concurrent tokens of a new key, want 2", got)
	}
	// The set fails to load: known keys go on, an unknown one is 503.
	k.jwks.mu.Lock()
	k.jwks.status = 500
	k.jwks.mu.Unlock()
	k.clock.advance(mcpoauth.DefaultRefreshMinInterval)
	c := newRSA(t, "c", 2048)
	if _, err := k.v.Authenticate(context.Background(), c.sign(t, testClaims(nil), nil)); !errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
	k.accepted(t, a.sign(t, testClaims(nil), nil))
	// A caller that gives up waiting is told the set is unavailable; the
	// fetch goes on for the others.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	k.clock.advance(mcpoauth.DefaultRefreshMinInterval)
	if _, err := k.v.Authenticate(ctx, c.sign(t, testClaims(nil), nil)); !errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
}

// TestJWTLazy makes a Lazy verifier while its authorization server drops
// every connection: it is made at once; every token, with a kid or
// without, is unavailable (never refused as if it were bad) with the time
// until the next fetch as RetryAfter; a metadata document that names
// another issuer is unavailable too. Once the server answers, the next
// fetch the rate limit allows brings the keys.
func TestJWTLazy(t *testing.T) {
	rs := newRSA(t, "rs", 2048)
	var mu sync.Mutex
	up, mdIssuer := false, ""
	jwks := &jwksServer{}
	jwks.set(rs.jwk(t, nil))
	var issuer string
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		isUp, name := up, mdIssuer
		mu.Unlock()
		if !isUp {
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = c.Close()
			}
			return
		}
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": name, "jwks_uri": issuer + "/jwks"})
		case "/jwks":
			jwks.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	defer as.Close()
	issuer = as.URL
	clock := &fakeClock{}
	v, err := mcpoauth.NewJWTVerifier(context.Background(), mcpoauth.JWTOptions{Issuer: issuer, Audience: testAudience, Clock: clock, Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	claims := testClaims(map[string]any{"iss": issuer})
	noKid := rs
	noKid.kid = ""
	unavailable := func(token string) {
		t.Helper()
		_, err := v.Authenticate(context.Background(), token)
		var ra interface{ RetryAfter() time.Duration }
		if !errors.Is(err, mcpoauth.ErrUnavailable) || errors.Is(err, ports.ErrUnauthenticated) || !errors.As(err, &ra) ||
			ra.RetryAfter() < time.Second || ra.RetryAfter() > mcpoauth.DefaultRefreshMinInterval {
			t.Fatalf("error %v", err)
		}
	}
	unavailable(rs.sign(t, claims, nil))
	unavailable(noKid.sign(t, claims, nil))
	// A token that is bad on its face is refused without the keys.
	if _, err := v.Authenticate(context.Background(), "a.b"); !errors.Is(err, ports.ErrUnauthenticated) {
		t.Fatalf("error %v", err)
	}

	// Back, but its metadata names another issuer: still unavailable.
	mu.Lock()
	up, mdIssuer = true, "https://other.example"
	mu.Unlock()
	clock.advance(mcpoauth.DefaultRefreshMinInterval)
	unavailable(rs.sign(t, claims, nil))
	// Within the interval, nothing is fetched.
	mu.Lock()
	mdIssuer = issuer
	mu.Unlock()
	unavailable(rs.sign(t, claims, nil))
	if n := jwks.fetches.Load(); n != 0 {
		t.Fatalf("%d fetches of the key set", n)
	}
	// The next fetch allowed brings the keys.
	clock.advance(mcpoauth.DefaultRefreshMinInterval)
	if _, err := v.Authenticate(context.Background(), noKid.sign(t, claims, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Authenticate(context.Background(), rs.sign(t, claims, nil)); err != nil {
		t.Fatal(err)
	}
	if n := jwks.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches of the key set, want 1", n)
	}
}
