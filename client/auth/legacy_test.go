package auth_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/client/auth"
)

// A 2025-03-26 server publishes no protected resource metadata: the
// authorization server is its origin, with RFC 8414 metadata at the root
// or, without it, the default endpoints /authorize, /token, /register.
func TestLegacyDiscovery(t *testing.T) {
	for _, withMetadata := range []bool{false, true} {
		name := map[bool]string{false: "default endpoints", true: "metadata at the origin"}[withMetadata]
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			mux := http.NewServeMux()
			srv := httptest.NewServer(mux)
			defer srv.Close()
			record := func(r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Method+" "+r.URL.Path)
				mu.Unlock()
			}
			mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { record(r); http.NotFound(w, r) })
			if withMetadata {
				mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
					record(r)
					_ = json.NewEncoder(w).Encode(map[string]any{
						"issuer": srv.URL, "authorization_endpoint": srv.URL + "/oauth/authorize",
						"token_endpoint": srv.URL + "/oauth/token", "registration_endpoint": srv.URL + "/oauth/register",
						"code_challenge_methods_supported": []string{"S256"},
					})
				})
			}
			prefix := map[bool]string{false: "", true: "/oauth"}[withMetadata]
			mux.HandleFunc("POST "+prefix+"/register", func(w http.ResponseWriter, r *http.Request) {
				record(r)
				w.WriteHeader(http.StatusCreated)
				_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "legacy", "redirect_uris": []string{redirectURL}})
			})
			mux.HandleFunc("GET "+prefix+"/authorize", func(w http.ResponseWriter, r *http.Request) {
				record(r)
				q := r.URL.Query()
				if q.Get("code_challenge_method") != "S256" || q.Get("client_id") != "legacy" {
					http.Error(w, "bad authorize request", http.StatusBadRequest)
					return
				}
				http.Redirect(w, r, q.Get("redirect_uri")+"?code=c1&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
			})
			mux.HandleFunc("POST "+prefix+"/token", func(w http.ResponseWriter, r *http.Request) {
				record(r)
				_ = r.ParseForm()
				if r.PostForm.Get("code") != "c1" || r.PostForm.Get("code_verifier") == "" {
					http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "tok", "token_type": "Bearer"})
			})
			mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
				record(r)
				if r.Header.Get("Authorization") != "Bearer tok" {
					w.Header().Set("WWW-Authenticate", "Bearer")
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
			})
			tr, err := auth.NewTransport(auth.Options{ClientName: "test", RedirectURL: redirectURL, Authorizer: auth.HeadlessAuthorizer(nil)})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := tr.Client().Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d; the server saw %q", resp.StatusCode, seen)
			}
			want := "POST " + prefix + "/token"
			found := false
			for _, s := range seen {
				found = found || s == want
			}
			if !found {
				t.Fatalf("no %s; the server saw %q", want, seen)
			}
		})
	}
}
