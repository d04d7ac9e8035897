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
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/client/auth"
)

// dpopClaims checks a DPoP proof (ES256, its key in the header) and
// returns its claims and the key's x.
func dpopClaims(proof string) (map[string]any, string, error) {
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		return nil, "", fmt.Errorf("not a JWS")
	}
	var h struct {
		Typ, Alg string
		JWK      struct{ Kty, Crv, X, Y, D string }
	}
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(hb, &h); err != nil || h.Typ != "dpop+jwt" || h.Alg != "ES256" || h.JWK.Kty != "EC" || h.JWK.D != "" {
		return nil, "", fmt.Errorf("header %s", hb)
	}
	x, _ := base64.RawURLEncoding.DecodeString(h.JWK.X)
	y, _ := base64.RawURLEncoding.DecodeString(h.JWK.Y)
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	d := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, d[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, "", fmt.Errorf("bad signature")
	}
	var c map[string]any
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	return c, h.JWK.X, json.Unmarshal(cb, &c)
}

// DPoP: a proof at the token endpoint, the token sent with the DPoP
// scheme and a fresh proof bound to it per request, each server's
// use_dpop_nonce followed once with its nonce.
func TestDPoP(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	var mu sync.Mutex
	var problems []string
	jtis := map[string]bool{}
	check := func(r *http.Request, url, nonce, token string) bool {
		mu.Lock()
		defer mu.Unlock()
		c, _, err := dpopClaims(r.Header.Get("DPoP"))
		switch {
		case err != nil:
			problems = append(problems, err.Error())
		case c["htm"] != r.Method || c["htu"] != url || jtis[fmt.Sprint(c["jti"])]:
			problems = append(problems, fmt.Sprintf("claims %v", c))
		case token != "" && c["ath"] != func() string { s := sha256.Sum256([]byte(token)); return base64.RawURLEncoding.EncodeToString(s[:]) }():
			problems = append(problems, fmt.Sprintf("ath %v", c["ath"]))
		case c["nonce"] != nonce:
			return false
		}
		jtis[fmt.Sprint(c["jti"])] = true
		return true
	}
	var as, rs string
	asMux := http.NewServeMux()
	asMux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":"%s/token","grant_types_supported":["client_credentials"],"dpop_signing_alg_values_supported":["ES256"]}`, as, as)
	})
	asMux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !check(r, as+"/token", "as-nonce", "") {
			w.Header().Set("DPoP-Nonce", "as-nonce")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"use_dpop_nonce"}`)
			return
		}
		fmt.Fprint(w, `{"access_token":"bound","token_type":"DPoP","expires_in":3600}`)
	})
	as = newServer(t, asMux)
	var calls int
	rsMux := http.NewServeMux()
	rsMux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":"%s/mcp","authorization_servers":[%q]}`, rs, as)
	})
	rsMux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Header.Get("Authorization") != "DPoP bound" {
			w.Header().Set("WWW-Authenticate", `DPoP algs="ES256"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if !check(r, rs+"/mcp", "rs-nonce", "bound") {
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			w.Header().Set("DPoP-Nonce", "rs-nonce")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		calls++
		mu.Unlock()
		fmt.Fprint(w, "ok")
	})
	rs = newServer(t, rsMux)

	tr, err := auth.NewTransport(auth.Options{ClientCredentials: true, ClientID: "m", ClientSecret: "s", DPoPKey: key})
	if err != nil {
		t.Fatal(err)
	}
	c := tr.Client()
	for range 2 {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, rs+"/mcp?x=1", strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "ok" {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 || len(problems) > 0 {
		t.Fatalf("calls %d, problems %q", calls, problems)
	}
}
