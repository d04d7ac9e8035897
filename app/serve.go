package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sync/semaphore"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// defaultMaxInFlightBytesPerConn is the default
// Options.MaxInFlightBytesPerConn: 16 MiB.
const defaultMaxInFlightBytesPerConn = 16 << 20

// Defaults of the bounds of the calls waiting for the client's answer on
// stdio and WebSocket connections ([Options.MaxWaitingBytesPerClient],
// [Options.MaxWaitingBytes]).
const (
	// defaultMaxWaitingBytesPerClient: 16 MiB of one client's calls.
	defaultMaxWaitingBytesPerClient = 16 << 20
	// defaultMaxWaitingBytes: 128 MiB of every client's calls.
	defaultMaxWaitingBytes = 128 << 20
	// MinWaitingCallBytes is the least a waiting call counts, whatever
	// the size of its message (its goroutine and state): so at most 256
	// calls of one client wait at once by default.
	MinWaitingCallBytes = 64 << 10
)

// waitBook counts the bytes of the calls waiting for the client's answer
// on the stdio and WebSocket connections of an engine, per client and in
// total. Its zero value is ready.
type waitBook struct {
	mu       sync.Mutex
	byClient map[string]int64
	total    int64
}

// take counts n bytes of client's, within perClient and total (each ≤ 0:
// no bound); a call larger than a whole bound may wait when nothing else
// is counted against it.
func (b *waitBook) take(client string, n, perClient, total int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	mine := b.byClient[client]
	switch {
	case perClient > 0 && mine > 0 && mine+n > perClient:
		return waitLimitError("maxWaitingBytesPerClient", perClient, "one client")
	case total > 0 && b.total > 0 && b.total+n > total:
		return waitLimitError("maxWaitingBytes", total, "all clients")
	}
	if b.byClient == nil {
		b.byClient = make(map[string]int64)
	}
	b.byClient[client] = mine + n
	b.total += n
	return nil
}

// give gives back n bytes of client's.
func (b *waitBook) give(client string, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if left := b.byClient[client] - n; left > 0 {
		b.byClient[client] = left
	} else {
		delete(b.byClient, client)
	}
	b.total -= n
}

// waitLimitError is the error of a call past a bound of the calls waiting
// for the client: limit names the bound, max its bytes, whose those are.
func waitLimitError(limit string, max int64, whose string) error {
	pe := domain.NewProtocolError(domain.CodeInternalError,
		fmt.Sprintf("Internal error: the calls waiting for the answers of %s already take %d bytes, the most the server keeps; answer them first, or try again later", whose, max),
		map[string]any{"limit": limit, "max": max})
	return &tooManyWaiting{pe: pe}
}

// tooManyWaiting wraps ErrTooManyWaiting and the ProtocolError a handler
// sends.
type tooManyWaiting struct{ pe *domain.ProtocolError }

func (e *tooManyWaiting) Error() string {
	return handlerapi.ErrTooManyWaiting.Error() + ": " + e.pe.Message
}
func (e *tooManyWaiting) Unwrap() []error { return []error{handlerapi.ErrTooManyWaiting, e.pe} }

// ServeConn serves one connection until the peer goes away (ReadMessage
// returns io.EOF) or ctx is cancelled. Either way it stops reading, lets the
// requests in flight finish and send their responses, then returns. Use
// [Engine.Abort] to cancel those requests when a shutdown deadline passes.
//
// Messages are read by one goroutine at a time, the reader; the other
// goroutines of the connection run calls or wait, as followers, to read.
// Requests other than calls (ping, lists, initialize), notifications and
// the client's responses are served by the reader itself, in order. When
// the reader reads a call (tools/call, prompts/get, resources/read,
// subscriptions/listen) or a batch, it takes a place among the
// Options.MaxConcurrentRequests calls the connection may run at once, hands
// the reading to an idle follower (or starts one) and runs the call itself,
// so that a call costs no goroutine switch on its way from the transport to
// the handler, while later messages (a cancellation, another call) are read
// as soon as they arrive. A connection that can tell when a message
// arrives (stdio, WebSocket) has no goroutine wait to read meanwhile: one
// is woken when a message comes, and otherwise the call's own goroutine
// reads on once it has answered.
//
// At the bound, the call read waits, parked, while the reader goes on
// reading and serving what it serves itself; the goroutine whose call
// finishes first runs the parked call in its place. A second call read
// while one is parked waits with the reader, which reads nothing more
// until the parked call has started: the peer's writes back up into the
// transport, which is the backpressure. So reading never waits for more
// than one call, whichever ends first, and never more than
// MaxConcurrentRequests calls run at once. A call gives its place
// back as it starts waiting for the client's answer (elicitation,
// sampling, roots), which must be read, and a subscriptions/listen stream
// as it starts: those are bounded by Options.ClientRequestTimeout and the
// listen bounds (Options.MaxListenersPerClient), not by
// MaxConcurrentRequests.
//
// The calls (and batches) in flight are also bounded in bytes, by
// Options.MaxInFlightBytesPerConn: a call read while the others hold the
// budget waits, and reading with it, until enough of them finish (a call
// larger than the whole budget waits until nothing else is in flight).
func (e *Engine) ServeConn(ctx context.Context, c ports.Conn) error {
	if _, known := ctx.Value(transportKey{}).(handlerapi.TransportInfo); !known {
		var ti handlerapi.TransportInfo
		if pa, ok := c.(ports.PeerAddr); ok {
			ti.RemoteAddr = pa.RemoteAddr()
		}
		if pp, ok := c.(ports.PeerPrincipal); ok {
			ti.Principal = pp.Principal()
		}
		if ti.RemoteAddr != "" || ti.Principal != nil {
			ctx = WithTransportInfo(ctx, ti)
		}
	}
	s := &session{set: &e.sessions, conn: c, inflight: make(map[string]context.CancelFunc), unread: make(chan struct{})}
	s.base, s.abort = context.WithCancel(context.WithoutCancel(ctx))
	stop := hookAbort(e.abortCtx, ctx, s.abort)
	defer stop()
	defer s.abort()
	e.sessions.track(s)
	defer e.sessions.untrack(s)
	defer e.sessions.ended(s, handlerapi.SessionClosed)

	n := e.opts.MaxConcurrentRequests
	l := &connLoop{
		e: e, s: s, c: c, ctx: ctx,
		lead: make(chan struct{}), done: make(chan struct{}), room: make(chan struct{}, 1),
		bound: n, max: n + 1,
	}
	if n := e.opts.MaxInFlightBytesPerConn; n > 0 {
		l.budget, l.budgetSize = semaphore.NewWeighted(int64(n)), int64(n)
	}
	ti, _ := ctx.Value(transportKey{}).(handlerapi.TransportInfo)
	l.client = ti.ClientKey()
	if l.client == "" {
		l.client = fmt.Sprintf("conn:%p", l) // stdio: the connection is the client
	}
	l.flight = e.flights.join(l.client)
	defer e.flights.leave(l.client, l.flight)
	if rn, ok := c.(readNotifier); ok {
		l.notifier, l.wake = rn, l.wakeReader
		// A graceful stop must reach a connection nobody reads.
		defer context.AfterFunc(ctx, l.wake)()
	}
	l.goroutines = 1
	l.wg.Add(1)
	l.run(true, pending{})
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
	room chan struct{} // wakes a reader waiting for the parked call to start

	// budget holds the bytes of the calls in flight
	// (Options.MaxInFlightBytesPerConn); nil: no bound.
	budget     *semaphore.Weighted
	budgetSize int64
	// flight is the budget of the connection's client across its
	// connections (Options.MaxInFlightBytesPerClient; nil: no bound),
	// taken after budget, and before the engine's total
	// (Options.MaxInFlightBytes; see flightBook).
	flight *clientFlight

	// notifier is the connection's readNotifier, if it is one; wake is
	// l.wakeReader, made once.
	notifier readNotifier
	wake     func()

	mu       sync.Mutex
	reading  readState // who reads (see handOff)
	bound    int       // Options.MaxConcurrentRequests
	running  int       // calls holding a place in the bound
	parked   pending   // the call waiting for a place (call nil: none)
	roomWait bool      // the reader waits on room
	// goroutines counts the reader, the followers and the goroutines of
	// calls holding a place; those beyond max retire instead of following.
	goroutines int
	max        int
	// client is the key of the connection's client in the engine's
	// account of the calls waiting for the client (Engine.waits).
	client string
	ended  bool
	err    error
	wg     sync.WaitGroup
}

// pending is a call read and not yet run, with the bytes it holds in the
// budget.
type pending struct {
	call runner
	size int64
	n    int64 // the message's length, which the call keeps alive
}

// runner is a call to run in a place of the loop: a callFunc, or a
// soloCall (the common case, made in one allocation).
type runner interface{ run(slot *callSlot) }

// callFunc is a runner of a function.
type callFunc func(slot *callSlot)

func (f callFunc) run(slot *callSlot) { f(slot) }

// soloCall is a request read alone (not in a batch) that runs as a call
// (see runsAsCall), registered in its session.
type soloCall struct {
	e *Engine
	s *session
	m message
	r inflightCall
}

func (c *soloCall) run(slot *callSlot) {
	c.m.slot = slot
	slot.single = c.e.mw.handler == nil
	out, _ := c.e.requestWith(c.r.ctx, c.s, c.m, nil)
	sent := c.r.end(out)
	// The reading is taken back before the answer goes: a client that
	// waits for it sends its next message as soon as it has it, and
	// nobody need be woken to read that (see handOff).
	slot.lead = slot.l.takeReading()
	if sent != nil {
		c.s.send(sent)
	}
	slot.recycle(out)
}

// run is the life of one goroutine of the loop: lead (read) when it holds
// the reader role, run the call it read (or next, a call it was given),
// then run the parked call if there is one, or wait to lead again.
func (l *connLoop) run(leader bool, next pending) {
	defer l.wg.Done()
	slot := &callSlot{l: l} // reused by every call of this goroutine
	for {
		for next.call == nil {
			if !leader {
				if l.surplus() {
					return
				}
				select {
				case <-l.lead:
				case <-l.done:
					return
				}
				leader = true
			}
			p, ok := l.read()
			if !ok {
				return // reading has ended
			}
			if l.place(p) {
				l.handOff()
				leader, next = false, p
			}
			// Otherwise p is parked and this goroutine reads on.
		}
		slot.reset(next.size, next.n)
		next.call.run(slot)
		next = slot.finish()
		if slot.lead || next.call == nil && l.takeReading() {
			slot.lead = false
			if next.call == nil {
				leader = true
			} else {
				l.giveReading() // this goroutine runs the parked call
			}
		}
	}
}

// place gives p a place in the bound, or parks it (false) when every place
// is taken. The reader parks a call only when none is parked (see
// waitRoom).
func (l *connLoop) place(p pending) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running < l.bound {
		l.running++
		return true
	}
	l.parked = p
	return false
}

// vacate gives up a place in the bound: to the parked call, which it
// returns for the caller to run, if there is one. l.mu is held.
func (l *connLoop) vacate() pending {
	p := l.parked
	if p.call == nil {
		l.running--
		return p
	}
	l.parked = pending{}
	if l.roomWait {
		l.roomWait = false
		l.room <- struct{}{}
	}
	return p
}

// waitRoom waits, before the reader serves another call, until no call is
// parked. It reports false when reading must end meanwhile (ctx is done:
// a graceful stop).
func (l *connLoop) waitRoom() bool {
	l.mu.Lock()
	if l.parked.call == nil {
		l.mu.Unlock()
		return true
	}
	l.roomWait = true
	l.mu.Unlock()
	select {
	case <-l.room:
		return true
	case <-l.ctx.Done():
		l.mu.Lock()
		l.roomWait = false
		select {
		case <-l.room:
		default:
		}
		l.mu.Unlock()
		return false
	}
}

// surplus retires a goroutine that would idle beyond the bound.
func (l *connLoop) surplus() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.goroutines > l.max {
		l.goroutines--
		return true
	}
	return false
}

// readNotifier is implemented by a [ports.Conn] that can tell when a
// message arrives (stdio, WebSocket). NotifyReadable is called by the
// goroutine that may read: with f, as it stops reading, to have f called
// once, from another goroutine, as soon as ReadMessage would return
// without waiting (a message, an error, the end or the connection
// closed); it reports false, arming nothing, when ReadMessage would return
// at once already. With nil, as that goroutine or another (after f was
// called, or to take reading back) is about to read, it disarms f.
type readNotifier interface {
	NotifyReadable(f func()) bool
}

// readState says who reads a connection whose Conn is a readNotifier.
type readState uint8

const (
	readHeld   readState = iota // a goroutine reads, or is woken to
	readArming                  // handOff arms the notifier
	readWoken                   // the notifier (or ctx) fired while arming
	readNobody                  // armed: the first to come reads (takeReading, wakeReader)
)

// handOff gives the reader role away as the reader starts to run the call
// it read. With a readNotifier, nobody reads until a message arrives
// (wakeReader then wakes a goroutine to read it) or the call ends first
// (takeReading: its goroutine reads on), so that a client that waits for
// each answer before it sends costs no goroutine hand-off per call.
// Otherwise, and when a message is there already, an idle follower is
// woken to read, or a new goroutine started.
func (l *connLoop) handOff() {
	if l.notifier != nil {
		l.mu.Lock()
		l.reading = readArming
		l.mu.Unlock()
		armed := l.notifier.NotifyReadable(l.wake)
		l.mu.Lock()
		if armed && l.reading == readArming {
			l.reading = readNobody
			l.mu.Unlock()
			return
		}
		l.reading = readHeld
		l.mu.Unlock()
		if armed {
			l.notifier.NotifyReadable(nil)
		}
	}
	l.giveReading()
}

// wakeReader is the notifier's f (and runs when ctx ends): a message is
// there, so a goroutine must read, if nobody does.
func (l *connLoop) wakeReader() {
	l.mu.Lock()
	switch l.reading {
	case readArming:
		l.reading = readWoken // handOff gives the reading
		l.mu.Unlock()
	case readNobody:
		l.reading = readHeld
		l.mu.Unlock()
		l.giveReading()
	default:
		l.mu.Unlock()
	}
}

// takeReading reports whether nobody reads, in which case the caller,
// whose call has ended, reads from now on.
func (l *connLoop) takeReading() bool {
	if l.notifier == nil {
		return false
	}
	l.mu.Lock()
	if l.reading != readNobody {
		l.mu.Unlock()
		return false
	}
	l.reading = readHeld
	l.mu.Unlock()
	l.notifier.NotifyReadable(nil)
	return true
}

// giveReading gives the reader role to an idle follower, or to a new
// goroutine when none is idle.
func (l *connLoop) giveReading() {
	select {
	case l.lead <- struct{}{}:
		return
	default:
	}
	l.mu.Lock()
	l.goroutines++
	l.mu.Unlock()
	l.wg.Add(1)
	go l.run(true, pending{})
}

// callSlot is the call a goroutine of the loop runs: the place it holds
// in the bound and its bytes in the budget, which finish gives back (the
// place to the parked call, if any). release gives both back earlier, when
// the call starts to wait for the client's answer (a server request in the
// handshake era: the answer must be read, and a reader waiting for a place
// or for room in the budget would never read it), or a listen stream
// starts (it lasts). Those calls are then bounded by the time they may
// wait (Options.ClientRequestTimeout) and by the listen bounds, not by the
// budget nor MaxConcurrentRequests.
type callSlot struct {
	l       *connLoop
	mu      sync.Mutex
	held    bool  // holds a place in the bound
	bytes   int64 // held in l.budget and the engine's flights (see admit)
	n       int64 // the length of the call's message
	waiting int64 // counted among the calls waiting for the client (bytes)

	// The goroutine's response buffer, reused from one call to the next
	// (WriteMessage keeps no message). Only a call alone (not a batch's,
	// whose members run at once) and without method middleware (which
	// may keep what it answered) uses it: single marks such a call.
	// Owned by the goroutine running the call.
	single bool
	// lead: the goroutine took the reading back as its call ended (see
	// soloCall.run): it reads next.
	lead bool
	out  []byte // the buffer, free (nil while a response holds it)
	made []byte // the response encoded into it (see outBuffer)
}

func (c *callSlot) reset(bytes, n int64) {
	c.mu.Lock()
	c.held, c.bytes, c.n, c.waiting = true, bytes, n, 0
	c.single, c.made = false, nil
	c.mu.Unlock()
}

// maxReusedResponse bounds the response buffer a goroutine keeps for its
// next call: a larger one goes to the garbage collector.
const maxReusedResponse = 16 << 10

// outBuffer returns an empty buffer to encode the call's response into:
// the goroutine's own for a single call (see callSlot.single), else a new
// one. The response encoded into it is then given to made.
func (c *callSlot) outBuffer() []byte {
	if c == nil || !c.single || c.out == nil {
		return make([]byte, 0, 256)
	}
	b := c.out
	c.out = nil
	return b
}

// encoded records the response of a single call, encoded into a buffer
// from outBuffer, so that recycle knows it for its own.
func (c *callSlot) encoded(out []byte) {
	if c != nil && c.single {
		c.made = out
	}
}

// recycle takes the buffer of the response out back, once it is written,
// when it is the one encoded recorded: nothing else holds it.
func (c *callSlot) recycle(out []byte) {
	if len(out) > 0 && len(c.made) > 0 && &out[0] == &c.made[0] && cap(out) <= maxReusedResponse {
		c.out = out[:0]
	}
	c.single, c.made = false, nil
}

// awaitClient is called as the call starts waiting for the client's
// answer: it gives the call's place and bytes back (the answer must be
// read) and counts the call among the calls waiting for the client
// instead (Engine.waits: per client and in total, in bytes). Past a bound
// it returns an error wrapping ErrTooManyWaiting and a
// *domain.ProtocolError naming the limit, and the call keeps what it
// holds. A call already waiting is not counted again.
func (c *callSlot) awaitClient() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting > 0 {
		return nil
	}
	w := max(c.n, MinWaitingCallBytes)
	if err := c.l.e.waits.take(c.l.client, w, int64(c.l.e.opts.MaxWaitingBytesPerClient), int64(c.l.e.opts.MaxWaitingBytes)); err != nil {
		return err
	}
	c.waiting = w
	c.releaseLocked()
	return nil
}

// release gives the call's place and bytes back (once: later calls do
// nothing until the next reset). The place goes to the parked call, if
// any, which a new goroutine runs: this one is taken by its call.
func (c *callSlot) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releaseLocked()
}

func (c *callSlot) releaseLocked() {
	c.releaseBytesLocked()
	if !c.held {
		return
	}
	c.held = false
	l := c.l
	l.mu.Lock()
	p := l.vacate()
	if p.call == nil {
		l.goroutines-- // this goroutine no longer counts until its call ends
	}
	l.mu.Unlock()
	if p.call != nil {
		l.wg.Add(1)
		go l.run(false, p) // counted in this goroutine's stead
	}
}

// finish ends the call: it gives its bytes and its place back, and returns
// the parked call, if any, for this goroutine to run in the same place.
func (c *callSlot) finish() pending {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releaseBytesLocked()
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.waiting > 0 {
		l.e.waits.give(l.client, c.waiting)
		c.waiting = 0
	}
	if !c.held {
		l.goroutines++ // released: it counts again (surplus may retire it)
		return pending{}
	}
	c.held = false
	return l.vacate()
}

func (c *callSlot) releaseBytesLocked() {
	if c.bytes > 0 {
		c.l.give(c.bytes)
		c.bytes = 0
	}
}

// admit reserves the bytes of a call of n bytes in the connection's budget,
// then in its client's and the engine's (flightBook), and returns how many
// it holds (the whole of the smallest budget for a call larger than it:
// that one waits until nothing else is in flight). It waits while a
// budget has no room, and reports false when reading must end meanwhile
// (ctx is done: a graceful stop).
func (l *connLoop) admit(n int) (int64, bool) {
	fb := l.e.flights
	size := fb.size(l.budgetSize)
	if size <= 0 {
		return 0, true
	}
	w := min(int64(n), size)
	if l.budget != nil && !l.budget.TryAcquire(w) && l.budget.Acquire(l.ctx, w) != nil {
		return 0, false
	}
	if !fb.acquire(l.ctx, l.flight, w) {
		if l.budget != nil {
			l.budget.Release(w)
		}
		return 0, false
	}
	return w, true
}

// give gives back the w bytes a call held (see admit).
func (l *connLoop) give(w int64) {
	if l.budget != nil {
		l.budget.Release(w)
	}
	l.e.flights.release(l.flight, w)
}

// wait waits until the reader may serve a call of n bytes: no call is
// parked (waitRoom) and the budget has room for it (admit). It returns the
// bytes the call holds; false means reading has ended (a graceful stop).
func (l *connLoop) wait(n int) (int64, bool) {
	if !l.waitRoom() {
		l.end(nil)
		return 0, false
	}
	size, ok := l.admit(n)
	if !ok {
		l.end(nil)
		return 0, false
	}
	return size, true
}

// read reads and serves messages until it finds a call (see runsAsCall) or
// a batch, which it returns for the caller to place and run, with the
// bytes it holds in the budget (admitted: see admit), once no other call
// is parked (see waitRoom); false means reading has ended.
func (l *connLoop) read() (pending, bool) {
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
			return pending{}, false
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
			size, ok := l.wait(len(raw))
			if !ok {
				return pending{}, false
			}
			return pending{callFunc(func(slot *callSlot) { l.serveBatch(items, slot) }), size, int64(len(raw))}, true
		}
		m, rerr := decodeMessage(raw)
		if rerr != nil {
			if m.method == "" || m.id != nil { // a notification gets no answer, even an error
				s.send(encodeError(rerr))
			}
			continue
		}
		if m.isResponse {
			e.fwd.clientResponse(s.base, s, m)
			continue
		}
		if m.id == nil {
			e.notification(s.base, s, m)
			continue
		}
		if !e.runsAsCall(m.method) {
			// Cheap methods are answered in order by the reader, which
			// also keeps initialize ahead of everything sent after it.
			if out, _ := e.requestWith(s.base, s, m, nil); out != nil {
				s.send(out)
			}
			continue
		}
		// Admitted before it is registered: a reader waiting for room
		// has read nothing after it, and at a graceful stop it is dropped
		// unanswered, as messages not yet read are.
		size, ok := l.wait(len(raw))
		if !ok {
			return pending{}, false
		}
		// Registered before anything else is read, so that a
		// notifications/cancelled read next always finds the request.
		r, rerr := s.register(s.base, m.id)
		if rerr != nil {
			if size > 0 {
				l.give(size)
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
			lctx, cancel := context.WithCancelCause(r.ctx)
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
			return pending{callFunc(func(slot *callSlot) {
				defer cancel(nil)
				// The stream lasts: it gives its place and bytes back
				// before it starts, as the engine keeps only copies of
				// the little it needs (see listeners.serve), lest a few
				// open streams hold the bound or the budget and reading
				// stop.
				slot.release()
				out, _ := e.requestWith(lctx, s, m, nil)
				if out := r.end(out); out != nil {
					s.send(out)
				}
			}), size, int64(len(raw))}, true
		}
		return pending{&soloCall{e: e, s: s, m: m, r: r}, size, int64(len(raw))}, true
	}
}

// end records why reading stopped and releases the idle followers.
func (l *connLoop) end(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		l.ended, l.err = true, err
		close(l.done)
		close(l.s.unread) // calls waiting for an answer end (ErrClientGone)
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
		if _, depth, ok := nesting(raw); ok && depth > maxNestingDepth {
			return nil, tooDeepError(nil) // valid JSON: no batch member can be told
		}
		return nil, newRPCError(nil, domain.CodeParseError, "Parse error: the message is not valid JSON", nil)
	}
	if len(items) == 0 {
		return nil, newRPCError(nil, domain.CodeInvalidRequest, "Invalid Request: empty batch", nil)
	}
	return items, nil
}

// serveBatch serves the messages of a batch ([Engine.batch]) and sends
// their responses as one array, in the order of the requests (nothing
// when the batch held only notifications).
func (l *connLoop) serveBatch(items []jsontext.Value, slot *callSlot) {
	members := make([]messageInfo, len(items))
	for i, raw := range items {
		members[i] = inspect(raw)
	}
	out := l.e.batch(l.s.base, l.s, members, nil, slot)
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
		l.s.send(append(b, ']'))
	}
}
