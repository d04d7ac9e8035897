package mcphttp

import (
	"context"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/hexmcp/hexmcp/domain"
)

// DefaultMaxInFlightBytes is the default Options.MaxInFlightBytes: 32 MiB,
// eight bodies of DefaultMaxBodyBytes.
const DefaultMaxInFlightBytes = 8 * DefaultMaxBodyBytes

// inFlightWait bounds how long a POST waits for room in the budget of
// bodies in flight before it is refused with 503.
const inFlightWait = 2 * time.Second

// retryAfterBusy is the Retry-After, in seconds, of a POST refused for the
// budget of bodies in flight: room frees up as soon as requests finish.
const retryAfterBusy = "1"

// bodyBudget bounds the bytes of the POST bodies being read and served at
// once (Options.MaxInFlightBytes). A nil budget bounds nothing.
type bodyBudget struct {
	sem  *semaphore.Weighted
	size int64
}

func newBodyBudget(size int64) *bodyBudget {
	if size <= 0 {
		return nil
	}
	return &bodyBudget{sem: semaphore.NewWeighted(size), size: size}
}

// bodyHold is what one POST holds of the budget. Its methods are called by
// the request's goroutine only; a nil hold holds nothing.
type bodyHold struct {
	b *bodyBudget
	n int64
}

// reserve takes want bytes of the budget (all of it when want is larger:
// such a body is read when nothing else is), waiting for room at most
// inFlightWait or until ctx ends.
func (b *bodyBudget) reserve(ctx context.Context, want int64) (*bodyHold, error) {
	if b == nil {
		return nil, nil
	}
	want = min(max(want, 0), b.size)
	if !b.sem.TryAcquire(want) {
		wctx, cancel := context.WithTimeout(ctx, inFlightWait)
		err := b.sem.Acquire(wctx, want)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	return &bodyHold{b: b, n: want}, nil
}

// keep gives back what the hold has beyond n bytes (a body shorter than
// reserved for).
func (h *bodyHold) keep(n int64) {
	if h == nil || n >= h.n {
		return
	}
	h.b.sem.Release(h.n - max(n, 0))
	h.n = max(n, 0)
}

// release gives the whole hold back; later calls do nothing.
func (h *bodyHold) release() { h.keep(0) }

// busy is the answer to a POST refused for the budget of bodies in flight:
// 503 with Retry-After. The body has not been read, so the error has no id.
func busy() *rpcErr {
	e := newErr(http.StatusServiceUnavailable, nil, domain.CodeInternalError, "Service unavailable: the server is busy")
	e.retryAfter = retryAfterBusy
	return e
}
