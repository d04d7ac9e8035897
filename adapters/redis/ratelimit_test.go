package mcpredis_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/internal/redistest"
)

var limiterPrefixes int

// checkSharedRateLimit checks two limiters on one Redis and Prefix (two
// instances): a client's burst is shared by both, then refused with the
// time until the next request; another client has its own; a bad rate
// is an error.
func checkSharedRateLimit(t *testing.T, a, b *mcpredis.RateLimiter) {
	t.Helper()
	ctx := context.Background()
	const burst = 5
	const rate = 0.01 // one request per 100 s: none comes back during the test
	for i := range burst {
		l := a
		if i%2 == 1 {
			l = b
		}
		if wait, err := l.Allow(ctx, "client-1", rate, burst); err != nil || wait != 0 {
			t.Fatalf("request %d of a burst of %d: wait %v, %v", i+1, burst, wait, err)
		}
	}
	for _, l := range []*mcpredis.RateLimiter{a, b} {
		wait, err := l.Allow(ctx, "client-1", rate, burst)
		if err != nil {
			t.Fatal(err)
		}
		if wait <= 90*time.Second || wait > 100*time.Second {
			t.Fatalf("past the burst, through either instance: wait %v, want about 100 s", wait)
		}
	}
	if wait, err := b.Allow(ctx, "client-2", rate, burst); err != nil || wait != 0 {
		t.Fatalf("another client: wait %v, %v", wait, err)
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := a.Allow(ctx, "client-3", bad, burst); err == nil || !strings.Contains(err.Error(), "both must be positive") {
			t.Fatalf("a rate of %v: %v, want refused as not positive", bad, err)
		}
	}
	if _, err := a.Allow(ctx, "client-3", rate, 0); err == nil {
		t.Fatal("a zero burst was not refused")
	}
	// A burst spanning more than 2^50 µs (one request every 10^10 s) is
	// past what the script's numbers count exactly: refused, not rounded.
	if _, err := a.Allow(ctx, "client-3", 1e-10, 1); err == nil || !strings.Contains(err.Error(), "too slow a rate") {
		t.Fatalf("a rate of one request per 10^10 s: %v, want refused as too slow", err)
	}
}

func limiterPair(t *testing.T, c1, c2 redis.UniversalClient) (a, b *mcpredis.RateLimiter) {
	limiterPrefixes++
	opts := mcpredis.RateLimiterOptions{Prefix: fmt.Sprintf("rl%s-%d:", time.Now().Format("150405.000000"), limiterPrefixes)}
	return mcpredis.NewRateLimiter(c1, opts), mcpredis.NewRateLimiter(c2, opts)
}

// Two instances on one Redis share each client's allowance.
func TestRateLimiterShared(t *testing.T) {
	srv := redistest.Start(t)
	a, b := limiterPair(t, client(t, srv), client(t, srv))
	checkSharedRateLimit(t, a, b)
}

// A client whose rate allows a request every 10 ms gets one again once
// the time it was told has passed (waited for, not measured).
func TestRateLimiterRefills(t *testing.T) {
	srv := redistest.Start(t)
	l, _ := limiterPair(t, client(t, srv), client(t, srv))
	ctx := context.Background()
	if wait, err := l.Allow(ctx, "c", 100, 1); err != nil || wait != 0 {
		t.Fatalf("first: %v %v", wait, err)
	}
	wait, err := l.Allow(ctx, "c", 100, 1)
	if err != nil || wait <= 0 || wait > 10*time.Millisecond {
		t.Fatalf("second at once: wait %v, %v; want at most 10 ms", wait, err)
	}
	time.Sleep(wait)
	if wait, err := l.Allow(ctx, "c", 100, 1); err != nil || wait != 0 {
		t.Fatalf("after the wait it was told: %v %v", wait, err)
	}
}

// Redis down: Allow fails within Timeout (the middleware then decides
// alone).
func TestRateLimiterRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	l, _ := limiterPair(t, client(t, srv), client(t, srv))
	srv.Stop()
	if _, err := l.Allow(context.Background(), "c", 1, 1); err == nil {
		t.Fatal("Allow with Redis down succeeded")
	}
}
