package mcphttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/slogger"
	"github.com/hexmcp/hexmcp/ports"
)

// logSink is a ports.Logger (slog's JSON lines, from level on) whose
// output the test reads.
type logSink struct {
	ports.Logger
	mu  sync.Mutex
	buf bytes.Buffer
}

func newLogSink(level slog.Level) *logSink {
	s := &logSink{}
	s.Logger = slogger.New(slog.New(slog.NewJSONHandler(writerFunc(s.write), &slog.HandlerOptions{Level: level})))
	return s
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (s *logSink) write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// text is everything written so far.
func (s *logSink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// records returns the records written so far.
func (s *logSink) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(s.text()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// quotingAuth refuses every token with an error that quotes it, as a
// careless authenticator might; a token of three segments it quotes by its
// last (a JWT's signature).
type quotingAuth struct{}

func (quotingAuth) Authenticate(_ context.Context, token string) (ports.Principal, error) {
	if parts := strings.Split(token, "."); len(parts) == 3 {
		return ports.Principal{}, fmt.Errorf("%w: bad signature %s", ports.ErrUnauthenticated, parts[2])
	}
	return ports.Principal{}, fmt.Errorf("%w: no such token %q", ports.ErrUnauthenticated, token)
}

func TestRequireBearerLogsRefusals(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	tokens := mcphttp.StaticTokens{
		"alice-token": {Subject: "alice", Scopes: []string{"mcp"}},
		"bob-token":   {Subject: "bob"},
	}
	serve := func(a ports.Authenticator, logs *logSink) string {
		srv := httptest.NewServer(mcphttp.RequireBearer(a, mcphttp.AuthOptions{RequiredScopes: []string{"mcp"}, Logger: logs, MaxLogsPerSecond: 1000})(ev.h))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	call := statelessCall(1, "whoami", `{}`)
	post := func(url, auth string) *http.Response {
		h := statelessHdr("tools/call", "whoami")
		if auth != "" {
			h = mergeHdr(h, hdr{"Authorization": auth})
		}
		return request(t, context.Background(), http.MethodPost, url, call, h)
	}
	// only checks that the log has exactly one record, of a refusal with
	// the error code and a reason containing reason, and returns it.
	only := func(logs *logSink, code, reason string) map[string]any {
		t.Helper()
		recs := logs.records(t)
		if len(recs) != 1 {
			t.Fatalf("%d records, want 1:\n%s", len(recs), logs.text())
		}
		r := recs[0]
		if r["level"] != "INFO" || r["msg"] != "mcphttp: a bearer token was refused" || r["error"] != code ||
			!strings.Contains(fmt.Sprint(r["reason"]), reason) || !strings.HasPrefix(fmt.Sprint(r["remote"]), "127.0.0.1:") ||
			r["method"] != "POST" || r["path"] != "/" || r["suppressed"] != nil {
			t.Fatalf("record %v, want a refusal %s about %q", r, code, reason)
		}
		return r
	}

	// A refused token: one record at Info, with the authenticator's reason.
	logs := newLogSink(slog.LevelDebug)
	url := serve(tokens, logs)
	expect(t, post(url, "Bearer nope-3f9c2a7e-distinctive"), http.StatusUnauthorized)
	only(logs, "invalid_token", "unauthenticated")
	if strings.Contains(logs.text(), "3f9c2a7e") {
		t.Fatalf("the token is in the log:\n%s", logs.text())
	}

	// A token that lacks scopes: the subject and what is missing.
	logs = newLogSink(slog.LevelDebug)
	url = serve(tokens, logs)
	expect(t, post(url, "Bearer bob-token"), http.StatusForbidden)
	r := only(logs, "insufficient_scope", "lacks required scopes")
	if r["subject"] != "bob" || fmt.Sprint(r["missing_scopes"]) != "[mcp]" {
		t.Fatalf("record %v", r)
	}
	if strings.Contains(logs.text(), "bob-token") {
		t.Fatalf("the token is in the log:\n%s", logs.text())
	}

	// A token in the query string: neither it nor the query is logged.
	logs = newLogSink(slog.LevelDebug)
	url = serve(tokens, logs)
	expect(t, post(url+"?access_token=q-5be1d0-distinctive", "Bearer alice-token"), http.StatusBadRequest)
	only(logs, "invalid_request", "query string")
	if strings.Contains(logs.text(), "5be1d0") {
		t.Fatalf("the token is in the log:\n%s", logs.text())
	}

	// No credentials, a malformed header, a good token: no record.
	logs = newLogSink(slog.LevelDebug)
	url = serve(tokens, logs)
	expect(t, post(url, ""), http.StatusUnauthorized)
	expect(t, post(url, "Basic YWxpY2U6eA=="), http.StatusUnauthorized)
	expect(t, post(url, "Bearer alice-token"), http.StatusOK)
	if s := logs.text(); s != "" {
		t.Fatalf("logged:\n%s", s)
	}

	// An authenticator's error that quotes the token, or the signature of
	// a JWT, has it cut out.
	for _, token := range []string{"opaque-7d41c9-distinctive", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLWE4ZjMxYg"} {
		logs = newLogSink(slog.LevelDebug)
		url = serve(quotingAuth{}, logs)
		expect(t, post(url, "Bearer "+token), http.StatusUnauthorized)
		only(logs, "invalid_token", "[token]")
		for part := range strings.SplitSeq(token, ".") {
			if strings.Contains(logs.text(), part) {
				t.Fatalf("%q of the token is in the log:\n%s", part, logs.text())
			}
		}
	}

	// An authenticator's failure: at Error, with its error.
	logs = newLogSink(slog.LevelDebug)
	url = serve(failingAuth{}, logs)
	expect(t, post(url, "Bearer x-0c7e55-distinctive"), http.StatusServiceUnavailable)
	recs := logs.records(t)
	if len(recs) != 1 || recs[0]["level"] != "ERROR" || recs[0]["msg"] != "mcphttp: the authenticator failed" ||
		recs[0]["error"] != "introspection endpoint down: secret detail" || !strings.HasPrefix(fmt.Sprint(recs[0]["remote"]), "127.0.0.1:") {
		t.Fatalf("records %v", recs)
	}
}

// An operator who sets the level to Warn sees no refusal, and still sees
// the failures of the authenticator.
func TestRequireBearerRefusalsAtInfo(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	logs := newLogSink(slog.LevelWarn)
	srv := httptest.NewServer(mcphttp.RequireBearer(mcphttp.StaticTokens{"bob-token": {Subject: "bob"}},
		mcphttp.AuthOptions{RequiredScopes: []string{"mcp"}, Logger: logs})(ev.h))
	defer srv.Close()
	failing := httptest.NewServer(mcphttp.RequireBearer(failingAuth{}, mcphttp.AuthOptions{Logger: logs})(ev.h))
	defer failing.Close()
	post := func(url, auth string) *http.Response {
		return request(t, context.Background(), http.MethodPost, url, statelessCall(1, "whoami", `{}`),
			mergeHdr(statelessHdr("tools/call", "whoami"), hdr{"Authorization": auth}))
	}
	expect(t, post(srv.URL, "Bearer nope"), http.StatusUnauthorized)
	expect(t, post(srv.URL, "Bearer bob-token"), http.StatusForbidden)
	expect(t, post(srv.URL+"?access_token=x", "Bearer bob-token"), http.StatusBadRequest)
	if s := logs.text(); s != "" {
		t.Fatalf("at Warn, logged:\n%s", s)
	}
	expect(t, post(failing.URL, "Bearer x"), http.StatusServiceUnavailable)
	if recs := logs.records(t); len(recs) != 1 || recs[0]["level"] != "ERROR" {
		t.Fatalf("records %v, want the failure", recs)
	}
}
