package mcpoauth

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/ports"
)

// claimSet is a token's claims (a JWT's payload, an introspection answer),
// each kept as JSON until read. Decoding rejects duplicate member names, so
// a token cannot carry two "aud" or two "exp" for two readers to disagree
// on.
type claimSet map[string]jsontext.Value

func decodeClaims(b []byte) (claimSet, error) {
	var c claimSet
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return c, nil
}

// str returns a string claim; present reports whether it is there.
func (c claimSet) str(name string) (v string, present bool, err error) {
	raw, ok := c[name]
	if !ok {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", true, fmt.Errorf("the %q claim is not a string", name)
	}
	return v, true, nil
}

// date returns a NumericDate claim (RFC 7519: seconds since the epoch,
// possibly fractional).
func (c claimSet) date(name string) (t time.Time, present bool, err error) {
	raw, ok := c[name]
	if !ok {
		return time.Time{}, false, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1<<40 {
		return time.Time{}, true, fmt.Errorf("the %q claim is not a NumericDate", name)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, nil
}

// strings returns a claim that is a string or an array of strings; split
// cuts a string at spaces (a scope list).
func (c claimSet) strings(name string, split bool) ([]string, error) {
	raw, ok := c[name]
	if !ok {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if split {
			return strings.Fields(s), nil
		}
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("the %q claim is neither a string nor an array of strings", name)
	}
	return list, nil
}

// reject wraps ports.ErrUnauthenticated: the token is refused.
func reject(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ports.ErrUnauthenticated}, args...)...)
}

// checks are the claim checks that JWTs and introspection answers share.
type checks struct {
	issuer   string // "" checks no iss (an introspection answer without one)
	audience string // canonical (canonicalResource)
	// requireAud and requireExp make the claim mandatory.
	requireAud, requireExp bool
	leeway                 time.Duration
	subjectClaim           string
	claims                 []string
}

// principal checks c at now and returns its principal and expiry (zero
// when it has none).
func (k checks) principal(c claimSet, now time.Time) (ports.Principal, time.Time, error) {
	if k.issuer != "" {
		iss, ok, err := c.str("iss")
		if err != nil {
			return ports.Principal{}, time.Time{}, reject("%v", err)
		}
		if !ok || iss != k.issuer {
			return ports.Principal{}, time.Time{}, reject("issuer %q, not %q", iss, k.issuer)
		}
	}
	aud, err := c.strings("aud", false)
	if err != nil {
		return ports.Principal{}, time.Time{}, reject("%v", err)
	}
	if _, present := c["aud"]; present || k.requireAud {
		if len(aud) == 0 {
			return ports.Principal{}, time.Time{}, reject("the token names no audience (aud), so it is not for this resource (%s)", k.audience)
		}
		if !slices.ContainsFunc(aud, func(a string) bool { return canonicalResource(a) == k.audience }) {
			return ports.Principal{}, time.Time{}, reject("the token is for %q, not for this resource (%s)", aud, k.audience)
		}
	}
	exp, hasExp, err := c.date("exp")
	if err != nil {
		return ports.Principal{}, time.Time{}, reject("%v", err)
	}
	if !hasExp && k.requireExp {
		return ports.Principal{}, time.Time{}, reject("the token has no expiry (exp)")
	}
	if hasExp && !now.Before(exp.Add(k.leeway)) {
		return ports.Principal{}, time.Time{}, reject("the token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	nbf, hasNbf, err := c.date("nbf")
	if err != nil {
		return ports.Principal{}, time.Time{}, reject("%v", err)
	}
	if hasNbf && now.Add(k.leeway).Before(nbf) {
		return ports.Principal{}, time.Time{}, reject("the token is not valid before %s", nbf.UTC().Format(time.RFC3339))
	}
	iat, hasIat, err := c.date("iat")
	if err != nil {
		return ports.Principal{}, time.Time{}, reject("%v", err)
	}
	if hasIat && now.Add(k.leeway).Before(iat) {
		return ports.Principal{}, time.Time{}, reject("the token was issued in the future (%s)", iat.UTC().Format(time.RFC3339))
	}
	sub, _, err := c.str(k.subjectClaim)
	if err != nil {
		return ports.Principal{}, time.Time{}, reject("%v", err)
	}
	if sub == "" {
		return ports.Principal{}, time.Time{}, reject("the token names no subject (%q)", k.subjectClaim)
	}
	scope, err := c.strings("scope", true)
	if err != nil {
		return ports.Principal{}, time.Time{}, reject("%v", err)
	}
	scp, err := c.strings("scp", true)
	if err != nil {
		return ports.Principal{}, time.Time{}, reject("%v", err)
	}
	var scopes []string
	for _, s := range append(scope, scp...) {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	p := ports.Principal{Subject: sub, Scopes: scopes}
	if hasExp {
		p.Expires = exp.Add(k.leeway) // refused from then on, as above
	}
	for _, name := range k.claims {
		raw, ok := c[name]
		if !ok {
			continue
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		if p.Claims == nil {
			p.Claims = make(map[string]any, len(k.claims))
		}
		p.Claims[name] = v
	}
	return p, exp, nil
}

// principalClaims is the claims a principal carries by default, besides
// those the options name.
var principalClaims = []string{"client_id", "azp"}

func claimList(extra []string) []string {
	list := slices.Clone(principalClaims)
	for _, c := range extra {
		if c != "" && !slices.Contains(list, c) {
			list = append(list, c)
		}
	}
	return list
}
