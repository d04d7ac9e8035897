package mockas

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestServer(t *testing.T) {
	s := Start(t, Options{})
	if !strings.HasPrefix(s.Issuer, "http://127.0.0.1:") || !strings.HasPrefix(s.Control, "http://127.0.0.1:") || s.Issuer == s.Control {
		t.Fatalf("issuer %q, control %q: want two loopback URLs", s.Issuer, s.Control)
	}
	discovery := s.Issuer + "/.well-known/openid-configuration"
	resp, err := httpClient.Get(discovery)
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Issuer string `json:"issuer"`
	}
	err = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || md.Issuer != s.Issuer {
		t.Fatalf("discovery: %d, issuer %q (%v), want %q", resp.StatusCode, md.Issuer, err, s.Issuer)
	}

	token := s.ClientCredentials(t, "app", "mcp:tools", "http://127.0.0.1:1/mcp")
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Iss, Sub, Scope string
		ClientID        string `json:"client_id"`
		Aud             any
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	if claims.Iss != s.Issuer || claims.Sub != "app" || claims.ClientID != "app" || claims.Scope != "mcp:tools" || claims.Aud != "http://127.0.0.1:1/mcp" {
		t.Fatalf("claims %s: want iss %s, sub and client_id app, scope mcp:tools, aud the resource", raw, s.Issuer)
	}

	s.Stop(t)
	if resp, err := httpClient.Get(discovery); err == nil {
		resp.Body.Close()
		t.Fatalf("after Stop, discovery answered %d", resp.StatusCode)
	}
	var out struct{ Auth []string }
	s.Call(t, "/introspection-auth", map[string]any{}, &out) // the control endpoint stays
}

// fakeTB records how Start ended the test.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Skip(args ...any) { f.skipped = fmt.Sprint(args...); runtime.Goexit() }

func (f *fakeTB) Fatal(args ...any) { f.failed = fmt.Sprint(args...); runtime.Goexit() }

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestNotInstalled(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"server.mjs", "package.json", "package-lock.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		ci       string
		required bool
		want     string // "" for a skip
	}{
		{"", false, ""},
		{"", true, "(required)"},
		{"1", false, "(CI)"},
		{"1", true, "(CI)"},
	} {
		t.Setenv("CI", c.ci)
		f := &fakeTB{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			Start(f, Options{Dir: dir, Required: c.required})
		}()
		<-done
		if c.want == "" {
			if f.skipped == "" || f.failed != "" || !strings.Contains(f.skipped, dir) {
				t.Errorf("CI=%q required=%v: skipped %q, failed %q; want a skip naming %s", c.ci, c.required, f.skipped, f.failed, dir)
			}
		} else if f.failed == "" || f.skipped != "" || !strings.HasSuffix(f.failed, c.want) {
			t.Errorf("CI=%q required=%v: skipped %q, failed %q; want a failure ending %s", c.ci, c.required, f.skipped, f.failed, c.want)
		}
	}
}

func TestDefaultDir(t *testing.T) {
	dir, err := serverDir("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "server.mjs")); err != nil || !strings.HasSuffix(dir, filepath.Join("adapters", "oauth", "testdata", "as")) {
		t.Fatalf("default dir %s: %v", dir, err)
	}
}

func TestLogBound(t *testing.T) {
	var l logBuffer
	chunk := strings.Repeat("x", 1000)
	for range maxLog/len(chunk) + 2 {
		if n, err := l.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	got := l.String()
	if kept := strings.Count(got, "x"); kept != maxLog || !strings.HasSuffix(got, "[… the rest dropped]") {
		t.Fatalf("kept %d bytes (want %d), ends %q", kept, maxLog, got[len(got)-30:])
	}
	var small logBuffer
	_, _ = small.Write([]byte("hello"))
	if small.String() != "hello" {
		t.Fatalf("small log %q", small.String())
	}
}
