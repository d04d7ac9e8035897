package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sync/semaphore"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// DefaultMaxInFlightBytesPerConn is the default
// Options.MaxInFlightBytesPerConn: 16 MiB.
const DefaultMaxInFlightBytesPerConn = 16 << 20

// ServeConn serves one connection until the peer goes away (ReadMessage
// returns io.EOF) or ctx is cancelled. Either way it stops reading, lets the
// requests in flight finish and send their responses, then returns. Use
// [Engine.Abort] to cancel those requests when a shutdown deadline passes.
//
// Messages are read by one goroutine at a time, the leader. When the leader
// reads a tools/call or a subscriptions/listen (which lasts until it is
// cancelled or reading ends) it hands the reading to an idle goroutine (or
// starts one, up to Options.MaxConcurrentRequests calls in flight) and runs the
// call itself, so that a call costs no goroutine switch on its way from the
// transport to the handler, while later messages (a cancellation, another
// call) are read as soon as they arrive. At the bound, reading pauses until
// a call finishes.
//
// The calls (and batches) in flight are also bounded in bytes, by
// Options.MaxInFlightBytesPerConn: a call read while the others hold the
// budget waits, and reading with it, until enough of them finish (a call
// larger than the whole budget waits until nothing else is in flight).
// As at the count bound, nothing is read meanwhile: the peer's writes back
// up into the transport, which is the backpressure.
func (e *Engine) ServeConn(ctx context.Context, c ports.Conn) error {
	if pa, ok := c.(ports.PeerAddr); ok {
		if _, known := ctx.Value(transportKey{}).(TransportInfo); !known {
			ctx = WithTransportInfo(ctx, TransportInfo{RemoteAddr: pa.RemoteAddr()})
		}
	}
	s := &session{e: e, conn: c, inflight: make(map[string]context.CancelFunc)}
	s.base, s.abort = context.WithCancel(context.WithoutCancel(ctx))
	stop := e.hookAbort(ctx, s.abort)
	defer stop()
	defer s.abort()
	e.track(s)
	defer e.untrack(s)

	l := &connLoop{e: e, s: s, c: c, ctx: ctx, lead: make(chan struct{}), done: make(chan struct{}), max: e.opts.MaxConcurrentRequests + 1}
	if n := e.opts.MaxInFlightBytesPerConn; n > 0 {
		l.budget, l.budgetSize = semaphore.NewWeighted(int64(n)), int64(n)
	}
	l.goroutines = 1
	l.wg.Add(1)
	l.run(true)
	l.wg.Wait()
	return l.err
}

// connLoop is the leader/follower loop of one connection.
type connLoop struct {
	e   *Engine
	s   *session
	c   ports.Conn
	ctx context.Context

	lead chan struct{} // passes the reader role to an idle follower
	done chan struct{} // closed when reading has ended

	// budget holds the bytes of the calls in flight
	// (Options.MaxInFlightBytesPerConn); nil: no bound.
	budget     *semaphore.Weighted
	budgetSize int64

	mu         sync.Mutex
	goroutines int // live goroutines of this loop
	max        int
	ended      bool
	err        error
	wg         sync.WaitGroup
}

// run is the life of one goroutine of the loop: lead (read) when it holds
// the reader role, run the call it read, then wait to lead again.
func (l *connLoop) run(leader bool) {
	defer l.wg.Done()
	slot := &callSlot{l: l} // reused by every call of this goroutine
	for {
		if !leader {
			if l.surplus() {
				return
			}
			select {
			case <-l.lead:
			case <-l.done:
				return
			}
		}
		call, size := l.read()
		if call == nil {
			return // reading has ended
		}
		slot.reset(l.handOff(), size)
		call(slot)
		slot.releaseBytes()
		leader = !slot.released() // still the reader unless it handed off
	}
}

// surplus retires a goroutine that would idle beyond the bound (one started
// for a call that waited for the client, see callSlot.block).
func (l *connLoop) surplus() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.goroutines > l.max {
		l.goroutines--
		return true
	}
	return false
}

// callSlot is one call run by a goroutine of the loop. A goroutine that
// runs a call without having handed off the reader role (at the bound)
// keeps reading paused; if the call then waits for the client (a server
// request in the handshake era), the answer could never be read. block,
// called before such a wait, starts a new reader, beyond the bound if it
// must: the paused reading resumes and the call's goroutine becomes a
// follower when it is done. block also gives the call's bytes back to the
// connection's budget: a reader waiting for room could otherwise never
// read the answer. The bytes of calls waiting for the client are bounded
// by the time they may wait (Options.ClientRequestTimeout), not by the
// budget, as their number is not bounded by MaxConcurrentRequests.
type callSlot struct {
	l         *connLoop
	mu        sync.Mutex
	handedOff bool
	bytes     int64 // held in l.budget
}

func (c *callSlot) block() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releaseBytesLocked()
	if c.handedOff {
		return
	}
	c.handedOff = true
	l := c.l
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return
	}
	l.goroutines++
	l.wg.Add(1)
	l.mu.Unlock()
	go l.run(true)
}

func (c *callSlot) released() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handedOff
}

func (c *callSlot) reset(handedOff bool, bytes int64) {
	c.mu.Lock()
	c.handedOff, c.bytes = handedOff, bytes
	c.mu.Unlock()
}

// releaseBytes gives the bytes of the call back to the connection's
// budget (once: later calls do nothing until the next reset).
func (c *callSlot) releaseBytes() {
	c.mu.Lock()
	c.releaseBytesLocked()
	c.mu.Unlock()
}

func (c *callSlot) releaseBytesLocked() {
	if c.bytes > 0 {
		c.l.budget.Release(c.bytes)
		c.bytes = 0
	}
}

// admit reserves the bytes of a call of n bytes in the connection's budget
// and returns how many it holds (the whole budget for a call larger than
// it: that one waits until nothing else is in flight). It waits while the
// budget has no room, and reports false when reading must end meanwhile
// (ctx is done: a graceful stop).
func (l *connLoop) admit(n int) (int64, bool) {
	if l.budget == nil {
		return 0, true
	}
	w := min(int64(n), l.budgetSize)
	if l.budget.TryAcquire(w) {
		return w, true
	}
	if l.budget.Acquire(l.ctx, w) != nil {
		return 0, false
	}
	return w, true
}

// handOff gives the reader role to an idle follower, or to a new goroutine
// when the bound allows. It reports false when the caller must keep the
// role (every goroutine is busy): reading then waits for this call.
func (l *connLoop) handOff() bool {
	select {
	case l.lead <- struct{}{}:
		return true
	default:
	}
	l.mu.Lock()
	if l.goroutines >= l.max {
		l.mu.Unlock()
		// At the bound, a follower may still come free while we wait.
		select {
		case l.lead <- struct{}{}:
			return true
		default:
			return false
		}
	}
	l.goroutines++
	l.wg.Add(1)
	l.mu.Unlock()
	go l.run(true)
	return true
}

// read reads and serves messages until it finds a call (see runsAsCall) or
// a batch, which it returns for the caller to run with the bytes it holds
// in the budget (admitted: see admit); nil means reading has ended.
func (l *connLoop) read() (func(*callSlot), int64) {
	e, s := l.e, l.s
	for {
		raw, err := l.c.ReadMessage(l.ctx)
		if err != nil {
			switch {
			case errors.Is(err, ports.ErrMessageTooLarge):
				s.send(encodeError(tooLargeError(err)))
				continue
			case errors.Is(err, io.EOF), l.ctx.Err() != nil:
				l.end(nil)
			default:
				l.end(err)
			}
			return nil, 0
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		if raw[0] == '[' {
			items, rerr := l.batch(raw)
			if rerr != nil {
				s.send(encodeError(rerr))
				continue
			}
			size, ok := l.admit(len(raw))
			if !ok {
				l.end(nil)
				return nil, 0
			}
			return func(slot *callSlot) { l.serveBatch(items, slot) }, size
		}
		m, rerr := decodeMessage(raw)
		if rerr != nil {
			if m.method == "" || m.id != nil { // a notification gets no answer, even an error
				s.send(encodeError(rerr))
			}
			continue
		}
		if m.isResponse {
			e.clientResponse(s, m)
			continue
		}
		if m.id == nil {
			e.notification(s, m)
			continue
		}
		if !runsAsCall(m.method) {
			// Cheap methods are answered in order by the reader, which
			// also keeps initialize ahead of everything sent after it.
			if out := e.request(s.base, s, m); out != nil {
				s.send(out)
			}
			continue
		}
		// Admitted before it is registered: a reader waiting for room
		// has read nothing after it, and at a graceful stop it is dropped
		// unanswered, as messages not yet read are.
		size, ok := l.admit(len(raw))
		if !ok {
			l.end(nil)
			return nil, 0
		}
		// Registered before anything else is read, so that a
		// notifications/cancelled read next always finds the request.
		rctx, finish, rerr := s.begin(m.id)
		if rerr != nil {
			if size > 0 {
				l.budget.Release(size)
			}
			s.send(encodeError(rerr))
			continue
		}
		if m.method == "subscriptions/listen" {
			// A listen stream lasts until it is cancelled: it also ends
			// when reading ends (the peer went away, or a graceful stop),
			// which would otherwise wait for it forever. A graceful stop
			// is the server ending it: it is then answered with its
			// completion result (ErrEndedByServer).
			lctx, cancel := context.WithCancelCause(rctx)
			go func() {
				select {
				case <-l.done:
					if l.ctx.Err() != nil {
						cancel(ErrEndedByServer)
					} else {
						cancel(nil)
					}
				case <-lctx.Done():
				}
			}()
			return func(slot *callSlot) {
				defer cancel(nil)
				// The stream lasts: it gives its bytes back before it
				// starts, as the engine keeps only copies of the
				// little it needs (see Engine.listen), lest a few
				// open streams hold the budget and reading stop.
				slot.releaseBytes()
				finish(e.request(lctx, s, m))
			}, size
		}
		return func(slot *callSlot) {
			m.slot = slot
			finish(e.request(rctx, s, m))
		}, size
	}
}

// end records why reading stopped and releases the idle followers.
func (l *connLoop) end(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		l.ended, l.err = true, err
		close(l.done)
	}
}

// batch splits a JSON-RPC batch, which only sessions of a revision with
// batches (2025-03-26) may send.
func (l *connLoop) batch(raw []byte) ([]jsontext.Value, *rpcError) {
	s := l.s
	s.mu.Lock()
	rev, initialized := s.rev, s.initialized
	s.mu.Unlock()
	if !initialized || !l.e.policy.Features(rev).Batches {
		return nil, newRPCError(nil, domain.CodeInvalidRequest, "Invalid Request: JSON-RPC batches exist only in protocol revision 2025-03-26", nil)
	}
	var items []jsontext.Value
	if err := json.Unmarshal(raw, &items); err != nil {
		if errors.Is(err, jsontext.ErrDuplicateName) {
			return nil, newRPCError(nil, domain.CodeInvalidRequest, "Invalid Request: duplicate member name", pointerData(err))
		}
		return nil, newRPCError(nil, domain.CodeParseError, "Parse error: the message is not valid JSON", nil)
	}
	if len(items) == 0 {
		return nil, newRPCError(nil, domain.CodeInvalidRequest, "Invalid Request: empty batch", nil)
	}
	return items, nil
}

// serveBatch serves the messages of a batch concurrently and sends their
// responses as one array, in the order of the requests (nothing when the
// batch held only notifications).
func (l *connLoop) serveBatch(items []jsontext.Value, slot *callSlot) {
	e, s := l.e, l.s
	out := make([][]byte, len(items))
	var wg sync.WaitGroup
	for i, raw := range items {
		if k := raw.Kind(); k != '{' {
			out[i] = encodeError(newRPCError(nil, domain.CodeInvalidRequest, "Invalid Request: a message must be a JSON-RPC 2.0 object", nil))
			continue
		}
		m, rerr := decodeMessage(raw)
		switch {
		case rerr != nil:
			if m.method == "" || m.id != nil {
				out[i] = encodeError(rerr)
			}
		case m.isResponse:
			e.clientResponse(s, m)
		case m.id == nil:
			e.notification(s, m)
		case m.method == "initialize":
			out[i] = encodeError(newRPCError(m.id, domain.CodeInvalidRequest, "Invalid Request: initialize must not be part of a batch", nil))
		case Inspect(raw).Stateless():
			// Batches belong to 2025-03-26; a stateless-era request stands
			// alone (as over HTTP, where its headers describe one body).
			out[i] = encodeError(newRPCError(m.id, domain.CodeInvalidRequest, "Invalid Request: stateless requests cannot be batched: a request naming a protocol version in _meta must be sent on its own", nil))
		default:
			rctx, finish, rerr := s.beginWith(s.base, m.id)
			if rerr != nil {
				out[i] = encodeError(rerr)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				m.slot = slot
				out[i] = finish(e.request(rctx, s, m))
			}()
		}
	}
	wg.Wait()
	b := []byte{'['}
	for _, o := range out {
		if o == nil {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, o...)
	}
	if len(b) > 1 {
		s.send(append(b, ']'))
	}
}
