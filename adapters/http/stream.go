package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// event is one SSE event: a JSON-RPC message and its id ("" when the
// stream is not resumable). Empty data is the priming event, which only
// hands the client an id to resume from.
type event struct {
	id   string
	data []byte
}

// appendEvent encodes ev in the SSE format.
func appendEvent(b []byte, ev event) []byte {
	if ev.id != "" {
		b = append(b, "id: "...)
		b = append(b, ev.id...)
		b = append(b, '\n')
	}
	if len(ev.data) == 0 {
		return append(b, "data:\n\n"...)
	}
	b = append(b, "event: message\n"...)
	data := ev.data
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		b = append(b, "data: "...)
		b = append(b, bytes.TrimSuffix(line, []byte{'\r'})...)
		b = append(b, '\n')
		if !more {
			break
		}
		data = rest
	}
	return append(b, '\n')
}

// startSSE writes the headers of an SSE response.
func startSSE(w http.ResponseWriter, sessionID string) *http.ResponseController {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // 2026-07-28: SHOULD, for reverse proxies
	if sessionID != "" {
		h.Set(HeaderSessionID, sessionID)
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	return rc
}

// writeEvents writes events and flushes them, bounding the write by
// timeout so that a client that stops reading cannot hold a writer.
func writeEvents(w http.ResponseWriter, rc *http.ResponseController, timeout time.Duration, b []byte) error {
	if timeout > 0 {
		_ = rc.SetWriteDeadline(time.Now().Add(timeout))
		defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	// A writer that cannot flush (a middleware that hides http.Flusher
	// and has no Unwrap) delays the events until the response ends; the
	// response itself is still complete.
	return nil
}

// sink is a connection a stream delivers to.
type sink interface {
	// push delivers an event; false means the connection is lost. The
	// sink copies ev.data if it keeps it past the call.
	push(ev event) bool
	// written reports whether push writes the event to the network (and
	// flushes it) before it returns true, rather than queue it.
	written() bool
	// end tells the connection that the stream is complete.
	end()
	// fail drops the connection (another one took the stream over).
	fail()
	// alive reports whether the connection can still take events.
	alive() bool
}

// stream is one SSE stream: the events of one POST's response, or the
// session's standalone (GET) stream. Each event is appended to the event
// store (when the stream is resumable) and then delivered to the
// connection attached at the time, if any, all under mu, so that the
// store's order is the delivery order and a resuming connection can be
// attached between two events: nothing is lost or repeated.
type stream struct {
	h  *Handler
	id string // event-store stream id; "" when not resumable
	// gone, for a session's stream, is cancelled when the session has
	// ended: its events are deleted then, and no more are stored.
	gone context.Context

	mu   sync.Mutex
	conn sink
	done bool // the final response was sent (POST streams)
	// carried is set once a message other than the final response was
	// sent (a progress notification, a server request, a batch's other
	// responses); kept once an event of the stream is in the event store,
	// its id handed out (a priming event counts).
	carried, kept bool
}

// WriteMessage sends msg on the stream; it never fails (a message sent
// while no connection is attached waits in the event store). It makes the
// standalone stream the session's writer.
func (st *stream) WriteMessage(_ context.Context, msg []byte) error {
	st.send(msg)
	return nil
}

// WriteKeyedMessage sends msg unless a message with key was sent on the
// stream before, by any instance sharing its event store
// ([ports.KeyedMessageWriter]; without a [ports.OnceAppender] store, every
// message is sent).
func (st *stream) WriteKeyedMessage(_ context.Context, key string, msg []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return nil
	}
	st.carried = true
	if ev, ok := st.storeOnceLocked(key, msg); ok {
		st.deliverLocked(ev)
	}
	return nil
}

func (st *stream) send(msg []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return
	}
	st.carried = true
	st.deliverLocked(st.storeLocked(msg))
}

// storeOnceLocked is storeLocked for a keyed message: it reports false
// when another instance stored the message already.
func (st *stream) storeOnceLocked(key string, msg []byte) (event, bool) {
	oa, ok := st.h.events.(ports.OnceAppender)
	if !ok || st.id == "" || st.sessionGone() {
		return st.storeLocked(msg), true
	}
	id, appended, err := oa.AppendOnce(context.Background(), st.id, key, msg)
	switch {
	case err != nil:
		st.h.logf(slog.LevelWarn, "hexmcp: storing an SSE event failed; it cannot be replayed", slog.Any("error", err))
		return event{data: msg}, true
	case !appended:
		return event{}, false
	case id == "" || strings.ContainsAny(id, "\r\n\x00"):
		st.h.logf(slog.LevelWarn, "hexmcp: the event store returned an id that is not valid in SSE; the event cannot be replayed")
		return event{data: msg}, true
	}
	st.kept = true
	return event{id: id, data: msg}, true
}

// storeLocked appends msg to the event store (which copies it), unless the
// stream's session has ended, and returns it as an event with its id. The
// event's data is msg, the engine's buffer: sinks copy what they keep. An
// event appended while the session ends is deleted again with the stream:
// whichever of this check and the session's deletion of its streams comes
// last removes it.
func (st *stream) storeLocked(msg []byte) event {
	ev := event{data: msg}
	if st.id == "" || st.sessionGone() {
		return ev
	}
	ctx := context.Background()
	id, err := st.h.events.Append(ctx, st.id, ev.data)
	if st.sessionGone() {
		if err := st.h.events.DeleteStream(ctx, st.id); err != nil {
			st.h.logf(slog.LevelWarn, "hexmcp: deleting the events of an ended session's stream failed", slog.Any("error", err))
		}
		return ev
	}
	switch {
	case err != nil:
		st.h.logf(slog.LevelWarn, "hexmcp: storing an SSE event failed; it cannot be replayed", slog.Any("error", err))
	case id == "" || strings.ContainsAny(id, "\r\n\x00"):
		st.h.logf(slog.LevelWarn, "hexmcp: the event store returned an id that is not valid in SSE; the event cannot be replayed")
	default:
		ev.id = id
		st.kept = true
	}
	return ev
}

func (st *stream) sessionGone() bool { return st.gone != nil && st.gone.Err() != nil }

func (st *stream) deliverLocked(ev event) {
	if st.conn != nil && !st.conn.push(ev) {
		st.conn = nil
	}
}

// finish sends the final response (when not nil) and closes the stream.
func (st *stream) finish(final []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return
	}
	if final != nil && !st.finishUnstoredLocked(final) {
		st.deliverLocked(st.storeLocked(final))
	}
	st.done = true
	if st.conn != nil {
		st.conn.end()
		st.conn = nil
	}
}

// finishUnstoredLocked delivers the final response of a resumable stream
// that carried nothing before it (a POST answered on a one-event stream, or
// after only its priming event) without keeping it in the event store, and
// reports whether it did. Nothing is left for a client to resume then:
//   - when no event of the stream was stored, the client holds no id of it
//     to resume from, so a stored response could never be replayed: it is
//     delivered (or lost with the connection) as it is;
//   - when an event was stored (a priming event), the response is left out
//     of the store only once it was written and flushed to the connection
//     that opened the stream, and the stream's events are deleted then.
//
// Otherwise (a stream that carried more, or whose connection is lost or is
// a resumed one) the response is stored as any event, to be replayed.
func (st *stream) finishUnstoredLocked(final []byte) bool {
	if st.id == "" || st.carried {
		return false
	}
	if !st.kept {
		st.deliverLocked(event{data: final})
		return true
	}
	if st.conn == nil || !st.conn.written() || !st.conn.push(event{data: final}) {
		return false
	}
	if err := st.h.events.DeleteStream(context.Background(), st.id); err != nil {
		st.h.logf(slog.LevelWarn, "hexmcp: deleting the events of a delivered stream failed", slog.Any("error", err))
	}
	st.kept = false
	return true
}

// detach removes c if it is still the stream's connection.
func (st *stream) detach(c sink) {
	st.mu.Lock()
	if st.conn == c {
		st.conn = nil
	}
	st.mu.Unlock()
	c.fail()
}

// directConn is the response of the POST that opened the stream: events
// are written at once, by whoever sends them, under the stream's lock.
type directConn struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	buf     []byte
	lost    bool
}

func (c *directConn) push(ev event) bool {
	if c.lost {
		return false
	}
	c.buf = appendEvent(c.buf[:0], ev)
	if err := writeEvents(c.w, c.rc, c.timeout, c.buf); err != nil {
		c.lost = true
	}
	return !c.lost
}

func (c *directConn) written() bool { return true }
func (c *directConn) end()          {}
func (c *directConn) fail()         { c.lost = true }
func (c *directConn) alive() bool   { return !c.lost }

// queuedConn is a GET response: senders queue events and the GET's own
// goroutine writes them, so that no sender (the engine broadcasting a
// list change, another request's tool) ever waits for the network. A
// client that falls more than the queue's bounds behind (queueLimit
// events, Options.MaxStreamQueueBytes bytes of data) is dropped; it
// resumes with Last-Event-ID from the event store.
type queuedConn struct {
	mu      sync.Mutex
	pending []event
	bytes   int // of the data of pending
	// limit and byteLimit bound pending; until the first take they also
	// leave room for the preloaded replay.
	limit, byteLimit int
	maxBytes         int // Options.MaxStreamQueueBytes
	ended            bool
	failed           bool
	wake             chan struct{}
	// retry asks the client, when the stream ends, to come back later
	// (set before the connection is served).
	retry bool
}

// queueLimit bounds the live events waiting for a GET connection.
const queueLimit = 1024

// defaultMaxStreamQueueBytes is the default of
// Options.MaxStreamQueueBytes: 8 MiB.
const defaultMaxStreamQueueBytes = 8 << 20

// newQueuedConn returns a connection that first writes preload (events
// the caller owns) and bounds what queues after it by maxBytes.
func newQueuedConn(preload []event, maxBytes int) *queuedConn {
	c := &queuedConn{pending: preload, limit: len(preload) + queueLimit, maxBytes: maxBytes, wake: make(chan struct{}, 1)}
	for _, ev := range preload {
		c.bytes += len(ev.data)
	}
	c.byteLimit = c.bytes + maxBytes
	return c
}

func (c *queuedConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *queuedConn) push(ev event) bool {
	c.mu.Lock()
	if c.failed || c.ended {
		c.mu.Unlock()
		return false
	}
	// One event larger than the byte bound still goes to a client that is
	// not behind: the bound is on the backlog.
	if len(c.pending) >= c.limit || (len(c.pending) > 0 && c.bytes+len(ev.data) > c.byteLimit) {
		c.failed = true
		c.mu.Unlock()
		c.signal()
		return false
	}
	ev.data = bytes.Clone(ev.data) // the sender's buffer
	c.pending = append(c.pending, ev)
	c.bytes += len(ev.data)
	c.mu.Unlock()
	c.signal()
	return true
}

func (c *queuedConn) written() bool { return false }

func (c *queuedConn) end() {
	c.mu.Lock()
	c.ended = true
	c.mu.Unlock()
	c.signal()
}

func (c *queuedConn) fail() {
	c.mu.Lock()
	c.failed = true
	c.mu.Unlock()
	c.signal()
}

func (c *queuedConn) alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.failed && !c.ended
}

// take returns the queued events and the connection's state.
func (c *queuedConn) take() (evs []event, ended, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	evs, c.pending, c.bytes = c.pending, nil, 0
	// The preloaded replay is gone.
	c.limit, c.byteLimit = queueLimit, c.maxBytes
	return evs, c.ended, c.failed
}

// errFinished is returned to a late writer of a request that has answered.
var errFinished = errors.New("hexmcp: the request has already been answered")

// postWriter is the related-message writer of one POST request (the
// "related" argument of Engine.HandleMessage). The response starts as JSON;
// the first related notification (progress) switches it to an SSE stream,
// when the client accepts one. A fast call thus gets a plain JSON answer.
type postWriter struct {
	h   *Handler
	w   http.ResponseWriter
	acc accepts
	// ls is the session of a handshake-era request (nil in the stateless
	// era, whose streams are not resumable).
	ls *liveSession
	// sessionHeader is sent as Mcp-Session-Id (initialize).
	sessionHeader string

	mu   sync.Mutex
	st   *stream
	done bool
}

func (pw *postWriter) WriteMessage(_ context.Context, msg []byte) error {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.done {
		return errFinished
	}
	if pw.st == nil {
		if !pw.acc.sse {
			// A JSON-only client has nowhere to receive it: the engine
			// drops notifications and sends its own requests on the
			// session's stream instead.
			return ports.ErrNoStream
		}
		pw.startLocked()
	}
	pw.st.send(msg)
	return nil
}

// streaming reports whether the response has become an SSE stream.
func (pw *postWriter) streaming() bool {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.st != nil
}

func (pw *postWriter) startLocked() {
	rc := startSSE(pw.w, pw.sessionHeader)
	pw.st = &stream{h: pw.h, conn: &directConn{w: pw.w, rc: rc, timeout: pw.h.opts.EventWriteTimeout}}
	if ls := pw.ls; ls != nil {
		pw.st.id, pw.st.gone = ls.id+"/"+randomHex(8), ls.gone
		ls.trackStream(pw.st.id)
		pw.h.registerStream(pw.st)
	}
}

// finish answers the request: resp on the stream when it is one, else as
// JSON with status (or as a one-event stream for a client that accepts
// only SSE); 202 without a body when there is nothing to answer.
func (pw *postWriter) finish(resp []byte, status int) {
	pw.finishAll([][]byte{resp}, status, false)
}

// finishBatch answers a batch with the array of its responses.
func (pw *postWriter) finishBatch(resps [][]byte) {
	pw.finishAll(resps, http.StatusOK, true)
}

func (pw *postWriter) finishAll(resps [][]byte, status int, batch bool) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.done = true
	resps = slicesCompact(resps)
	if pw.st == nil {
		switch {
		case len(resps) == 0:
			pw.w.WriteHeader(http.StatusAccepted)
			return
		case status != http.StatusOK || pw.acc.json:
			if pw.sessionHeader != "" {
				pw.w.Header().Set(HeaderSessionID, pw.sessionHeader)
			}
			body := resps[0]
			if batch {
				body = joinArray(resps)
			}
			writeJSON(pw.w, status, body)
			return
		}
		pw.startLocked()
	}
	for i, r := range resps {
		if i == len(resps)-1 {
			pw.st.finish(r)
		} else {
			pw.st.send(r)
		}
	}
	pw.st.finish(nil)
	if pw.st.id != "" {
		pw.h.unregisterStream(pw.st)
	}
}

// fail answers with a transport error: as JSON with its status when
// nothing was sent yet, else as the stream's last event.
func (pw *postWriter) fail(e *rpcErr) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.done = true
	if pw.st == nil {
		e.write(pw.w)
		return
	}
	pw.st.finish(e.body())
	if pw.st.id != "" {
		pw.h.unregisterStream(pw.st)
	}
}

// handOff ends the response of a call whose server is stopping while the
// call goes on, when the response is a resumable SSE stream: the client
// gets an event id to resume from (a priming event, when none was sent
// yet) and an SSE retry field, and resumes the stream with Last-Event-ID
// at another instance sharing the event store, which follows it there;
// the call's later events and its response are stored as they come. It
// reports false when the response cannot be handed over (not a stream
// yet, not resumable, or complete), and the request must wait for the
// call. After true, the call no longer writes to the response.
func (pw *postWriter) handOff() bool {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.done || pw.st == nil || pw.st.id == "" {
		return false
	}
	return pw.st.handOff(pw.h)
}

// handOff detaches the connection that opened the stream (see
// postWriter.handOff).
func (st *stream) handOff(h *Handler) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return false
	}
	c, direct := st.conn.(*directConn)
	if !direct || c.lost {
		// The connection is gone, or a resumption took the stream over:
		// the request has nothing left to write.
		st.conn = nil
		return true
	}
	if !st.kept {
		ev := st.storeLocked(nil) // the priming event the client resumes from
		if ev.id == "" {
			return false
		}
		c.push(ev)
	}
	if !c.lost {
		_ = writeEvents(c.w, c.rc, h.opts.EventWriteTimeout, []byte("retry: 1000\n\n"))
	}
	c.lost = true
	st.conn = nil
	return true
}

// setSessionHeader makes the response carry Mcp-Session-Id.
func (pw *postWriter) setSessionHeader(sid string) {
	pw.mu.Lock()
	pw.sessionHeader = sid
	pw.mu.Unlock()
}

func slicesCompact(rs [][]byte) [][]byte {
	out := rs[:0]
	for _, r := range rs {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

func joinArray(rs [][]byte) []byte {
	b := []byte{'['}
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, ']')
}
