package hexmcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// fakeLimiter is a shared limiter: a burst per key, counted for every
// middleware that uses it; down makes it fail.
type fakeLimiter struct {
	mu    sync.Mutex
	taken map[string]int
	down  bool
	asked []string
}

func (f *fakeLimiter) Allow(_ context.Context, key string, rate float64, burst int) (time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, key)
	if f.down {
		return 0, errors.New("the store is unreachable")
	}
	if rate != 0.001 || burst != 2 {
		return 0, errors.New("not the options' rate and burst")
	}
	if f.taken[key] >= burst {
		return 1500 * time.Millisecond, nil
	}
	f.taken[key]++
	return 0, nil
}

// RateLimit with a Limiter asks it for every request (never for a
// notification): two instances' middleware share a client's burst;
// refused, the request gets CodeRateLimited with the limiter's wait. A
// Limiter that fails leaves the decision to the instance's own buckets.
func TestRateLimitSharedLimiter(t *testing.T) {
	shared := &fakeLimiter{taken: map[string]int{}}
	opts := hexmcp.RateLimitOptions{Rate: 0.001, Burst: 2, Limiter: shared, Key: func(r *app.Request) string { return string(r.Params) }}
	next := func(context.Context, *app.Request) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }
	a, b := hexmcp.RateLimit(opts)(next), hexmcp.RateLimit(opts)(next)
	req := func(client string) *app.Request {
		return &app.Request{Method: "tools/list", ID: json.RawMessage(`1`), Params: json.RawMessage(client)}
	}
	ctx := context.Background()
	for i, h := range []app.MethodHandler{a, b} {
		if _, err := h(ctx, req("x")); err != nil {
			t.Fatalf("request %d of a burst of 2: %v", i+1, err)
		}
	}
	_, err := a(ctx, req("x"))
	var pe *domain.ProtocolError
	if !errors.As(err, &pe) || pe.Code != hexmcp.CodeRateLimited {
		t.Fatalf("past the shared burst: %v, want CodeRateLimited", err)
	}
	if data, _ := json.Marshal(pe.Data); string(data) != `{"retryAfterMs":1500}` {
		t.Fatalf("data %s, want the limiter's wait", data)
	}
	if _, err := b(ctx, &app.Request{Method: "notifications/cancelled", Params: json.RawMessage("x")}); err != nil {
		t.Fatalf("a notification: %v", err)
	}
	if len(shared.asked) != 3 {
		t.Fatalf("the limiter was asked %d times, want 3 (never for a notification)", len(shared.asked))
	}
	// Down: each instance decides alone, with its own burst of 2.
	shared.down = true
	for i := range 2 {
		if _, err := a(ctx, req("y")); err != nil {
			t.Fatalf("request %d with the limiter down: %v", i+1, err)
		}
	}
	if _, err := a(ctx, req("y")); !errors.As(err, &pe) || pe.Code != hexmcp.CodeRateLimited {
		t.Fatalf("past the instance's own burst with the limiter down: %v", err)
	}
}

// RateLimit's zero options take the documented defaults: a burst of 20
// requests at once (Rate 10 per second refills too slowly to matter
// within the test), then CodeRateLimited.
func TestRateLimitDefaultBurst(t *testing.T) {
	next := func(context.Context, *app.Request) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }
	h := hexmcp.RateLimit(hexmcp.RateLimitOptions{Key: func(*app.Request) string { return "one client" }})(next)
	ctx := context.Background()
	req := &app.Request{Method: "tools/list", ID: json.RawMessage(`1`)}
	passed := 0
	for range 40 {
		if _, err := h(ctx, req); err != nil {
			var pe *domain.ProtocolError
			if !errors.As(err, &pe) || pe.Code != hexmcp.CodeRateLimited {
				t.Fatalf("after %d requests: %v, want CodeRateLimited", passed, err)
			}
			break
		}
		passed++
	}
	// 20 at once, and at most a token or so more if the loop is slow.
	if passed < 20 || passed > 22 {
		t.Fatalf("%d requests passed at once, want the default burst of 20", passed)
	}
}
