package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// goAS is an in-process OAuth 2.1 authorization server for the features
// oauth2-mock-server lacks: RFC 8414 metadata (path inserted), dynamic
// client registration, client ID metadata documents, iss in the
// authorization response, PKCE and resource checked at the token
// endpoint, refresh tokens, client_credentials. It answers the
// authorization request at once (the user always agrees), and is the
// MCP server's authenticator (its tokens are opaque).
type goAS struct {
	cfg    asConfig
	srv    *httptest.Server
	issuer string

	mu        sync.Mutex
	clients   map[string]asClient
	codes     map[string]asCode
	tokens    map[string]asGrant
	refreshes map[string]asGrant
	// seen records what the clients sent: "authorize <query>",
	// "token <form>", "register <json>".
	seen lineLog
}

type asConfig struct {
	path         string // the issuer's path ("/tenant")
	openIDOnly   bool   // metadata only at OpenID Connect's well-known URLs
	wrongIssuer  bool   // the metadata names another issuer
	noS256       bool   // code_challenge_methods_supported: plain only
	noPKCEField  bool   // no code_challenge_methods_supported at all
	registration bool   // a registration_endpoint
	cimd         bool   // client_id_metadata_document_supported
	issSupported bool   // authorization_response_iss_parameter_supported
	iss          string // "" the issuer, "none" none, else that value
	wrongState   bool   // the redirect carries another state
	authMethods  []string
	grantOnly    []string // when set, the scopes a token may get
	noRefresh    bool
	// scopesSupported, when set, is the metadata's scopes_supported.
	scopesSupported []string
	tokenLifetime   time.Duration
}

type asClient struct {
	secret    string
	redirects []string
	key       *ecdsa.PublicKey // private_key_jwt (ES256)
}

type asCode struct {
	client, challenge, resource, redirect string
	scopes                                []string
}

type asGrant struct {
	client, resource string
	scopes           []string
	expires          time.Time
}

func newGoAS(t *testing.T, cfg asConfig) *goAS {
	t.Helper()
	as := &goAS{cfg: cfg, clients: map[string]asClient{}, codes: map[string]asCode{},
		tokens: map[string]asGrant{}, refreshes: map[string]asGrant{}}
	mux := http.NewServeMux()
	as.srv = httptest.NewServer(mux)
	t.Cleanup(as.srv.Close)
	as.issuer = as.srv.URL + cfg.path
	meta := "/.well-known/oauth-authorization-server" + cfg.path
	if cfg.openIDOnly {
		meta = "/.well-known/openid-configuration" + cfg.path
	}
	mux.HandleFunc("GET "+meta, as.metadata)
	mux.HandleFunc("GET "+cfg.path+"/authorize", as.authorize)
	mux.HandleFunc("POST "+cfg.path+"/token", as.token)
	mux.HandleFunc("POST "+cfg.path+"/register", as.register)
	return as
}

// addClient registers a client beforehand.
func (as *goAS) addClient(id, secret string, redirects ...string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.clients[id] = asClient{secret: secret, redirects: redirects}
}

// requests returns (and forgets) what the clients sent.
func (as *goAS) requests() []string { return as.seen.take() }

func (as *goAS) record(s string) { as.seen.add(s) }

func (as *goAS) metadata(w http.ResponseWriter, _ *http.Request) {
	m := map[string]any{
		"issuer":                           as.issuer,
		"authorization_endpoint":           as.issuer + "/authorize",
		"token_endpoint":                   as.issuer + "/token",
		"response_types_supported":         []string{"code"},
		"grant_types_supported":            []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported": []string{"S256"},
	}
	if as.cfg.wrongIssuer {
		m["issuer"] = "https://elsewhere.example"
	}
	if as.cfg.noS256 {
		m["code_challenge_methods_supported"] = []string{"plain"}
	}
	if as.cfg.noPKCEField {
		delete(m, "code_challenge_methods_supported")
	}
	if as.cfg.registration {
		m["registration_endpoint"] = as.issuer + "/register"
	}
	if as.cfg.cimd {
		m["client_id_metadata_document_supported"] = true
	}
	if as.cfg.issSupported {
		m["authorization_response_iss_parameter_supported"] = true
	}
	if as.cfg.scopesSupported != nil {
		m["scopes_supported"] = as.cfg.scopesSupported
	}
	if as.cfg.authMethods != nil {
		m["token_endpoint_auth_methods_supported"] = as.cfg.authMethods
	}
	writeJSON(w, http.StatusOK, m)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthErr(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func random() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (as *goAS) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		GrantTypes   []string `json:"grant_types"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		AppType      string   `json:"application_type"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		oauthErr(w, http.StatusBadRequest, "invalid_client_metadata", err.Error())
		return
	}
	as.record(fmt.Sprintf("register %s %s %s", strings.Join(req.GrantTypes, ","), req.AuthMethod, req.AppType))
	if as.cfg.authMethods != nil {
		req.AuthMethod = as.cfg.authMethods[0] // the server decides
	}
	id, c := "dyn-"+random(), asClient{redirects: req.RedirectURIs}
	out := map[string]any{"client_id": id, "token_endpoint_auth_method": req.AuthMethod}
	if req.AuthMethod != "none" {
		c.secret = random()
		out["client_secret"] = c.secret
	}
	as.mu.Lock()
	as.clients[id] = c
	as.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

// authorize answers at once: a redirect with a code (the user agreed).
func (as *goAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	as.record("authorize " + q.Encode())
	id, redirect := q.Get("client_id"), q.Get("redirect_uri")
	as.mu.Lock()
	c, ok := as.clients[id]
	as.mu.Unlock()
	if !ok && as.cfg.cimd && strings.HasPrefix(id, "http") {
		// A client ID metadata document: fetch it.
		var doc struct {
			ClientID     string   `json:"client_id"`
			RedirectURIs []string `json:"redirect_uris"`
		}
		resp, err := http.Get(id)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&doc)
			resp.Body.Close()
		}
		ok = err == nil && doc.ClientID == id
		c = asClient{redirects: doc.RedirectURIs}
	}
	if !ok || !slices.Contains(c.redirects, redirect) {
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	u, _ := url.Parse(redirect)
	back := url.Values{}
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
		back.Set("error", "invalid_request")
	} else {
		code := random()
		as.mu.Lock()
		as.codes[code] = asCode{client: id, challenge: q.Get("code_challenge"), resource: q.Get("resource"),
			redirect: redirect, scopes: as.grant(strings.Fields(q.Get("scope")))}
		as.mu.Unlock()
		back.Set("code", code)
	}
	back.Set("state", q.Get("state"))
	if as.cfg.wrongState {
		back.Set("state", "forged")
	}
	switch as.cfg.iss {
	case "":
		back.Set("iss", as.issuer)
	case "none":
	default:
		back.Set("iss", as.cfg.iss)
	}
	u.RawQuery = back.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// grant returns the scopes of asked the server grants.
func (as *goAS) grant(asked []string) []string {
	if as.cfg.grantOnly == nil {
		return asked
	}
	return slices.DeleteFunc(asked, func(s string) bool { return !slices.Contains(as.cfg.grantOnly, s) })
}

// addKeyClient registers a client that authenticates with private_key_jwt.
func (as *goAS) addKeyClient(id string, key *ecdsa.PublicKey) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.clients[id] = asClient{key: key}
}

// assertionOK checks a private_key_jwt client assertion: ES256 by key,
// iss and sub id, aud the issuer, not expired.
func (as *goAS) assertionOK(assertion, id string, key *ecdsa.PublicKey) bool {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 || key == nil {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	d := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || len(sig) != 64 ||
		!ecdsa.Verify(key, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return false
	}
	var c struct {
		Iss, Sub, Aud, Jti string
		Exp                int64
	}
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	return json.Unmarshal(b, &c) == nil && c.Iss == id && c.Sub == id && c.Aud == as.issuer && c.Jti != "" &&
		c.Exp > time.Now().Unix()
}

// clientAuth returns the authenticated client of a token request.
func (as *goAS) clientAuth(r *http.Request) (string, bool) {
	if r.PostForm.Get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		id := r.PostForm.Get("client_id")
		as.mu.Lock()
		c := as.clients[id]
		as.mu.Unlock()
		return id, as.assertionOK(r.PostForm.Get("client_assertion"), id, c.key)
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	as.mu.Lock()
	c, ok := as.clients[id]
	as.mu.Unlock()
	if !ok {
		return id, as.cfg.cimd && strings.HasPrefix(id, "http") && secret == ""
	}
	return id, c.secret == secret
}

func (as *goAS) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthErr(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	f := r.PostForm
	as.record("token " + f.Encode())
	id, ok := as.clientAuth(r)
	if !ok {
		oauthErr(w, http.StatusUnauthorized, "invalid_client", "")
		return
	}
	resource := f.Get("resource")
	if resource == "" {
		oauthErr(w, http.StatusBadRequest, "invalid_target", "no resource")
		return
	}
	var g asGrant
	switch f.Get("grant_type") {
	case "authorization_code":
		as.mu.Lock()
		c, ok := as.codes[f.Get("code")]
		delete(as.codes, f.Get("code"))
		as.mu.Unlock()
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok || c.client != id || c.redirect != f.Get("redirect_uri"):
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "unknown code")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "PKCE")
			return
		case c.resource != resource:
			oauthErr(w, http.StatusBadRequest, "invalid_target", "another resource")
			return
		}
		g = asGrant{client: id, resource: resource, scopes: c.scopes}
	case "refresh_token":
		as.mu.Lock()
		old, ok := as.refreshes[f.Get("refresh_token")]
		delete(as.refreshes, f.Get("refresh_token"))
		as.mu.Unlock()
		if !ok || old.client != id || old.resource != resource {
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			return
		}
		g = old
	case "client_credentials":
		g = asGrant{client: id, resource: resource, scopes: as.grant(strings.Fields(f.Get("scope")))}
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		// The assertion stands for a subject: "workload:NAME".
		sub, ok := strings.CutPrefix(f.Get("assertion"), "workload:")
		if !ok {
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "")
			return
		}
		g = asGrant{client: sub, resource: resource, scopes: as.grant(strings.Fields(f.Get("scope")))}
	default:
		oauthErr(w, http.StatusBadRequest, "unsupported_grant_type", "")
		return
	}
	life := as.cfg.tokenLifetime
	if life == 0 {
		life = time.Hour
	}
	g.expires = time.Now().Add(life)
	access := random()
	out := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(life / time.Second),
		"scope": strings.Join(g.scopes, " ")}
	as.mu.Lock()
	as.tokens[access] = g
	if (f.Get("grant_type") == "authorization_code" || f.Get("grant_type") == "refresh_token") && !as.cfg.noRefresh {
		rt := random()
		as.refreshes[rt] = g
		out["refresh_token"] = rt
	}
	as.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// revoke forgets every access token (refresh tokens stay).
func (as *goAS) revoke() {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.tokens = map[string]asGrant{}
}

// authenticator is the MCP server's judge of the AS's tokens for resource.
func (as *goAS) authenticator(resource *string) ports.Authenticator {
	return authFunc(func(_ context.Context, token string) (ports.Principal, error) {
		as.mu.Lock()
		g, ok := as.tokens[token]
		as.mu.Unlock()
		switch {
		case !ok:
			return ports.Principal{}, fmt.Errorf("unknown token: %w", ports.ErrUnauthenticated)
		case g.resource != *resource:
			return ports.Principal{}, fmt.Errorf("a token for %s: %w", g.resource, ports.ErrUnauthenticated)
		case time.Now().After(g.expires):
			return ports.Principal{}, fmt.Errorf("expired: %w", ports.ErrUnauthenticated)
		}
		return ports.Principal{Subject: g.client, Scopes: g.scopes, Expires: g.expires}, nil
	})
}

type authFunc func(context.Context, string) (ports.Principal, error)

func (f authFunc) Authenticate(ctx context.Context, token string) (ports.Principal, error) {
	return f(ctx, token)
}

// setup is an MCP server whose tokens come from a goAS.
type setup struct {
	as  *goAS
	mcp *mcpServer
	rec *recorder
}

// keyClientSetup is a setup whose authorization server takes
// private_key_jwt alone, from the client "machine", which holds the key
// returned.
func keyClientSetup(t *testing.T) (*setup, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := newSetup(t, asConfig{authMethods: []string{"private_key_jwt"}}, serverOpts{})
	s.as.addKeyClient("machine", &key.PublicKey)
	return s, key
}

func newSetup(t *testing.T, cfg asConfig, so serverOpts) *setup {
	t.Helper()
	as := newGoAS(t, cfg)
	var resource string
	so.authn = as.authenticator(&resource)
	so.issuer = as.issuer
	m := newMCPServer(t, so)
	resource = m.url
	return &setup{as: as, mcp: m, rec: &recorder{}}
}
