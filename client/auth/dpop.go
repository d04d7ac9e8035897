package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"math/big"
	"net/http"
	"net/url"
	"time"
)

// publicJWK is the public JWK (RFC 7517) of key, for a DPoP proof's
// header.
func publicJWK(key crypto.Signer) map[string]any {
	b64 := base64.RawURLEncoding.EncodeToString
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		x, y := make([]byte, 32), make([]byte, 32)
		k.X.FillBytes(x)
		k.Y.FillBytes(y)
		return map[string]any{"kty": "EC", "crv": "P-256", "x": b64(x), "y": b64(y)}
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
	case ed25519.PublicKey:
		return map[string]any{"kty": "OKP", "crv": "Ed25519", "x": b64(k)}
	}
	return nil
}

// origin is the nonce scope of a server: its scheme and host.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// dpopProof returns a DPoP proof (RFC 9449 section 4) for a request of
// method to u, bound to accessToken when it is not empty (ath), with the
// last nonce u's server gave.
func (t *Transport) dpopProof(method string, u *url.URL, accessToken string) (string, error) {
	htu := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	claims := map[string]any{"jti": randomString(16), "htm": method, "htu": htu.String(), "iat": time.Now().Unix()}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	t.mu.Lock()
	nonce := t.nonces[origin(u)]
	t.mu.Unlock()
	if nonce != "" {
		claims["nonce"] = nonce
	}
	return signJWT(t.opts.DPoPKey, map[string]any{"typ": "dpop+jwt", "jwk": publicJWK(t.opts.DPoPKey)}, claims)
}

// takeNonce keeps the DPoP-Nonce resp's server sent (RFC 9449 section 8,
// 9), and reports whether it is a new one.
func (t *Transport) takeNonce(u *url.URL, resp *http.Response) bool {
	n := resp.Header.Get("DPoP-Nonce")
	if n == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nonces[origin(u)] == n {
		return false
	}
	t.nonces[origin(u)] = n
	return true
}
