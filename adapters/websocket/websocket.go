// Package websocket is the WebSocket transport: an http.Handler that
// upgrades requests to WebSocket connections and serves each one as a
// [ports.Conn], one JSON-RPC message per text frame. It is compatible with
// WebSocketClientTransport of the official TypeScript SDK
// (@modelcontextprotocol/sdk/client/websocket.js), which offers the
// subprotocol "mcp" and refuses a server that does not select it.
//
// WebSocket is not part of any released MCP revision (it is proposal
// SEP-1288); the adapter only moves messages between the network and a
// [ports.ConnHandler] (the protocol engine), which serves both protocol
// eras on the connection. It holds no protocol logic.
//
// Mount the [Handler] on any path of an HTTP server (the example server
// uses /ws):
//
//	h := websocket.NewHandler(engine, websocket.Options{AllowedOrigins: []string{"http://localhost:6274"}})
//	mux.Handle("/ws", h)
//	...
//	h.Shutdown(ctx) // before or alongside http.Server.Shutdown, which does not see upgraded connections
//
// # Upgrades
//
// A request is refused before the upgrade with
//
//   - 503 when the handler is shutting down;
//   - 403 when it has an Origin header that names neither the request's own
//     host nor an entry of Options.AllowedOrigins (requests without Origin,
//     from non-browser clients, are allowed);
//   - 400 when the client offers subprotocols but not Options.Subprotocol
//     ("mcp"). A client that offers none is accepted (and no subprotocol is
//     selected), for simple clients and tools such as wscat;
//   - gorilla/websocket's own 4xx when the request is not a WebSocket
//     handshake.
//
// # Close codes
//
// The server closes a connection with
//
//   - the peer's own code (1000 when its close frame has none) in answer to
//     the peer's close frame: ReadMessage then returns io.EOF, and
//     responses still to come are dropped, since the peer has left;
//   - 1001 (going away) when the handler shuts down, after the calls in
//     flight have answered;
//   - 1003 (unsupported data) when the peer sends a binary frame: MCP
//     messages are JSON text, and a binary request would otherwise wait
//     forever for an answer;
//   - 1008 (policy violation) when the peer has not answered a ping within
//     Options.PongWait;
//   - 1009 (message too big) when a message exceeds Options.MaxMessageSize.
//     The connection is closed rather than kept: the message cannot be
//     answered (its id is unread), and reading it whole to skip it would let
//     a peer make the server read without limit;
//   - 1013 (try again later) when the outgoing queue is full because the
//     peer does not read what it is sent fast enough.
//
// After sending its close frame the server goes on reading (and skipping
// data) until the peer answers with its own close frame, for at most one
// second (or Options.WriteTimeout when shorter), then closes the TCP
// connection. Closing it while the peer may still be sending could make
// the peer's TCP stack discard the last responses.
package websocket

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [Options].
const (
	// DefaultSubprotocol is the subprotocol selected on upgrade.
	DefaultSubprotocol = "mcp"
	// DefaultMaxMessageSize bounds one incoming message: 4 MiB.
	DefaultMaxMessageSize = 4 << 20
	// DefaultPingInterval is the time between the server's pings.
	DefaultPingInterval = 30 * time.Second
	// DefaultPongWait is how long the server waits for a sign of life.
	DefaultPongWait = 60 * time.Second
	// DefaultWriteTimeout bounds one write to the network.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultSendQueue is the number of outgoing messages a connection may
	// hold.
	DefaultSendQueue = 256
	// DefaultHandshakeTimeout bounds the upgrade.
	DefaultHandshakeTimeout = 10 * time.Second
)

// Options configure a [Handler]. The zero value is usable: every zero field
// takes its default.
type Options struct {
	// AllowedOrigins lists the origins, besides the request's own host,
	// whose browsers may connect: exact origins such as
	// "http://localhost:6274" (scheme, host and port, no path), or "*" for
	// any. A request with an Origin header that matches neither is refused
	// with 403 before the upgrade; a request without one (not from a
	// browser) is allowed.
	//
	// The own-host rule compares the Origin's host with the Host header, so
	// it does not stop DNS rebinding: a server on a local address should
	// also check the Host header (or list its origins and sit behind a
	// Host check).
	AllowedOrigins []string
	// Subprotocol is the WebSocket subprotocol selected when the client
	// offers it (default "mcp"). A client that offers others but not this
	// one is refused with 400; a client that offers none is accepted.
	Subprotocol string
	// MaxMessageSize bounds one incoming message in bytes (default 4 MiB).
	// A larger message closes the connection with 1009 (message too big).
	MaxMessageSize int
	// PingInterval is the time between the server's pings (default 30 s);
	// a negative value sends no pings and never times a silent peer out.
	PingInterval time.Duration
	// PongWait is how long the server, while waiting for a message, waits
	// for a pong or a message before it closes the connection with 1008
	// (default 60 s). Time the peer spends waiting for the server (while
	// the engine is at its bound of calls in flight) does not count. It must exceed PingInterval; a smaller value is
	// raised to twice PingInterval.
	PongWait time.Duration
	// WriteTimeout bounds one write to the network (default 10 s); a write
	// that takes longer drops the connection.
	WriteTimeout time.Duration
	// SendQueue is the number of outgoing messages one connection may hold
	// while the network is slower than the server (default 256). When the
	// queue is full the connection is closed with 1013 (try again later),
	// so memory never grows without bound.
	SendQueue int
	// HandshakeTimeout bounds writing the upgrade response (default 10 s).
	HandshakeTimeout time.Duration
	// Logger receives the adapter's log (default: discarded).
	Logger ports.Logger
}

func (o Options) withDefaults() Options {
	if o.Subprotocol == "" {
		o.Subprotocol = DefaultSubprotocol
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.PingInterval == 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.PongWait <= 0 {
		o.PongWait = DefaultPongWait
	}
	if o.PingInterval > 0 && o.PongWait <= o.PingInterval {
		o.PongWait = 2 * o.PingInterval
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.SendQueue <= 0 {
		o.SendQueue = DefaultSendQueue
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.Logger == nil {
		o.Logger = ports.NopLogger{}
	}
	o.AllowedOrigins = slices.Clone(o.AllowedOrigins)
	return o
}

// Handler is an http.Handler that serves MCP over WebSocket: it upgrades
// each request and serves the connection with a [ports.ConnHandler] until
// the peer closes it or the handler shuts down. It is safe for concurrent
// use.
type Handler struct {
	h        ports.ConnHandler
	opts     Options
	upgrader gws.Upgrader

	mu       sync.Mutex
	conns    map[*conn]struct{}
	shutdown bool
	wg       sync.WaitGroup // ServeHTTP calls in progress

	// peakQueue is the longest outgoing queue seen on any connection.
	peakQueue atomic.Int64
}

// NewHandler returns a handler serving every accepted connection with h
// (the protocol engine, *app.Engine).
func NewHandler(h ports.ConnHandler, opts Options) *Handler {
	opts = opts.withDefaults()
	hd := &Handler{h: h, opts: opts, conns: make(map[*conn]struct{})}
	hd.upgrader = gws.Upgrader{
		HandshakeTimeout: opts.HandshakeTimeout,
		Subprotocols:     []string{opts.Subprotocol},
		// Idle connections keep no write buffer.
		WriteBufferPool: &sync.Pool{},
		// Checked by ServeHTTP before the upgrade, with a clearer answer.
		CheckOrigin: func(*http.Request) bool { return true },
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			w.Header().Set("Sec-WebSocket-Version", "13")
			http.Error(w, reason.Error(), status)
		},
	}
	return hd
}

// ServeHTTP upgrades the request to a WebSocket connection and serves it
// until it ends; see the package documentation for the requests it
// refuses. The connection's context derives from the request's, so that its
// values reach the ConnHandler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	if h.shutdown {
		h.mu.Unlock()
		w.Header().Set("Connection", "close")
		http.Error(w, "websocket: the server is shutting down", http.StatusServiceUnavailable)
		return
	}
	h.wg.Add(1)
	h.mu.Unlock()
	defer h.wg.Done()

	if gws.IsWebSocketUpgrade(r) {
		if reason, ok := h.checkOrigin(r); !ok {
			h.logf(r.Context(), ports.LevelInfo, "websocket: refused a connection from a foreign origin", ports.F("origin", r.Header.Get("Origin")), ports.F("remote", r.RemoteAddr))
			http.Error(w, reason, http.StatusForbidden)
			return
		}
		if offered := gws.Subprotocols(r); len(offered) > 0 && !slices.Contains(offered, h.opts.Subprotocol) {
			h.logf(r.Context(), ports.LevelInfo, "websocket: refused a connection without the MCP subprotocol", ports.F("offered", strings.Join(offered, ", ")), ports.F("remote", r.RemoteAddr))
			http.Error(w, fmt.Sprintf("websocket: this server speaks the subprotocol %q, which the client did not offer (it offered %q)", h.opts.Subprotocol, offered), http.StatusBadRequest)
			return
		}
	}
	ws, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		h.logf(r.Context(), ports.LevelDebug, "websocket: upgrade failed", ports.F("error", err), ports.F("remote", r.RemoteAddr))
		return // the upgrader has answered
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c := newConn(ctx, ws, &h.opts, &h.peakQueue)
	if !h.track(c, cancel) {
		cancel() // shutting down already: serve nothing, close with 1001
	}
	defer h.untrack(c)
	go c.readLoop()
	go c.writeLoop()

	h.logf(ctx, ports.LevelDebug, "websocket: connection opened", ports.F("remote", r.RemoteAddr), ports.F("subprotocol", ws.Subprotocol()))
	serveErr := h.h.ServeConn(ctx, c)
	c.finish(ctx.Err() != nil)
	h.logf(ctx, ports.LevelDebug, "websocket: connection closed", ports.F("remote", r.RemoteAddr), ports.F("error", serveErr))
}

// checkOrigin applies Options.AllowedOrigins; the string is the refusal.
func (h *Handler) checkOrigin(r *http.Request) (string, bool) {
	origins, ok := r.Header["Origin"]
	if !ok || len(origins) == 0 {
		return "", true // not a browser
	}
	origin := origins[0]
	if u, err := url.Parse(origin); err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return "", true
	}
	for _, allowed := range h.opts.AllowedOrigins {
		if allowed == "*" || strings.EqualFold(strings.TrimSuffix(allowed, "/"), origin) {
			return "", true
		}
	}
	return fmt.Sprintf("websocket: origin %q is not allowed", origin), false
}

func (h *Handler) track(c *conn, cancel context.CancelFunc) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.cancel = cancel
	h.conns[c] = struct{}{}
	return !h.shutdown
}

func (h *Handler) untrack(c *conn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
}

// Conns returns the number of connections being served.
func (h *Handler) Conns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// Shutdown shuts the handler down gracefully: new upgrades are refused with
// 503, every connection stops reading, the calls in flight finish and their
// responses are sent, then each connection is closed with 1001 (going
// away). Shutdown returns when every connection is closed, or, when ctx
// ends first, closes the remaining connections at once and returns
// ctx.Err(). Handlers still running then go on until they return; cancel
// them with the engine's Abort.
//
// Upgraded connections are invisible to http.Server.Shutdown: call this
// too. A handler that has shut down refuses every upgrade.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.shutdown = true
	conns := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.cancel()
	}

	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	h.mu.Lock()
	conns = conns[:0]
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.abort(gws.CloseGoingAway, "server shutting down")
	}
	return ctx.Err()
}

func (h *Handler) logf(ctx context.Context, level ports.Level, msg string, fields ...ports.Field) {
	if h.opts.Logger.Enabled(ctx, level) {
		h.opts.Logger.Log(ctx, level, msg, fields...)
	}
}
