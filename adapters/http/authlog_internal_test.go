package mcphttp

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestLogBudget(t *testing.T) {
	b := newLogBudget(2)
	t0 := time.Now()
	take := func(at time.Duration, wantSuppressed int64, wantOK bool) {
		t.Helper()
		if s, ok := b.take(t0.Add(at)); s != wantSuppressed || ok != wantOK {
			t.Fatalf("at %v: %d, %v; want %d, %v", at, s, ok, wantSuppressed, wantOK)
		}
	}
	// Two at once, then none until the bucket refills: the next record
	// written counts those left out, once.
	take(0, 0, true)
	take(0, 0, true)
	for range 5 {
		take(100*time.Millisecond, 0, false)
	}
	take(600*time.Millisecond, 5, true)
	take(600*time.Millisecond, 0, false)
	take(1100*time.Millisecond, 1, true)
	take(10*time.Second, 0, true)
}

func TestRedact(t *testing.T) {
	for _, c := range []struct{ s, token, want string }{
		{"unauthenticated: no such token \"abc-secret\"", "abc-secret", "unauthenticated: no such token \"[token]\""},
		{"bad signature sigsigsigsig", "headhead.bodybody.sigsigsigsig", "bad signature [token]"},
		{"kid \"ab\" unknown", "ab.cd.ef", "kid \"ab\" unknown"}, // segments under 8 bytes stay
		{"unauthenticated", "", "unauthenticated"},
	} {
		if got := redact(c.s, c.token); got != c.want {
			t.Errorf("redact(%q, %q) = %q, want %q", c.s, c.token, got, c.want)
		}
	}
	long := strings.Repeat("é", maxLoggedReason) // 2 bytes each
	got := redact("x"+long, "")
	if len(got) > maxLoggedReason+len("…") || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Fatalf("cut to %d bytes, valid %v: %q…", len(got), utf8.ValidString(got), got[:20])
	}
}
