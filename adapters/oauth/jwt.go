package mcpoauth

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [JWTOptions].
const (
	// DefaultRefreshMinInterval is the least time between two fetches of
	// the key set: 10 seconds.
	defaultRefreshMinInterval = 10 * time.Second
	// DefaultKeysMaxAge is how long a fetched key set is used before it is
	// fetched again: 1 hour.
	defaultKeysMaxAge = time.Hour
)

// JWTOptions configure [NewJWTVerifier]. Issuer and Audience are required;
// zero (or negative) other fields take their defaults: no field turns a
// bound or a check off.
type JWTOptions struct {
	// Issuer is the authorization server's issuer identifier: an https URL
	// (http only on a loopback host), without query or fragment. Its
	// metadata is found at the well-known URLs the MCP authorization spec
	// lists (RFC 8414's, then OpenID Connect's) and must name this issuer,
	// character for character; every token's "iss" must equal it too.
	Issuer string
	// Audience is this server's resource identifier, the "resource" of its
	// [Metadata] (https://mcp.example.com/mcp): a token's "aud" must name it
	// (RFC 8707), so that a token the authorization server issued for
	// another resource is refused. Compared with scheme and host in any
	// case, a default port and a lone trailing slash ignored.
	Audience string
	// Algorithms is the allow-list of the "alg" a token may be signed
	// with. Default [DefaultAlgorithms]. Only asymmetric algorithms exist
	// here: naming "none", an HMAC algorithm (HS256…) or an unknown one is
	// an error of NewJWTVerifier. The key that verifies a token must fit
	// its alg too (key type, curve, and the JWK's own "alg" when it names
	// one).
	Algorithms []string
	// Leeway is the clock skew allowed when checking exp, nbf and iat.
	// Default 30 seconds.
	Leeway time.Duration
	// JWKSURI, when set, is the key set's URL, and the issuer's metadata is
	// not fetched. Default: the metadata's jwks_uri.
	JWKSURI string
	// RefreshMinInterval is the least time between two fetches of the key
	// set (a token naming an unknown key makes the verifier fetch it
	// again, so that a rotated key verifies). Default
	// 10 seconds.
	RefreshMinInterval time.Duration
	// KeysMaxAge is how long a fetched key set is used before the next
	// token makes the verifier fetch it again. Default 1 hour.
	KeysMaxAge time.Duration
	// HTTPClient fetches the metadata and the key set. Default: a client
	// that follows no redirect, with a timeout of 10 seconds.
	HTTPClient *http.Client
	// FetchTimeout bounds each fetch. Default 10 seconds.
	FetchTimeout time.Duration
	// MaxResponseBytes bounds the metadata and the key set read. Default
	// 1 MiB.
	MaxResponseBytes int64
	// MaxTokenBytes bounds the tokens looked at; a longer one is refused
	// unread. Default 16 KiB.
	MaxTokenBytes int
	// SubjectClaim names the claim that is the principal's Subject, which
	// a token must have. Default "sub" (required in a JWT access token,
	// RFC 9068).
	SubjectClaim string
	// Claims names the claims copied into Principal.Claims besides
	// "client_id" and "azp" (when the token has them), decoded from JSON.
	// The token itself is never there.
	Claims []string
	// Lazy makes NewJWTVerifier return without waiting for the
	// authorization server: the metadata and the key set are fetched in
	// the background, and, while that fails, again when a token arrives,
	// at most once per RefreshMinInterval. Until a fetch succeeds every
	// token is answered with an error wrapping [ErrUnavailable] whose
	// RetryAfter method tells when the next fetch may be made
	// (mcphttp.RequireBearer answers 503 with that Retry-After), never
	// with a 401 or an open door. A server that starts during an outage of
	// its authorization server then serves what needs no token, answers
	// 503 to the rest, and recovers by itself once the authorization
	// server is back. What the authorization server publishes wrongly (a
	// metadata document naming another issuer, no jwks_uri) is then
	// known only at that first fetch, and answered 503 the same way
	// (RequireBearer logs it). By default NewJWTVerifier fetches them and
	// fails when it cannot.
	Lazy bool
	// RequireATJWT accepts only tokens whose typ header is "at+jwt" (or
	// "application/at+jwt"), as RFC 9068 asks of a JWT access token, and
	// refuses those typed "JWT" or not typed at all. By default they are
	// accepted, since many authorization servers still issue them; a typ
	// that names another kind of token is refused either way.
	RequireATJWT bool
	// Clock tells the time. Default ports.SystemClock{}.
	Clock ports.Clock
}

// jwtVerifier is the [ports.Authenticator] of [NewJWTVerifier].
type jwtVerifier struct {
	algs   []string
	atJWT  bool // RequireATJWT
	keys   *keySet
	checks checks
	clock  ports.Clock
	max    int
}

var _ ports.Authenticator = (*jwtVerifier)(nil)

// NewJWTVerifier returns a verifier of the tokens of opts.Issuer for
// opts.Audience: a [ports.Authenticator] for JWT access tokens issued by
// one authorization server (RFC 9068 profile, RFC 7519 and RFC 7515 checks).
// A token is accepted when all of these hold:
//
//   - it is a JWS in compact serialization of at most MaxTokenBytes, whose
//     protected header has no "crit" and no "b64" member, and whose alg is in
//     the allow-list (never "none", never an HMAC);
//   - its typ header, compared without case and without an "application/"
//     prefix, is "at+jwt" (RFC 9068), "JWT", or absent; with RequireATJWT
//     only "at+jwt". Any other typ says the JWT is another kind of token
//     (RFC 8725 section 3.11, explicit typing: a security event
//     "secevent+jwt", a logout token "logout+jwt", an ID token, a DPoP proof
//     "dpop+jwt"…), signed by the same server perhaps, but not an access
//     token: refused;
//   - its kid names a key of the authorization server's key set (a token
//     without kid: the only key of the set that fits its alg), that key fits
//     the alg, and the signature verifies with it. Symmetric keys of the set
//     are never used, nor keys the token carries (jwk, jku, x5u, x5c);
//   - its claims are a JSON object without duplicate names, "iss" equals
//     the Issuer, "aud" (a string or an array) names the Audience, "exp" is
//     present and not past, "nbf" and "iat" (when present) are not in the
//     future (each with Leeway), and the subject claim is a non-empty
//     string.
//
// The principal is: Subject from "sub" (SubjectClaim), Scopes from
// "scope" (space-separated) and "scp" (an array, or a space-separated
// string), Claims the chosen claims, Expires "exp" plus Leeway (when the
// verifier starts refusing the token: a WebSocket connection it opened is
// closed then, a GET or listen stream ends). Every refusal wraps
// ports.ErrUnauthenticated; a key set that cannot be fetched when needed
// wraps [ErrUnavailable].
//
// Keys: the set is fetched by NewJWTVerifier, again when it is older than
// KeysMaxAge, and again when a token names a key it does not hold, at most
// once per RefreshMinInterval. After the authorization server rotates its
// keys, a token signed by a new key verifies once the set is fetched again
// (at once, unless a fetch happened within RefreshMinInterval). A token
// signed by an old key verifies as long as the server still publishes that
// key, and stops verifying at the first fetch that no longer finds it: the
// verifier trusts exactly the keys last published. A fetch that fails keeps
// the keys of the last good one (a server that is down does not stop the
// tokens signed by known keys), while a token naming an unknown key cannot
// be judged then (ErrUnavailable, a 503, with the time until the next fetch
// the rate limit allows as Retry-After).
//
// It is safe for concurrent use.
//
// NewJWTVerifier fetches the issuer's metadata (unless opts.JWKSURI is
// set) and its key set within ctx: an error wrapping [ErrUnavailable] says
// they could not be fetched, another that the options or what the server
// published are wrong. With opts.Lazy it checks the options only, and
// starts fetching in the background (with ctx's values, not its deadline).
func NewJWTVerifier(ctx context.Context, opts JWTOptions) (ports.Authenticator, error) {
	if _, err := parseSecureURL("issuer", opts.Issuer, false); err != nil {
		return nil, err
	}
	if opts.Audience == "" {
		return nil, errors.New("hexmcp: JWTOptions.Audience is empty (it names this server: its resource URL)")
	}
	algs := opts.Algorithms
	if len(algs) == 0 {
		algs = DefaultAlgorithms
	}
	for _, a := range algs {
		if _, ok := algorithms[a]; !ok {
			return nil, fmt.Errorf("hexmcp: the algorithm %q cannot be allowed (only asymmetric signatures: %s)", a, strings.Join(DefaultAlgorithms, ", "))
		}
	}
	client := opts.HTTPClient
	if client == nil {
		client = defaultHTTPClient
	}
	timeout := positive(opts.FetchTimeout, defaultFetchTimeout)
	maxBytes := positive(opts.MaxResponseBytes, defaultMaxResponseBytes)
	if opts.JWKSURI != "" {
		if _, err := parseSecureURL("jwks_uri", opts.JWKSURI, true); err != nil {
			return nil, err
		}
	}
	clock := cmp.Or[ports.Clock](opts.Clock, ports.SystemClock{})
	v := &jwtVerifier{
		algs:  slices.Clone(algs),
		atJWT: opts.RequireATJWT,
		keys: &keySet{
			issuer:      opts.Issuer,
			url:         opts.JWKSURI,
			client:      client,
			timeout:     timeout,
			maxBytes:    maxBytes,
			minInterval: positive(opts.RefreshMinInterval, defaultRefreshMinInterval),
			maxAge:      positive(opts.KeysMaxAge, defaultKeysMaxAge),
			clock:       clock,
		},
		checks: checks{
			issuer:       opts.Issuer,
			audience:     canonicalResource(opts.Audience),
			requireAud:   true,
			requireExp:   true,
			leeway:       positive(opts.Leeway, defaultLeeway),
			subjectClaim: cmp.Or(opts.SubjectClaim, "sub"),
			claims:       claimList(opts.Claims),
		},
		clock: clock,
		max:   positive(opts.MaxTokenBytes, defaultMaxTokenBytes),
	}
	if opts.Lazy {
		v.keys.start(ctx)
		return v, nil
	}
	if err := v.keys.fetch(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// joseHeader is what is read of a token's protected header.
type joseHeader struct {
	Alg  string         `json:"alg"`
	Kid  string         `json:"kid"`
	Typ  *string        `json:"typ"`
	Crit jsontext.Value `json:"crit"`
	B64  jsontext.Value `json:"b64"`
}

// Authenticate verifies token (see [NewJWTVerifier]) and returns its
// principal.
func (v *jwtVerifier) Authenticate(ctx context.Context, token string) (ports.Principal, error) {
	if len(token) > v.max {
		return ports.Principal{}, reject("the token is longer than %d bytes", v.max)
	}
	head, _, ok := strings.Cut(token, ".")
	if !ok || strings.Count(token, ".") != 2 {
		return ports.Principal{}, reject("not a JWS in compact serialization")
	}
	hb, err := base64.RawURLEncoding.Strict().DecodeString(head)
	if err != nil {
		return ports.Principal{}, reject("the header is not base64url: %v", err)
	}
	var h joseHeader
	if err := json.Unmarshal(hb, &h); err != nil {
		return ports.Principal{}, reject("the header: %v", err)
	}
	if h.Crit != nil || h.B64 != nil {
		return ports.Principal{}, reject("the header has crit or b64, which are not supported")
	}
	if err := v.checkType(h.Typ); err != nil {
		return ports.Principal{}, err
	}
	if !slices.Contains(v.algs, h.Alg) {
		return ports.Principal{}, reject("the algorithm %q is not allowed", h.Alg)
	}
	key, err := v.keys.find(ctx, h.Kid, h.Alg)
	if err != nil {
		return ports.Principal{}, err
	}
	payload, err := jws.Verify([]byte(token), jws.WithKey(algorithms[h.Alg].alg, key.key), jws.WithAlgorithmMatch(true))
	if err != nil {
		return ports.Principal{}, reject("the signature does not verify: %v", err)
	}
	c, err := decodeClaims(payload)
	if err != nil {
		return ports.Principal{}, reject("the claims: %v", err)
	}
	p, _, err := v.checks.principal(c, v.clock.Now())
	return p, err
}

// checkType checks a token's typ header (nil: absent).
func (v *jwtVerifier) checkType(typ *string) error {
	t := ""
	if typ != nil {
		t = strings.ToLower(*typ)
		if rest, ok := strings.CutPrefix(t, "application/"); ok && !strings.Contains(rest, "/") {
			t = rest
		}
	}
	switch {
	case t == "at+jwt":
		return nil
	case v.atJWT:
		if typ == nil {
			return reject(`the token has no typ header; "at+jwt" is required (RFC 9068)`)
		}
		return reject(`the token's typ is %q; "at+jwt" is required (RFC 9068)`, *typ)
	case typ == nil || t == "jwt":
		return nil
	default:
		return reject(`the token's typ %q names another kind of token than an access token ("at+jwt", or "JWT")`, *typ)
	}
}

// positive returns v, or def when v is not positive.
func positive[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
