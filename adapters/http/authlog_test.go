package mcphttp_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/ports"
)

// recordLog is a ports.Logger that keeps the records of level min and
// above.
type recordLog struct {
	min  slog.Level
	mu   sync.Mutex
	recs []logRecord
}

type logRecord struct {
	level  slog.Level
	msg    string
	fields map[string]any
}

func (l *recordLog) Enabled(_ context.Context, level slog.Level) bool { return level >= l.min }

func (l *recordLog) LogAttrs(_ context.Context, level slog.Level, msg string, fields ...slog.Attr) {
	r := logRecord{level: level, msg: msg, fields: make(map[string]any, len(fields))}
	for _, f := range fields {
		r.fields[f.Key] = f.Value.Any()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r)
}

func (l *recordLog) records() []logRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]logRecord(nil), l.recs...)
}

// text renders every record, to look for what must not be there.
func (l *recordLog) text() string { return fmt.Sprintf("%+v", l.records()) }

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
	for _, c := range []struct {
		name         string
		auth         ports.Authenticator
		query, authz string
		status       int
		code, reason string            // the record's error and a part of its reason; no record when code is ""
		fields       map[string]string // more fields of the record
		secret       string            // never in the log
	}{
		{name: "unknown token", auth: tokens, authz: "Bearer nope-3f9c2a7e", status: http.StatusUnauthorized,
			code: "invalid_token", reason: "unauthenticated", secret: "3f9c2a7e"},
		{name: "scopes", auth: tokens, authz: "Bearer bob-token", status: http.StatusForbidden,
			code: "insufficient_scope", reason: "lacks required scopes", fields: map[string]string{"subject": "bob", "missing_scopes": "[mcp]"}, secret: "bob-token"},
		{name: "query", auth: tokens, query: "?access_token=q-5be1d0", authz: "Bearer alice-token", status: http.StatusBadRequest,
			code: "invalid_request", reason: "query string", secret: "5be1d0"},
		{name: "quoted", auth: quotingAuth{}, authz: "Bearer opaque-7d41c9", status: http.StatusUnauthorized,
			code: "invalid_token", reason: "no such token \"[token]\"", secret: "7d41c9"},
		{name: "quoted signature", auth: quotingAuth{}, authz: "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLWE4ZjMxYg", status: http.StatusUnauthorized,
			code: "invalid_token", reason: "bad signature [token]", secret: "c2lnbmF0dXJlLWE4ZjMxYg"},
		// No credentials (every client's first step), a malformed header, a
		// good token: no record.
		{name: "none", auth: tokens, status: http.StatusUnauthorized},
		{name: "basic", auth: tokens, authz: "Basic YWxpY2U6eA==", status: http.StatusUnauthorized},
		{name: "accepted", auth: tokens, authz: "Bearer alice-token", status: http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs := &recordLog{min: slog.LevelDebug}
			srv := httptest.NewServer(mcphttp.RequireBearer(c.auth, mcphttp.AuthOptions{RequiredScopes: []string{"mcp"}, Logger: logs})(ev.h))
			defer srv.Close()
			h := statelessHdr("tools/call", "whoami")
			if c.authz != "" {
				h = mergeHdr(h, hdr{"Authorization": c.authz})
			}
			expect(t, request(t, context.Background(), http.MethodPost, srv.URL+c.query, statelessCall(1, "whoami", `{}`), h), c.status)
			recs := logs.records()
			if c.code == "" {
				if len(recs) != 0 {
					t.Fatalf("logged %s", logs.text())
				}
				return
			}
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1: %s", len(recs), logs.text())
			}
			r := recs[0]
			if r.level != slog.LevelInfo || r.msg != "hexmcp: a bearer token was refused" || r.fields["error"] != c.code ||
				!strings.Contains(fmt.Sprint(r.fields["reason"]), c.reason) || !strings.HasPrefix(fmt.Sprint(r.fields["remote"]), "127.0.0.1:") ||
				r.fields["method"] != "POST" || r.fields["path"] != "/" || r.fields["suppressed"] != nil {
				t.Fatalf("record %+v, want a refusal %s about %q", r, c.code, c.reason)
			}
			for k, v := range c.fields {
				if got := fmt.Sprint(r.fields[k]); got != v {
					t.Fatalf("%s %q, want %q", k, got, v)
				}
			}
			if strings.Contains(logs.text(), c.secret) {
				t.Fatalf("the token is in the log: %s", logs.text())
			}
		})
	}

	// An authenticator's failure: at Error, with its error.
	logs := &recordLog{min: slog.LevelDebug}
	srv := httptest.NewServer(mcphttp.RequireBearer(failingAuth{}, mcphttp.AuthOptions{Logger: logs})(ev.h))
	defer srv.Close()
	expect(t, request(t, context.Background(), http.MethodPost, srv.URL, statelessCall(1, "whoami", `{}`),
		mergeHdr(statelessHdr("tools/call", "whoami"), hdr{"Authorization": "Bearer x"})), http.StatusServiceUnavailable)
	if recs := logs.records(); len(recs) != 1 || recs[0].level != slog.LevelError || recs[0].msg != "hexmcp: the authenticator failed" ||
		recs[0].fields["error"] != "introspection endpoint down: secret detail" || !strings.HasPrefix(fmt.Sprint(recs[0].fields["remote"]), "127.0.0.1:") {
		t.Fatalf("records %s", logs.text())
	}
}

// An operator who sets the level to Warn sees no refusal, and still sees
// the failures of the authenticator.
func TestRequireBearerRefusalsAtInfo(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	logs := &recordLog{min: slog.LevelWarn}
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
	if recs := logs.records(); len(recs) != 0 {
		t.Fatalf("at Warn, logged %s", logs.text())
	}
	expect(t, post(failing.URL, "Bearer x"), http.StatusServiceUnavailable)
	if recs := logs.records(); len(recs) != 1 || recs[0].level != slog.LevelError {
		t.Fatalf("records %s, want the failure", logs.text())
	}
}
