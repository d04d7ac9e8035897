package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// sseStream is one HTTP+SSE stream seen as a [ports.Conn]: the POSTs fill
// a bounded incoming queue that ReadMessage drains, WriteMessage fills a
// bounded outgoing queue that the GET's goroutine (pump) writes as events.
//
// Two signals end it: unread (reading stops: ReadMessage returns io.EOF,
// POSTs get 404, the calls in flight finish and still answer) and gone
// (the stream is lost: nothing more is written, WriteMessage fails).
type sseStream struct {
	h         *SSEHandler
	id        string
	owner     string // the principal's subject, "" without one
	remote    string
	principal *ports.Principal

	in     chan []byte   // POSTs → ReadMessage; its capacity is IncomingQueue
	out    chan []byte   // WriteMessage → pump; its capacity is SendQueue
	active chan struct{} // a POST arrived (resets the idle timer)

	w  http.ResponseWriter
	rc *http.ResponseController

	inBytes sseBudget // bytes of bodies being read or waiting in in

	mu       sync.Mutex
	outBytes int64 // bytes of messages waiting in out or being written
	unread   chan struct{}
	gone     chan struct{}
	why      string // why the stream stopped reading or was lost
	goneErr  error
}

func newSSEStream(h *SSEHandler, r *http.Request) *sseStream {
	return &sseStream{
		h:         h,
		id:        h.instance + "-" + newSessionID(),
		owner:     owner(r.Context()),
		remote:    r.RemoteAddr,
		principal: ports.PrincipalFrom(r.Context()),
		in:        make(chan []byte, h.opts.IncomingQueue),
		out:       make(chan []byte, h.opts.SendQueue),
		active:    make(chan struct{}, 1),
		inBytes:   sseBudget{limit: h.opts.MaxIncomingBytes},
		unread:    make(chan struct{}),
		gone:      make(chan struct{}),
	}
}

// start writes the response's headers and the endpoint event.
func (st *sseStream) start(w http.ResponseWriter, endpoint string) error {
	st.w, st.rc = w, startSSE(w, "")
	return st.write([]byte("event: endpoint\ndata: " + endpoint + "\n\n"))
}

// write writes b and flushes it within WriteTimeout.
func (st *sseStream) write(b []byte) error {
	return writeEvents(st.w, st.rc, st.h.opts.WriteTimeout, b)
}

// pump writes the stream's events until the stream ends, and returns why.
// served is closed when the engine has finished with the stream: what it
// wrote is then written, and the stream ends.
func (st *sseStream) pump(ctx context.Context, served <-chan struct{}, serverClosing <-chan struct{}) string {
	opts := &st.h.opts
	var tick <-chan time.Time
	if opts.KeepAlive > 0 {
		t := time.NewTicker(opts.KeepAlive)
		defer t.Stop()
		tick = t.C
	}
	var idle <-chan time.Time
	var idleTimer *time.Timer
	if opts.IdleTimeout > 0 {
		idleTimer = time.NewTimer(opts.IdleTimeout)
		defer idleTimer.Stop()
		idle = idleTimer.C
	}
	closing := st.h.closing
	var buf []byte
	writeMsg := func(msg []byte) bool {
		buf = appendEvent(buf[:0], event{data: msg})
		err := st.write(buf)
		st.sent(len(msg))
		if cap(buf) > 64<<10 {
			buf = nil // keep no large buffer for an idle stream
		}
		if err != nil {
			st.drop("writing an event failed: " + err.Error())
			return false
		}
		return true
	}
	for {
		select {
		case <-st.gone:
			return st.reason()
		default:
		}
		select {
		case msg := <-st.out:
			if !writeMsg(msg) {
				return st.reason()
			}
		case <-tick:
			if err := st.write([]byte(": keep-alive\n\n")); err != nil {
				st.drop("writing a keep-alive failed: " + err.Error())
				return st.reason()
			}
		case <-st.active:
			if idleTimer != nil {
				idleTimer.Reset(opts.IdleTimeout)
			}
		case <-idle:
			st.stopReading(fmt.Sprintf("the client posted nothing for %s", opts.IdleTimeout))
			idle = nil
		case <-closing:
			st.stopReading("the server is shutting down")
			closing = nil
		case <-serverClosing:
			st.stopReading("the server is shutting down")
			serverClosing = nil
		case <-served:
			for {
				select {
				case msg := <-st.out:
					if !writeMsg(msg) {
						return st.reason()
					}
					continue
				default:
				}
				break
			}
			st.drop("the engine has finished with the stream")
			return st.reason()
		case <-ctx.Done():
			st.drop("the client went away")
			return st.reason()
		case <-st.gone:
			return st.reason()
		}
	}
}

// reason is why the stream stopped.
func (st *sseStream) reason() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.why
}

// reading reports whether the stream still takes messages.
func (st *sseStream) reading() bool {
	select {
	case <-st.unread:
		return false
	default:
		return true
	}
}

// stopReading stops the stream's reading: the engine finishes the calls in
// flight, which still answer, and then ends the stream.
func (st *sseStream) stopReading(why string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	select {
	case <-st.unread:
	default:
		if st.why == "" {
			st.why = why
		}
		close(st.unread)
	}
}

// drop ends the stream at once: nothing more is read or written. The
// first reason to stop (or to stop reading) is the one kept.
func (st *sseStream) drop(why string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	select {
	case <-st.gone:
		return
	default:
	}
	select {
	case <-st.unread:
	default:
		close(st.unread)
	}
	if st.why == "" {
		st.why = why
	}
	st.goneErr = fmt.Errorf("hexmcp: sse: the stream is closed (%s): %w", why, net.ErrClosed)
	close(st.gone)
}

// readSSEBody reads a POST's body within MaxMessageBytes, counting what
// has arrived in budget (which keeps it on success); a non-zero status
// refuses it.
func (s *SSEHandler) readBody(w http.ResponseWriter, r *http.Request, budget *sseBudget) ([]byte, int, string) {
	opts := &s.opts
	body := http.MaxBytesReader(w, r.Body, opts.MaxMessageBytes)
	n := int64(4 << 10)
	if r.ContentLength > 0 {
		n = min(r.ContentLength, opts.MaxMessageBytes, 64<<10)
	}
	buf := make([]byte, 0, n)
	var held int64
	refuse := func(status int, why string) ([]byte, int, string) {
		budget.give(held)
		return nil, status, why
	}
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
		k, err := body.Read(buf[len(buf):cap(buf)])
		if k > 0 {
			if !budget.take(int64(k)) {
				return refuse(http.StatusTooManyRequests, fmt.Sprintf("the messages waiting for the server here already take %d bytes, the most it keeps; retry later", budget.limit))
			}
			held += int64(k)
			buf = buf[:len(buf)+k]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("a message is at most %d bytes", opts.MaxMessageBytes))
			}
			return refuse(http.StatusBadRequest, "reading the message failed")
		}
	}
	if len(buf) == 0 {
		return refuse(http.StatusBadRequest, "the body is empty: it must be one JSON-RPC message (or a batch)")
	}
	if !json.Valid(buf) { // encoding/json refuses nesting past 10,000 levels, the engine's bound
		return refuse(http.StatusBadRequest, "the body is not JSON: it must be one JSON-RPC message (or a batch)")
	}
	if cap(buf) > len(buf)+len(buf)/4 {
		// The engine keeps the message, and the budget counts its length:
		// a copy of that length, not the doubled buffer (slices.Clip would
		// keep the whole array).
		buf = append(make([]byte, 0, len(buf)), buf...)
	}
	return buf, 0, ""
}

// sseBudget counts bytes within a limit.
type sseBudget struct {
	mu    sync.Mutex
	used  int64
	limit int64
}

// take counts n more bytes, within the limit.
func (b *sseBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// give gives back n bytes.
func (b *sseBudget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// enqueue queues a message read by a POST for ReadMessage; its bytes are
// already counted in inBytes (given back on a refusal).
func (st *sseStream) enqueue(msg []byte) (int, string) {
	st.mu.Lock()
	select {
	case <-st.unread:
		st.mu.Unlock()
		st.inBytes.give(int64(len(msg)))
		return http.StatusNotFound, "no such session: open a stream (GET) for a new one"
	default:
	}
	select {
	case st.in <- msg:
		st.mu.Unlock()
	default:
		st.mu.Unlock()
		st.inBytes.give(int64(len(msg)))
		return http.StatusTooManyRequests, fmt.Sprintf("%d messages wait for the server on this stream, the most it keeps; retry later", st.h.opts.IncomingQueue)
	}
	select {
	case st.active <- struct{}{}:
	default:
	}
	return 0, ""
}

// ReadMessage returns the next message POSTed to the stream, or io.EOF
// once the stream has stopped reading.
func (st *sseStream) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case msg := <-st.in:
		st.inBytes.give(int64(len(msg)))
		return msg, nil
	case <-st.unread:
		return nil, errSSEStopped
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// WriteMessage queues a copy of msg for the stream and returns at once. A
// message that does not fit in the queue (SendQueue messages,
// MaxQueueBytes bytes) ends the stream; once it has ended every write
// fails with an error wrapping net.ErrClosed.
func (st *sseStream) WriteMessage(_ context.Context, msg []byte) error {
	size := int64(len(msg))
	limit := st.h.opts.MaxQueueBytes
	st.mu.Lock()
	if err := st.goneErr; err != nil {
		st.mu.Unlock()
		return err
	}
	if limit > 0 && st.outBytes+size > limit {
		held := st.outBytes
		st.mu.Unlock()
		st.drop(fmt.Sprintf("the client does not read fast enough: %d bytes wait for it and a message of %d would pass the limit of %d", held, size, limit))
		return st.writeErr()
	}
	st.outBytes += size
	st.mu.Unlock()

	m := make([]byte, len(msg))
	copy(m, msg)
	select {
	case st.out <- m:
		return nil
	default:
	}
	st.sent(len(msg))
	st.drop(fmt.Sprintf("the client does not read fast enough: %d messages wait for it, the limit", st.h.opts.SendQueue))
	return st.writeErr()
}

func (st *sseStream) writeErr() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.goneErr
}

// sent gives back the bytes of a message written (or dropped).
func (st *sseStream) sent(n int) {
	st.mu.Lock()
	st.outBytes -= int64(n)
	st.mu.Unlock()
}

// Close ends the stream at once.
func (st *sseStream) Close() error {
	st.drop("closed")
	return nil
}

// RemoteAddr returns the address of the client that opened the stream
// (ports.PeerAddr): the engine counts per-client limits by it.
func (st *sseStream) RemoteAddr() string { return st.remote }

// Principal returns the principal that opened the stream, or nil
// (ports.PeerPrincipal): the engine takes it for every request of the
// stream.
func (st *sseStream) Principal() *ports.Principal { return st.principal }

var (
	_ ports.Conn          = (*sseStream)(nil)
	_ ports.PeerAddr      = (*sseStream)(nil)
	_ ports.PeerPrincipal = (*sseStream)(nil)
)
