package auth_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/hexmcp/hexmcp/client/auth"
)

// An MCP client's http.Client whose requests get a token the first time
// the server answers 401: here the server, its authorization server and
// the user's agreement are all in the example (a real application opens a
// browser in its Authorizer, or gets Options.ClientCredentials).
func Example() {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	// The MCP server and its protected resource metadata.
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "hello")
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		js(w, map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL + "/as"}})
	})
	// The authorization server: it says yes at once.
	mux.HandleFunc("/.well-known/oauth-authorization-server/as", func(w http.ResponseWriter, _ *http.Request) {
		js(w, map[string]any{"issuer": srv.URL + "/as", "authorization_endpoint": srv.URL + "/as/authorize",
			"token_endpoint": srv.URL + "/as/token", "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("/as/authorize", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.FormValue("redirect_uri")+"?code=c0de&state="+r.FormValue("state"), http.StatusFound)
	})
	mux.HandleFunc("/as/token", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("code") != "c0de" || r.FormValue("code_verifier") == "" || r.FormValue("resource") != srv.URL+"/mcp" {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		js(w, map[string]any{"access_token": "t0ken", "token_type": "Bearer", "expires_in": 3600})
	})

	tr, err := auth.NewTransport(auth.Options{
		ClientID:    "my-app", // registered beforehand
		RedirectURL: "http://127.0.0.1:8976/callback",
		Authorizer:  auth.HeadlessAuthorizer(nil),
	})
	if err != nil {
		log.Fatal(err)
	}
	client := tr.Client() // give it to the client's Streamable HTTP transport
	resp, err := client.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(b))
	// Output: 200 hello
}
