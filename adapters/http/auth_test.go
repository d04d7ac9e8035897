package mcphttp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/ports"
)

// failingAuth fails; with after set, its error says how long to wait.
type failingAuth struct{ after time.Duration }

func (a failingAuth) Authenticate(context.Context, string) (ports.Principal, error) {
	if a.after > 0 {
		return ports.Principal{}, fmt.Errorf("wrapped: %w", retryAfterErr(a.after))
	}
	return ports.Principal{}, errors.New("introspection endpoint down: secret detail")
}

type retryAfterErr time.Duration

func (e retryAfterErr) Error() string             { return "down for a while" }
func (e retryAfterErr) RetryAfter() time.Duration { return time.Duration(e) }

func TestRequireBearer(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	tokens := mcphttp.StaticTokens{
		"alice-token": {Subject: "alice", Scopes: []string{"mcp"}},
		"bob-token":   {Subject: "bob"},
	}
	opts := mcphttp.AuthOptions{ResourceMetadataURL: "https://mcp.example/.well-known/oauth-protected-resource", RequiredScopes: []string{"mcp"}}
	srv := httptest.NewServer(mcphttp.RequireBearer(tokens, opts)(ev.h))
	defer srv.Close()
	call := statelessCall(1, "whoami", `{}`)
	h := mergeHdr(statelessHdr("tools/call", "whoami"), hdr{"X-Test": "t"})
	post := func(auth string) *http.Response {
		return request(t, context.Background(), http.MethodPost, srv.URL, call, mergeHdr(h, hdr{"Authorization": auth}))
	}
	const meta = `resource_metadata="https://mcp.example/.well-known/oauth-protected-resource"`

	resp := post("")
	expect(t, resp, http.StatusUnauthorized)
	if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer scope="mcp", `+meta {
		t.Fatalf("challenge %q", got)
	}
	for _, bad := range []string{"Bearer nope", "Basic YWxpY2U6eA==", "Bearer", "Bearer a b"} {
		resp = post(bad)
		expect(t, resp, http.StatusUnauthorized)
		if got := resp.Header.Get("WWW-Authenticate"); got[:6] != "Bearer" {
			t.Fatalf("%q: challenge %q", bad, got)
		}
	}
	if got := post("Bearer nope").Header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token", scope="mcp", `+meta {
		t.Fatalf("challenge %q", got)
	}
	resp = post("Bearer bob-token")
	expect(t, resp, http.StatusForbidden)
	if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer error="insufficient_scope", scope="mcp", `+meta {
		t.Fatalf("challenge %q", got)
	}
	// The principal and the headers reach the tool; the token does not.
	expect(t, post("Bearer alice-token"), http.StatusOK, `alice|t||true`)
	expect(t, post("bearer alice-token"), http.StatusOK, `alice|t||true`)

	// A token in the query string is refused, even a good one beside a
	// good header (RFC 6750 section 3.1: invalid_request is a 400).
	for _, q := range []string{"?access_token=alice-token", "?a=1&access_token=x", "?access%5Ftoken=alice-token"} {
		resp = request(t, context.Background(), http.MethodPost, srv.URL+q, call, mergeHdr(h, hdr{"Authorization": "Bearer alice-token"}))
		if body := expect(t, resp, http.StatusBadRequest); body != `{"error":"invalid_request"}` {
			t.Fatalf("%s: body %s", q, body)
		}
		if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer error="invalid_request", `+meta {
			t.Fatalf("%s: challenge %q", q, got)
		}
	}
	// Other query parameters are not a token.
	resp = request(t, context.Background(), http.MethodPost, srv.URL+"?token=x&access_tokens=y", call, mergeHdr(h, hdr{"Authorization": "Bearer alice-token"}))
	expect(t, resp, http.StatusOK, `alice|t||true`)

	// A failing authenticator is not the client's fault, and its error
	// stays on the server.
	srv2 := httptest.NewServer(mcphttp.RequireBearer(failingAuth{}, mcphttp.AuthOptions{})(ev.h))
	defer srv2.Close()
	resp = request(t, context.Background(), http.MethodPost, srv2.URL, call, mergeHdr(h, hdr{"Authorization": "Bearer x"}))
	if body := expect(t, resp, http.StatusServiceUnavailable); body != `{"error":"temporarily_unavailable"}` {
		t.Fatalf("body %s", body)
	}
	if got := resp.Header.Get("Retry-After"); got != "5" {
		t.Fatalf("Retry-After %q, want 5 (the default)", got)
	}
	// An error that says how long to wait: its Retry-After, rounded up.
	srv3 := httptest.NewServer(mcphttp.RequireBearer(failingAuth{after: 2500 * time.Millisecond}, mcphttp.AuthOptions{Logger: slog.New(slog.DiscardHandler)})(ev.h))
	defer srv3.Close()
	resp = request(t, context.Background(), http.MethodPost, srv3.URL, call, mergeHdr(h, hdr{"Authorization": "Bearer x"}))
	expect(t, resp, http.StatusServiceUnavailable)
	if got := resp.Header.Get("Retry-After"); got != "3" {
		t.Fatalf("Retry-After %q, want 3", got)
	}
}

func TestStaticTokens(t *testing.T) {
	tokens := mcphttp.StaticTokens{"a": {Subject: "s"}}
	if p, err := tokens.Authenticate(context.Background(), "a"); err != nil || p.Subject != "s" {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := tokens.Authenticate(context.Background(), "b"); !errors.Is(err, ports.ErrUnauthenticated) {
		t.Fatal(err)
	}
	if ports.PrincipalFrom(context.Background()) != nil {
		t.Fatal("principal from nowhere")
	}
	ctx := ports.WithPrincipal(context.Background(), ports.Principal{Subject: "x"})
	if p := ports.PrincipalFrom(ctx); p == nil || p.Subject != "x" {
		t.Fatalf("%+v", p)
	}
}

func TestInsufficientScope(t *testing.T) {
	rec := httptest.NewRecorder()
	mcphttp.InsufficientScope(rec, mcphttp.AuthOptions{ResourceMetadataURL: "https://mcp.example/.well-known/oauth-protected-resource/mcp"},
		"files:read", "bad scope", "files:write", `q"uote`, "")
	if rec.Code != http.StatusForbidden {
		t.Fatalf("status %d", rec.Code)
	}
	want := `Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"`
	if got := rec.Header().Get("WWW-Authenticate"); got != want {
		t.Fatalf("challenge %q", got)
	}
	if rec.Body.String() != `{"error":"insufficient_scope"}` {
		t.Fatalf("body %s", rec.Body)
	}
	// Without metadata and scopes: the bare challenge.
	rec = httptest.NewRecorder()
	mcphttp.InsufficientScope(rec, mcphttp.AuthOptions{})
	if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer error="insufficient_scope"` {
		t.Fatalf("challenge %q", got)
	}

	p := ports.Principal{Scopes: []string{"a", "c"}}
	if got := mcphttp.MissingScopes(p, "a", "b", "c", "d"); len(got) != 2 || got[0] != "b" || got[1] != "d" {
		t.Fatalf("missing %q", got)
	}
	if got := mcphttp.MissingScopes(p, "c", "a"); got != nil {
		t.Fatalf("missing %q", got)
	}
}
