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
//   - 403 when, on a loopback listener, its Host header names neither a
//     loopback host (localhost, *.localhost, 127.0.0.0/8, ::1) nor an entry
//     of Options.AllowedHosts: the DNS-rebinding guard, which the Origin
//     check alone cannot be, since a rebound page's Origin names the same
//     host as its Host header;
//   - 403 when it has an Origin header that is neither in
//     Options.AllowedOrigins nor an http or https origin of the request's
//     own host and port (loopback names count as one host there: a page of
//     http://localhost:8080 may connect to 127.0.0.1:8080). "null", file:
//     and other schemes pass only when listed. Requests without Origin,
//     from non-browser clients, are allowed. These two rules are the ones
//     of the Streamable HTTP adapter (mcphttp), from one implementation;
//   - 400 when the client offers subprotocols but not Options.Subprotocol
//     ("mcp"). A client that offers none is accepted (and no subprotocol is
//     selected), for simple clients and tools such as wscat;
//   - 503 (Retry-After) when Options.MaxConns connections are open or
//     being opened;
//   - 429 (Retry-After) when the client (its IP address, without port)
//     has Options.MaxConnsPerClient connections open or being opened;
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
//     a peer make the server read without limit. Also when one message to
//     the client is larger than Options.MaxQueueBytes, which it can never
//     fit in;
//   - 1013 (try again later) when the outgoing queue is full, in messages
//     (Options.SendQueue) or in bytes (Options.MaxQueueBytes), because the
//     peer does not read what it is sent fast enough;
//   - 4401 ([CloseTokenExpired], reason "token expired: authenticate again
//     and reconnect") when the credential that authenticated the upgrade
//     expires: the principal that authentication middleware
//     (mcphttp.RequireBearer) put in the upgrade request's context has an
//     Expires (ports.Principal.Expires; mcpoauth sets it from the token's
//     exp), and from then on a request with the same token would be
//     refused. The connection stops reading, the calls in flight are
//     cancelled (their answers are not sent: the client retries them on
//     its next connection), what was queued before is sent, then the close
//     frame. 4401 is in the private-use range of RFC 6455 (4000-4999): the
//     HTTP status it stands for, 401, plus 4000, as other WebSocket
//     protocols (graphql-ws) name it. A client that gets it gets a new
//     access token (refresh it, or authorize again) and reconnects; a
//     client that does not know the code sees a closed connection it may
//     reopen, and is then answered 401 by the upgrade until it does.
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
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/internal/deflog"
	"github.com/hexmcp/hexmcp/internal/httpguard"
	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [Options].
const (
	// defaultSubprotocol is the subprotocol selected on upgrade.
	defaultSubprotocol = "mcp"
	// defaultMaxMessageSize bounds one incoming message: 4 MiB.
	defaultMaxMessageSize = 4 << 20
	// defaultPingInterval is the time between the server's pings.
	defaultPingInterval = 30 * time.Second
	// defaultPongWait is how long the server waits for a sign of life.
	defaultPongWait = 60 * time.Second
	// defaultWriteTimeout bounds one write to the network.
	defaultWriteTimeout = 10 * time.Second
	// defaultSendQueue is the number of outgoing messages a connection may
	// hold.
	defaultSendQueue = 256
	// defaultMaxQueueBytes bounds the bytes of the outgoing messages a
	// connection may hold: 8 MiB, twice 4 MiB, so that a
	// result as large as the largest request fits with room for the
	// notifications queued around it, while a client that does not read
	// costs the server at most that much.
	defaultMaxQueueBytes = 8 << 20
	// defaultMaxConns bounds the connections served at once. An idle
	// connection after initialize costs about 50 KiB of heap and stacks
	// (measured: three goroutines, gorilla's buffers, the engine's
	// session), so 4096 of them take about 200 MiB with nothing queued,
	// far above what one MCP server instance normally serves.
	defaultMaxConns = 4096
	// defaultMaxConnsPerClient bounds the connections of one client IP
	// address: above the hundreds that load tests or a busy host behind one
	// NAT open, small enough that one address cannot take every
	// connection.
	defaultMaxConnsPerClient = 256
	// defaultHandshakeTimeout bounds the upgrade.
	defaultHandshakeTimeout = 10 * time.Second
)

// CloseTokenExpired is the close code of a connection whose credential
// expired (see the package documentation, "Close codes"): 4401, for HTTP's
// 401 Unauthorized. The client authenticates again and reconnects.
const CloseTokenExpired = 4401

// Unlimited, as Options.MaxQueueBytes, MaxConns or MaxConnsPerClient (any
// negative value does), turns that bound off. A zero value never does: it
// takes the default.
const Unlimited = -1

// retryAfter is the Retry-After, in seconds, of an upgrade refused for too
// many connections: connections are long-lived, so a quick retry would
// mostly be refused again.
const retryAfter = "5"

// Options configure a [Handler]. The zero value is usable: every zero field
// takes its default.
type Options struct {
	// AllowedOrigins lists the origins, besides the request's own host,
	// whose browsers may connect: exact origins such as
	// "http://localhost:6274" (scheme, host and optional port, no path;
	// compared without case, trailing slash or default port), "null" or
	// "file://" literally, or "*" for any. A request with an Origin header
	// that matches neither is refused with 403 before the upgrade; a
	// request without one (not from a browser) is allowed. The own host is
	// an http or https origin naming the Host header's host and port;
	// loopback names (localhost, *.localhost, 127.0.0.0/8, ::1) count as
	// one host there. Same meaning as mcphttp.Options.AllowedOrigins.
	AllowedOrigins []string
	// AllowedHosts lists the host names (without port; compared without
	// case or trailing dot) accepted in the Host header of a request that
	// arrives on a loopback address, besides localhost, *.localhost,
	// 127.0.0.0/8 and ::1; "*" accepts any. Any other Host on a loopback
	// listener is refused with 403 before the upgrade: this stops DNS
	// rebinding, where a page of the attacker's domain, rebound to
	// 127.0.0.1, connects with its own name in Host and Origin. Same
	// meaning as mcphttp.Options.AllowedHosts; list here the names a
	// reverse proxy or local DNS gives the server.
	AllowedHosts []string
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
	// MaxQueueBytes bounds the bytes of the outgoing messages one
	// connection holds (default 8 MiB; Unlimited: only SendQueue bounds
	// the queue). A message counts from the moment it is queued until it
	// has been written to the network. A message that would take the
	// connection past the bound closes it with 1013 (try again later); one
	// message larger than the bound by itself closes it with 1009 (message
	// too big). Other connections are not affected. A server whose tools
	// return results larger than 8 MiB must raise it.
	MaxQueueBytes int64
	// MaxConns bounds the connections served at once, upgrades in progress
	// included (default 4096; Unlimited: none). One more is refused before
	// the upgrade with 503 and Retry-After.
	MaxConns int
	// MaxConnsPerClient bounds the connections of one client, that is one
	// remote IP address (without port), at once (default 256; Unlimited:
	// none). One more is refused before the upgrade with 429 and
	// Retry-After. Behind a reverse proxy every client has the proxy's
	// address: raise it to MaxConns (or Unlimited) there and bound the
	// clients at the proxy.
	MaxConnsPerClient int
	// HandshakeTimeout bounds writing the upgrade response (default 10 s).
	HandshakeTimeout time.Duration
	// Logger receives the adapter's log (default: the logger of the
	// ConnHandler when it has one, as the engine has, else slog on
	// standard error; slog.New(slog.DiscardHandler) discards it).
	Logger ports.Logger
}

func (o Options) withDefaults() Options {
	if o.Subprotocol == "" {
		o.Subprotocol = defaultSubprotocol
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = defaultMaxMessageSize
	}
	if o.PingInterval == 0 {
		o.PingInterval = defaultPingInterval
	}
	if o.PongWait <= 0 {
		o.PongWait = defaultPongWait
	}
	if o.PingInterval > 0 && o.PongWait <= o.PingInterval {
		o.PongWait = 2 * o.PingInterval
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = defaultWriteTimeout
	}
	if o.SendQueue <= 0 {
		o.SendQueue = defaultSendQueue
	}
	if o.MaxQueueBytes == 0 {
		o.MaxQueueBytes = defaultMaxQueueBytes
	}
	if o.MaxConns == 0 {
		o.MaxConns = defaultMaxConns
	}
	if o.MaxConnsPerClient == 0 {
		o.MaxConnsPerClient = defaultMaxConnsPerClient
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = defaultHandshakeTimeout
	}
	if o.Logger == nil {
		o.Logger = deflog.New()
	}
	o.AllowedOrigins = slices.Clone(o.AllowedOrigins)
	o.AllowedHosts = slices.Clone(o.AllowedHosts)
	return o
}

// Handler is an http.Handler that serves MCP over WebSocket: it upgrades
// each request and serves the connection with a [ports.ConnHandler] until
// the peer closes it or the handler shuts down. It is safe for concurrent
// use.
type Handler struct {
	h        ports.ConnHandler
	opts     Options
	guard    *httpguard.Guard // the Host and Origin rules
	upgrader gws.Upgrader

	mu        sync.Mutex
	conns     map[*conn]struct{}
	admitted  int            // connections open or being opened (MaxConns)
	perClient map[string]int // the same, by client IP (MaxConnsPerClient)
	shutdown  bool
	wg        sync.WaitGroup // ServeHTTP calls in progress

	// abortCtx is done when a Shutdown runs out of time: the calls of this
	// handler's connections are then cancelled (ports.WithAbort), and
	// those of the engine's other transports go on.
	abortCtx context.Context
	abort    context.CancelFunc

	stats queueStats
}

// queueStats are the peaks of the outgoing queues of every connection of a
// handler (for tests and diagnosis).
type queueStats struct {
	// peakQueue is the longest outgoing queue seen, in messages.
	peakQueue atomic.Int64
	// peakQueueBytes is the most bytes one connection has held in its
	// outgoing queue (the message being written included).
	peakQueueBytes atomic.Int64
}

// raise sets p to n when n is larger.
func raise(p *atomic.Int64, n int64) {
	for old := p.Load(); n > old && !p.CompareAndSwap(old, n); old = p.Load() {
	}
}

// NewHandler returns a handler serving every accepted connection with h
// (the protocol engine, *app.Engine).
func NewHandler(h ports.ConnHandler, opts Options) *Handler {
	if l, ok := h.(interface{ Logger() ports.Logger }); ok && opts.Logger == nil {
		opts.Logger = l.Logger()
	}
	opts = opts.withDefaults()
	hd := &Handler{
		h:         h,
		opts:      opts,
		guard:     httpguard.New(opts.AllowedOrigins, opts.AllowedHosts),
		conns:     make(map[*conn]struct{}),
		perClient: make(map[string]int),
	}
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
	hd.abortCtx, hd.abort = context.WithCancel(context.Background())
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
		http.Error(w, "hexmcp: websocket: the server is shutting down", http.StatusServiceUnavailable)
		return
	}
	h.wg.Add(1)
	h.mu.Unlock()
	defer h.wg.Done()

	if err := h.guard.Check(r); err != nil {
		h.logf(r.Context(), slog.LevelInfo, "hexmcp: websocket: refused a request by its Host or Origin", slog.Any("error", err), slog.Any("host", r.Host), slog.Any("origin", r.Header.Get("Origin")), slog.Any("remote", r.RemoteAddr))
		http.Error(w, "hexmcp: websocket: forbidden: "+err.Error(), http.StatusForbidden)
		return
	}
	if gws.IsWebSocketUpgrade(r) {
		if offered := gws.Subprotocols(r); len(offered) > 0 && !slices.Contains(offered, h.opts.Subprotocol) {
			h.logf(r.Context(), slog.LevelInfo, "hexmcp: websocket: refused a connection without the MCP subprotocol", slog.Any("offered", strings.Join(offered, ", ")), slog.Any("remote", r.RemoteAddr))
			http.Error(w, fmt.Sprintf("hexmcp: websocket: this server speaks the subprotocol %q, which the client did not offer (it offered %q)", h.opts.Subprotocol, offered), http.StatusBadRequest)
			return
		}
		client := clientOf(r)
		if status, refusal := h.admit(client); status != 0 {
			h.logf(r.Context(), slog.LevelInfo, "hexmcp: websocket: refused a connection over a connection limit", slog.Any("status", status), slog.Any("reason", refusal), slog.Any("client", client))
			w.Header().Set("Retry-After", retryAfter)
			http.Error(w, "hexmcp: websocket: "+refusal, status)
			return
		}
		defer h.release(client)
	}
	ws, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		h.logf(r.Context(), slog.LevelDebug, "hexmcp: websocket: upgrade failed", slog.Any("error", err), slog.Any("remote", r.RemoteAddr))
		return // the upgrader has answered
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c := newConn(ctx, ws, &h.opts, &h.stats)
	if !h.track(c, cancel) {
		cancel() // shutting down already: serve nothing, close with 1001
	}
	defer h.untrack(c)
	go c.readLoop()
	go c.writeLoop()

	// The calls of this connection alone are cancelled when its
	// credential expires.
	expired, expire := context.WithCancel(context.Background())
	defer expire()
	if p := ports.PrincipalFrom(r.Context()); p != nil && !p.Expires.IsZero() {
		t := time.AfterFunc(time.Until(p.Expires), func() {
			if c.requestClose(CloseTokenExpired, "token expired: authenticate again and reconnect", true,
				fmt.Errorf("hexmcp: websocket: the access token expired: %w", net.ErrClosed), "the access token expired") {
				c.logf(slog.LevelInfo, "hexmcp: websocket: closing a connection whose access token expired", slog.Any("expires", p.Expires.UTC().Format(time.RFC3339)))
			}
			expire()
			cancel()
		})
		defer t.Stop()
	}

	h.logf(ctx, slog.LevelDebug, "hexmcp: websocket: connection opened", slog.Any("remote", r.RemoteAddr), slog.Any("subprotocol", ws.Subprotocol()))
	serveErr := h.h.ServeConn(ports.WithAbort(ports.WithAbort(ctx, h.abortCtx), expired), c)
	c.finish(ctx.Err() != nil)
	h.logf(ctx, slog.LevelDebug, "hexmcp: websocket: connection closed", slog.Any("remote", r.RemoteAddr), slog.Any("error", serveErr))
}

// clientOf names the client of r for MaxConnsPerClient: its IP address,
// without port (in canonical form, IPv4-mapped addresses as IPv4).
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String()
	}
	return host
}

// admit takes a connection slot for client; a non-zero status is the
// refusal (503 for MaxConns, 429 for MaxConnsPerClient) and its reason.
func (h *Handler) admit(client string) (int, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if limit := h.opts.MaxConns; limit > 0 && h.admitted >= limit {
		return http.StatusServiceUnavailable, fmt.Sprintf("the server is at its limit of %d connections; retry later", limit)
	}
	if limit := h.opts.MaxConnsPerClient; limit > 0 && h.perClient[client] >= limit {
		return http.StatusTooManyRequests, fmt.Sprintf("this client (%s) already has %d connections open, the limit per client; close one or retry later", client, limit)
	}
	h.admitted++
	h.perClient[client]++
	return 0, ""
}

// release gives back the slot admit took.
func (h *Handler) release(client string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.admitted--
	if h.perClient[client]--; h.perClient[client] <= 0 {
		delete(h.perClient, client)
	}
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
// ctx.Err(), after cancelling the contexts of the handlers still running
// on its connections (the engine's other transports go on).
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
	h.abort()
	for _, c := range conns {
		c.abort(gws.CloseGoingAway, "server shutting down")
	}
	return ctx.Err()
}

func (h *Handler) logf(ctx context.Context, level slog.Level, msg string, fields ...slog.Attr) {
	if h.opts.Logger.Enabled(ctx, level) {
		h.opts.Logger.LogAttrs(ctx, level, msg, fields...)
	}
}
