package mcpoauth_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
	"github.com/hexmcp/hexmcp/ports"
)

func TestIntrospectionAgainstAuthorizationServer(t *testing.T) {
	as := startAS(t)
	const resource = "https://mcp.example.com/mcp"
	clock := &fakeClock{}
	// The endpoint is found in the issuer's metadata; the client secret
	// needs form-encoding before Basic (RFC 6749 section 2.3.1).
	in, err := mcpoauth.NewIntrospector(context.Background(), mcpoauth.IntrospectionOptions{
		Issuer: as.Issuer, ClientID: "mcp server", ClientSecret: "s3cr:t&+", Audience: resource, Clock: clock,
		Claims: []string{"username"},
	})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(10 * time.Minute).Unix()
	as.setIntrospection(t, 200, map[string]any{"active": true, "sub": "alice", "client_id": "app", "username": "Alice",
		"scope": "mcp:tools files:read", "aud": []string{resource}, "iss": as.Issuer, "exp": exp, "token_type": "Bearer"})
	p, err := in.Authenticate(context.Background(), "opaque-1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != "alice" || strings.Join(p.Scopes, " ") != "mcp:tools files:read" || p.Claims["client_id"] != "app" || p.Claims["username"] != "Alice" || len(p.Claims) != 2 ||
		!p.Expires.Equal(time.Unix(exp, 0).Add(mcpoauth.DefaultLeeway)) {
		t.Fatalf("principal %+v", p)
	}
	auth := as.introspectionAuth(t)
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("mcp+server:s3cr%3At%26%2B"))
	if len(auth) != 1 || auth[0] != want {
		t.Fatalf("the endpoint saw %q, want %q", auth, want)
	}

	// Cached: the same token is not asked about again, even when the
	// server's answer changed (for at most CacheFor).
	as.setIntrospection(t, 200, map[string]any{"active": false})
	if p, err := in.Authenticate(context.Background(), "opaque-1"); err != nil || p.Subject != "alice" {
		t.Fatalf("%+v %v", p, err)
	}
	if n := len(as.introspectionAuth(t)); n != 1 {
		t.Fatalf("%d introspections, want 1", n)
	}
	// Another token: inactive.
	if _, err := in.Authenticate(context.Background(), "opaque-2"); !errors.Is(err, ports.ErrUnauthenticated) || !strings.Contains(err.Error(), "not active") {
		t.Fatalf("error %v", err)
	}
	// After CacheFor the first token is asked about again: now inactive.
	clock.advance(mcpoauth.DefaultCacheFor)
	if _, err := in.Authenticate(context.Background(), "opaque-1"); !errors.Is(err, ports.ErrUnauthenticated) {
		t.Fatalf("error %v", err)
	}
	// Another resource's token, another issuer's.
	as.setIntrospection(t, 200, map[string]any{"active": true, "sub": "a", "aud": "https://other.example/mcp"})
	if _, err := in.Authenticate(context.Background(), "opaque-3"); !errors.Is(err, ports.ErrUnauthenticated) || !strings.Contains(err.Error(), "not for this resource") {
		t.Fatalf("error %v", err)
	}
	as.setIntrospection(t, 200, map[string]any{"active": true, "sub": "a", "iss": "https://evil.example"})
	if _, err := in.Authenticate(context.Background(), "opaque-4"); !errors.Is(err, ports.ErrUnauthenticated) || !strings.Contains(err.Error(), "issuer") {
		t.Fatalf("error %v", err)
	}
	// The endpoint failing: unavailable, not cached.
	as.setIntrospection(t, 500, map[string]any{"error": "server_error"})
	if _, err := in.Authenticate(context.Background(), "opaque-5"); !errors.Is(err, mcpoauth.ErrUnavailable) || errors.Is(err, ports.ErrUnauthenticated) {
		t.Fatalf("error %v", err)
	}
	as.setIntrospection(t, 200, map[string]any{"active": true, "sub": "bob", "aud": resource})
	if p, err := in.Authenticate(context.Background(), "opaque-5"); err != nil || p.Subject != "bob" {
		t.Fatalf("%+v %v", p, err)
	}

	// Through RequireBearer in front of a real server: 200, 401, and 503
	// once the server is down.
	s, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(whoami, hexmcp.WithName("whoami"))}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mcphttp.RequireBearer(in, mcphttp.AuthOptions{Logger: slog.New(slog.DiscardHandler)})(s.HTTPHandler(mcphttp.Options{})))
	defer srv.Close()
	if resp, body := mcpCall(t, srv.URL, "Bearer opaque-6"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "bob||<nil>") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	as.setIntrospection(t, 200, map[string]any{"active": false})
	if resp, body := mcpCall(t, srv.URL, "Bearer opaque-7"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	as.Stop(t)
	if resp, body := mcpCall(t, srv.URL, "Bearer opaque-8"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if _, err := in.Authenticate(context.Background(), "opaque-9"); !errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
	// Answers cached before the outage still stand.
	if resp, body := mcpCall(t, srv.URL, "Bearer opaque-6"); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// introspectionEndpoint is an RFC 7662 endpoint the test scripts: answer
// returns the status and body for a token.
type introspectionEndpoint struct {
	mu     sync.Mutex
	answer func(token string) (int, string)
	asked  []string
	bad    []string // what was wrong with a request
}

func (e *introspectionEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := r.ParseForm(); err != nil {
		e.bad = append(e.bad, err.Error())
	}
	id, secret, ok := r.BasicAuth()
	switch {
	case r.Method != http.MethodPost:
		e.bad = append(e.bad, "method "+r.Method)
	case r.Header.Get("Content-Type") != "application/x-www-form-urlencoded":
		e.bad = append(e.bad, "content type "+r.Header.Get("Content-Type"))
	case !ok || id != "rs" || secret != "pw":
		e.bad = append(e.bad, "credentials")
	case r.PostForm.Get("token_type_hint") != "access_token" || len(r.URL.Query()) != 0:
		e.bad = append(e.bad, "form "+r.PostForm.Encode())
	}
	token := r.PostForm.Get("token")
	e.asked = append(e.asked, token)
	status, body := e.answer(token)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func (e *introspectionEndpoint) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.bad) > 0 {
		panic(fmt.Sprint(e.bad))
	}
	return len(e.asked)
}

func newIntrospector(t *testing.T, e *introspectionEndpoint, change func(*mcpoauth.IntrospectionOptions)) *mcpoauth.Introspector {
	t.Helper()
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	opts := mcpoauth.IntrospectionOptions{Endpoint: srv.URL + "/introspect", ClientID: "rs", ClientSecret: "pw", Audience: "https://mcp.example.com/mcp"}
	if change != nil {
		change(&opts)
	}
	in, err := mcpoauth.NewIntrospector(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestIntrospectionAnswers(t *testing.T) {
	now := time.Now()
	answers := map[string]string{
		"ok":          `{"active":true,"sub":"alice","scope":"a b","aud":"https://MCP.example.com:443/mcp"}`,
		"ok-no-aud":   `{"active":true,"sub":"alice"}`,
		"inactive":    `{"active":false}`,
		"expired":     fmt.Sprintf(`{"active":true,"sub":"a","exp":%d}`, now.Add(-time.Minute).Unix()),
		"early":       fmt.Sprintf(`{"active":true,"sub":"a","nbf":%d}`, now.Add(time.Hour).Unix()),
		"refresh":     `{"active":true,"sub":"a","token_type":"refresh_token"}`,
		"dpop":        `{"active":true,"sub":"a","token_type":"DPoP"}`,
		"no-sub":      `{"active":true,"client_id":"app"}`,
		"dup":         `{"active":true,"sub":"a","aud":"https://mcp.example.com/mcp","aud":"https://other.example"}`,
		"bad-scope":   `{"active":true,"sub":"a","scope":5}`,
		"no-active":   `{"sub":"a"}`,
		"str-active":  `{"active":"true","sub":"a"}`,
		"not-json":    `<html>`,
		"array":       `[]`,
		"null":        `null`,
		"huge":        `{"active":true,"sub":"a","pad":"` + strings.Repeat("x", mcpoauth.DefaultMaxResponseBytes) + `"}`,
		"status-401":  ``,
		"status-503":  ``,
		"status-302":  ``,
		"other-issue": `{"active":true,"sub":"a","iss":"https://other.example","aud":"https://mcp.example.com/mcp"}`,
	}
	e := &introspectionEndpoint{answer: func(token string) (int, string) {
		if status, ok := strings.CutPrefix(token, "status-"); ok {
			var n int
			fmt.Sscan(status, &n)
			return n, `{"error":"x"}`
		}
		return 200, answers[token]
	}}
	in := newIntrospector(t, e, func(o *mcpoauth.IntrospectionOptions) { o.Cache.Disabled = true })
	for token, want := range map[string]string{
		"ok": "", "other-issue": "",
		"ok-no-aud": "unauth", "inactive": "unauth", "expired": "unauth", "early": "unauth", "refresh": "unauth", "dpop": "unauth",
		"no-sub": "unauth", "bad-scope": "unauth",
		"dup": "unavailable", "no-active": "unavailable", "str-active": "unavailable", "not-json": "unavailable",
		"array": "unavailable", "null": "unavailable", "huge": "unavailable",
		"status-401": "unavailable", "status-503": "unavailable", "status-302": "unavailable",
	} {
		p, err := in.Authenticate(context.Background(), token)
		switch want {
		case "":
			if err != nil || p.Subject == "" {
				t.Fatalf("%s: %+v %v", token, p, err)
			}
		case "unauth":
			if !errors.Is(err, ports.ErrUnauthenticated) || errors.Is(err, mcpoauth.ErrUnavailable) {
				t.Fatalf("%s: %v", token, err)
			}
		case "unavailable":
			if !errors.Is(err, mcpoauth.ErrUnavailable) || errors.Is(err, ports.ErrUnauthenticated) {
				t.Fatalf("%s: %v", token, err)
			}
		}
	}
	p, _ := in.Authenticate(context.Background(), "ok")
	if strings.Join(p.Scopes, ",") != "a,b" {
		t.Fatalf("scopes %q", p.Scopes)
	}
	// Too long a token is refused unsent.
	before := e.count()
	if _, err := in.Authenticate(context.Background(), strings.Repeat("t", mcpoauth.DefaultMaxTokenBytes+1)); !errors.Is(err, ports.ErrUnauthenticated) {
		t.Fatal(err)
	}
	if e.count() != before {
		t.Fatal("a too long token was sent")
	}

	// AcceptMissingAudience accepts an answer without aud, not one that
	// names another resource.
	lax := newIntrospector(t, e, func(o *mcpoauth.IntrospectionOptions) {
		o.AcceptMissingAudience, o.Cache.Disabled = true, true
	})
	if _, err := lax.Authenticate(context.Background(), "ok-no-aud"); err != nil {
		t.Fatal(err)
	}
	if _, err := lax.Authenticate(context.Background(), "ok"); err != nil {
		t.Fatal(err)
	}
	if _, err := lax.Authenticate(context.Background(), "dup"); !errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
}

func TestIntrospectionCache(t *testing.T) {
	now := time.Now()
	e := &introspectionEndpoint{answer: func(token string) (int, string) {
		if token == "short" { // lives 5 more seconds
			return 200, fmt.Sprintf(`{"active":true,"sub":"a","scope":"x","aud":"https://mcp.example.com/mcp","exp":%d}`, now.Add(5*time.Second).Unix())
		}
		return 200, `{"active":true,"sub":"` + token + `","scope":"x","aud":"https://mcp.example.com/mcp","groups":["g"]}`
	}}
	clock := &fakeClock{}
	in := newIntrospector(t, e, func(o *mcpoauth.IntrospectionOptions) {
		o.Clock = clock
		o.Cache = mcpoauth.CacheOptions{MaxEntries: 3, CacheFor: 30 * time.Second}
		o.Leeway = time.Second
		o.Claims = []string{"groups"}
	})
	ask := func(token string) ports.Principal {
		t.Helper()
		p, err := in.Authenticate(context.Background(), token)
		if err != nil {
			t.Fatalf("%s: %v", token, err)
		}
		return p
	}
	// A cached principal is a copy: a caller changing it changes nothing.
	p := ask("t1")
	p.Scopes[0] = "changed"
	p.Claims["groups"].([]any)[0] = "changed"
	if p := ask("t1"); p.Scopes[0] != "x" || p.Claims["groups"].([]any)[0] != "g" || e.count() != 1 {
		t.Fatalf("%+v after %d asks", p, e.count())
	}
	p = ask("t1")
	p.Scopes[0] = "changed"
	p.Claims["groups"].([]any)[0] = "changed"
	if p := ask("t1"); p.Scopes[0] != "x" || p.Claims["groups"].([]any)[0] != "g" || e.count() != 1 {
		t.Fatalf("%+v after %d asks", p, e.count())
	}
	// Bounded: a fourth token evicts the least recently used (t2).
	ask("t2")
	ask("t3")
	ask("t1")
	ask("t4")
	if in.Len() != 3 {
		t.Fatalf("%d cached, want 3", in.Len())
	}
	n := e.count()
	ask("t1")
	ask("t3")
	ask("t4")
	if e.count() != n {
		t.Fatalf("%d asks, want %d", e.count(), n)
	}
	ask("t2")
	if e.count() != n+1 {
		t.Fatalf("t2 was not evicted")
	}
	// An answer is kept no longer than its token lives.
	ask("short")
	n = e.count()
	ask("short")
	if e.count() != n {
		t.Fatal("short was not cached")
	}
	clock.advance(6 * time.Second)
	if _, err := in.Authenticate(context.Background(), "short"); !errors.Is(err, ports.ErrUnauthenticated) {
		t.Fatalf("an expired token: %v", err)
	}
	if e.count() != n+1 {
		t.Fatal("the expired token's answer was still cached")
	}
	// ...and no longer than CacheFor.
	n = e.count()
	clock.advance(31 * time.Second)
	ask("t1")
	if e.count() != n+1 {
		t.Fatal("t1 was cached past CacheFor")
	}
	// Defaults.
	if mcpoauth.DefaultCacheMaxEntries != 10_000 || mcpoauth.DefaultCacheFor != time.Minute || mcpoauth.DefaultMaxResponseBytes != 1<<20 {
		t.Fatal("defaults changed: update the README")
	}
}

func TestIntrospectorOptions(t *testing.T) {
	ctx := context.Background()
	for name, opts := range map[string]mcpoauth.IntrospectionOptions{
		"no endpoint":   {ClientID: "a", ClientSecret: "b", Audience: "x"},
		"no client":     {Endpoint: "https://as.example/introspect", ClientSecret: "b", Audience: "x"},
		"no secret":     {Endpoint: "https://as.example/introspect", ClientID: "a", Audience: "x"},
		"no audience":   {Endpoint: "https://as.example/introspect", ClientID: "a", ClientSecret: "b"},
		"http endpoint": {Endpoint: "http://as.example/introspect", ClientID: "a", ClientSecret: "b", Audience: "x"},
		"http issuer":   {Issuer: "http://as.example", ClientID: "a", ClientSecret: "b", Audience: "x"},
	} {
		if _, err := mcpoauth.NewIntrospector(ctx, opts); err == nil {
			t.Fatalf("%s: accepted", name)
		}
	}
	// An issuer whose metadata has no introspection endpoint.
	md := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/oauth-authorization-server" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": "http://" + r.Host})
	}))
	defer md.Close()
	if _, err := mcpoauth.NewIntrospector(ctx, mcpoauth.IntrospectionOptions{Issuer: md.URL, ClientID: "a", ClientSecret: "b", Audience: "x"}); err == nil || !strings.Contains(err.Error(), "introspection_endpoint") {
		t.Fatalf("error %v", err)
	}
}

// TestIntrospectionNewerAnswerWins asks about one token twice at once: the
// first question is answered "active" (the token was not yet revoked) only
// after the second was answered "inactive" (it has been revoked since).
// The cache must keep the newer answer: the token stays refused, rather
// than the late answer to the older question making it accepted again.
func TestIntrospectionNewerAnswerWins(t *testing.T) {
	var mu sync.Mutex
	asked := 0
	release := make(chan struct{})
	firstAsked := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked++
		n := asked
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			close(firstAsked)
			<-release
			_, _ = io.WriteString(w, `{"active":true,"sub":"alice","aud":"https://mcp.example.com/mcp"}`)
			return
		}
		_, _ = io.WriteString(w, `{"active":false}`)
	}))
	defer srv.Close()
	in, err := mcpoauth.NewIntrospector(context.Background(), mcpoauth.IntrospectionOptions{
		Endpoint: srv.URL, ClientID: "rs", ClientSecret: "pw", Audience: "https://mcp.example.com/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() {
		_, err := in.Authenticate(context.Background(), "tok")
		first <- err
	}()
	<-firstAsked
	if _, err := in.Authenticate(context.Background(), "tok"); !errors.Is(err, ports.ErrUnauthenticated) {
		t.Fatalf("the revoked token: %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the question asked before the revocation: %v", err)
	}
	if _, err := in.Authenticate(context.Background(), "tok"); !errors.Is(err, ports.ErrUnauthenticated) {
		t.Fatalf("after the late answer to the older question, the revoked token: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 2 {
		t.Fatalf("%d questions, want 2 (the third answer from the cache)", asked)
	}
}

// TestIntrospectionAudience asks a real authorization server about a token
// whose introspection answer is active but names no audience: refused by
// default (401 through RequireBearer), as a JWT without aud is, since
// nothing says the token was issued for this server.
func TestIntrospectionAudience(t *testing.T) {
	as := startAS(t)
	const resource = "https://mcp.example.com/mcp"
	in, err := mcpoauth.NewIntrospector(context.Background(), mcpoauth.IntrospectionOptions{
		Issuer: as.Issuer, ClientID: "rs", ClientSecret: "pw", Audience: resource, Cache: mcpoauth.CacheOptions{Disabled: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(whoami, hexmcp.WithName("whoami"))}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mcphttp.RequireBearer(in, mcphttp.AuthOptions{Logger: slog.New(slog.DiscardHandler)})(s.HTTPHandler(mcphttp.Options{})))
	defer srv.Close()

	as.setIntrospection(t, 200, map[string]any{"active": true, "sub": "alice", "scope": "mcp:tools", "iss": as.Issuer})
	if resp, body := mcpCall(t, srv.URL, "Bearer no-aud"); resp.StatusCode != http.StatusUnauthorized || body != `{"error":"invalid_token"}` {
		t.Fatalf("an answer without aud: %d %s", resp.StatusCode, body)
	}
	if _, err := in.Authenticate(context.Background(), "no-aud"); !errors.Is(err, ports.ErrUnauthenticated) || !strings.Contains(err.Error(), "names no audience (aud), so it is not for this resource") {
		t.Fatalf("error %v", err)
	}
	as.setIntrospection(t, 200, map[string]any{"active": true, "sub": "alice", "scope": "mcp:tools", "iss": as.Issuer, "aud": resource})
	if resp, body := mcpCall(t, srv.URL, "Bearer with-aud"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "alice|mcp:tools") {
		t.Fatalf("an answer naming this resource: %d %s", resp.StatusCode, body)
	}

	// Turned off by name: an answer without aud is accepted, one naming
	// another resource is not.
	lax, err := mcpoauth.NewIntrospector(context.Background(), mcpoauth.IntrospectionOptions{
		Issuer: as.Issuer, ClientID: "rs", ClientSecret: "pw", Audience: resource, Cache: mcpoauth.CacheOptions{Disabled: true},
		AcceptMissingAudience: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(mcphttp.RequireBearer(lax, mcphttp.AuthOptions{Logger: slog.New(slog.DiscardHandler)})(s.HTTPHandler(mcphttp.Options{})))
	defer srv2.Close()
	as.setIntrospection(t, 200, map[string]any{"active": true, "sub": "alice", "scope": "mcp:tools", "iss": as.Issuer})
	if resp, body := mcpCall(t, srv2.URL, "Bearer no-aud"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "alice|mcp:tools") {
		t.Fatalf("AcceptMissingAudience, an answer without aud: %d %s", resp.StatusCode, body)
	}
	as.setIntrospection(t, 200, map[string]any{"active": true, "sub": "alice", "scope": "mcp:tools", "iss": as.Issuer, "aud": "https://other.example/mcp"})
	if resp, body := mcpCall(t, srv2.URL, "Bearer other-aud"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("AcceptMissingAudience, an answer for another resource: %d %s", resp.StatusCode, body)
	}
}
