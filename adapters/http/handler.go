package mcphttp

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/internal/httpguard"
	"github.com/hexmcp/hexmcp/internal/memstore"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [Options].
const (
	// defaultMaxBodyBytes bounds a POST body: 4 MiB.
	defaultMaxBodyBytes = 4 << 20
	// defaultMaxInFlightPerSession bounds the requests one session may
	// have in flight.
	defaultMaxInFlightPerSession = 32
	// defaultKeepAlive is the time between keep-alive comments on an idle
	// GET stream.
	defaultKeepAlive = 30 * time.Second
	// defaultEventWriteTimeout bounds the writing of one SSE event.
	defaultEventWriteTimeout = 30 * time.Second
)

// Options configure a [Handler]. The zero value is usable: every zero field
// takes its default.
type Options struct {
	// SessionStore keeps the handshake-era sessions. Share one store (and
	// one EventStore) between the instances behind a load balancer, and any
	// of them serves any session. Default: the engine's shared one
	// (app.Options.Shared) if it has one, else an in-memory store with its
	// defaults (memory.NewSessionStore), for a single instance.
	SessionStore ports.SessionStore
	// EventStore keeps the SSE events of handshake-era streams so that a
	// client can resume a lost stream with Last-Event-ID. Default: the engine's
	// shared one (app.Options.Shared) if it has one, else an in-memory
	// store with its defaults (memory.NewEventStore).
	//
	// A store that several instances share and that tells of appends
	// ([ports.EventWatcher], as mcpredis.EventStore does) makes the
	// session's own stream shared too: every instance appends the
	// session's server-initiated messages to it (once each, with
	// [ports.OnceAppender]), and the instance that holds the client's GET
	// follows it from the store; a stream resumed at another instance than
	// the one that began it follows its new events there until its
	// response. One GET stream per session is enforced per instance only.
	EventStore ports.EventStore
	// AllowedOrigins lists the origins, besides the request's own host,
	// whose browsers may call the server: exact origins such as
	// "http://localhost:6274" (scheme, host and optional port; compared
	// without case, trailing slash or default port), "null" or "file://"
	// literally, or "*" for any. A request with an Origin header that
	// matches nothing is refused with 403; a request without Origin (not
	// from a browser) is allowed. The own host is an http or https origin
	// naming the Host header's host and port; loopback names (localhost,
	// *.localhost, 127.0.0.0/8, ::1) count as one host there, so a page of
	// http://localhost:8080 may call 127.0.0.1:8080.
	// The handler sends no CORS headers: wrap it in a CORS middleware to
	// serve cross-origin browsers.
	AllowedOrigins []string
	// AllowedHosts lists the host names (without port; compared without
	// case or trailing dot) accepted in the Host header of a request that
	// arrives on a loopback address, besides localhost, *.localhost,
	// 127.0.0.0/8 and ::1; "*" accepts any. Another Host on a loopback
	// listener is refused with 403. This stops DNS rebinding, which the
	// Origin rule alone cannot: the rebound page's Origin names the same
	// host as its Host header. The WebSocket adapter applies the same rules
	// (its Options have the same two fields).
	AllowedHosts []string
	// MaxBodyBytes bounds a POST body (default 4 MiB); a larger one is
	// refused with 413.
	MaxBodyBytes int64
	// MaxInFlightBytes bounds the bytes of the POST bodies being read at
	// once, over the whole handler (default 32 MiB,
	// 32 MiB; hexmcp.Unlimited or any negative value: no bound). A body
	// counts the bytes it holds as they arrive, not the Content-Length it
	// announces: it is read into a buffer of 8 KiB (or its length, when
	// smaller) that doubles as it fills, each step counted before it is
	// made. When a step finds no room it waits up to 2 seconds (or until
	// the request's context ends, or BodyTimeout), then the POST is
	// refused with 503, Retry-After and a JSON-RPC error without id
	// (-32603). A body larger than the whole budget is read when nothing
	// else is. Once the request is decoded its body leaves the budget:
	// what its call then keeps counts in its client's share
	// (MaxInFlightBytesPerClient) instead, so that calls waiting for the
	// client (an elicitation, for up to app.Options.ClientRequestTimeout)
	// never keep other clients out. Notifications and responses, served
	// at once, keep their bodies counted until then.
	MaxInFlightBytes int64
	// MaxInFlightBytesPerClient is one client's share (see ClientKey) of
	// MaxInFlightBytes (default 8 MiB,
	// and never more than MaxInFlightBytes; hexmcp.Unlimited or any
	// negative value: no share per client). It bounds, apart, two things
	// of one client: the bytes of its POST bodies being read at once
	// (counted as they arrive), and what its calls being served keep of
	// their requests, from decoding until answered: the body's buffer, or
	// only the id and params that the call refers to when the rest is
	// padding (see exchange.Message.Detach). A body past the first is
	// refused at once with 429, Retry-After and a JSON-RPC error without
	// id (-32600); a request past the second with 429, Retry-After and
	// the request's id. Other clients are not touched. Counting the two
	// apart lets a client whose calls keep its share still send the
	// answers they wait for. A body (or a call) larger than the share is
	// served when its client has nothing else counted.
	MaxInFlightBytesPerClient int64
	// BodyTimeout bounds how long a POST body may take to arrive, from
	// when the handler starts reading it (default 30 seconds,
	// 30 s; negative: no bound besides the http.Server's ReadTimeout,
	// which applies instead when it is shorter). Past it the client gets
	// 408 Request Timeout with a JSON-RPC error without id (-32600), and
	// the connection is closed. The bound is set through
	// http.ResponseController: a middleware that wraps the
	// ResponseWriter must let it Unwrap to net/http's.
	BodyTimeout time.Duration
	// MaxInFlightPerSession bounds the requests one session may have in
	// flight at once (default 32); one more is refused at once with 429 and
	// Retry-After rather than queued, so that a client cannot park
	// unbounded goroutines. Notifications (such as notifications/cancelled)
	// are never refused.
	MaxInFlightPerSession int
	// KeepAlive is the time between SSE comments on an idle GET stream
	// and on a subscriptions/listen stream (default 30 s; negative: none).
	// A keep-alive that cannot be written ends the stream, freeing its
	// place. On a GET stream each keep-alive also refreshes the session in
	// the store, so an open stream keeps its session alive and ends when
	// the session is deleted elsewhere.
	KeepAlive time.Duration
	// EventWriteTimeout bounds the writing of one SSE event (default 30 s;
	// negative: no bound). A client that does not read in time loses the
	// connection and may resume it.
	EventWriteTimeout time.Duration
	// MaxStreamQueueBytes bounds the data of the SSE events waiting to be
	// written to one GET connection (a standalone or resumed stream) whose
	// client reads slowly (default 8 MiB; zero
	// or negative: the default). Past it the connection is dropped and the
	// client resumes with Last-Event-ID from the event store. A resumed
	// stream replays at most this much at once, then ends with an SSE
	// retry field for the client to resume from the last event it got.
	MaxStreamQueueBytes int
	// MaxLocalSessionBytes bounds the bytes of the copies of sessions this
	// handler keeps in memory (default 64 MiB; hexmcp.Unlimited: no bound).
	// A copy counts its state's size (ports.SessionState.Size) and 2 KiB;
	// it is only a cache (the store is asked at every request). Past the
	// bound the idle copies used least recently leave memory and are
	// restored from the store by their next request (without the session's
	// own tools and the server requests it awaits); no client is refused
	// for it.
	MaxLocalSessionBytes int
	// ClientKey names the client a new session counts against for the
	// session store's per-client limit (ports.SessionState.Peer; the
	// in-memory store allows 100 sessions
	// per client), and the client whose share of the budget of POST
	// bodies a request counts in (MaxInFlightBytesPerClient). Default [DefaultClientKey]: the authenticated
	// principal, else the remote IP address. Behind a reverse proxy every
	// client has the proxy's address: set it to read the client's address
	// from the header your proxy sets (and only when the request comes
	// from the proxy). An empty result falls back to DefaultClientKey.
	ClientKey func(r *http.Request) string
	// Logger receives the handler's own problems (a failing store);
	// default: the engine's logger (slog.New(slog.DiscardHandler) discards them).
	Logger ports.Logger
}

// Handler is the Streamable HTTP transport: one http.Handler that serves
// every revision of MCP on one URL. Requests whose body names a protocol
// version in _meta are served statelessly (2026-07-28); initialize starts a
// handshake-era session (2025-03-26 to 2025-11-25) named by Mcp-Session-Id.
// It holds no protocol logic: it checks what HTTP carries and hands each
// message to the engine.
//
// Mount it on any mux path ("/mcp" by convention). See the package
// documentation for the status codes it answers with.
type Handler struct {
	x        exchange.Port // the engine, as a transport that frames each exchange reaches it
	policy   domain.RevisionPolicy
	opts     Options
	sessions ports.SessionStore
	events   ports.EventStore
	log      ports.Logger
	// watcher is the event store as a [ports.EventWatcher] when it is
	// shared (nil: one instance; streams are followed in memory).
	watcher ports.EventWatcher

	guard *httpguard.Guard // the Host and Origin rules

	budget *bodyBudget // Options.MaxInFlightBytes and MaxInFlightBytesPerClient; nil: no bound

	// closing ends the GET streams (CloseStreams); abortCtx (Abort) ends
	// the stateless requests' contexts and every live session here, whose
	// engine sessions then end their calls.
	closing   chan struct{}
	closeOnce sync.Once
	abortCtx  context.Context
	abort     context.CancelFunc

	mu        sync.Mutex
	live      map[string]*liveSession
	copies    localCopies        // the byte budget of live (session.go)
	streams   map[string]*stream // POST streams in progress, by event-store id
	lastSweep time.Time

	params paramCache
}

// NewHandler returns the Streamable HTTP handler of engine e.
func NewHandler(e *app.Engine, opts Options) *Handler {
	if opts.SessionStore == nil {
		opts.SessionStore = e.Shared().SessionStore
	}
	if opts.SessionStore == nil {
		opts.SessionStore = memstore.NewSessionStore(memstore.SessionStoreOptions{})
	}
	if opts.EventStore == nil {
		opts.EventStore = e.Shared().EventStore
	}
	if opts.EventStore == nil {
		opts.EventStore = memstore.NewEventStore(memstore.EventStoreOptions{})
	}
	opts.MaxBodyBytes = portlimits.Positive(opts.MaxBodyBytes, defaultMaxBodyBytes)
	opts.MaxInFlightPerSession = portlimits.Positive(opts.MaxInFlightPerSession, defaultMaxInFlightPerSession)
	opts.MaxInFlightBytes = cmp.Or(opts.MaxInFlightBytes, defaultMaxInFlightBytes)
	opts.MaxInFlightBytesPerClient = cmp.Or(opts.MaxInFlightBytesPerClient, defaultMaxInFlightBytesPerClient)
	opts.BodyTimeout = bound(opts.BodyTimeout, defaultBodyTimeout)
	opts.KeepAlive = cmp.Or(opts.KeepAlive, defaultKeepAlive)
	opts.EventWriteTimeout = bound(opts.EventWriteTimeout, defaultEventWriteTimeout)
	opts.MaxStreamQueueBytes = portlimits.Positive(opts.MaxStreamQueueBytes, defaultMaxStreamQueueBytes)
	if opts.Logger == nil {
		opts.Logger = e.Logger()
	}
	// The engine's exchange port (never missing for an engine: package
	// app sets the hook when it is loaded, which importing it does).
	x, _ := exchange.PortOf(e, opts.SessionStore)
	h := &Handler{
		x:        x,
		policy:   e.Policy(),
		opts:     opts,
		sessions: opts.SessionStore,
		events:   opts.EventStore,
		log:      opts.Logger,
		guard:    httpguard.New(opts.AllowedOrigins, opts.AllowedHosts),
		budget:   newBodyBudget(opts.MaxInFlightBytes, opts.MaxInFlightBytesPerClient),
		closing:  make(chan struct{}),
		live:     make(map[string]*liveSession),
		copies:   newLocalCopies(opts.MaxLocalSessionBytes),
		streams:  make(map[string]*stream),
	}
	h.abortCtx, h.abort = context.WithCancel(context.Background())
	h.watcher, _ = opts.EventStore.(ports.EventWatcher)
	if n, ok := opts.SessionStore.(ports.SessionRemovalNotifier); ok {
		// Sessions the store expires or evicts leave this instance's
		// memory at once (see storeRemoved).
		n.OnRemoved(h.storeRemoved)
	}
	return h
}

// ServeHTTP serves one HTTP request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.abortCtx.Err() != nil {
		newErr(http.StatusServiceUnavailable, nil, domain.CodeInternalError, "Service unavailable: the server is stopping").write(w)
		return
	}
	if !h.hostAllowed(r) {
		newErr(http.StatusForbidden, nil, domain.CodeInvalidRequest, "Forbidden: the Host header names a host this server does not serve").write(w)
		return
	}
	if !h.originAllowed(r) {
		newErr(http.StatusForbidden, nil, domain.CodeInvalidRequest, "Forbidden: origin not allowed").write(w)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.servePost(w, r)
	case http.MethodGet:
		h.serveGet(w, r)
	case http.MethodDelete:
		h.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		newErr(http.StatusMethodNotAllowed, nil, domain.CodeInvalidRequest, "Method Not Allowed").write(w)
	}
}

// CloseStreams ends the GET streams and refuses new ones with 503; POST
// requests go on. [Server.Shutdown] does the same for the handlers it
// serves; call it yourself (for example from http.Server.RegisterOnShutdown)
// when you run the handler on a server of your own, whose Shutdown would
// otherwise wait for the streams.
func (h *Handler) CloseStreams() {
	h.closeOnce.Do(func() { close(h.closing) })
}

// Abort cancels every call in flight, stateless or in a session, and makes
// the handler answer 503 from then on: it is for a stop whose deadline has
// passed. A session call is answered 503 (as the last event of its stream
// when it has one). The sessions stay in the store, for other instances or
// a restart to serve. The engine's own Abort (or Close) ends the calls of
// sessions too, but not stateless ones, which run under the contexts this
// handler gives them. ([Server.Shutdown] cancels the calls of the handlers
// it serves by itself when its deadline passes.)
func (h *Handler) Abort() { h.abort() }

func (h *Handler) logf(level slog.Level, msg string, fields ...slog.Attr) {
	ctx := context.Background()
	if h.log.Enabled(ctx, level) {
		h.log.LogAttrs(ctx, level, msg, fields...)
	}
}

func (h *Handler) registerStream(st *stream) {
	h.mu.Lock()
	h.streams[st.id] = st
	h.mu.Unlock()
}

func (h *Handler) unregisterStream(st *stream) {
	h.mu.Lock()
	if h.streams[st.id] == st {
		delete(h.streams, st.id)
	}
	h.mu.Unlock()
}

func (h *Handler) liveStream(id string) *stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.streams[id]
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails: crypto/rand crashes the program instead
	return hex.EncodeToString(b)
}

// newSessionID mints a session id: 128 random bits as 32 hex digits
// (visible ASCII, as the spec requires).
func newSessionID() string { return randomHex(16) }

// validSessionID rejects ids no store could hold: empty, too long, or with
// characters outside visible ASCII.
func validSessionID(id string) bool {
	if id == "" || len(id) > 256 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// withTransport attaches what HTTP knows about the request for the tool
// handlers: its headers (without credentials, so that a tool cannot pass a
// client's token on: use the Principal), the authenticated principal and
// the peer's address.
//
// With Options.ClientKey, the client it names is the request's client for
// every limit the engine and extensions count per client
// (TransportInfo.Client: listen streams, tasks, …), as it is for sessions.
//
// client is the client Options.ClientKey named for the request (the
// caller asks once per request); it is used only when that option is set.
func (h *Handler) withTransport(ctx context.Context, r *http.Request, client string) context.Context {
	info := transportInfo(r)
	if h.opts.ClientKey != nil {
		info.Client = client
	}
	return h.x.WithTransport(ctx, info)
}

// transportInfo is what withTransport attaches.
func transportInfo(r *http.Request) exchange.Transport {
	// Credentials never reach tools; the copy is made only when there are
	// some to remove (handlers must treat the headers as read-only).
	hdr := r.Header
	if _, a := hdr["Authorization"]; a {
		hdr = hdr.Clone()
	} else if _, pa := hdr["Proxy-Authorization"]; pa {
		hdr = hdr.Clone()
	}
	hdr.Del("Authorization")
	hdr.Del("Proxy-Authorization")
	return exchange.Transport{Header: hdr, Principal: ports.PrincipalFrom(r.Context()), RemoteAddr: r.RemoteAddr}
}
