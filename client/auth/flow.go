package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// client is the identity the flow presents to an authorization server.
type client struct {
	id, secret string
	// key signs its private_key_jwt assertions.
	key crypto.Signer
	// method is how it authenticates at the token endpoint: "none",
	// "client_secret_basic", "client_secret_post" or "private_key_jwt".
	method string
}

// authMethod picks client_secret_basic or client_secret_post for a client
// with a secret, from what the server supports (RFC 8414's default:
// client_secret_basic), and "none" without one.
func authMethod(secret string, supported []string) string {
	switch {
	case secret == "":
		return "none"
	case len(supported) == 0 || slices.Contains(supported, "client_secret_basic"):
		return "client_secret_basic"
	case slices.Contains(supported, "client_secret_post"):
		return "client_secret_post"
	}
	return "client_secret_basic"
}

// registration is an RFC 7591 client registration request.
type registration struct {
	ClientName              string   `json:"client_name,omitempty"`
	RedirectURIs            []string `json:"redirect_uris,omitempty"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ApplicationType         string   `json:"application_type,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// register registers a client at the registration endpoint (RFC 7591).
func (t *Transport) register(ctx context.Context, d *discovered, scopes []string) (*client, error) {
	reg := registration{
		ClientName: t.opts.ClientName,
		Scope:      strings.Join(scopes, " "),
	}
	if reg.ClientName == "" {
		reg.ClientName = "hexmcp client"
	}
	if t.opts.ClientCredentials {
		reg.GrantTypes = []string{"client_credentials"}
		reg.ResponseTypes = []string{}
		reg.TokenEndpointAuthMethod = authMethod("x", d.as.TokenEndpointAuthMethodsSupported)
	} else {
		reg.RedirectURIs = []string{t.opts.RedirectURL}
		reg.GrantTypes = []string{"authorization_code", "refresh_token"}
		reg.ResponseTypes = []string{"code"}
		reg.TokenEndpointAuthMethod = "none"
		reg.ApplicationType = "web"
		if u, err := url.Parse(t.opts.RedirectURL); err == nil && (isLoopback(u.Hostname()) || (u.Scheme != "http" && u.Scheme != "https")) {
			reg.ApplicationType = "native"
		}
	}
	body, err := json.Marshal(reg)
	if err != nil {
		return nil, fail(ReasonRegistration, "", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.as.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fail(ReasonRegistration, "", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := t.httpClient().Do(req)
	if err != nil {
		return nil, fail(ReasonRegistration, "", err)
	}
	defer resp.Body.Close()
	b, err := readBounded(resp.Body)
	if err != nil {
		return nil, fail(ReasonRegistration, "", err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		e := oauthError(b)
		e.Reason = ReasonRegistration
		if e.Description == "" {
			e.Description = fmt.Sprintf("status %d", resp.StatusCode)
		}
		return nil, e
	}
	var out struct {
		ClientID                string `json:"client_id"`
		ClientSecret            string `json:"client_secret"`
		TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.ClientID == "" {
		return nil, fail(ReasonRegistration, "the registration response has no client_id", err)
	}
	c := &client{id: out.ClientID, secret: out.ClientSecret, method: out.TokenEndpointAuthMethod}
	if c.method == "" || (c.secret == "" && c.method != "none") {
		c.method = authMethod(c.secret, d.as.TokenEndpointAuthMethodsSupported)
	}
	return c, nil
}

// clientFor returns the client identity for d's authorization server, in
// the spec's order: pre-registered, Client ID Metadata Document, dynamic
// registration (kept in memory per issuer).
func (t *Transport) clientFor(ctx context.Context, d *discovered, scopes []string) (*client, error) {
	if t.opts.ClientID != "" && (t.opts.ClientIssuer == "" || t.opts.ClientIssuer == d.as.Issuer) {
		if t.opts.ClientKey != nil {
			return &client{id: t.opts.ClientID, key: t.opts.ClientKey, method: "private_key_jwt"}, nil
		}
		return &client{id: t.opts.ClientID, secret: t.opts.ClientSecret,
			method: authMethod(t.opts.ClientSecret, d.as.TokenEndpointAuthMethodsSupported)}, nil
	}
	if t.opts.ClientMetadataURL != "" && d.as.ClientIDMetadataDocumentSupported && !t.machine() {
		return &client{id: t.opts.ClientMetadataURL, method: "none"}, nil
	}
	if d.as.RegistrationEndpoint == "" {
		return nil, fail(ReasonNoClient, "no ClientID, no client ID metadata document the server accepts, no registration endpoint", nil)
	}
	t.mu.Lock()
	c := t.registered[d.as.Issuer]
	t.mu.Unlock()
	if c != nil {
		return c, nil
	}
	c, err := t.register(ctx, d, scopes)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.registered[d.as.Issuer] = c
	t.mu.Unlock()
	return c, nil
}

// oauthError reads an OAuth error response (RFC 6749 section 5.2).
func oauthError(b []byte) *Error {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(b, &e)
	return &Error{Code: e.Error, Description: e.Description}
}

// tokenRequest posts form to the token endpoint, the client authenticated
// as c says, and reads the token. The form carries the resource.
func (t *Transport) tokenRequest(ctx context.Context, d *discovered, c *client, form url.Values) (*oauth2.Token, error) {
	tok, retry, err := t.tokenRequestOnce(ctx, d, c, form)
	if retry {
		// The authorization server asks for its DPoP nonce: once.
		tok, _, err = t.tokenRequestOnce(ctx, d, c, form)
	}
	return tok, err
}

// tokenRequestOnce is one request of tokenRequest; retry reports a
// use_dpop_nonce answer with a new nonce.
func (t *Transport) tokenRequestOnce(ctx context.Context, d *discovered, c *client, form url.Values) (tok *oauth2.Token, retry bool, err error) {
	form.Set("resource", d.resource)
	switch c.method {
	case "client_secret_basic":
	case "client_secret_post":
		form.Set("client_id", c.id)
		form.Set("client_secret", c.secret)
	case "private_key_jwt":
		a, err := clientAssertion(c.key, c.id, d.as.Issuer)
		if err != nil {
			return nil, false, fail(ReasonToken, "", err)
		}
		form.Set("client_id", c.id)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", a)
	default:
		form.Set("client_id", c.id)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.as.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, false, fail(ReasonToken, "", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.method == "client_secret_basic" {
		// RFC 6749 section 2.3.1: both form-encoded first.
		req.SetBasicAuth(url.QueryEscape(c.id), url.QueryEscape(c.secret))
	}
	if t.opts.DPoPKey != nil {
		proof, err := t.dpopProof(http.MethodPost, req.URL, "")
		if err != nil {
			return nil, false, fail(ReasonToken, "", err)
		}
		req.Header.Set("DPoP", proof)
	}
	resp, err := t.httpClient().Do(req)
	if err != nil {
		return nil, false, fail(ReasonToken, "", err)
	}
	defer resp.Body.Close()
	b, err := readBounded(resp.Body)
	if err != nil {
		return nil, false, fail(ReasonToken, "", err)
	}
	if resp.StatusCode != http.StatusOK {
		e := oauthError(b)
		if t.opts.DPoPKey != nil && e.Code == "use_dpop_nonce" && t.takeNonce(req.URL, resp) {
			return nil, true, e
		}
		e.Reason = ReasonToken
		if e.Code == "" && e.Description == "" {
			e.Description = fmt.Sprintf("status %d", resp.StatusCode)
		}
		return nil, false, e
	}
	var out struct {
		AccessToken  string      `json:"access_token"`
		TokenType    string      `json:"token_type"`
		ExpiresIn    json.Number `json:"expires_in"`
		RefreshToken string      `json:"refresh_token"`
		Scope        string      `json:"scope"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, false, fail(ReasonToken, "the token response is not JSON", nil)
	}
	if out.AccessToken == "" {
		return nil, false, fail(ReasonToken, "the token response has no access_token", nil)
	}
	typ := "Bearer"
	switch {
	case t.opts.DPoPKey != nil && strings.EqualFold(out.TokenType, "DPoP"):
		typ = "DPoP"
	case !strings.EqualFold(out.TokenType, "bearer"):
		return nil, false, fail(ReasonToken, fmt.Sprintf("the token type %q is not Bearer", out.TokenType), nil)
	}
	tok = &oauth2.Token{AccessToken: out.AccessToken, TokenType: typ, RefreshToken: out.RefreshToken}
	if n, err := out.ExpiresIn.Int64(); err == nil && n > 0 {
		tok.ExpiresIn = n
		tok.Expiry = time.Now().Add(time.Duration(n) * time.Second)
	}
	if out.Scope != "" {
		tok = tok.WithExtra(map[string]any{"scope": out.Scope})
	}
	return tok, false, nil
}

// randomString returns n random bytes, base64url without padding.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// authorize runs the authorization code grant with PKCE for scopes.
func (t *Transport) authorize(ctx context.Context, d *discovered, scopes []string) (*oauth2.Token, error) {
	if t.opts.Authorizer == nil {
		return nil, fail(ReasonNoAuthorizer, "the server asks for a user's authorization and Options.Authorizer is nil", nil)
	}
	if d.as.AuthorizationEndpoint == "" {
		return nil, fail(ReasonDiscovery, "the authorization server metadata has no authorization_endpoint", nil)
	}
	if !d.as.supportsS256() {
		return nil, fail(ReasonPKCEUnsupported, "the authorization server does not list S256 in code_challenge_methods_supported", nil)
	}
	if !t.opts.NoOfflineAccess && slices.Contains(d.as.ScopesSupported, "offline_access") {
		// The MCP spec's way to ask for a refresh token: the server lists
		// the scope; never asked of one that does not.
		scopes = union(scopes, []string{"offline_access"})
	}
	c, err := t.clientFor(ctx, d, scopes)
	if err != nil {
		return nil, err
	}
	verifier := oauth2.GenerateVerifier()
	state := randomString(32)
	cfg := oauth2.Config{
		ClientID:    c.id,
		Endpoint:    oauth2.Endpoint{AuthURL: d.as.AuthorizationEndpoint, TokenURL: d.as.TokenEndpoint},
		RedirectURL: t.opts.RedirectURL,
		Scopes:      scopes,
	}
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.resource))
	cb, err := t.opts.Authorizer(ctx, authURL)
	if err != nil {
		return nil, fail(ReasonAuthorizer, "", err)
	}
	// RFC 9207 section 2.4, before anything else of the response is used.
	switch {
	case cb.Issuer != "" && cb.Issuer != d.as.Issuer:
		return nil, fail(ReasonIssMismatch, fmt.Sprintf("the authorization response is from %q, not %q", cb.Issuer, d.as.Issuer), nil)
	case cb.Issuer == "" && d.as.AuthorizationResponseIssSupported:
		return nil, fail(ReasonIssMismatch, "the authorization response has no iss, which the server advertises", nil)
	}
	if subtle.ConstantTimeCompare([]byte(cb.State), []byte(state)) != 1 {
		return nil, fail(ReasonStateMismatch, "the authorization response's state is not the request's", nil)
	}
	if cb.Error != "" {
		return nil, &Error{Reason: ReasonAuthorizationDenied, Code: cb.Error, Description: cb.ErrorDescription}
	}
	if cb.Code == "" {
		return nil, fail(ReasonAuthorizationDenied, "the authorization response has no code", nil)
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {cb.Code},
		"redirect_uri":  {t.opts.RedirectURL},
		"code_verifier": {verifier},
	}
	if len(scopes) > 0 {
		// Not a parameter of this grant (RFC 6749 section 4.1.3), which
		// servers ignore; some grant only what it names.
		form.Set("scope", strings.Join(scopes, " "))
	}
	return t.tokenRequest(ctx, d, c, form)
}

// clientCredentials gets a token with the client_credentials grant.
func (t *Transport) clientCredentials(ctx context.Context, d *discovered, scopes []string) (*oauth2.Token, error) {
	c, err := t.clientFor(ctx, d, scopes)
	if err != nil {
		return nil, err
	}
	if c.secret == "" && c.key == nil {
		return nil, fail(ReasonNoClient, "the client_credentials grant needs a client secret or key", nil)
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	return t.tokenRequest(ctx, d, c, form)
}

// jwtBearer gets a token with the JWT bearer grant (RFC 7523 section 2.1)
// and the assertion of Options.JWTBearer.
func (t *Transport) jwtBearer(ctx context.Context, d *discovered, scopes []string) (*oauth2.Token, error) {
	c, err := t.clientFor(ctx, d, scopes)
	if err != nil {
		return nil, err
	}
	assertion, err := t.opts.JWTBearer(ctx, d.as.Issuer, d.resource)
	if err != nil {
		return nil, fail(ReasonToken, "Options.JWTBearer", err)
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	return t.tokenRequest(ctx, d, c, form)
}

// refresh uses old's refresh token (RFC 6749 section 6), asking for
// scopes (those asked before, which the section allows; some servers
// grant only what the request names) unless nil; the new token keeps the
// refresh token when the server sends none.
func (t *Transport) refresh(ctx context.Context, d *discovered, old *oauth2.Token, scopes []string) (*oauth2.Token, error) {
	c, err := t.clientFor(ctx, d, scopes)
	if err != nil {
		return nil, err
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {old.RefreshToken}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	tok, err := t.tokenRequest(ctx, d, c, form)
	if err != nil {
		return nil, err
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = old.RefreshToken
	}
	return tok, nil
}
