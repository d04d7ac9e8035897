package auth

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// Callback is what the authorization server sent back to the redirect URI
// (RFC 6749 section 4.1.2): the query parameters code, state, iss (RFC
// 9207), error and error_description.
type Callback struct {
	Code, State, Issuer     string
	Error, ErrorDescription string
}

// CallbackFromQuery reads a Callback from the redirect URI's query.
func CallbackFromQuery(q url.Values) Callback {
	return Callback{Code: q.Get("code"), State: q.Get("state"), Issuer: q.Get("iss"),
		Error: q.Get("error"), ErrorDescription: q.Get("error_description")}
}

// Authorizer is the application's part of the authorization code flow: it
// sends the user to authURL (opens a browser), waits for the
// authorization server to redirect to Options.RedirectURL, and returns
// what that redirect carried ([CallbackFromQuery]). The Transport checks
// state and iss itself. [HeadlessAuthorizer] is one for an authorization
// server that answers at once (tests, the conformance suite).
type Authorizer func(ctx context.Context, authURL string) (Callback, error)

// Options configure a [Transport]. For the authorization code flow set
// RedirectURL and Authorizer; for a machine client set ClientCredentials,
// ClientID and ClientSecret (or let the server register one).
type Options struct {
	// Base sends the requests to the MCP server. Default
	// http.DefaultTransport.
	Base http.RoundTripper
	// HTTPClient fetches the metadata and talks to the authorization
	// server. Default: a client on Base with a 30-second timeout that
	// follows redirects only on the same host (at most 5).
	HTTPClient *http.Client

	// ClientID, with ClientSecret for a confidential client, is a client
	// registered beforehand with the authorization server, used first.
	ClientID     string
	ClientSecret string
	// ClientIssuer, when set, is the issuer of the authorization server
	// that registered ClientID: with another one ClientID is not used
	// (the spec binds credentials to their server), and the Transport
	// falls back to a metadata document or a registration.
	ClientIssuer string
	// ClientMetadataURL is the https URL of the client's Client ID
	// Metadata Document, used as its client_id when the authorization
	// server says client_id_metadata_document_supported (and no ClientID
	// is set).
	ClientMetadataURL string
	// ClientName is the client_name of a dynamic registration. Default
	// "hexmcp client".
	ClientName string

	// RedirectURL is the redirect_uri of the authorization code flow
	// (registered with the server, or in the client's metadata).
	RedirectURL string
	// Authorizer sends the user to the authorization server and returns
	// its answer. Without it only ClientCredentials works.
	Authorizer Authorizer

	// ClientCredentials makes the Transport get tokens with the
	// client_credentials grant (a machine client acting on its own
	// behalf) instead of a user's authorization.
	ClientCredentials bool
	// ClientKey, with ClientID, authenticates the client at the token
	// endpoint with private_key_jwt (RFC 7523) instead of a secret: a
	// signed assertion (iss and sub the ClientID, aud the authorization
	// server's issuer) per token request. ECDSA P-256 (ES256), RSA (RS256)
	// or Ed25519 (EdDSA).
	ClientKey crypto.Signer
	// JWTBearer, when set, makes the Transport get tokens with the JWT
	// bearer grant (RFC 7523 section 2.1): the assertion is what
	// JWTBearer returns for the authorization server (its issuer) and the
	// MCP server (its resource): a workload identity token, or an
	// identity assertion of the enterprise's identity provider
	// ([IDJAGExchange]). A refused assertion is the request's error: the
	// Transport does not retry it nor fall back to another grant. The
	// client is ClientID (with its secret or key, if any).
	JWTBearer func(ctx context.Context, issuer, resource string) (string, error)
	// DPoPKey, when set, binds the tokens to this key (DPoP, RFC 9449):
	// every token request carries a proof of it, a DPoP token is sent
	// with the DPoP scheme and a fresh proof per request, and a server's
	// use_dpop_nonce answer (the token endpoint's or the MCP server's) is
	// followed once with its DPoP-Nonce. ECDSA P-256 (ES256), RSA or
	// Ed25519.
	DPoPKey crypto.Signer

	// Scopes are added to those the flow asks for (the challenge's, else
	// the resource's scopes_supported). The authorization code flow adds
	// offline_access too when the authorization server lists it in its
	// scopes_supported (so that it issues a refresh token), unless
	// NoOfflineAccess.
	Scopes          []string
	NoOfflineAccess bool
	// Resource, when set, is the MCP server's resource identifier, for
	// every request whose URL it names (the same origin, its path a prefix
	// of the request's); requests to other URLs are sent as they are,
	// without a token. Default: each request's URL without query or
	// fragment.
	Resource string

	// Store keeps the tokens. Default: a [MemoryStore] of the Transport.
	Store TokenStore
	// MaxStepUps bounds the authorizations a request's 403
	// insufficient_scope answers may start. Default 2; negative: none.
	MaxStepUps int
	// MaxReplayBytes bounds the request body buffered to be sent again
	// after a 401 or 403 (a request with GetBody is not buffered); a
	// longer body is sent once, its 401 returned as it is. Default 16 MiB.
	MaxReplayBytes int64
}

// Transport is an [http.RoundTripper] that authorizes the requests to MCP
// servers (see the package documentation). Make one with [NewTransport];
// it is safe for concurrent use.
type Transport struct {
	opts       Options
	client     *http.Client
	mu         sync.Mutex
	servers    map[string]*server
	registered map[string]*client // dynamic registrations by issuer
	nonces     map[string]string  // DPoP nonces by origin
}

// server is what the Transport knows of one MCP server (a resource).
type server struct {
	sem    chan struct{} // held while a token is being obtained
	found  *discovered
	scopes []string // the scopes last asked for
	// issuer is the authorization server that issued the token this
	// Transport last stored ("" when it came from the store): a refresh
	// token goes to no other.
	issuer string
}

// mayRefresh reports whether tok's refresh token may go to d's
// authorization server.
func (s *server) mayRefresh(tok *oauth2.Token, d *discovered) bool {
	return tok.RefreshToken != "" && (s.issuer == "" || s.issuer == d.as.Issuer)
}

// NewTransport returns a Transport with opts, checked: the
// authorization code flow (no ClientCredentials) needs RedirectURL, a
// ClientMetadataURL must be https (or http on loopback) with a path, and
// ClientCredentials needs a secret with a ClientID.
func NewTransport(opts Options) (*Transport, error) {
	if opts.Base == nil {
		opts.Base = http.DefaultTransport
	}
	if opts.Store == nil {
		opts.Store = &MemoryStore{}
	}
	if opts.MaxStepUps == 0 {
		opts.MaxStepUps = 2
	}
	if opts.MaxReplayBytes <= 0 {
		opts.MaxReplayBytes = 16 << 20
	}
	if opts.JWTBearer != nil {
		if opts.ClientCredentials {
			return nil, errors.New("hexmcp: Options.JWTBearer and ClientCredentials are two grants: set one")
		}
	} else if opts.ClientCredentials {
		if opts.ClientID != "" && opts.ClientSecret == "" && opts.ClientKey == nil {
			return nil, errors.New("hexmcp: Options.ClientCredentials with a ClientID needs a ClientSecret or a ClientKey")
		}
	} else if opts.Authorizer != nil && opts.RedirectURL == "" {
		return nil, errors.New("hexmcp: Options.Authorizer needs a RedirectURL")
	}
	for _, k := range []crypto.Signer{opts.ClientKey, opts.DPoPKey} {
		if k != nil {
			if _, err := jwtAlg(k); err != nil {
				return nil, err
			}
		}
	}
	if opts.ClientMetadataURL != "" {
		u, err := secureURL("Options.ClientMetadataURL", opts.ClientMetadataURL)
		if err != nil {
			return nil, err
		}
		if u.Path == "" || u.Path == "/" {
			return nil, fmt.Errorf("hexmcp: Options.ClientMetadataURL %q has no path", opts.ClientMetadataURL)
		}
	}
	c := opts.HTTPClient
	if c == nil {
		c = &http.Client{Transport: opts.Base, Timeout: 30 * time.Second, CheckRedirect: sameHostRedirects}
	}
	return &Transport{opts: opts, client: c, servers: map[string]*server{}, registered: map[string]*client{}, nonces: map[string]string{}}, nil
}

// sameHostRedirects follows at most 5 redirects, all on the first
// request's scheme and host.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("hexmcp: too many redirects")
	}
	if req.URL.Scheme != via[0].URL.Scheme || req.URL.Host != via[0].URL.Host {
		return fmt.Errorf("hexmcp: a redirect to another host (%s)", req.URL.Host)
	}
	return nil
}

func (t *Transport) httpClient() *http.Client { return t.client }

// Client returns an http.Client using t.
func (t *Transport) Client() *http.Client { return &http.Client{Transport: t} }

// key is the store's key of the tokens for resource.
func (t *Transport) key(resource string) Key {
	c := t.opts.ClientID
	if c == "" && !t.machine() {
		c = t.opts.ClientMetadataURL
	}
	return Key{Resource: resource, Client: c}
}

// server returns the state of resource.
func (t *Transport) server(resource string) *server {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.servers[resource]
	if s == nil {
		s = &server{sem: make(chan struct{}, 1)}
		t.servers[resource] = s
	}
	return s
}

func (s *server) lock(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *server) unlock() { <-s.sem }

// body makes req's body sendable again: the first send uses first, the
// next ones again(); replay is false when it cannot be sent again.
func (t *Transport) body(req *http.Request) (first io.ReadCloser, again func() (io.ReadCloser, error), replay bool, err error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req.Body, func() (io.ReadCloser, error) { return http.NoBody, nil }, true, nil
	}
	if req.GetBody != nil {
		return req.Body, req.GetBody, true, nil
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, t.opts.MaxReplayBytes+1))
	if err != nil {
		_ = req.Body.Close()
		return nil, nil, false, err
	}
	if int64(len(b)) > t.opts.MaxReplayBytes {
		return struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), req.Body), req.Body}, nil, false, nil
	}
	_ = req.Body.Close()
	again = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return io.NopCloser(bytes.NewReader(b)), again, true, nil
}

// RoundTrip sends req with the bearer token of its server, obtaining one
// when the server answers 401 (then sending req again), authorizing again
// on a 403 insufficient_scope (step-up). The errors of the flow are
// [*Error] values.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	resURL, err := t.resourceURL(req)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	if resURL == nil {
		return t.opts.Base.RoundTrip(req) // not the resource's: no token
	}
	resource := canonicalResource(resURL)
	_, secureErr := secureURL("the MCP server's URL", resource)
	first, again, replay, err := t.body(req)
	if err != nil {
		return nil, err
	}
	s := t.server(resource)
	var tok *oauth2.Token
	if secureErr == nil {
		tok = t.current(ctx, s, resURL, resource)
	}
	authorized, stepUps, nonced := false, 0, false
	for attempt := 0; ; attempt++ {
		body := first
		if attempt > 0 {
			if body, err = again(); err != nil {
				return nil, err
			}
		}
		r := req.Clone(ctx)
		r.Body = body
		if replay {
			r.GetBody = again
		}
		if tok != nil {
			if t.opts.DPoPKey != nil && strings.EqualFold(tok.TokenType, "DPoP") {
				proof, err := t.dpopProof(r.Method, r.URL, tok.AccessToken)
				if err != nil {
					return nil, err
				}
				r.Header.Set("Authorization", "DPoP "+tok.AccessToken)
				r.Header.Set("DPoP", proof)
			} else {
				r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			}
		}
		resp, err := t.opts.Base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			if tok != nil && t.opts.DPoPKey != nil && !nonced && replay && bearerChallenge(resp.Header).error() == "use_dpop_nonce" && t.takeNonce(r.URL, resp) {
				// The MCP server asks for its nonce in the proof: once.
				discard(resp)
				nonced = true
				continue
			}
			if authorized || !replay {
				return resp, nil
			}
			if secureErr != nil {
				discard(resp)
				return nil, secureErr
			}
			ch := bearerChallenge(resp.Header)
			discard(resp)
			if tok, err = t.unauthorized(ctx, s, resURL, resource, ch, tok); err != nil {
				return nil, err
			}
			authorized = true
		case http.StatusForbidden:
			ch := bearerChallenge(resp.Header)
			if !replay || tok == nil || ch.error() != "insufficient_scope" || len(ch.scopes()) == 0 || t.opts.MaxStepUps < 0 {
				return resp, nil
			}
			discard(resp)
			if stepUps >= t.opts.MaxStepUps {
				return nil, fail(ReasonStepUpLimit, fmt.Sprintf("still 403 insufficient_scope (scope %q) after %d authorizations", ch.params["scope"], stepUps), nil)
			}
			stepUps++
			if tok, err = t.stepUp(ctx, s, resURL, resource, ch, tok); err != nil {
				return nil, err
			}
		default:
			return resp, nil
		}
	}
}

// discard drains a little of resp's body and closes it.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// resourceURL is the request's resource: Options.Resource when it names
// the request's URL (nil when it does not), else that URL without query or
// fragment.
func (t *Transport) resourceURL(req *http.Request) (*url.URL, error) {
	u := *req.URL
	u.RawQuery, u.Fragment, u.User = "", "", nil
	if t.opts.Resource != "" {
		r, err := url.Parse(t.opts.Resource)
		if err != nil {
			return nil, fmt.Errorf("hexmcp: Options.Resource: %w", err)
		}
		if !resourceMatches(t.opts.Resource, canonicalResource(&u)) {
			return nil, nil
		}
		return r, nil
	}
	return &u, nil
}

// current returns the stored token of resource, refreshed (or renewed
// with client_credentials) first when it has expired. Failures leave the
// token as it was: the server's 401 starts the flow.
func (t *Transport) current(ctx context.Context, s *server, resURL *url.URL, resource string) *oauth2.Token {
	k := t.key(resource)
	tok, err := t.opts.Store.Get(ctx, k)
	if err != nil || tok == nil || tok.Valid() {
		return tok
	}
	if tok.RefreshToken == "" && !t.machine() {
		return tok
	}
	if s.lock(ctx) != nil {
		return tok
	}
	defer s.unlock()
	if now, err := t.opts.Store.Get(ctx, k); err == nil && now != nil && now.AccessToken != tok.AccessToken {
		return now // another request renewed it
	}
	if s.found == nil {
		d, err := discover(ctx, t.client, resURL, "")
		if err != nil {
			return tok
		}
		s.found = d
	}
	var fresh *oauth2.Token
	switch {
	case s.mayRefresh(tok, s.found):
		fresh, err = t.refresh(ctx, s.found, tok, s.scopes)
	case t.machine():
		fresh, err = t.machineGrant(ctx, s.found, t.scopes(s, nil))
	default:
		return tok
	}
	if err != nil || t.put(ctx, s, k, fresh) != nil {
		return tok
	}
	return fresh
}

// scopes returns the scopes to ask for: challenged, else the resource's
// scopes_supported, with Options.Scopes.
func (t *Transport) scopes(s *server, challenged []string) []string {
	var out []string
	if len(challenged) > 0 {
		out = slices.Clone(challenged)
	} else if s.found != nil {
		out = slices.Clone(s.found.prm.ScopesSupported)
	}
	return union(out, t.opts.Scopes)
}

// union returns a followed by the elements of b it lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// unauthorized obtains a token after a 401 to a request sent with failed
// (nil: none): another request's new token, a refreshed one, or a new
// authorization.
func (t *Transport) unauthorized(ctx context.Context, s *server, resURL *url.URL, resource string, ch challenge, failed *oauth2.Token) (*oauth2.Token, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.unlock()
	k := t.key(resource)
	if now, err := t.opts.Store.Get(ctx, k); err == nil && now != nil && (failed == nil || now.AccessToken != failed.AccessToken) && now.Valid() {
		return now, nil
	}
	d, err := discover(ctx, t.client, resURL, ch.resourceMetadata())
	if err != nil {
		return nil, err
	}
	s.found = d
	scopes := t.scopes(s, ch.scopes())
	if failed != nil && s.mayRefresh(failed, d) {
		if tok, err := t.refresh(ctx, d, failed, s.scopes); err == nil {
			return tok, t.put(ctx, s, k, tok)
		}
	}
	return t.obtain(ctx, s, k, scopes)
}

// stepUp authorizes again with the scopes asked before and those of the
// challenge.
func (t *Transport) stepUp(ctx context.Context, s *server, resURL *url.URL, resource string, ch challenge, failed *oauth2.Token) (*oauth2.Token, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.unlock()
	k := t.key(resource)
	if now, err := t.opts.Store.Get(ctx, k); err == nil && now != nil && now.AccessToken != failed.AccessToken && now.Valid() {
		return now, nil // another request stepped up
	}
	if s.found == nil {
		d, err := discover(ctx, t.client, resURL, ch.resourceMetadata())
		if err != nil {
			return nil, err
		}
		s.found = d
	}
	prev := s.scopes
	if len(prev) == 0 {
		prev = t.scopes(s, nil)
	}
	return t.obtain(ctx, s, k, union(prev, ch.scopes()))
}

// obtain gets a new token for scopes (client_credentials or the
// authorization code flow) and stores it.
func (t *Transport) obtain(ctx context.Context, s *server, k Key, scopes []string) (*oauth2.Token, error) {
	var tok *oauth2.Token
	var err error
	if t.machine() {
		tok, err = t.machineGrant(ctx, s.found, scopes)
	} else {
		tok, err = t.authorize(ctx, s.found, scopes)
	}
	if err != nil {
		return nil, err
	}
	s.scopes = scopes
	return tok, t.put(ctx, s, k, tok)
}

// machine reports whether the Transport gets its tokens without a user:
// client_credentials or the JWT bearer grant.
func (t *Transport) machine() bool { return t.opts.ClientCredentials || t.opts.JWTBearer != nil }

// machineGrant gets a token without a user.
func (t *Transport) machineGrant(ctx context.Context, d *discovered, scopes []string) (*oauth2.Token, error) {
	if t.opts.JWTBearer != nil {
		return t.jwtBearer(ctx, d, scopes)
	}
	return t.clientCredentials(ctx, d, scopes)
}

// put stores tok, issued by s.found's authorization server.
func (t *Transport) put(ctx context.Context, s *server, k Key, tok *oauth2.Token) error {
	if err := t.opts.Store.Put(ctx, k, tok); err != nil {
		return fmt.Errorf("hexmcp: storing the token: %w", err)
	}
	s.issuer = s.found.as.Issuer
	return nil
}
