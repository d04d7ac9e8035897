package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/internal/deflog"
	"github.com/hexmcp/hexmcp/internal/httpguard"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [SSEOptions].
const (
	// DefaultSSEPath is where the servers of this module mount the
	// HTTP+SSE stream (GET).
	DefaultSSEPath = "/sse"
	// DefaultSSEMessagePath is where clients of the HTTP+SSE transport
	// POST their messages (SSEOptions.MessagePath).
	DefaultSSEMessagePath = "/message"

	defaultSSEMaxStreams          = 4096
	defaultSSEMaxStreamsPerClient = 256
	defaultSSEMaxMessageBytes     = 4 << 20
	defaultSSEIncomingQueue       = 64
	defaultSSEMaxIncomingBytes    = 8 << 20
	defaultSSESendQueue           = 256
	defaultSSEMaxQueueBytes       = 8 << 20
	defaultSSEKeepAlive           = 30 * time.Second
	defaultSSEWriteTimeout        = 10 * time.Second
	defaultSSEIdleTimeout         = 30 * time.Minute
	defaultSSEMaxForwardingBytes  = 32 << 20
)

// sseRetryAfter is the Retry-After, in seconds, of a stream refused for
// too many streams: streams are long-lived, so a quick retry would mostly
// be refused again.
const sseRetryAfter = "5"

// SSEOptions configure an [SSEHandler]. The zero value is usable: every
// zero field takes its default, and a negative bound (where the field says
// so) turns that bound off.
type SSEOptions struct {
	// MessagePath is the path the endpoint event names for the client's
	// POSTs, with "?sessionId=" and the stream's session id appended
	// (default "/message"). Clients resolve it against the URL of the
	// stream, so an absolute path is served on the stream's host. Mount
	// the handler there too.
	MessagePath string
	// AllowedOrigins and AllowedHosts are the Host (DNS rebinding) and
	// Origin rules of the Streamable HTTP [Handler] (see
	// Options.AllowedOrigins and Options.AllowedHosts), applied to the
	// GET and to every POST: a request they refuse gets 403.
	AllowedOrigins []string
	AllowedHosts   []string
	// MaxStreams bounds the streams open at once (default 4096; negative:
	// none). One more GET is refused with 503 and Retry-After.
	MaxStreams int
	// MaxStreamsPerClient bounds the streams of one client at once, the
	// client as [DefaultClientKey] names it (the authenticated principal's
	// subject, else the remote IP address, an IPv6 one by its /64), the
	// rule Streamable HTTP sessions count by (default 256; negative: none). One more GET is refused with 429 and
	// Retry-After.
	MaxStreamsPerClient int
	// MaxMessageBytes bounds one POSTed message (default 4 MiB). A larger
	// body is refused with 413.
	MaxMessageBytes int64
	// IncomingQueue bounds the messages POSTed to a stream that the
	// engine has not read yet (default 64). One more POST is refused with
	// 429 and Retry-After: the engine is at its bound of calls in flight
	// on this stream (app.Options.MaxConcurrentRequests).
	IncomingQueue int
	// MaxIncomingBytes bounds the bytes of a stream's POST bodies being
	// read or waiting for the engine (default 8 MiB, never less than
	// MaxMessageBytes). A POST that would pass it is refused with 429 and
	// Retry-After.
	MaxIncomingBytes int64
	// SendQueue bounds the messages waiting to be written to a stream
	// whose client reads slower than the server writes (default 256);
	// MaxQueueBytes bounds their bytes (default 8 MiB; negative: only
	// SendQueue bounds them). A message that does not fit ends the
	// stream: the client reconnects with a new session.
	SendQueue     int
	MaxQueueBytes int64
	// KeepAlive is the interval of the comment lines written to an idle
	// stream (default 30 s; negative: none), so that proxies keep it open
	// and a dead client is noticed.
	KeepAlive time.Duration
	// WriteTimeout bounds the writing of one event (default 10 s); a
	// client that does not take it in time loses the stream.
	WriteTimeout time.Duration
	// IdleTimeout ends a stream whose client has POSTed nothing for this
	// long (default 30 min, the idle life of a Streamable HTTP session;
	// negative: none). The calls in flight finish and answer first.
	IdleTimeout time.Duration
	// Bus carries a message POSTed to an instance that does not hold the
	// stream of its session to the instance that does (several instances
	// behind a load balancer without sticky sessions; the session id
	// names the instance holding its stream), as a
	// ports.NoticeStreamMessage. Default: the Bus of the engine's shared
	// state (app.Options.Shared: hexmcp.Options.Shared, wiring.Redis).
	// Without one, such a POST gets 404 saying that another instance
	// holds the stream.
	Bus ports.NotificationBus
	// MaxForwardingBytes bounds the bytes of the POST bodies being read
	// at once for streams held by other instances (default 32 MiB). One
	// more is refused with 429 and Retry-After.
	MaxForwardingBytes int64
	// Logger receives the adapter's log (default: the logger of the
	// ConnHandler when it has one, as the engine has, else slog on
	// standard error).
	Logger ports.Logger
}

func (o SSEOptions) withDefaults() SSEOptions {
	if o.MessagePath == "" {
		o.MessagePath = DefaultSSEMessagePath
	}
	o.MaxStreams = bound(o.MaxStreams, defaultSSEMaxStreams)
	o.MaxStreamsPerClient = bound(o.MaxStreamsPerClient, defaultSSEMaxStreamsPerClient)
	o.MaxMessageBytes = portlimits.Positive(o.MaxMessageBytes, defaultSSEMaxMessageBytes)
	o.IncomingQueue = portlimits.Positive(o.IncomingQueue, defaultSSEIncomingQueue)
	o.MaxIncomingBytes = portlimits.Positive(o.MaxIncomingBytes, defaultSSEMaxIncomingBytes)
	o.MaxIncomingBytes = max(o.MaxIncomingBytes, o.MaxMessageBytes)
	o.MaxForwardingBytes = portlimits.Positive(o.MaxForwardingBytes, defaultSSEMaxForwardingBytes)
	o.MaxForwardingBytes = max(o.MaxForwardingBytes, o.MaxMessageBytes)
	o.SendQueue = portlimits.Positive(o.SendQueue, defaultSSESendQueue)
	o.MaxQueueBytes = bound(o.MaxQueueBytes, defaultSSEMaxQueueBytes)
	o.KeepAlive = bound(o.KeepAlive, defaultSSEKeepAlive)
	o.WriteTimeout = portlimits.Positive(o.WriteTimeout, defaultSSEWriteTimeout)
	o.IdleTimeout = bound(o.IdleTimeout, defaultSSEIdleTimeout)
	if o.Logger == nil {
		o.Logger = deflog.New()
	}
	o.AllowedOrigins = slices.Clone(o.AllowedOrigins)
	o.AllowedHosts = slices.Clone(o.AllowedHosts)
	return o
}

// SSEHandler serves the HTTP+SSE transport of MCP 2024-11-05, which the
// clients of that era still speak (the TypeScript SDK's
// SSEClientTransport, go-sdk's and mcp-go's SSE clients, older desktop and
// IDE clients, mcp-remote): a GET opens an event stream whose first event,
// "endpoint", names the URL the client POSTs its messages to (the
// MessagePath with the stream's session id in the query); every response
// and server message then arrives on the stream as an event "message".
// Mount one handler on both paths ([DefaultSSEPath] and
// [DefaultSSEMessagePath]): a GET anywhere opens a stream, a POST anywhere
// delivers a message.
//
// Each stream is one connection of the engine ([ports.ConnHandler], as
// stdio and WebSocket are): one handshake-era session, initialized by the
// client's initialize (revisions 2024-11-05 to 2025-11-25), served with the
// same middleware, visibility, scopes and limits as the other transports.
// A stateless (2026-07-28) request POSTed to a stream is served too, as on
// any connection, its answer arriving on the stream; clients of that
// revision use Streamable HTTP.
//
// A GET is refused with 403 by the Host and Origin rules of the Streamable
// HTTP handler, 503 while shutting down, 503 or 429 with Retry-After over
// MaxStreams or MaxStreamsPerClient. A POST is answered 202 Accepted once
// its message is queued for the engine; 404 when its sessionId names no
// stream here, or a stream of another principal (the same answer, so that
// session ids cannot be probed); 400 without a sessionId, or with a body
// that is not one JSON value; 413 past MaxMessageBytes; 429 with
// Retry-After when the stream's incoming queue is full; 403 as the GET.
//
// A session id is the handler's instance name and 128 bits from
// crypto/rand, bound to the principal that opened the stream
// (ports.PrincipalFrom: put [RequireBearer] in front of both paths). A POST
// for a session whose stream another instance holds (behind a load
// balancer without sticky sessions) goes to that instance over
// SSEOptions.Bus and gets 202, or, without a bus, 404 saying so.
//
// A stream ends gracefully, after its calls in flight have answered on it,
// when the server shuts down (the [Server] serving it, or
// [SSEHandler.Shutdown]) and when the client has POSTed nothing for
// IdleTimeout. It is lost at once, its calls cancelled since their answers
// could reach no one, when the client goes away, when its outgoing queue
// overflows or an event cannot be written within WriteTimeout, and when
// the principal's credential expires (ports.Principal.Expires); a lost
// stream counts against MaxStreams and MaxStreamsPerClient until its calls
// have ended.
type SSEHandler struct {
	h     ports.ConnHandler
	opts  SSEOptions
	guard *httpguard.Guard
	// instance names this handler in its session ids and on the bus.
	instance    string
	unsubscribe func()
	forwarding  sseBudget // bodies being read for other instances

	mu        sync.Mutex
	streams   map[string]*sseStream
	perClient map[string]int
	admitted  int
	shutdown  bool
	closing   chan struct{} // closed by Shutdown
	wg        sync.WaitGroup

	abortCtx context.Context
	abort    context.CancelFunc
}

// NewSSEHandler returns the HTTP+SSE transport serving each stream with h
// (the protocol engine, *app.Engine).
func NewSSEHandler(h ports.ConnHandler, opts SSEOptions) *SSEHandler {
	if l, ok := h.(interface{ Logger() ports.Logger }); ok && opts.Logger == nil {
		opts.Logger = l.Logger()
	}
	if sh, ok := h.(interface{ Shared() ports.SharedState }); ok && opts.Bus == nil {
		opts.Bus = sh.Shared().Bus
	}
	opts = opts.withDefaults()
	s := &SSEHandler{
		h:          h,
		opts:       opts,
		guard:      httpguard.New(opts.AllowedOrigins, opts.AllowedHosts),
		instance:   randomHex(8),
		forwarding: sseBudget{limit: opts.MaxForwardingBytes},
		streams:    make(map[string]*sseStream),
		perClient:  make(map[string]int),
		closing:    make(chan struct{}),
	}
	s.abortCtx, s.abort = context.WithCancel(context.Background())
	if bus := opts.Bus; bus != nil {
		if ab, ok := bus.(ports.AddressedBus); ok {
			s.unsubscribe = ab.SubscribeAs(s.instance, s.onNotice)
		} else {
			s.unsubscribe = bus.Subscribe(s.onNotice)
		}
	}
	return s
}

// ServeHTTP opens a stream (GET) or delivers a message (POST); any other
// method gets 405.
func (s *SSEHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := s.guard.Check(r); err != nil {
		s.logf(r.Context(), slog.LevelInfo, "hexmcp: sse: refused a request by its Host or Origin", slog.Any("error", err), slog.Any("host", r.Host), slog.Any("origin", r.Header.Get("Origin")), slog.Any("remote", r.RemoteAddr))
		http.Error(w, "hexmcp: sse: forbidden: "+err.Error(), http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodGet:
		s.serveStream(w, r)
	case http.MethodPost:
		s.serveMessage(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "hexmcp: sse: GET opens a stream, POST delivers a message", http.StatusMethodNotAllowed)
	}
}

// Streams returns the number of streams open.
func (s *SSEHandler) Streams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.streams)
}

// Shutdown shuts the handler down gracefully: new streams are refused with
// 503, every stream stops taking messages (a POST gets 404), its calls in
// flight finish and their responses are written, then the stream ends; the
// handler's subscription to the bus ends with the last stream.
// Shutdown returns when every stream has ended, or, when ctx ends first,
// cancels the calls of this handler's streams (the engine's other
// transports go on), ends the streams and returns ctx.Err(). A [Server]
// serving the handler does the same on its own Shutdown; a handler
// mounted on a server of your own needs this call.
func (s *SSEHandler) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.shutdown {
		s.shutdown = true
		close(s.closing)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.stopBus()
		return nil
	case <-ctx.Done():
	}
	s.abort()
	s.mu.Lock()
	for _, st := range s.streams {
		st.drop("the server shut down")
	}
	s.mu.Unlock()
	s.stopBus()
	return ctx.Err()
}

// stopBus ends the subscription to the bus.
func (s *SSEHandler) stopBus() {
	s.mu.Lock()
	stop := s.unsubscribe
	s.unsubscribe = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// admit takes a stream's place for client; a non-zero status is the
// refusal (503 shutting down or MaxStreams, 429 MaxStreamsPerClient).
func (s *SSEHandler) admit(client string) (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return http.StatusServiceUnavailable, "the server is shutting down"
	}
	if limit := s.opts.MaxStreams; limit > 0 && s.admitted >= limit {
		return http.StatusServiceUnavailable, fmt.Sprintf("the server is at its limit of %d streams; retry later", limit)
	}
	if limit := s.opts.MaxStreamsPerClient; limit > 0 && s.perClient[client] >= limit {
		return http.StatusTooManyRequests, fmt.Sprintf("this client already has %d streams open, the limit per client; close one or retry later", limit)
	}
	s.admitted++
	s.perClient[client]++
	s.wg.Add(1)
	return 0, ""
}

// release gives back what admit took.
func (s *SSEHandler) release(client string) {
	s.mu.Lock()
	s.admitted--
	if s.perClient[client]--; s.perClient[client] <= 0 {
		delete(s.perClient, client)
	}
	s.mu.Unlock()
	s.wg.Done()
}

// sseInstanceOf returns the instance a session id names, or "" for an id
// not of this transport's form.
func sseInstanceOf(id string) string {
	inst, rest, ok := strings.Cut(id, "-")
	if !ok || len(inst) != 16 || len(rest) != 32 || !isLowerHex(inst) || !isLowerHex(rest) {
		return ""
	}
	return inst
}

func isLowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// serveStream serves one GET: the stream of one session, until it ends.
func (s *SSEHandler) serveStream(w http.ResponseWriter, r *http.Request) {
	client := DefaultClientKey(r)
	if status, why := s.admit(client); status != 0 {
		s.logf(r.Context(), slog.LevelInfo, "hexmcp: sse: refused a stream", slog.Any("status", status), slog.Any("reason", why), slog.Any("client", client))
		w.Header().Set("Retry-After", sseRetryAfter)
		http.Error(w, "hexmcp: sse: "+why, status)
		return
	}
	// The stream's place is given back when the engine has finished with
	// it: here, or after the calls of a lost stream have ended.
	handedOff := false
	defer func() {
		if !handedOff {
			s.release(client)
		}
	}()

	st := newSSEStream(s, r)
	s.mu.Lock()
	s.streams[st.id] = st
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.streams, st.id)
		s.mu.Unlock()
	}()

	// The engine serves the stream with a context that carries the
	// request's values (the principal) and ends when reading must stop.
	ctx, stopServe := context.WithCancel(r.Context())
	defer stopServe()
	// The calls of this stream alone are cancelled when its credential
	// expires or the stream is lost: their answers could reach no one.
	lost, loseCalls := context.WithCancel(context.Background())
	defer loseCalls()
	if p := st.principal; p != nil && !p.Expires.IsZero() {
		t := time.AfterFunc(time.Until(p.Expires), func() {
			s.logf(ctx, slog.LevelInfo, "hexmcp: sse: ending a stream whose access token expired", slog.Any("expires", p.Expires.UTC().Format(time.RFC3339)))
			loseCalls()
			st.drop("the access token expired")
		})
		defer t.Stop()
	}
	serveCtx := ports.WithAbort(ports.WithAbort(ctx, s.abortCtx), lost)
	var serverClosing <-chan struct{}
	sig := signalsFrom(r.Context())
	if sig != nil {
		serveCtx = ports.WithAbort(serveCtx, sig.abort)
		serverClosing = sig.closing.Done()
	}

	if err := st.start(w, s.opts.MessagePath+"?sessionId="+st.id); err != nil {
		s.logf(ctx, slog.LevelDebug, "hexmcp: sse: writing the endpoint event failed", slog.Any("error", err))
		return
	}
	s.logf(ctx, slog.LevelDebug, "hexmcp: sse: stream opened", slog.Any("session", st.id), slog.Any("remote", r.RemoteAddr))

	served := make(chan struct{})
	var serveErr error
	go func() {
		defer close(served)
		serveErr = s.h.ServeConn(serveCtx, st)
	}()
	why := st.pump(ctx, served, serverClosing)
	stopServe()
	select {
	case <-served:
		s.logf(ctx, slog.LevelDebug, "hexmcp: sse: stream closed", slog.Any("session", st.id), slog.Any("reason", why), slog.Any("error", serveErr))
	default:
		// The stream is lost (the client went away, its queue overflowed,
		// a write failed) while the engine still serves it: its calls are
		// cancelled, and the stream's place (MaxStreams,
		// MaxStreamsPerClient) is held until they have ended, so that a
		// client cannot pile up calls by dropping streams. Shutdown, and
		// the Server's, wait for them too.
		s.logf(ctx, slog.LevelDebug, "hexmcp: sse: stream lost", slog.Any("session", st.id), slog.Any("reason", why))
		loseCalls()
		handedOff = true
		if sig != nil {
			sig.calls.Add(1)
		}
		go func() {
			<-served
			s.release(client)
			if sig != nil {
				sig.calls.Done()
			}
		}()
	}
}

// serveMessage serves one POST: a message for the stream its sessionId
// names.
func (s *SSEHandler) serveMessage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := q.Get("sessionId")
	if id == "" {
		id = q.Get("sessionid")
	}
	if id == "" {
		http.Error(w, "hexmcp: sse: a message needs the sessionId of its stream in the query, as the endpoint event names it", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	st := s.streams[id]
	s.mu.Unlock()
	if inst := sseInstanceOf(id); st == nil && inst != "" && inst != s.instance {
		s.forward(w, r, id, inst)
		return
	}
	if st == nil || st.owner != owner(r.Context()) || !st.reading() {
		http.Error(w, "hexmcp: sse: no such session: open a stream (GET) for a new one", http.StatusNotFound)
		return
	}
	body, status, why := s.readBody(w, r, &st.inBytes)
	if status != 0 {
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		s.logf(r.Context(), slog.LevelDebug, "hexmcp: sse: refused a message", slog.Any("status", status), slog.Any("reason", why), slog.Any("session", id))
		http.Error(w, "hexmcp: sse: "+why, status)
		return
	}
	if status, why := st.enqueue(body); status != 0 {
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		s.logf(r.Context(), slog.LevelDebug, "hexmcp: sse: refused a message", slog.Any("status", status), slog.Any("reason", why), slog.Any("session", id))
		http.Error(w, "hexmcp: sse: "+why, status)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// forward serves a POST for a session whose stream another instance, inst,
// holds: its message goes there over the bus, or, without one, the POST
// gets 404 saying so. The instance holding the stream checks the session
// and its principal: an unknown session or another principal's is dropped
// there, without an answer (the POST has its 202 by then).
func (s *SSEHandler) forward(w http.ResponseWriter, r *http.Request, id, inst string) {
	bus := s.opts.Bus
	if bus == nil {
		http.Error(w, "hexmcp: sse: no such session here: its stream is held by another instance of this server, and the instances share no state; "+
			"route a client's /sse and /message to the same instance (sticky sessions), or share the server's state (a bus) between the instances", http.StatusNotFound)
		return
	}
	body, status, why := s.readBody(w, r, &s.forwarding)
	if status != 0 {
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		http.Error(w, "hexmcp: sse: "+why, status)
		return
	}
	defer s.forwarding.give(int64(len(body)))
	n := ports.Notice{Kind: ports.NoticeStreamMessage, ID: randomHex(16), Origin: s.instance, To: inst,
		Session: id, URI: owner(r.Context()), Data: body}
	if err := bus.Publish(r.Context(), n); err != nil {
		s.logf(r.Context(), slog.LevelWarn, "hexmcp: sse: forwarding a message to the instance holding its stream failed", slog.Any("error", err), slog.Any("session", id))
		if errors.Is(err, ports.ErrNoticeTooLarge) {
			http.Error(w, "hexmcp: sse: the message is larger than this server forwards between its instances", http.StatusRequestEntityTooLarge)
			return
		}
		w.Header().Set("Retry-After", "1")
		http.Error(w, "hexmcp: sse: the message could not be handed to the instance holding the stream; retry later", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// onNotice takes the messages that other instances forward to the streams
// held here.
func (s *SSEHandler) onNotice(n ports.Notice) {
	if n.Kind != ports.NoticeStreamMessage || n.To != s.instance || n.Origin == s.instance {
		return
	}
	s.mu.Lock()
	st := s.streams[n.Session]
	s.mu.Unlock()
	ctx := context.Background()
	if st == nil || st.owner != n.URI || !st.reading() {
		s.logf(ctx, slog.LevelDebug, "hexmcp: sse: dropped a forwarded message for a session not served here", slog.Any("session", n.Session), slog.Any("from", n.Origin))
		return
	}
	msg := bytes.Clone(n.Data) // the engine keeps it; the bus may share it
	if !st.inBytes.take(int64(len(msg))) {
		s.logf(ctx, slog.LevelWarn, "hexmcp: sse: dropped a forwarded message: the stream's incoming queue is full", slog.Any("session", n.Session), slog.Any("max_incoming_bytes", s.opts.MaxIncomingBytes))
		return
	}
	if status, why := st.enqueue(msg); status != 0 {
		s.logf(ctx, slog.LevelWarn, "hexmcp: sse: dropped a forwarded message", slog.Any("session", n.Session), slog.Any("reason", why))
	}
}

func (s *SSEHandler) logf(ctx context.Context, level slog.Level, msg string, fields ...slog.Attr) {
	if s.opts.Logger.Enabled(ctx, level) {
		s.opts.Logger.LogAttrs(ctx, level, msg, fields...)
	}
}

// errSSEStopped is what ReadMessage returns once a stream stops reading.
var errSSEStopped = fmt.Errorf("hexmcp: sse: the stream stopped reading: %w", io.EOF)
