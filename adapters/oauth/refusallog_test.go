package mcpoauth_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
	"github.com/hexmcp/hexmcp/ports"
)

// logSink is a ports.Logger writing slog's JSON lines, from level on, to
// a file the test reads (a log file, as a server's).
type logSink struct {
	ports.Logger
	path string
}

func newLogSink(t *testing.T, level slog.Level) *logSink {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return &logSink{Logger: slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: level})), path: path}
}

func (s *logSink) text() string {
	b, err := os.ReadFile(s.path)
	if err != nil {
		panic(err)
	}
	return string(b)
}

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

// noToken fails t when token, or one of its segments, is in the log.
func (s *logSink) noToken(t *testing.T, token string) {
	t.Helper()
	text := s.text()
	for part := range strings.SplitSeq(token, ".") {
		if strings.Contains(text, part) {
			t.Fatalf("the token (%q) is in the log:\n%s", part, text)
		}
	}
}

// guarded is an MCP server on the loopback interface behind RequireBearer
// and a JWTVerifier of the test's key set, logging to logs.
type guarded struct {
	*keyed
	url  string
	key  signer
	logs *logSink
}

func newGuarded(t *testing.T, level slog.Level, perSecond int) *guarded {
	t.Helper()
	rs := newRSA(t, "rs", 2048)
	g := &guarded{keyed: newKeyed(t, nil, rs.jwk(t, nil)), key: rs, logs: newLogSink(t, level)}
	g.url = guard(t, g.v, g.logs, perSecond)
	return g
}

// guard serves an MCP server on the loopback interface behind RequireBearer
// and a, logging to logs, and returns its URL.
func guard(t *testing.T, a ports.Authenticator, logs *logSink, perSecond int) string {
	t.Helper()
	s, err := hexmcp.New(hexmcp.Options{
		Info:  hexmcp.Implementation{Name: "whoami", Version: "1"},
		Tools: []hexmcp.Tool{hexmcp.Func(whoami, hexmcp.WithName("whoami"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	srv := httptest.NewServer(mcphttp.RequireBearer(a, mcphttp.AuthOptions{Logger: logs, MaxLogsPerSecond: perSecond})(s.HTTPHandler(mcphttp.Options{})))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// refused checks that token is answered 401 invalid_token.
func (g *guarded) refused(t *testing.T, token string) {
	t.Helper()
	resp, body := mcpCall(t, g.url, "Bearer "+token)
	if resp.StatusCode != http.StatusUnauthorized || body != `{"error":"invalid_token"}` {
		t.Fatalf("status %d, body %s", resp.StatusCode, body)
	}
}

// tamper changes one character in the middle of token's signature.
func tamper(token string) string {
	i := strings.LastIndex(token, ".") + 10
	c := byte('A')
	if token[i] == 'A' {
		c = 'B'
	}
	return token[:i] + string(c) + token[i+1:]
}

// Each refused token is one record at Info that says why, as the verifier
// knows it, and from where; never the token.
func TestRefusedTokenLogged(t *testing.T) {
	g := newGuarded(t, slog.LevelDebug, 1000)
	now := time.Now()
	for _, c := range []struct {
		name, token, reason string
	}{
		{"audience", g.key.sign(t, testClaims(map[string]any{"aud": "http://elsewhere/mcp"}), nil),
			`unauthenticated: the token is for ["http://elsewhere/mcp"], not for this resource (https://mcp.example.com/mcp)`},
		{"issuer", g.key.sign(t, testClaims(map[string]any{"iss": "https://other.example.com"}), nil),
			`issuer "https://other.example.com", not "https://auth.example.com"`},
		{"expired", g.key.sign(t, testClaims(map[string]any{"exp": now.Add(-time.Hour).Unix()}), nil), "the token expired at"},
		{"kid", newRSA(t, "stranger", 2048).sign(t, testClaims(nil), nil), `not in the authorization server's key set (kid "stranger")`},
		{"typ", g.key.sign(t, testClaims(nil), map[string]any{"typ": "secevent+jwt"}), `typ "secevent+jwt" names another kind of token`},
		{"signature", tamper(g.key.sign(t, testClaims(nil), nil)), "the signature does not verify"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(g.logs.records(t))
			g.refused(t, c.token)
			recs := g.logs.records(t)
			if len(recs) != before+1 {
				t.Fatalf("%d new records, want 1:\n%s", len(recs)-before, g.logs.text())
			}
			r := recs[before]
			if r["level"] != "INFO" || r["msg"] != "hexmcp: a bearer token was refused" || r["error"] != "invalid_token" ||
				!strings.Contains(fmt.Sprint(r["reason"]), c.reason) || !strings.HasPrefix(fmt.Sprint(r["remote"]), "127.0.0.1:") ||
				r["path"] != "/mcp" {
				t.Fatalf("record %v, want one about %q", r, c.reason)
			}
			g.logs.noToken(t, c.token)
		})
	}
	// An accepted token is not logged.
	before := len(g.logs.records(t))
	if resp, body := mcpCall(t, g.url, "Bearer "+g.key.sign(t, testClaims(nil), nil)); resp.StatusCode != http.StatusOK || !strings.Contains(body, "alice") {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	if n := len(g.logs.records(t)); n != before {
		t.Fatalf("%d records for an accepted token", n-before)
	}
}

// A flood of refused tokens writes at most the bound; the records left out
// are counted in the next one written.
func TestRefusalFloodBounded(t *testing.T) {
	const perSecond = 1
	g := newGuarded(t, slog.LevelDebug, perSecond)
	token := g.key.sign(t, testClaims(map[string]any{"aud": "http://elsewhere/mcp"}), nil)
	post := func() error {
		req, err := http.NewRequest(http.MethodPost, g.url, strings.NewReader(`{}`))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	// accounted is the number of refusals the records tell of: each one,
	// and those it says were left out before it.
	accounted := func(recs []map[string]any) (n int, summaries int) {
		for _, r := range recs {
			if r["msg"] != "hexmcp: a bearer token was refused" || !strings.Contains(fmt.Sprint(r["reason"]), "elsewhere") {
				t.Fatalf("record %v", r)
			}
			n++
			if s, ok := r["suppressed"].(float64); ok {
				n += int(s)
				summaries++
			}
		}
		return n, summaries
	}

	const flood, workers = 60, 6
	start := time.Now()
	errs := make(chan error, flood)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range flood / workers {
				errs <- post()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	recs := g.logs.records(t)
	// A token bucket of perSecond, as many at once: at most that many, and
	// perSecond more for every second the flood lasted.
	if bound := perSecond + int(elapsed.Seconds()*perSecond) + 1; len(recs) > bound {
		t.Fatalf("%d records for %d refusals in %v, more than %d", len(recs), flood, elapsed, bound)
	}
	t.Logf("%d records for %d refusals in %v", len(recs), flood, elapsed)

	// Refusals go on, slowly, until a record is written for the last one:
	// then the records account for every refusal, those left out in their
	// summaries.
	sent := flood
	deadline := time.Now().Add(time.Minute)
	for {
		n, summaries := accounted(g.logs.records(t))
		if n == sent {
			if n > len(g.logs.records(t)) && summaries == 0 {
				t.Fatal("refusals left out, and no summary")
			}
			break
		}
		if n > sent || time.Now().After(deadline) {
			t.Fatalf("the records tell of %d refusals of %d:\n%s", n, sent, g.logs.text())
		}
		time.Sleep(100 * time.Millisecond)
		if err := post(); err != nil {
			t.Fatal(err)
		}
		sent++
	}
	g.logs.noToken(t, token)
}

// Refusals are at Info: an operator who sets the level to Warn sees none,
// and still sees an authorization server that cannot be reached.
func TestRefusalsAtInfo(t *testing.T) {
	g := newGuarded(t, slog.LevelWarn, 0)
	g.refused(t, g.key.sign(t, testClaims(map[string]any{"aud": "http://elsewhere/mcp"}), nil))
	g.refused(t, g.key.sign(t, testClaims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}), nil))
	g.refused(t, newRSA(t, "stranger", 2048).sign(t, testClaims(nil), nil))
	if s := g.logs.text(); s != "" {
		t.Fatalf("at Warn, logged:\n%s", s)
	}

	// The key set cannot be fetched, and a token names a key not in it.
	g.jwks.mu.Lock()
	g.jwks.status = http.StatusInternalServerError
	g.jwks.mu.Unlock()
	g.clock.advance(time.Minute)
	token := newRSA(t, "rotated", 2048).sign(t, testClaims(nil), nil)
	if resp, body := mcpCall(t, g.url, "Bearer "+token); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	recs := g.logs.records(t)
	if len(recs) != 1 || recs[0]["level"] != "ERROR" || recs[0]["msg"] != "hexmcp: the authenticator failed" ||
		!strings.Contains(fmt.Sprint(recs[0]["error"]), mcpoauth.ErrUnavailable.Error()) {
		t.Fatalf("records %v, want the authorization server unavailable", recs)
	}
	g.logs.noToken(t, token)
}

// The introspector's refusals are logged with its reason too; an endpoint
// that fails at Error.
func TestIntrospectionRefusalLogged(t *testing.T) {
	const (
		inactive = "opaque-inactive-6e0f3b"
		foreign  = "opaque-foreign-91d2c4"
		failing  = "opaque-failing-2a7b8e"
	)
	e := &introspectionEndpoint{answer: func(token string) (int, string) {
		switch token {
		case inactive:
			return http.StatusOK, `{"active":false}`
		case foreign:
			return http.StatusOK, `{"active":true,"sub":"alice","aud":"https://elsewhere.example/mcp"}`
		}
		return http.StatusInternalServerError, `{}`
	}}
	logs := newLogSink(t, slog.LevelDebug)
	url := guard(t, newIntrospector(t, e, nil), logs, 0)
	for _, token := range []string{inactive, foreign} {
		if resp, body := mcpCall(t, url, "Bearer "+token); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d %s", resp.StatusCode, body)
		}
	}
	if resp, body := mcpCall(t, url, "Bearer "+failing); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	recs := logs.records(t)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3:\n%s", len(recs), logs.text())
	}
	for i, want := range []struct{ level, field, text string }{
		{"INFO", "reason", "unauthenticated: the token is not active"},
		{"INFO", "reason", `the token is for ["https://elsewhere.example/mcp"], not for this resource`},
		{"ERROR", "error", "hexmcp: authorization server unavailable: introspection: "},
	} {
		if r := recs[i]; r["level"] != want.level || !strings.Contains(fmt.Sprint(r[want.field]), want.text) ||
			!strings.HasPrefix(fmt.Sprint(r["remote"]), "127.0.0.1:") {
			t.Fatalf("record %d: %v, want %s about %q", i, r, want.level, want.text)
		}
	}
	for _, token := range []string{inactive, foreign, failing} {
		logs.noToken(t, token)
	}
}
