package mcpoauth_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"

	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
)

// TestJWTKeyRotationConcurrent rotates the authorization server's key
// many times while callers with tokens of the new key keep arriving, some
// before the refetch their first caller started has ended, some while it
// ends, some after. Every one of them must be accepted: a caller that
// found the key unknown in the set it read, and asks for a refetch just
// after another caller's refetch brought the key, must look at the new
// set rather than be refused because the refetch interval has not passed.
// Exactly one fetch happens per rotation.
func TestJWTKeyRotationConcurrent(t *testing.T) {
	const (
		rotations = 300
		callers   = 64
	)
	keys := make([]signer, 2)
	tokens := make([]string, 2)
	for i := range keys {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = signer{kid: []string{"even", "odd"}[i], alg: jwa.EdDSA(), key: priv}
		tokens[i] = keys[i].sign(t, testClaims(map[string]any{"exp": time.Now().Add(time.Hour).Unix()}), nil)
	}
	jwks := &jwksServer{}
	jwks.set(keys[1].jwk(t, nil))
	srv := httptest.NewServer(jwks)
	defer srv.Close()
	clock := &fakeClock{}
	v, err := mcpoauth.NewJWTVerifier(context.Background(), mcpoauth.JWTOptions{
		Issuer: testIssuer, Audience: testAudience, JWKSURI: srv.URL, Clock: clock,
		KeysMaxAge: 1000 * time.Hour, // only unknown keys refetch
	})
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int64
	var firstErr atomic.Value
	for r := range rotations {
		// The server publishes only the new key; the verifier may fetch.
		jwks.set(keys[r%2].jwk(t, nil))
		clock.advance(mcpoauth.DefaultRefreshMinInterval)
		token := tokens[r%2]
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				if _, err := v.Authenticate(context.Background(), token); err != nil {
					refused.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			})
		}
		wg.Wait()
	}
	if n := refused.Load(); n > 0 {
		t.Fatalf("%d of %d valid tokens refused over %d rotations; the first: %v", n, rotations*callers, rotations, firstErr.Load())
	}
	if got, want := jwks.fetches.Load(), int32(rotations+1); got != want {
		t.Fatalf("%d fetches of the key set for %d rotations, want %d (one per rotation, one at start)", got, rotations, want)
	}
}
