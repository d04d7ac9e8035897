package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

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
func (e *Engine) ServeConn(ctx context.Context, c ports.Conn) error {
	s := &session{e: e, conn: c, inflight: make(map[string]context.CancelFunc)}
	s.base, s.abort = context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(e.abortCtx, s.abort)
	defer stop()
	defer s.abort()
	e.track(s)
	defer e.untrack(s)

	l := &connLoop{e: e, s: s, c: c, ctx: ctx, lead: make(chan struct{}), done: make(chan struct{}), max: e.opts.MaxConcurrentRequests + 1}
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
	for {
		if !leader {
			select {
			case <-l.lead:
			case <-l.done:
				return
			}
		}
		call := l.read()
		if call == nil {
			return // reading has ended
		}
		handedOff := l.handOff()
		call()
		if !handedOff {
			leader = true // still the reader
			continue
		}
		leader = false
	}
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

// read reads and serves messages until it finds a tools/call, which it
// returns for the caller to run; nil means reading has ended.
func (l *connLoop) read() func() {
	e, s := l.e, l.s
	for {
		raw, err := l.c.ReadMessage(l.ctx)
		if err != nil {
			switch {
			case errors.Is(err, ports.ErrMessageTooLarge):
				s.send(encodeError(newRPCError(nil, domain.CodeInvalidRequest, "Invalid Request: "+err.Error(), nil)))
				continue
			case errors.Is(err, io.EOF), l.ctx.Err() != nil:
				l.end(nil)
			default:
				l.end(err)
			}
			return nil
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
			return func() { l.serveBatch(items) }
		}
		m, rerr := decodeMessage(raw)
		if rerr != nil {
			if m.method == "" || m.id != nil { // a notification gets no answer, even an error
				s.send(encodeError(rerr))
			}
			continue
		}
		if m.isResponse {
			continue // the engine sends no requests of its own yet
		}
		if m.id == nil {
			e.notification(s, m)
			continue
		}
		if m.method != "tools/call" && m.method != "subscriptions/listen" {
			// Cheap methods are answered in order by the reader, which
			// also keeps initialize ahead of everything sent after it.
			if out := e.request(s.base, s, m); out != nil {
				s.send(out)
			}
			continue
		}
		// Registered before anything else is read, so that a
		// notifications/cancelled read next always finds the request.
		rctx, finish, rerr := s.begin(m.id)
		if rerr != nil {
			s.send(encodeError(rerr))
			continue
		}
		if m.method == "subscriptions/listen" {
			// A listen stream lasts until it is cancelled: it also ends
			// when reading ends (the peer went away, or a graceful stop),
			// which would otherwise wait for it forever.
			lctx, cancel := context.WithCancel(rctx)
			go func() {
				select {
				case <-l.done:
					cancel()
				case <-lctx.Done():
				}
			}()
			return func() {
				defer cancel()
				finish(e.request(lctx, s, m))
			}
		}
		return func() { finish(e.request(rctx, s, m)) }
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
func (l *connLoop) serveBatch(items []jsontext.Value) {
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
		case m.id == nil:
			e.notification(s, m)
		case m.method == "initialize":
			out[i] = encodeError(newRPCError(m.id, domain.CodeInvalidRequest, "Invalid Request: initialize must not be part of a batch", nil))
		default:
			rctx, finish, rerr := s.beginWith(s.base, m.id)
			if rerr != nil {
				out[i] = encodeError(rerr)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
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
