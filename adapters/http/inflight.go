package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/hexmcp/hexmcp/domain"
)

// Defaults of the bounds on POST bodies in flight.
const (
	// defaultMaxInFlightBytes is the default Options.MaxInFlightBytes:
	// 32 MiB, eight bodies of 4 MiB.
	defaultMaxInFlightBytes = 8 * defaultMaxBodyBytes
	// defaultMaxInFlightBytesPerClient is the default
	// Options.MaxInFlightBytesPerClient: 8 MiB, a quarter of
	// defaultMaxInFlightBytes, two bodies of 4 MiB.
	defaultMaxInFlightBytesPerClient = defaultMaxInFlightBytes / 4
	// defaultBodyTimeout is the default Options.BodyTimeout: how long a
	// POST body may take to arrive.
	defaultBodyTimeout = 30 * time.Second
)

// inFlightWait bounds how long a POST body waits for room in the budget
// of bodies in flight before it is refused with 503.
const inFlightWait = 2 * time.Second

// firstChunk is what a body is first read into, and counted for: the
// whole body when it announces less. The buffer then doubles as it fills,
// up to the announced length (MaxBodyBytes when none is announced), each
// step counted before it is made: what a body holds is at most twice
// what has arrived, whatever it announces.
const firstChunk = 8 << 10

// Retry-After, in seconds, of a POST refused for the budget of bodies in
// flight (room frees up as soon as bodies have been read), for its
// client's share of it (as soon as its own bodies have), and for what its
// client's calls keep (as soon as one of them ends).
const (
	retryAfterBusy        = "1"
	retryAfterClientShare = "1"
	retryAfterClientCalls = "1"
)

// Why a body's bytes could not be counted.
var (
	errBusy        = errors.New("hexmcp: no room in the budget of bodies in flight")
	errClientShare = errors.New("hexmcp: the client's share of the budget of bodies in flight is taken")
	errBodyTimeout = errors.New("hexmcp: the body did not arrive in time")
)

// bodyBudget bounds the bytes of POST bodies (Options.MaxInFlightBytes,
// Options.MaxInFlightBytesPerClient). While a body is read, the bytes it
// holds count in the total and in its client's share of it; once the
// request is decoded they leave both, and what its call keeps (see
// servePost) counts in the client's calls, bounded by the same share,
// until the call ends. A nil budget bounds nothing.
type bodyBudget struct {
	sem   *semaphore.Weighted // the total; nil: none
	size  int64               // of sem
	share int64               // per client; 0: none
	// max is the most one body counts: the smaller of size and share
	// (0: no bound). A body larger is read when its client has nothing
	// else in flight (and, past size, when nothing else is).
	max int64

	mu      sync.Mutex
	clients map[string]clientBytes // clients with bytes counted
}

// clientBytes is what one client has counted: the bodies it is sending,
// and what its calls being served keep of their requests.
type clientBytes struct {
	reading, calls int64
}

// newBodyBudget returns the budget of size bytes in total and share per
// client (zero or negative: no bound), nil when neither bounds anything.
func newBodyBudget(size, share int64) *bodyBudget {
	size, share = max(size, 0), max(share, 0)
	if size == 0 && share == 0 {
		return nil
	}
	b := &bodyBudget{size: size, share: share}
	if size > 0 {
		b.sem = semaphore.NewWeighted(size)
		if share > size {
			b.share = size // a share larger than the whole is the whole
		}
	}
	b.max = b.share
	if b.max == 0 || (size > 0 && size < b.max) {
		b.max = size
	}
	if b.share > 0 {
		b.clients = make(map[string]clientBytes)
	}
	return b
}

// perClient reports whether the budget counts bytes per client (the
// caller then names the client in hold).
func (b *bodyBudget) perClient() bool { return b != nil && b.share > 0 }

// hold starts counting the bytes of one POST of client key ("" when the
// budget has no share per client).
func (b *bodyBudget) hold(key string) *bodyHold {
	if b == nil {
		return nil
	}
	return &bodyHold{b: b, key: key}
}

// bodyHold is what one POST holds of the budget. Its methods are called by
// one goroutine at a time; a nil hold holds nothing.
type bodyHold struct {
	b     *bodyBudget
	key   string // the client; "" when not counted per client
	n     int64  // the body's bytes, in the total and the client's reading
	calls int64  // what the call keeps, in the client's calls
}

// grow counts want more bytes of the body being read (a body counts at
// most b.max): in the client's share at once, errClientShare when it has
// no room; then in the total, waiting for room at most inFlightWait, until
// deadline (when not zero) or until ctx ends: errBusy, or errBodyTimeout
// when the deadline has passed.
func (h *bodyHold) grow(ctx context.Context, want int64, deadline time.Time) error {
	if h == nil {
		return nil
	}
	b := h.b
	if b.max > 0 {
		want = min(want, b.max-h.n)
	}
	if want <= 0 {
		return nil
	}
	if h.key != "" {
		b.mu.Lock()
		c := b.clients[h.key]
		if c.reading+want > b.share {
			b.mu.Unlock()
			return errClientShare
		}
		c.reading += want
		b.clients[h.key] = c
		b.mu.Unlock()
	}
	if b.sem != nil && !b.sem.TryAcquire(want) {
		wait := inFlightWait
		if !deadline.IsZero() {
			wait = min(wait, time.Until(deadline))
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		err := b.sem.Acquire(wctx, want)
		cancel()
		if err != nil {
			h.giveBack(want, 0)
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return errBodyTimeout
			}
			return errBusy
		}
	}
	h.n += want
	return nil
}

// keepForCall ends the counting of the body, whose request has been
// decoded: its bytes leave the total and the client's share of reading,
// and keep bytes, what the call keeps of its request while it is served,
// count in the client's calls instead (at most b.max: a call that keeps
// more is served when its client has no other). It reports false, keeping
// nothing, when the client's calls have no room for them.
func (h *bodyHold) keepForCall(keep int64) bool {
	if h == nil {
		return true
	}
	b := h.b
	n := h.n
	h.n = 0
	if b.sem != nil && n > 0 {
		b.sem.Release(n)
	}
	if h.key == "" {
		return true
	}
	keep = min(max(keep, 0), b.max)
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.clients[h.key]
	c.reading -= n
	ok := c.calls+keep-h.calls <= b.share
	if !ok {
		keep = 0
	}
	c.calls += keep - h.calls
	h.calls = keep
	b.setLocked(h.key, c)
	return ok
}

// release gives back all the hold counts; later calls do nothing.
func (h *bodyHold) release() {
	if h == nil || (h.n == 0 && h.calls == 0) {
		return
	}
	n, calls := h.n, h.calls
	h.n, h.calls = 0, 0
	if h.b.sem != nil && n > 0 {
		h.b.sem.Release(n)
	}
	if h.key != "" {
		h.giveBackClient(n, calls)
	}
}

// take moves what h holds to a new hold, which the caller now releases
// (h then holds nothing): for a call that goes on after its request's
// goroutine has returned.
func (h *bodyHold) take() *bodyHold {
	if h == nil {
		return nil
	}
	t := *h
	h.n, h.calls = 0, 0
	return &t
}

// giveBack undoes a count in the client's share that the total refused.
func (h *bodyHold) giveBack(reading, calls int64) {
	if h.key != "" {
		h.giveBackClient(reading, calls)
	}
}

func (h *bodyHold) giveBackClient(reading, calls int64) {
	b := h.b
	b.mu.Lock()
	c := b.clients[h.key]
	c.reading -= reading
	c.calls -= calls
	b.setLocked(h.key, c)
	b.mu.Unlock()
}

// setLocked records what a client has counted, forgetting a client that
// has nothing counted. b.mu is held.
func (b *bodyBudget) setLocked(key string, c clientBytes) {
	if c.reading <= 0 && c.calls <= 0 {
		delete(b.clients, key)
		return
	}
	b.clients[key] = c
}

// busy is the answer to a POST refused for the budget of bodies in flight:
// 503 with Retry-After. The body has not been read, so the error has no id.
func busy() *rpcErr {
	e := newErr(http.StatusServiceUnavailable, nil, domain.CodeInternalError, "Service unavailable: the server is busy")
	e.retryAfter = retryAfterBusy
	return e
}

// clientShareTaken is the answer to a POST whose client's bodies in
// flight take its share of the budget: 429 with Retry-After, without id
// (the body has not been read).
func clientShareTaken(share int64) *rpcErr {
	e := newErr(http.StatusTooManyRequests, nil, domain.CodeInvalidRequest,
		"Too Many Requests: this client's request bodies in flight take its share of the server's budget ("+strconv.FormatInt(share, 10)+" bytes); retry when they have been sent")
	e.retryAfter = retryAfterClientShare
	return e
}

// clientCallsFull is the answer to a request whose client's calls being
// served keep as much of their requests as its share allows: 429 with
// Retry-After and the request's id.
func clientCallsFull(id []byte, share int64) *rpcErr {
	e := newErr(http.StatusTooManyRequests, id, domain.CodeInvalidRequest,
		"Too Many Requests: this client's calls in progress keep "+strconv.FormatInt(share, 10)+" bytes of their requests, its share; retry when one has ended")
	e.retryAfter = retryAfterClientCalls
	return e
}

// bodyTimedOut is the answer to a POST whose body did not arrive within
// Options.BodyTimeout: 408, without id, and the connection closes.
func bodyTimedOut(d time.Duration) *rpcErr {
	e := newErr(http.StatusRequestTimeout, nil, domain.CodeInvalidRequest,
		"Request Timeout: the body did not arrive within "+d.String())
	e.close = true
	return e
}
