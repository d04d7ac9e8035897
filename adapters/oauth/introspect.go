package mcpoauth

import (
	"cmp"
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [IntrospectionOptions].
const (
	// DefaultCacheMaxEntries bounds the introspection answers kept: 10,000.
	defaultCacheMaxEntries = 10_000
	// DefaultCacheFor is the longest an introspection answer is kept:
	// 1 minute, which is also the longest a revoked token goes on being
	// accepted.
	defaultCacheFor = time.Minute
)

// IntrospectionOptions configure [NewIntrospector]. ClientID, ClientSecret,
// Audience and one of Endpoint and Issuer are required; zero (or negative)
// other fields take their defaults: no field turns a bound off.
type IntrospectionOptions struct {
	// Endpoint is the authorization server's introspection endpoint
	// (RFC 7662): an https URL (http only on a loopback host). Default: the
	// introspection_endpoint of the Issuer's metadata.
	Endpoint string
	// Issuer is the authorization server's issuer identifier. When set, its
	// metadata is fetched to find the Endpoint (if that is empty), and an
	// answer that names an "iss" must name this one.
	Issuer string
	// ClientID and ClientSecret authenticate this server to the endpoint
	// (client_secret_basic: HTTP Basic, each form-encoded first, as
	// RFC 6749 section 2.3.1 says).
	ClientID, ClientSecret string
	// Audience is this server's resource identifier (its Metadata's
	// "resource"): an answer's "aud" must name it (RFC 8707), as a JWT's
	// must.
	Audience string
	// AcceptMissingAudience accepts an active answer without "aud", whose
	// token nothing says was issued for this server: the authorization
	// server, which knows which resource asks (the client credentials), is
	// then trusted to answer active only for tokens meant for it. Set it
	// for an authorization server that names no audience in its answers.
	// By default such an answer is refused (401), as a JWT without "aud"
	// is; an "aud" that names another resource is refused either way.
	AcceptMissingAudience bool
	// Cache bounds the cache of answers.
	Cache CacheOptions
	// Leeway is the clock skew allowed when checking an answer's exp and
	// nbf. Default 30 seconds.
	Leeway time.Duration
	// HTTPClient sends the requests. Default: a client that follows no
	// redirect, with a timeout of 10 seconds.
	HTTPClient *http.Client
	// Timeout bounds each request to the endpoint (and the metadata
	// fetch). Default 10 seconds.
	Timeout time.Duration
	// MaxResponseBytes bounds an answer read. Default
	// 1 MiB.
	MaxResponseBytes int64
	// MaxTokenBytes bounds the tokens sent; a longer one is refused
	// unsent. Default 16 KiB.
	MaxTokenBytes int
	// SubjectClaim names the member of the answer that is the principal's
	// Subject, which an active token must have. Default "sub".
	SubjectClaim string
	// Claims names the members of the answer copied into Principal.Claims
	// besides "client_id" and "azp" (when present): "username", say.
	Claims []string
	// Clock tells the time. Default ports.SystemClock{}.
	Clock ports.Clock
}

// CacheOptions bound the cache of an [Introspector].
type CacheOptions struct {
	// MaxEntries bounds the answers kept; the least recently used one
	// makes room. Default 10,000.
	MaxEntries int
	// CacheFor is the longest an answer is kept. An active token's answer
	// is kept no longer than the token lives (its exp). Default
	// 1 minute.
	CacheFor time.Duration
	// Disabled asks the endpoint about every request's token.
	Disabled bool
}

// Introspector is a [ports.Authenticator] for opaque access tokens: it asks
// the authorization server's introspection endpoint (RFC 7662) about each
// token, authenticating with client_secret_basic, and caches the answers.
//
// A token is accepted when the answer says "active": true, "aud" names the
// Audience (unless AcceptMissingAudience, when there is no "aud"), and,
// when the answer has them: "token_type" is Bearer, "iss" is the Issuer,
// "exp" is not past and "nbf" not in the future (with Leeway); the subject
// member must be a non-empty string. The principal
// is: Subject from "sub" (SubjectClaim), Scopes from "scope", Claims the
// chosen members, Expires "exp" plus Leeway when the answer has an "exp"
// (without one, a WebSocket connection the token opened is not ended by
// the token). An inactive or refused token wraps
// ports.ErrUnauthenticated; an endpoint that cannot be reached, answers
// other than 200 or answers something that is not an introspection answer
// wraps [ErrUnavailable] (a 503), and is not cached.
//
// The cache holds, by the SHA-256 of the token (never the token), both
// accepting and refusing answers, at most CacheFor and, for an accepted
// token, no longer than its exp; at most MaxEntries of them. When two
// requests ask about one token at once, the answer to the later question is
// kept, whichever arrives last.
//
// It is safe for concurrent use.
type Introspector struct {
	endpoint       string
	clientID, pass string
	checks         checks
	client         *http.Client
	timeout        time.Duration
	maxBytes       int64
	maxToken       int
	clock          ports.Clock
	cache          *answerCache
}

var _ ports.Authenticator = (*Introspector)(nil)

// NewIntrospector returns an introspector for opts. It fetches the
// issuer's metadata, within ctx, when opts.Endpoint is empty.
func NewIntrospector(ctx context.Context, opts IntrospectionOptions) (*Introspector, error) {
	if opts.ClientID == "" || opts.ClientSecret == "" {
		return nil, errors.New("hexmcp: IntrospectionOptions.ClientID and ClientSecret are required (the endpoint authenticates its callers)")
	}
	if opts.Audience == "" {
		return nil, errors.New("hexmcp: IntrospectionOptions.Audience is empty (it names this server: its resource URL)")
	}
	client := opts.HTTPClient
	if client == nil {
		client = defaultHTTPClient
	}
	timeout := positive(opts.Timeout, defaultFetchTimeout)
	maxBytes := positive(opts.MaxResponseBytes, defaultMaxResponseBytes)
	endpoint := opts.Endpoint
	if opts.Issuer != "" {
		if _, err := parseSecureURL("issuer", opts.Issuer, false); err != nil {
			return nil, err
		}
		if endpoint == "" {
			md, err := discover(ctx, client, opts.Issuer, timeout, maxBytes)
			if err != nil {
				return nil, err
			}
			if md.IntrospectionEndpoint == "" {
				return nil, fmt.Errorf("hexmcp: the metadata of %s has no introspection_endpoint", opts.Issuer)
			}
			endpoint = md.IntrospectionEndpoint
		}
	}
	if endpoint == "" {
		return nil, errors.New("hexmcp: IntrospectionOptions needs an Endpoint or an Issuer")
	}
	if _, err := parseSecureURL("introspection endpoint", endpoint, true); err != nil {
		return nil, err
	}
	in := &Introspector{
		endpoint: endpoint,
		clientID: url.QueryEscape(opts.ClientID),
		pass:     url.QueryEscape(opts.ClientSecret),
		checks: checks{
			issuer:       opts.Issuer,
			audience:     canonicalResource(opts.Audience),
			requireAud:   !opts.AcceptMissingAudience,
			leeway:       positive(opts.Leeway, defaultLeeway),
			subjectClaim: cmp.Or(opts.SubjectClaim, "sub"),
			claims:       claimList(opts.Claims),
		},
		client:   client,
		timeout:  timeout,
		maxBytes: maxBytes,
		maxToken: positive(opts.MaxTokenBytes, defaultMaxTokenBytes),
		clock:    cmp.Or[ports.Clock](opts.Clock, ports.SystemClock{}),
	}
	if !opts.Cache.Disabled {
		in.cache = &answerCache{
			max:     positive(opts.Cache.MaxEntries, defaultCacheMaxEntries),
			maxAge:  positive(opts.Cache.CacheFor, defaultCacheFor),
			entries: make(map[[sha256.Size]byte]*list.Element),
		}
	}
	return in, nil
}

// Authenticate asks about token (or finds the answer in the cache) and
// returns its principal.
func (in *Introspector) Authenticate(ctx context.Context, token string) (ports.Principal, error) {
	if len(token) > in.maxToken {
		return ports.Principal{}, reject("the token is longer than %d bytes", in.maxToken)
	}
	if token == "" {
		return ports.Principal{}, reject("empty token")
	}
	now := in.clock.Now()
	var key [sha256.Size]byte
	if in.cache != nil {
		key = sha256.Sum256([]byte(token))
		if p, err, ok := in.cache.get(key, now); ok {
			return p, err
		}
	}
	c, err := in.ask(ctx, token)
	if err != nil {
		return ports.Principal{}, err
	}
	p, exp, err := in.judge(c, now)
	if in.cache != nil {
		until := now.Add(in.cache.maxAge)
		if err == nil && !exp.IsZero() && exp.Before(until) {
			until = exp
		}
		in.cache.put(key, p, err, now, until)
	}
	return p, err
}

// ask posts token to the endpoint and returns the answer.
func (in *Introspector) ask(ctx context.Context, token string) (claimSet, error) {
	ctx, cancel := context.WithTimeout(ctx, in.timeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(in.clientID, in.pass)
	var c claimSet
	if err := do(in.client, req, in.maxBytes, &c); err != nil {
		return nil, fmt.Errorf("%w: introspection: %w", ErrUnavailable, err)
	}
	if c == nil {
		return nil, fmt.Errorf("%w: introspection: the answer is not a JSON object", ErrUnavailable)
	}
	return c, nil
}

// judge reads an introspection answer.
func (in *Introspector) judge(c claimSet, now time.Time) (ports.Principal, time.Time, error) {
	raw, ok := c["active"]
	if !ok || (string(raw) != "true" && string(raw) != "false") {
		return ports.Principal{}, time.Time{}, fmt.Errorf(`%w: introspection: the answer has no boolean "active"`, ErrUnavailable)
	}
	if string(raw) != "true" {
		return ports.Principal{}, time.Time{}, reject("the token is not active")
	}
	typ, _, err := c.str("token_type")
	if err != nil {
		return ports.Principal{}, time.Time{}, reject("%v", err)
	}
	if typ != "" && !strings.EqualFold(typ, "bearer") {
		return ports.Principal{}, time.Time{}, reject("the token is of type %q, not a bearer access token", typ)
	}
	if _, hasIss := c["iss"]; !hasIss {
		k := in.checks
		k.issuer = "" // an answer without iss: the endpoint speaks for its issuer
		return k.principal(c, now)
	}
	return in.checks.principal(c, now)
}

// answerCache keeps introspection answers, least recently used first out.
type answerCache struct {
	max    int
	maxAge time.Duration

	mu      sync.Mutex
	entries map[[sha256.Size]byte]*list.Element
	lru     list.List // of *answer, most recently used first
}

type answer struct {
	key   [sha256.Size]byte
	p     ports.Principal
	err   error
	asked time.Time // when the question was asked
	until time.Time
}

func (c *answerCache) get(key [sha256.Size]byte, now time.Time) (ports.Principal, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return ports.Principal{}, nil, false
	}
	a := e.Value.(*answer)
	if !now.Before(a.until) {
		c.lru.Remove(e)
		delete(c.entries, key)
		return ports.Principal{}, nil, false
	}
	c.lru.MoveToFront(e)
	return copyPrincipal(a.p), a.err, true
}

// put keeps the answer to a question asked at asked, unless the cache holds
// the answer to a later question about the same token: two callers may ask
// at once, and the answer to the older question (active, before a
// revocation) must not replace the newer one (inactive).
func (c *answerCache) put(key [sha256.Size]byte, p ports.Principal, err error, asked, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		if asked.Before(e.Value.(*answer).asked) {
			return
		}
		c.lru.Remove(e)
		delete(c.entries, key)
	}
	p = copyPrincipal(p) // the caller's copy is its own
	for c.lru.Len() >= c.max {
		oldest := c.lru.Back()
		c.lru.Remove(oldest)
		delete(c.entries, oldest.Value.(*answer).key)
	}
	c.entries[key] = c.lru.PushFront(&answer{key: key, p: p, err: err, asked: asked, until: until})
}

// copyPrincipal returns a deep copy of p, so that a caller that changes
// the principal it got does not change the cache.
func copyPrincipal(p ports.Principal) ports.Principal {
	p.Scopes = slices.Clone(p.Scopes)
	if p.Claims != nil {
		c := make(map[string]any, len(p.Claims))
		for k, v := range p.Claims {
			c[k] = copyJSON(v)
		}
		p.Claims = c
	}
	return p
}

// copyJSON deep-copies a value decoded from JSON.
func copyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(v))
		for k, e := range v {
			c[k] = copyJSON(e)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, e := range v {
			c[i] = copyJSON(e)
		}
		return c
	default:
		return v
	}
}

// Len returns the number of answers cached (for tests and metrics).
func (in *Introspector) Len() int {
	if in.cache == nil {
		return 0
	}
	in.cache.mu.Lock()
	defer in.cache.mu.Unlock()
	return in.cache.lru.Len()
}
