package hexmcp

import (
	"strconv"
	"testing"
	"time"
)

// The limiter remembers at most MaxClients clients, forgetting the idlest
// first, so that its memory is bounded however many clients there are.
func TestLimiterRemembersAtMostMaxClients(t *testing.T) {
	l := &limiters{opts: RateLimitOptions{Rate: 1, Burst: 1, MaxClients: 100}, m: make(map[string]*clientLimiter)}
	now := time.Unix(1_700_000_000, 0)
	if _, ok := l.allow("old", now); !ok {
		t.Fatal("the first request of a client was refused")
	}
	if _, ok := l.allow("old", now); ok {
		t.Fatal("a second request within the burst of 1 passed")
	}
	for i := range 1000 {
		now = now.Add(time.Millisecond)
		l.allow("c"+strconv.Itoa(i), now)
		if len(l.m) > 100 {
			t.Fatalf("%d clients remembered, bound 100", len(l.m))
		}
	}
	if _, kept := l.m["old"]; kept {
		t.Fatal("the idlest client was not forgotten first")
	}
	if wait, ok := l.allow("c999", now); ok || wait <= 0 || wait > time.Second {
		t.Fatalf("a client over its rate: ok=%v wait=%v", ok, wait)
	}
}
