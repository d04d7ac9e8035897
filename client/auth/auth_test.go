package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/client/auth"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

const redirectURL = "http://127.0.0.1/callback"

// client returns an http.Client on an auth.Transport with opts (Base: the
// setup's recorder; an Authorizer that follows the redirect).
func (s *setup) client(t *testing.T, opts auth.Options) (*http.Client, *auth.Transport) {
	t.Helper()
	opts.Base = s.rec
	if opts.RedirectURL == "" && !opts.ClientCredentials {
		opts.RedirectURL = redirectURL
	}
	if opts.Authorizer == nil && !opts.ClientCredentials {
		opts.Authorizer = auth.HeadlessAuthorizer(nil)
	}
	tr, err := auth.NewTransport(opts)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Client(), tr
}

// wantReason calls tool and wants the flow to fail with reason.
func wantReason(t *testing.T, c *http.Client, u string, reason auth.Reason) *auth.Error {
	t.Helper()
	_, _, err := callTool(c, u, "whoami")
	var e *auth.Error
	if !errors.As(err, &e) || e.Reason != reason || !errors.Is(err, &auth.Error{Reason: reason}) {
		t.Fatalf("error %v, want an *auth.Error with reason %s", err, reason)
	}
	return e
}

// find returns the requests of as that start with prefix, parsed.
func find(reqs []string, prefix string) []url.Values {
	var out []url.Values
	for _, r := range reqs {
		if rest, ok := strings.CutPrefix(r, prefix+" "); ok {
			v, _ := url.ParseQuery(rest)
			out = append(out, v)
		}
	}
	return out
}

func TestDynamicRegistrationPKCEResourceIss(t *testing.T) {
	s := newSetup(t, asConfig{path: "/tenant", registration: true, issSupported: true}, serverOpts{})
	c, _ := s.client(t, auth.Options{ClientName: "test"})
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	reqs := s.as.requests()
	if len(reqs) != 3 || !strings.HasPrefix(reqs[0], "register authorization_code,refresh_token none native") {
		t.Fatalf("the AS saw %q", reqs)
	}
	a, tok := find(reqs, "authorize")[0], find(reqs, "token")[0]
	if a.Get("resource") != s.mcp.url || tok.Get("resource") != s.mcp.url || a.Get("code_challenge_method") != "S256" ||
		a.Get("scope") != "mcp:tools" || a.Get("state") == "" || tok.Get("code_verifier") == "" || !strings.HasPrefix(a.Get("client_id"), "dyn-") {
		t.Fatalf("authorize %v, token %v", a, tok)
	}
	lines := s.rec.lines()
	want := []string{"POST /mcp 401", "GET /.well-known/oauth-protected-resource/mcp 200",
		"GET /.well-known/oauth-authorization-server/tenant 200", "POST /tenant/register 201",
		"POST /tenant/token grant_type=authorization_code 200", "POST /mcp 200"}
	if !slices.Equal(lines, want) {
		t.Fatalf("requests %q, want %q", lines, want)
	}
	// The token is kept: no new flow.
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	if l := s.rec.lines(); !slices.Equal(l, []string{"POST /mcp 200"}) {
		t.Fatalf("requests %q", l)
	}
}

func TestPreRegisteredConfidential(t *testing.T) {
	for _, methods := range [][]string{nil, {"client_secret_post"}} {
		s := newSetup(t, asConfig{authMethods: methods}, serverOpts{noChallengeURL: true})
		s.as.addClient("app", "s3cr/t", redirectURL)
		c, _ := s.client(t, auth.Options{ClientID: "app", ClientSecret: "s3cr/t"})
		wantTool(t, c, s.mcp.url, "whoami", "app|mcp:tools")
		tok := find(s.as.requests(), "token")[0]
		if post := tok.Get("client_secret") != ""; post != (methods != nil) {
			t.Fatalf("methods %v: token request %v", methods, tok)
		}
	}
}

func TestClientIDMetadataDocument(t *testing.T) {
	var docURL string
	doc := http.NewServeMux()
	doc.HandleFunc("/client.json", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"client_id": docURL, "client_name": "test", "redirect_uris": []string{redirectURL}})
	})
	ds := newServer(t, doc)
	docURL = ds + "/client.json"
	s := newSetup(t, asConfig{cimd: true, registration: true}, serverOpts{})
	c, _ := s.client(t, auth.Options{ClientMetadataURL: docURL})
	wantTool(t, c, s.mcp.url, "whoami", docURL+"|mcp:tools")
	reqs := s.as.requests()
	if find(reqs, "register") != nil || find(reqs, "authorize")[0].Get("client_id") != docURL {
		t.Fatalf("the AS saw %q", reqs)
	}
}

func TestDiscoveryOpenIDWithPath(t *testing.T) {
	s := newSetup(t, asConfig{path: "/t1", openIDOnly: true, registration: true}, serverOpts{})
	c, _ := s.client(t, auth.Options{})
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	lines := s.rec.lines()
	want := []string{"GET /.well-known/oauth-authorization-server/t1 404", "GET /.well-known/openid-configuration/t1 200"}
	if !slices.Equal(lines[2:4], want) {
		t.Fatalf("requests %q", lines)
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    asConfig
		so     serverOpts
		reason auth.Reason
		// authorized: the AS saw the authorization request (no token
		// request ever follows a refusal).
		authorized bool
	}{
		{"wrong issuer", asConfig{wrongIssuer: true}, serverOpts{}, auth.ReasonIssuerMismatch, false},
		{"wrong resource", asConfig{}, serverOpts{metadataResource: "http://127.0.0.1:1/mcp"}, auth.ReasonResourceMismatch, false},
		{"plain PKCE only", asConfig{noS256: true}, serverOpts{}, auth.ReasonPKCEUnsupported, false},
		{"no PKCE methods", asConfig{noPKCEField: true}, serverOpts{}, auth.ReasonPKCEUnsupported, false},
		{"forged state", asConfig{wrongState: true}, serverOpts{}, auth.ReasonStateMismatch, true},
		{"wrong iss", asConfig{iss: "https://evil.example"}, serverOpts{}, auth.ReasonIssMismatch, true},
		{"wrong iss unadvertised", asConfig{iss: "http://127.0.0.1"}, serverOpts{}, auth.ReasonIssMismatch, true},
		{"no iss though advertised", asConfig{iss: "none", issSupported: true}, serverOpts{}, auth.ReasonIssMismatch, true},
		{"no client", asConfig{}, serverOpts{}, auth.ReasonNoClient, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, tc.cfg, tc.so)
			opts := auth.Options{ClientID: "app"}
			if tc.reason == auth.ReasonNoClient {
				opts.ClientID = ""
			}
			s.as.addClient("app", "", redirectURL)
			c, _ := s.client(t, opts)
			wantReason(t, c, s.mcp.url, tc.reason)
			reqs := s.as.requests()
			if find(reqs, "token") != nil || (find(reqs, "authorize") != nil) != tc.authorized {
				t.Fatalf("the AS saw %q", reqs)
			}
		})
	}
}

func TestIssUnadvertisedAbsentProceeds(t *testing.T) {
	s := newSetup(t, asConfig{iss: "none"}, serverOpts{})
	s.as.addClient("app", "", redirectURL)
	c, _ := s.client(t, auth.Options{ClientID: "app"})
	wantTool(t, c, s.mcp.url, "whoami", "app|mcp:tools")
}

func TestInsecureAuthorizationServer(t *testing.T) {
	s := newSetup(t, asConfig{}, serverOpts{customIssuer: "http://as.example"})
	c, _ := s.client(t, auth.Options{ClientID: "app"})
	wantReason(t, c, s.mcp.url, auth.ReasonInsecureURL)
	if l := s.rec.lines(); count(l, "as.example") != 0 {
		t.Fatalf("requests %q", l)
	}
}

func TestStepUp(t *testing.T) {
	s := newSetup(t, asConfig{registration: true}, serverOpts{})
	c, _ := s.client(t, auth.Options{})
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	s.as.requests()
	s.rec.lines()
	wantTool(t, c, s.mcp.url, "admin", "|mcp:tools,mcp:admin")
	a := find(s.as.requests(), "authorize")
	if len(a) != 1 || a[0].Get("scope") != "mcp:tools mcp:admin" {
		t.Fatalf("authorizations %v", a)
	}
	if l := s.rec.lines(); l[0] != "POST /mcp 403" || l[len(l)-1] != "POST /mcp 200" || count(l, "/register") != 0 {
		t.Fatalf("requests %q", l)
	}
}

func TestStepUpLimit(t *testing.T) {
	s := newSetup(t, asConfig{registration: true, grantOnly: []string{"mcp:tools"}}, serverOpts{})
	c, _ := s.client(t, auth.Options{MaxStepUps: 3})
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	s.as.requests()
	_, _, err := callTool(c, s.mcp.url, "admin")
	if !errors.Is(err, &auth.Error{Reason: auth.ReasonStepUpLimit}) {
		t.Fatalf("error %v", err)
	}
	if a := find(s.as.requests(), "authorize"); len(a) != 3 {
		t.Fatalf("%d authorizations, want 3", len(a))
	}
	// No step-up: the 403 is returned as it is.
	c, _ = s.client(t, auth.Options{MaxStepUps: -1})
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	if status, _, err := callTool(c, s.mcp.url, "admin"); err != nil || status != http.StatusForbidden {
		t.Fatalf("status %d, error %v", status, err)
	}
}

func TestRefreshOn401(t *testing.T) {
	s := newSetup(t, asConfig{registration: true}, serverOpts{})
	c, _ := s.client(t, auth.Options{})
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	s.as.revoke()
	s.as.requests()
	s.rec.lines()
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	reqs := s.as.requests()
	if len(reqs) != 1 || find(reqs, "token")[0].Get("grant_type") != "refresh_token" || find(reqs, "token")[0].Get("resource") != s.mcp.url {
		t.Fatalf("the AS saw %q", reqs)
	}
	// A refresh token the server refuses: a new authorization.
	s.as.revoke()
	s.as.mu.Lock()
	clear(s.as.refreshes)
	s.as.mu.Unlock()
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	if a := find(s.as.requests(), "authorize"); len(a) != 1 {
		t.Fatalf("%d authorizations", len(a))
	}
}

func TestRefreshBeforeExpiry(t *testing.T) {
	s := newSetup(t, asConfig{registration: true}, serverOpts{})
	store := &auth.MemoryStore{}
	c, _ := s.client(t, auth.Options{Store: store})
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	k := auth.Key{Resource: s.mcp.url}
	tok, err := store.Get(context.Background(), k)
	if err != nil || tok == nil || tok.RefreshToken == "" {
		t.Fatalf("stored %v, %v", tok, err)
	}
	tok.Expiry = time.Now().Add(-time.Minute)
	if err := store.Put(context.Background(), k, tok); err != nil {
		t.Fatal(err)
	}
	s.rec.lines()
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	want := []string{"POST /token grant_type=refresh_token 200", "POST /mcp 200"}
	if l := s.rec.lines(); !slices.Equal(l, want) {
		t.Fatalf("requests %q, want %q", l, want)
	}
}

func TestClientCredentials(t *testing.T) {
	for _, methods := range [][]string{{"client_secret_basic"}, {"client_secret_post"}} {
		s := newSetup(t, asConfig{authMethods: methods}, serverOpts{})
		s.as.addClient("machine", "secret")
		c, _ := s.client(t, auth.Options{ClientCredentials: true, ClientID: "machine", ClientSecret: "secret"})
		wantTool(t, c, s.mcp.url, "whoami", "machine|mcp:tools")
		// Step-up with client_credentials: a token with both scopes.
		wantTool(t, c, s.mcp.url, "admin", "machine|mcp:tools,mcp:admin")
		toks := find(s.as.requests(), "token")
		if len(toks) != 2 || toks[1].Get("scope") != "mcp:tools mcp:admin" || toks[0].Get("resource") != s.mcp.url ||
			(toks[0].Get("client_secret") != "") != (methods[0] == "client_secret_post") {
			t.Fatalf("token requests %v", toks)
		}
	}
}

// A machine client with a key authenticates with private_key_jwt: a
// signed assertion per token request, no secret.
func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	s, key := keyClientSetup(t)
	c, _ := s.client(t, auth.Options{ClientCredentials: true, ClientID: "machine", ClientKey: key})
	wantTool(t, c, s.mcp.url, "whoami", "machine|mcp:tools")
	toks := find(s.as.requests(), "token")
	if len(toks) != 1 || toks[0].Get("client_secret") != "" || toks[0].Get("grant_type") != "client_credentials" {
		t.Fatalf("token requests %v", toks)
	}
	// Another key is refused.
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	c2, _ := s.client(t, auth.Options{ClientCredentials: true, ClientID: "machine", ClientKey: other})
	if code, _, err := callTool(c2, s.mcp.url, "whoami"); err == nil && code == http.StatusOK {
		t.Fatal("a call with a token got by another key")
	}
	if _, err := auth.NewTransport(auth.Options{ClientCredentials: true, ClientID: "machine"}); err == nil {
		t.Fatal("ClientCredentials with a ClientID and neither secret nor key")
	}
}

// The JWT bearer grant: the assertion of Options.JWTBearer (asked with
// the authorization server's issuer) for a token; a refused assertion is
// the request's error, asked once, with no other grant tried.
func TestJWTBearer(t *testing.T) {
	s := newSetup(t, asConfig{}, serverOpts{})
	s.as.addClient("workload", "")
	var issuers []string
	assertion := "workload:build-7"
	c, _ := s.client(t, auth.Options{ClientID: "workload", JWTBearer: func(_ context.Context, issuer, _ string) (string, error) {
		issuers = append(issuers, issuer)
		return assertion, nil
	}})
	wantTool(t, c, s.mcp.url, "whoami", "build-7|mcp:tools")
	toks := find(s.as.requests(), "token")
	if len(toks) != 1 || toks[0].Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" ||
		toks[0].Get("assertion") != assertion || toks[0].Get("client_id") != "workload" || len(issuers) != 1 || issuers[0] != s.as.issuer {
		t.Fatalf("token requests %v, issuers %v", toks, issuers)
	}

	s2 := newSetup(t, asConfig{}, serverOpts{})
	s2.as.addClient("workload", "")
	assertion = "expired"
	c2, _ := s2.client(t, auth.Options{ClientID: "workload", JWTBearer: func(context.Context, string, string) (string, error) { return assertion, nil }})
	_, _, err := callTool(c2, s2.mcp.url, "whoami")
	var ae *auth.Error
	if !errors.As(err, &ae) || ae.Code != "invalid_grant" {
		t.Fatalf("refused assertion: %v", err)
	}
	var grants []string
	for _, r := range s2.as.requests() {
		if strings.HasPrefix(r, "token ") || strings.HasPrefix(r, "authorize ") || strings.HasPrefix(r, "register ") {
			grants = append(grants, r)
		}
	}
	if len(grants) != 1 {
		t.Fatalf("after a refused assertion the AS saw %q", grants)
	}
	if _, err := auth.NewTransport(auth.Options{ClientCredentials: true, JWTBearer: func(context.Context, string, string) (string, error) { return "", nil }}); err == nil {
		t.Fatal("two grants at once")
	}
}

// Enterprise-Managed Authorization: the ID token exchanged at the
// identity provider for an ID-JAG (audience the authorization server,
// resource the MCP server), presented with the JWT bearer grant.
func TestIDJAGExchange(t *testing.T) {
	s := newSetup(t, asConfig{}, serverOpts{})
	s.as.addClient("app", "app-secret")
	var seen url.Values
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		seen = r.PostForm
		if id, secret, _ := r.BasicAuth(); id != "idp-app" || secret != "idp-secret" || r.PostForm.Get("subject_token") != "id-token-of-alice" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"workload:alice","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}`)
	}))
	t.Cleanup(idp.Close)
	c, _ := s.client(t, auth.Options{ClientID: "app", ClientSecret: "app-secret", JWTBearer: auth.IDJAGExchange(auth.IDJAGOptions{
		TokenEndpoint: idp.URL + "/token", ClientID: "idp-app", ClientSecret: "idp-secret",
		IDToken: func(context.Context) (string, error) { return "id-token-of-alice", nil },
	})})
	wantTool(t, c, s.mcp.url, "whoami", "alice|mcp:tools")
	if seen.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" ||
		seen.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag" ||
		seen.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token" ||
		seen.Get("audience") != s.as.issuer || seen.Get("resource") != s.mcp.url {
		t.Fatalf("the identity provider saw %v", seen)
	}
	toks := find(s.as.requests(), "token")
	if len(toks) != 1 || toks[0].Get("assertion") != "workload:alice" {
		t.Fatalf("token requests %v", toks)
	}
}

func TestClientCredentialsRegistered(t *testing.T) {
	s := newSetup(t, asConfig{registration: true}, serverOpts{})
	c, _ := s.client(t, auth.Options{ClientCredentials: true})
	wantTool(t, c, s.mcp.url, "whoami", "dyn-")
	if r := s.as.requests(); !strings.HasPrefix(r[0], "register client_credentials client_secret_basic") {
		t.Fatalf("the AS saw %q", r)
	}
}

func TestStoreSharedAcrossTransports(t *testing.T) {
	s := newSetup(t, asConfig{}, serverOpts{})
	s.as.addClient("app", "", redirectURL)
	store := &auth.MemoryStore{}
	c, _ := s.client(t, auth.Options{ClientID: "app", Store: store})
	wantTool(t, c, s.mcp.url, "whoami", "app|")
	c2, _ := s.client(t, auth.Options{ClientID: "app", Store: store, Authorizer: func(context.Context, string) (auth.Callback, error) {
		return auth.Callback{}, errors.New("not asked")
	}})
	s.rec.lines()
	wantTool(t, c2, s.mcp.url, "whoami", "app|")
	if l := s.rec.lines(); !slices.Equal(l, []string{"POST /mcp 200"}) {
		t.Fatalf("requests %q", l)
	}
}

func TestLargeBodyNotReplayed(t *testing.T) {
	s := newSetup(t, asConfig{registration: true}, serverOpts{})
	c, _ := s.client(t, auth.Options{MaxReplayBytes: 16})
	status, _, err := callTool(c, s.mcp.url, "whoami")
	if err != nil || status != http.StatusUnauthorized {
		t.Fatalf("status %d, error %v", status, err)
	}
	if r := s.as.requests(); r != nil {
		t.Fatalf("the AS saw %q", r)
	}
}

func TestConcurrentRequestsOneAuthorization(t *testing.T) {
	s := newSetup(t, asConfig{registration: true}, serverOpts{})
	c, _ := s.client(t, auth.Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			status, body, err := callTool(c, s.mcp.url, "whoami")
			if err == nil && (status != http.StatusOK || !strings.Contains(body, "|mcp:tools")) {
				err = fmt.Errorf("status %d, body %s", status, body)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	reqs := s.as.requests()
	if len(find(reqs, "authorize")) != 1 || len(find(reqs, "register")) != 1 {
		t.Fatalf("the AS saw %q", reqs)
	}
}

func TestAuthorizationServerMigration(t *testing.T) {
	as1 := newGoAS(t, asConfig{registration: true})
	as2 := newGoAS(t, asConfig{registration: true})
	var current atomic.Pointer[goAS]
	current.Store(as1)
	var resource string
	m := newMCPServer(t, serverOpts{issuer: as1.issuer, issuerFunc: func() string { return current.Load().issuer },
		authn: authFunc(func(ctx context.Context, tok string) (ports.Principal, error) {
			return current.Load().authenticator(&resource).Authenticate(ctx, tok)
		})})
	resource = m.url
	s := &setup{as: as1, mcp: m, rec: &recorder{}}
	c, _ := s.client(t, auth.Options{})
	wantTool(t, c, m.url, "whoami", "|mcp:tools")
	as1.requests()
	current.Store(as2)
	wantTool(t, c, m.url, "whoami", "|mcp:tools")
	reqs := as2.requests()
	if len(find(reqs, "register")) != 1 || find(reqs, "token")[0].Get("grant_type") != "authorization_code" {
		t.Fatalf("the new AS saw %q", reqs)
	}
	for _, r := range reqs {
		if strings.Contains(r, "refresh_token=") {
			t.Fatalf("a refresh token of the old AS went to the new one: %q", r)
		}
	}
	if r := as1.requests(); r != nil {
		t.Fatalf("the old AS saw %q", r)
	}
}

func TestClientIssuerBinding(t *testing.T) {
	s := newSetup(t, asConfig{registration: true}, serverOpts{})
	s.as.addClient("app", "", redirectURL)
	c, _ := s.client(t, auth.Options{ClientID: "app", ClientIssuer: "https://other.example"})
	wantTool(t, c, s.mcp.url, "whoami", "dyn-")
	c, _ = s.client(t, auth.Options{ClientID: "app", ClientIssuer: s.as.issuer})
	wantTool(t, c, s.mcp.url, "whoami", "app|")
}

func TestOfflineAccess(t *testing.T) {
	for _, listed := range []bool{false, true} {
		cfg := asConfig{registration: true}
		if listed {
			cfg.scopesSupported = []string{"mcp:tools", "offline_access"}
		}
		s := newSetup(t, cfg, serverOpts{})
		c, _ := s.client(t, auth.Options{})
		wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
		a := find(s.as.requests(), "authorize")[0]
		if got := strings.Contains(a.Get("scope"), "offline_access"); got != listed {
			t.Fatalf("listed %v: scope %q", listed, a.Get("scope"))
		}
	}
}

func TestLoopbackAuthorizer(t *testing.T) {
	s := newSetup(t, asConfig{}, serverOpts{})
	port, err := testtools.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	s.as.addClient("app", "", redirect)
	browser := make(chan string, 1)
	a, err := auth.LoopbackAuthorizer(redirect, func(_ context.Context, u string) error {
		go func() { // the user's browser: follows the AS's redirect to the listener
			resp, err := http.Get(u)
			if err != nil {
				browser <- err.Error()
				return
			}
			resp.Body.Close()
			browser <- resp.Status
		}()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.client(t, auth.Options{ClientID: "app", RedirectURL: redirect, Authorizer: a})
	wantTool(t, c, s.mcp.url, "whoami", "app|mcp:tools")
	if b := <-browser; b != "200 OK" {
		t.Fatalf("the browser got %s", b)
	}
	if _, err := auth.LoopbackAuthorizer("https://127.0.0.1:1/cb", nil); err == nil {
		t.Fatal("an https redirect URL accepted")
	}
}

func TestRegisteredAuthMethod(t *testing.T) {
	for _, method := range []string{"none", "client_secret_basic", "client_secret_post"} {
		s := newSetup(t, asConfig{registration: true, authMethods: []string{method}}, serverOpts{})
		rec := &headerRecorder{}
		c, _ := s.client(t, auth.Options{HTTPClient: &http.Client{Transport: rec}})
		wantTool(t, c, s.mcp.url, "whoami", "dyn-")
		tok := find(s.as.requests(), "token")[0]
		got := "none"
		switch {
		case rec.basic:
			got = "client_secret_basic"
		case tok.Get("client_secret") != "":
			got = "client_secret_post"
		}
		if got != method {
			t.Fatalf("the server registered %s, the client used %s", method, got)
		}
	}
}

// headerRecorder notes whether a token request had HTTP Basic credentials.
type headerRecorder struct{ basic bool }

func (h *headerRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, _, ok := req.BasicAuth(); ok && strings.HasSuffix(req.URL.Path, "/token") {
		h.basic = true
	}
	return http.DefaultTransport.RoundTrip(req)
}

func TestResourceOption(t *testing.T) {
	s := newSetup(t, asConfig{registration: true}, serverOpts{})
	c, _ := s.client(t, auth.Options{Resource: s.mcp.url})
	wantTool(t, c, s.mcp.url, "whoami", "|mcp:tools")
	// Another host: sent as it is, without the token.
	var got string
	other := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Get("Authorization") }))
	resp, err := c.Get(other + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != "" {
		t.Fatalf("a token went to another host: %q", got)
	}
}
