package websocket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/ports"
)

// conn is one WebSocket connection seen as a ports.Conn. gorilla allows one
// reader and one writer at a time, so each has its own goroutine:
//
//   - readLoop reads frames and hands each text message to ReadMessage. It
//     keeps reading (and skipping data) after ReadMessage has stopped, so
//     that control frames (pongs, the peer's close frame) are still seen
//     during shutdown;
//   - writeLoop drains the bounded send queue that WriteMessage fills
//     without blocking, sends the pings, and ends with the close frame.
//     The queue is bounded in messages (the channel's capacity) and in
//     bytes (queued, which counts every queued copy until it is written).
//
// The first reason to close wins (requestClose); it stops ReadMessage and
// WriteMessage, and tells the writer which close frame to send and whether
// the queue is flushed first.
type conn struct {
	ctx    context.Context // the ServeConn context
	cancel context.CancelFunc
	ws     *gws.Conn
	opts   *Options
	stats  *queueStats

	in   chan []byte // reader → ReadMessage
	send chan []byte // WriteMessage → writer; its capacity is the bound

	mu       sync.Mutex
	closing  bool
	code     int    // the close frame to send; 0 sends none
	reason   string // its reason
	drain    bool   // flush the queue before the close frame
	readErr  error  // what ReadMessage returns once closing
	writeErr error  // what WriteMessage returns once closing
	closeCh  chan struct{}
	queued   int64 // bytes of the messages queued or being written

	readerDone chan struct{}
	writerDone chan struct{}
	netOnce    sync.Once
}

func newConn(ctx context.Context, ws *gws.Conn, opts *Options, stats *queueStats) *conn {
	c := &conn{
		ctx:        ctx,
		ws:         ws,
		opts:       opts,
		stats:      stats,
		in:         make(chan []byte),
		send:       make(chan []byte, opts.SendQueue),
		closeCh:    make(chan struct{}),
		readerDone: make(chan struct{}),
		writerDone: make(chan struct{}),
	}
	ws.SetCloseHandler(func(code int, _ string) error {
		if code == gws.CloseNoStatusReceived {
			code = gws.CloseNormalClosure // 1005 must not be sent
		}
		c.requestClose(code, "", false, io.EOF, "the peer closed the connection")
		return nil
	})
	if opts.PingInterval > 0 {
		ws.SetPongHandler(func(string) error {
			return ws.SetReadDeadline(time.Now().Add(opts.PongWait))
		})
	}
	return c
}

// requestClose records the first reason to close: the close frame to send
// (code 0 for none), whether what is queued is sent first, and the error
// ReadMessage returns from now on. It reports whether this call decided.
func (c *conn) requestClose(code int, reason string, drain bool, readErr error, why string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.closing, c.code, c.reason, c.drain, c.readErr = true, code, reason, drain, readErr
	c.writeErr = fmt.Errorf("hexmcp: websocket: the connection is closed (%s): %w", why, net.ErrClosed)
	close(c.closeCh)
	return true
}

func (c *conn) isClosing() bool {
	select {
	case <-c.closeCh:
		return true
	default:
		return false
	}
}

// closeNet closes the TCP connection, which ends both loops.
func (c *conn) closeNet() {
	c.netOnce.Do(func() { _ = c.ws.Close() })
}

// ReadMessage returns the next text message. It returns io.EOF when the
// peer has closed the connection or gone away, and an error wrapping
// net.ErrClosed when the server is closing it (see the package
// documentation for the reasons).
func (c *conn) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case msg := <-c.in:
		return msg, nil
	case <-c.closeCh:
		c.mu.Lock()
		defer c.mu.Unlock()
		return nil, c.readErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// WriteMessage queues a copy of msg for the writer and returns at once. A
// full queue (Options.SendQueue messages or Options.MaxQueueBytes bytes)
// closes the connection with 1013, a message larger than MaxQueueBytes by
// itself with 1009; after a close every write fails with an error wrapping
// net.ErrClosed.
func (c *conn) WriteMessage(_ context.Context, msg []byte) error {
	size := int64(len(msg))
	limit := c.opts.MaxQueueBytes

	// Reserve the bytes before the copy exists, so that what the
	// connection holds never passes the bound.
	c.mu.Lock()
	if c.closing {
		err := c.writeErr
		c.mu.Unlock()
		return err
	}
	if limit > 0 && c.queued+size > limit {
		held := c.queued
		c.mu.Unlock()
		if size > limit {
			why := fmt.Sprintf("a message of %d bytes exceeds the send limit of %d bytes", size, limit)
			return c.refuse(gws.CloseMessageTooBig, fmt.Sprintf("message too big: a message to the client exceeds the send limit of %d bytes", limit), why,
				"hexmcp: websocket: closing a connection: a message to the client is larger than MaxQueueBytes", slog.Any("size", size), slog.Any("limit", limit))
		}
		why := fmt.Sprintf("the send queue holds %d bytes and the limit is %d", held, limit)
		return c.refuse(gws.CloseTryAgainLater, "try again later: the client does not read its messages fast enough", why,
			"hexmcp: websocket: closing a connection whose client reads too slowly", slog.Any("queuedBytes", held), slog.Any("size", size), slog.Any("limit", limit))
	}
	c.queued += size
	raise(&c.stats.peakQueueBytes, c.queued)
	c.mu.Unlock()

	m := make([]byte, len(msg)) // exactly len(msg) bytes: what is counted
	copy(m, msg)

	c.mu.Lock()
	if c.closing {
		c.queued -= size
		err := c.writeErr
		c.mu.Unlock()
		return err
	}
	select {
	case c.send <- m:
		n := int64(len(c.send))
		c.mu.Unlock()
		raise(&c.stats.peakQueue, n)
		return nil
	default:
	}
	c.queued -= size
	c.mu.Unlock()
	why := fmt.Sprintf("the send queue of %d messages is full", c.opts.SendQueue)
	return c.refuse(gws.CloseTryAgainLater, "try again later: the client does not read its messages fast enough", why,
		"hexmcp: websocket: closing a connection whose client reads too slowly", slog.Any("queue", c.opts.SendQueue))
}

// refuse closes the connection because a message cannot be queued, and
// returns the error of WriteMessage.
func (c *conn) refuse(code int, reason, why, logMsg string, fields ...slog.Attr) error {
	if c.requestClose(code, reason, false, fmt.Errorf("hexmcp: websocket: %s: %w", why, net.ErrClosed), why) {
		c.logf(slog.LevelWarn, logMsg, fields...)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writeErr
}

// sent releases the bytes of a message once it has been written (or its
// writing has failed).
func (c *conn) sent(msg []byte) {
	c.mu.Lock()
	c.queued -= int64(len(msg))
	c.mu.Unlock()
}

// Close closes the connection at once, without a close frame. The handler
// closes connections itself; Close is there for the port.
func (c *conn) Close() error {
	c.requestClose(0, "", false, io.EOF, "closed")
	c.closeNet()
	return nil
}

// readChunkSize is the size of the pieces a message is read into before
// it is copied into a slice of its exact size.
const readChunkSize = 32 << 10

// readChunks holds the pieces messages are read into, shared by the
// connections: an idle connection keeps none.
var readChunks = sync.Pool{New: func() any { return new([readChunkSize]byte) }}

// readMessage reads r to its end, or past limit, into pooled pieces and
// returns its length and, unless that is over limit, a copy of exactly that
// length. The copy is what the engine keeps while it serves the message,
// and what its budgets of bytes in flight count: a buffer grown while
// reading would hold up to twice as much for as long. body is the
// connection's own reader of bodies, reused (one allocation per
// connection, not per message).
func readMessage(body *io.LimitedReader, r io.Reader, limit int) ([]byte, int, error) {
	var first [1]*[readChunkSize]byte
	chunks := first[:0]
	defer func() {
		for _, c := range chunks {
			readChunks.Put(c)
		}
	}()
	body.R, body.N = r, int64(limit)+1
	n := 0
	for {
		c := readChunks.Get().(*[readChunkSize]byte)
		chunks = append(chunks, c)
		m, err := io.ReadFull(body, c[:])
		n += m
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, n, err
		}
	}
	if n > limit {
		return nil, n, nil
	}
	msg := make([]byte, n)
	for i, c := range chunks {
		copy(msg[i*readChunkSize:], c[:])
	}
	return msg, n, nil
}

// readLoop reads frames until the connection fails or the peer's close
// frame arrives.
func (c *conn) readLoop() {
	defer close(c.readerDone)
	limit := c.opts.MaxMessageSize
	var body io.LimitedReader
	for {
		if c.opts.PingInterval > 0 {
			// The peer has PongWait to show life while we wait for it;
			// time spent waiting for the engine does not count.
			_ = c.ws.SetReadDeadline(time.Now().Add(c.opts.PongWait))
		}
		typ, r, err := c.ws.NextReader()
		if err != nil {
			c.readFailed(err)
			return
		}
		if c.isClosing() {
			continue // skip data until the peer's close frame
		}
		if c.opts.PingInterval > 0 {
			// A message is a sign of life: its body has PongWait too.
			_ = c.ws.SetReadDeadline(time.Now().Add(c.opts.PongWait))
		}
		if typ != gws.TextMessage {
			if c.requestClose(gws.CloseUnsupportedData, "unsupported data: MCP messages are JSON text frames", false,
				fmt.Errorf("hexmcp: websocket: the client sent a binary frame: %w", net.ErrClosed), "the client sent a binary frame") {
				c.logf(slog.LevelInfo, "hexmcp: websocket: closing a connection that sent a binary frame")
			}
			continue
		}
		msg, n, err := readMessage(&body, r, limit)
		if err != nil {
			c.readFailed(err)
			return
		}
		if n > limit {
			why := fmt.Sprintf("a message exceeds the limit of %d bytes", limit)
			if c.requestClose(gws.CloseMessageTooBig, fmt.Sprintf("message too big: the limit is %d bytes", limit), false,
				fmt.Errorf("hexmcp: websocket: %s: %w", why, net.ErrClosed), why) {
				c.logf(slog.LevelWarn, "hexmcp: websocket: closing a connection that sent a message over the size limit", slog.Any("limit", limit))
			}
			continue
		}
		select {
		case c.in <- msg:
		case <-c.closeCh:
		case <-c.ctx.Done(): // the engine reads no more
		}
	}
}

// readFailed ends reading after err from gorilla.
func (c *conn) readFailed(err error) {
	var ce *gws.CloseError
	var ne net.Error
	switch {
	case errors.As(err, &ce):
		// The peer's close frame, which the close handler has answered,
		// or 1006: gorilla's name for a connection that ended without one.
		c.requestClose(0, "", false, io.EOF, "the peer closed the connection")
	case c.opts.PingInterval > 0 && errors.As(err, &ne) && ne.Timeout():
		why := fmt.Sprintf("no pong within %s", c.opts.PongWait)
		if c.requestClose(gws.ClosePolicyViolation, "ping timeout: "+why, false, io.EOF, why) {
			c.logf(slog.LevelInfo, "hexmcp: websocket: closing a connection whose peer stopped answering pings", slog.Any("pongWait", c.opts.PongWait.String()))
		}
	default:
		// The peer vanished, or broke the protocol (gorilla has sent
		// 1002), or the connection was closed here.
		if c.requestClose(0, "", false, io.EOF, "the connection failed") {
			c.logf(slog.LevelDebug, "hexmcp: websocket: reading failed", slog.Any("error", err))
		}
	}
}

// writeLoop writes the queued messages and the pings, then the close frame.
func (c *conn) writeLoop() {
	defer close(c.writerDone)
	var tick <-chan time.Time
	if c.opts.PingInterval > 0 {
		t := time.NewTicker(c.opts.PingInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-c.closeCh: // closing goes first
			c.writeClose()
			return
		default:
		}
		select {
		case msg := <-c.send:
			if !c.write(msg) {
				return
			}
		case <-tick:
			if err := c.ws.WriteControl(gws.PingMessage, nil, time.Now().Add(c.opts.WriteTimeout)); err != nil {
				c.writeFailed(err)
				return
			}
		case <-c.closeCh:
			c.writeClose()
			return
		}
	}
}

// write writes one queued message; its bytes count until it is written.
func (c *conn) write(msg []byte) bool {
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.opts.WriteTimeout))
	err := c.ws.WriteMessage(gws.TextMessage, msg)
	c.sent(msg)
	if err != nil {
		c.writeFailed(err)
		return false
	}
	return true
}

// writeClose flushes the queue when the close asks for it and sends the
// close frame.
func (c *conn) writeClose() {
	c.mu.Lock()
	code, reason, drain := c.code, c.reason, c.drain
	c.mu.Unlock()
	for drain {
		select {
		case msg := <-c.send:
			if !c.write(msg) {
				return
			}
		default:
			drain = false // WriteMessage queues nothing once closing
		}
	}
	if code != 0 {
		_ = c.ws.WriteControl(gws.CloseMessage, gws.FormatCloseMessage(code, reason), time.Now().Add(c.opts.WriteTimeout))
	}
}

// writeFailed drops a connection the network no longer takes writes on.
func (c *conn) writeFailed(err error) {
	why := "writing to the client failed"
	if c.requestClose(0, "", false, fmt.Errorf("hexmcp: websocket: %s: %w", why, net.ErrClosed), why) {
		c.logf(slog.LevelInfo, "hexmcp: websocket: dropping a connection: writing failed", slog.Any("error", err))
	}
	c.closeNet()
}

// closeWait bounds the wait for the peer's close frame after the server has
// sent its own (or WriteTimeout, when shorter).
const closeWait = time.Second

// finish closes the connection once ServeConn has returned: what is queued
// is sent, then the close frame (1001 when the server is going away, 1000
// otherwise, unless another reason came first); the peer has closeWait to
// answer it before the TCP connection is closed.
func (c *conn) finish(goingAway bool) {
	code, reason := gws.CloseNormalClosure, ""
	if goingAway {
		code, reason = gws.CloseGoingAway, "server shutting down"
	}
	c.requestClose(code, reason, true, io.EOF, "served")
	<-c.writerDone
	t := time.NewTimer(min(closeWait, c.opts.WriteTimeout))
	select {
	case <-c.readerDone:
	case <-t.C:
	}
	t.Stop()
	c.closeNet()
	<-c.readerDone
}

// abort closes the connection at once (a shutdown out of time).
func (c *conn) abort(code int, reason string) {
	c.requestClose(code, reason, false, io.EOF, reason)
	c.closeNet()
}

func (c *conn) logf(level slog.Level, msg string, fields ...slog.Attr) {
	l := c.opts.Logger
	if l.Enabled(c.ctx, level) {
		fields = append(fields, slog.Any("remote", c.ws.RemoteAddr().String()))
		l.LogAttrs(c.ctx, level, msg, fields...)
	}
}

// RemoteAddr returns the peer's address: the engine counts per-client
// limits by it (ports.PeerAddr).
func (c *conn) RemoteAddr() string { return c.ws.RemoteAddr().String() }

var (
	_ ports.Conn     = (*conn)(nil)
	_ ports.PeerAddr = (*conn)(nil)
)

// Principal returns the principal that authenticated the upgrade request
// (mcphttp.RequireBearer in front of the handler), or nil: the engine takes
// it for every request on the connection ([ports.PeerPrincipal]).
func (c *conn) Principal() *ports.Principal { return ports.PrincipalFrom(c.ctx) }
