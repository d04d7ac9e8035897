package mcpoauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/hexmcp/hexmcp/ports"
)

// Bounds of a key set.
const (
	// MaxKeys bounds the keys of a JWK set: a set with more is refused
	// whole (an authorization server publishes a handful).
	MaxKeys = 100
	// minRSABits is the smallest RSA modulus a key may have; smaller keys
	// of a set are ignored.
	minRSABits = 2048
)

// algorithm is a signature algorithm this package verifies, and the keys
// that fit it.
type algorithm struct {
	alg jwa.SignatureAlgorithm
	kty string // JWK key type
	crv string // curve, for EC and OKP keys
}

// algorithms are every algorithm a JWT verifier can be allowed: asymmetric
// signatures only. "none" and the HMAC algorithms (HS256…) are not here,
// so no option can allow them: a verifier holds only public keys, and an
// HMAC "verification" with a public key as secret would let anyone who
// read the key set sign.
var algorithms = map[string]algorithm{
	"RS256":   {jwa.RS256(), "RSA", ""},
	"RS384":   {jwa.RS384(), "RSA", ""},
	"RS512":   {jwa.RS512(), "RSA", ""},
	"PS256":   {jwa.PS256(), "RSA", ""},
	"PS384":   {jwa.PS384(), "RSA", ""},
	"PS512":   {jwa.PS512(), "RSA", ""},
	"ES256":   {jwa.ES256(), "EC", "P-256"},
	"ES384":   {jwa.ES384(), "EC", "P-384"},
	"ES512":   {jwa.ES512(), "EC", "P-521"},
	"EdDSA":   {jwa.EdDSA(), "OKP", "Ed25519"},
	"Ed25519": {jwa.EdDSAEd25519(), "OKP", "Ed25519"},
}

// DefaultAlgorithms is the allow-list of [JWTOptions.Algorithms] by default:
// every algorithm the package supports (RSA PKCS#1 v1.5 and PSS with
// SHA-256/384/512, ECDSA on P-256/P-384/P-521, Ed25519).
var DefaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"}

// publicKey is one usable key of a set.
type publicKey struct {
	kid string
	alg string // the JWK's alg, "" when it names none
	kty string
	crv string
	key any // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

// fits reports whether the key may verify a signature of alg.
func (k publicKey) fits(alg string) bool {
	a, ok := algorithms[alg]
	return ok && (k.alg == "" || k.alg == alg) && k.kty == a.kty && k.crv == a.crv
}

// jwkHeader is what is read of a JWK before it is parsed.
type jwkHeader struct {
	Kty    string   `json:"kty"`
	Use    string   `json:"use"`
	KeyOps []string `json:"key_ops"`
}

// parseKeySet returns the usable keys of a JWK set: public signature keys
// of a supported type. Symmetric keys (kty "oct") are never used, nor keys
// meant for encryption ("use" other than "sig", "key_ops" without
// "verify"), nor keys that do not parse (so that one exotic key does not
// make a whole set unusable), nor RSA keys under minRSABits.
func parseKeySet(b []byte) ([]publicKey, error) {
	var set struct {
		Keys []jsontext.Value `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("JWK set: %w", err)
	}
	if set.Keys == nil {
		return nil, errors.New(`JWK set: no "keys" member`)
	}
	if len(set.Keys) > MaxKeys {
		return nil, fmt.Errorf("JWK set: %d keys, more than %d", len(set.Keys), MaxKeys)
	}
	keys := make([]publicKey, 0, len(set.Keys))
	for _, raw := range set.Keys {
		var h jwkHeader
		if json.Unmarshal(raw, &h) != nil {
			continue
		}
		if h.Kty != "RSA" && h.Kty != "EC" && h.Kty != "OKP" { // "oct" above all
			continue
		}
		if (h.Use != "" && h.Use != "sig") || (h.KeyOps != nil && !slices.Contains(h.KeyOps, "verify")) {
			continue
		}
		k, err := jwk.ParseKey(raw)
		if err != nil {
			continue
		}
		if pk, ok := usableKey(k); ok {
			keys = append(keys, pk)
		}
	}
	return keys, nil
}

// usableKey turns a parsed JWK into a publicKey (the public half of a
// private key that should not have been published).
func usableKey(k jwk.Key) (publicKey, bool) {
	pub, err := k.PublicKey()
	if err != nil {
		return publicKey{}, false
	}
	var raw any
	if err := jwk.Export(pub, &raw); err != nil {
		return publicKey{}, false
	}
	pk := publicKey{}
	pk.kid, _ = k.KeyID()
	if a, ok := k.Algorithm(); ok {
		pk.alg = a.String()
		if _, known := algorithms[pk.alg]; !known {
			return publicKey{}, false // an algorithm this package does not verify
		}
	}
	switch key := raw.(type) {
	case *rsa.PublicKey:
		if key.N.BitLen() < minRSABits {
			return publicKey{}, false
		}
		pk.kty, pk.key = "RSA", key
	case *ecdsa.PublicKey:
		pk.kty, pk.key = "EC", key
		pk.crv = key.Curve.Params().Name
	case ed25519.PublicKey:
		pk.kty, pk.crv, pk.key = "OKP", "Ed25519", key
	default:
		return publicKey{}, false
	}
	return pk, true
}

// keySet is the authorization server's JWK set as last fetched. It is
// fetched again when older than maxAge, and when a token names a key it
// does not hold, but never twice within minInterval: a flood of tokens
// with made-up key ids costs at most one fetch per interval. One fetch runs
// at a time; the requests that need it wait for it (each until its own
// context ends), and it runs on its own goroutine with its own timeout, so
// a client that goes away does not cancel it for the others.
//
// A failed fetch keeps the keys of the last good one: tokens signed by
// them still verify, while a token naming another key cannot be judged
// (ErrUnavailable). Before a first good fetch no token can be judged.
//
// Every fetch that ends, good or not, makes a new generation of the set. A
// caller reads the keys and their generation together, and asks for a
// refetch naming the generation it read: when a fetch has ended since, the
// caller looks at the newer set rather than being told that the interval
// forbids a fetch. Otherwise a caller that read the set just before
// another caller's refetch brought the token's key, and asked just after,
// would refuse a valid token.
type keySet struct {
	issuer      string // whose metadata names the set's URL, when url is ""
	client      *http.Client
	timeout     time.Duration
	maxBytes    int64
	minInterval time.Duration
	maxAge      time.Duration
	clock       ports.Clock

	mu        sync.Mutex
	url       string // the set's URL; "" until discovered
	keys      []publicKey
	gen       uint64        // fetches ended, good or not
	fetched   time.Time     // of the last good fetch; zero before one
	attempted time.Time     // start of the last fetch
	lastErr   error         // of the last fetch
	inflight  chan struct{} // closed when the running fetch ends; nil when none runs
}

// snapshot is what a caller reads of the set at once.
type snapshot struct {
	keys      []publicKey
	gen       uint64
	fetched   time.Time
	attempted time.Time
	lastErr   error
}

func (s *keySet) read() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshot{keys: s.keys, gen: s.gen, fetched: s.fetched, attempted: s.attempted, lastErr: s.lastErr}
}

// fetch fetches the set now, whatever the rate limit (NewJWTVerifier's
// first fetch).
func (s *keySet) fetch(ctx context.Context) error {
	s.mu.Lock()
	s.attempted = s.clock.Now()
	s.mu.Unlock()
	keys, err := s.get(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended(keys, err)
	return err
}

// ended records the end of a fetch; s.mu is held.
func (s *keySet) ended(keys []publicKey, err error) {
	s.gen++
	s.lastErr = err
	if err == nil {
		s.keys, s.fetched = keys, s.clock.Now()
	}
}

// get fetches the set, after the issuer's metadata when its URL is not
// known yet.
func (s *keySet) get(ctx context.Context) ([]publicKey, error) {
	s.mu.Lock()
	url := s.url
	s.mu.Unlock()
	if url == "" {
		md, err := discover(ctx, s.client, s.issuer, s.timeout, s.maxBytes)
		if err != nil {
			return nil, err
		}
		if md.JWKSURI == "" {
			return nil, fmt.Errorf("hexmcp: the metadata of %s has no jwks_uri", s.issuer)
		}
		if _, err := parseSecureURL("jwks_uri", md.JWKSURI, true); err != nil {
			return nil, err
		}
		url = md.JWKSURI
		s.mu.Lock()
		s.url = url
		s.mu.Unlock()
	}
	var raw jsontext.Value
	if err := getJSON(ctx, s.client, url, s.timeout, s.maxBytes, &raw); err != nil {
		return nil, fmt.Errorf("%w: fetching the key set: %w", ErrUnavailable, err)
	}
	keys, err := parseKeySet(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, url, err)
	}
	return keys, nil
}

// start starts a fetch in the background, whatever the rate limit, unless
// one is running (a lazy NewJWTVerifier's first fetch).
func (s *keySet) start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight == nil {
		s.launch(ctx, s.clock.Now())
	}
}

// launch starts a fetch on its own goroutine, with ctx's values but not
// its cancellation, and returns the channel closed when it ends; s.mu is
// held.
func (s *keySet) launch(ctx context.Context, now time.Time) chan struct{} {
	ch := make(chan struct{})
	s.inflight, s.attempted = ch, now
	go func() {
		keys, err := s.get(context.WithoutCancel(ctx))
		s.mu.Lock()
		s.ended(keys, err)
		s.inflight = nil
		close(ch)
		s.mu.Unlock()
	}()
	return ch
}

// refresh makes sure that a set newer than generation seen is there to
// look at: when a fetch has ended since seen, at once; else it joins the
// fetch under way, or starts one unless the rate limit forbids it, and
// returns when that fetch ended or ctx did. It reports whether there is (or,
// ctx ended, may soon be) a newer set than seen: false only when the rate
// limit forbade a fetch.
func (s *keySet) refresh(ctx context.Context, seen uint64) bool {
	s.mu.Lock()
	if s.gen != seen {
		s.mu.Unlock()
		return true // a fetch ended since the caller looked: look again
	}
	ch := s.inflight
	if ch == nil {
		now := s.clock.Now()
		if !s.attempted.IsZero() && now.Sub(s.attempted) < s.minInterval {
			s.mu.Unlock()
			return false
		}
		ch = s.launch(ctx, now)
	}
	s.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
	return true
}

// find returns the one key that may verify a token signed with alg by the
// key kid ("" when the token names none): an error wrapping
// ports.ErrUnauthenticated when there is none or more than one, one
// wrapping ErrUnavailable when the set could not be fetched to tell.
//
// A caller refetches (or joins a refetch, or takes the set a refetch that
// ended after it looked brought) at most once for an aged set and once for
// an unknown key.
func (s *keySet) find(ctx context.Context, kid, alg string) (publicKey, error) {
	snap := s.read()
	if s.clock.Now().Sub(snap.fetched) >= s.maxAge && s.refresh(ctx, snap.gen) {
		snap = s.read() // a set never fetched is aged too
	}
	refreshed := false
	for {
		if snap.fetched.IsZero() {
			return publicKey{}, s.unavailable(ctx, snap, "the key set has not been fetched yet")
		}
		k, err := pick(snap.keys, kid, alg)
		if err == nil || !errors.Is(err, errUnknownKey) {
			return k, err
		}
		// An unknown key id: the server may have rotated its keys.
		if !refreshed && s.refresh(ctx, snap.gen) {
			refreshed = true
			snap = s.read()
			continue
		}
		if ctx.Err() != nil || snap.lastErr != nil { // the set could not be fetched to tell
			return publicKey{}, s.unavailable(ctx, snap, fmt.Sprintf("the token's key %q is not among the keys last fetched", kid))
		}
		return publicKey{}, err
	}
}

// unavailable is the error of a token that cannot be judged without a
// fetch of the set that failed (or that ctx did not wait for). It wraps
// ErrUnavailable and says, by its RetryAfter method, when the next fetch
// may be made (mcphttp.RequireBearer sends it as Retry-After).
func (s *keySet) unavailable(ctx context.Context, snap snapshot, why string) error {
	var err error
	switch {
	case ctx.Err() != nil:
		err = fmt.Errorf("%w: waiting for the key set: %w (%s)", ErrUnavailable, ctx.Err(), why)
	case snap.lastErr == nil: // cannot be: a fetch ended without a good set
		err = fmt.Errorf("%w: %s", ErrUnavailable, why)
	case errors.Is(snap.lastErr, ErrUnavailable):
		err = fmt.Errorf("%w (%s)", snap.lastErr, why)
	default: // the metadata names no usable key set: a fault of the server too
		err = fmt.Errorf("%w: %w (%s)", ErrUnavailable, snap.lastErr, why)
	}
	after := snap.attempted.Add(s.minInterval).Sub(s.clock.Now())
	return &retryError{err: err, after: max(after, time.Second)}
}

// retryError is an error that says how long to wait before trying again.
type retryError struct {
	err   error
	after time.Duration
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

// RetryAfter is how long until the authenticator may judge the token (the
// next fetch the rate limit allows); mcphttp.RequireBearer sends it as
// Retry-After.
func (e *retryError) RetryAfter() time.Duration { return e.after }

var errUnknownKey = fmt.Errorf("%w: the token's key is not in the authorization server's key set", ports.ErrUnauthenticated)

// pick chooses the key for a token among keys.
func pick(keys []publicKey, kid, alg string) (publicKey, error) {
	var found []publicKey
	named := false
	for _, k := range keys {
		if kid != "" && k.kid != kid {
			continue
		}
		named = true
		if k.fits(alg) {
			found = append(found, k)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return publicKey{}, fmt.Errorf("%w: %d keys fit the token (kid %q, alg %s)", ports.ErrUnauthenticated, len(found), kid, alg)
	case kid != "" && !named:
		return publicKey{}, fmt.Errorf("%w (kid %q)", errUnknownKey, kid)
	case kid != "":
		return publicKey{}, fmt.Errorf("%w: the key %q does not fit the algorithm %s", ports.ErrUnauthenticated, kid, alg)
	default:
		return publicKey{}, fmt.Errorf("%w: the token names no key (kid) and no single key of the set fits %s", ports.ErrUnauthenticated, alg)
	}
}
