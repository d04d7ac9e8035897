package mcphttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Defaults of [ServerOptions].
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = 60 * time.Second
	defaultIdleTimeout       = 120 * time.Second
)

// ServerOptions configure a [Server]'s http.Server. A zero field takes its
// default; a negative one means no timeout.
type ServerOptions struct {
	// ReadHeaderTimeout bounds the reading of a request's headers
	// (default 10 s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the reading of a whole request, body included
	// (default 60 s). It does not limit how long a handler runs.
	ReadTimeout time.Duration
	// WriteTimeout bounds the writing of a whole response (default: none).
	// SSE streams last as long as a call or a session, so a bound here
	// would cut them; the handler bounds each event's write instead
	// (Options.EventWriteTimeout).
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request (default 120 s).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request headers (default: net/http's, 1 MiB).
	MaxHeaderBytes int
	// MaxConns bounds the connections open at once (default 10,000;
	// negative: no bound), WebSocket connections and SSE streams included.
	// One more is answered 503 with Retry-After and closed, without
	// holding up the connections of other clients.
	MaxConns int
	// MaxConnsPerClient bounds the connections open at once from one
	// remote IP address (default 256; negative: no bound). One more is
	// answered 429 with Retry-After and closed. Behind a reverse proxy
	// every client has the proxy's address: raise or lift the bound there
	// and bound clients at the proxy, or name the proxy in TrustedProxies.
	MaxConnsPerClient int
	// TrustedProxies are the addresses of the reverse proxies (load
	// balancers) in front of the server: their connections count against
	// MaxConns only, not MaxConnsPerClient, since each carries many
	// clients. Wrap the handler in [TrustProxies] with the same prefixes
	// so that the rest counts the clients themselves.
	TrustedProxies []netip.Prefix
}

// bound returns v, or def when v is 0; a negative v means none (0). It
// reads the counts and the durations of the options alike.
func bound[T int | int64 | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// signals tell the handlers of a Server that it is stopping: closing ends
// the GET streams and hands the POST streams over (see
// Handler.serveInSession), abort cancels the calls in flight. They travel
// in the context of every request the Server serves, so they reach each
// Handler whatever mux sits in between. calls counts the session calls
// served off their request's goroutine, which Shutdown waits for once the
// requests have returned.
type signals struct {
	closing context.Context
	abort   context.Context
	calls   sync.WaitGroup
}

type signalsKey struct{}

func signalsFrom(ctx context.Context) *signals {
	s, _ := ctx.Value(signalsKey{}).(*signals)
	return s
}

// Server runs an http.Handler (typically a mux holding a [Handler] at
// "/mcp") with timeouts fit for MCP and a lifecycle that fits fx hooks:
// Start listens and serves in the background, Shutdown stops gracefully.
type Server struct {
	addr string
	srv  *http.Server
	sig  signals

	maxConns, maxPerClient int
	trusted                []netip.Prefix

	stopStreams context.CancelFunc
	abort       context.CancelFunc

	mu      sync.Mutex
	ln      net.Listener
	done    chan struct{}
	err     error
	started bool
}

// NewServer returns a server for h that will listen on addr (such as
// "127.0.0.1:8080"; port 0 picks a free one, see [Server.Addr]). Bind a
// local server to 127.0.0.1, not to all interfaces.
func NewServer(addr string, h http.Handler, opts ServerOptions) *Server {
	s := &Server{addr: addr, maxConns: bound(opts.MaxConns, defaultMaxConns), maxPerClient: bound(opts.MaxConnsPerClient, defaultMaxConnsPerClient), trusted: opts.TrustedProxies}
	s.sig.closing, s.stopStreams = context.WithCancel(context.Background())
	s.sig.abort, s.abort = context.WithCancel(context.Background())
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: bound(opts.ReadHeaderTimeout, defaultReadHeaderTimeout),
		ReadTimeout:       bound(opts.ReadTimeout, defaultReadTimeout),
		WriteTimeout:      bound(opts.WriteTimeout, 0),
		IdleTimeout:       bound(opts.IdleTimeout, defaultIdleTimeout),
		MaxHeaderBytes:    opts.MaxHeaderBytes,
	}
	return s
}

// ErrServerStarted is returned by a second Start.
var ErrServerStarted = errors.New("hexmcp: server already started")

// Start listens on the server's address and serves in the background. ctx
// bounds the listening only; its values reach every request.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrServerStarted
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.addr)
	if err != nil {
		return err
	}
	ln = newLimitListener(ln, s.maxConns, s.maxPerClient, s.trusted)
	base := context.WithValue(context.WithoutCancel(ctx), signalsKey{}, &s.sig)
	s.srv.BaseContext = func(net.Listener) context.Context { return base }
	s.ln, s.done, s.started = ln, make(chan struct{}), true
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.done)
	}()
	return nil
}

// Addr returns the address the server listens on (after Start), with the
// port chosen for ":0".
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return s.addr
	}
	return s.ln.Addr().String()
}

// Done is closed when the server has stopped serving (nil before Start).
func (s *Server) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// Err returns why serving stopped, once Done is closed (nil after
// Shutdown).
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Shutdown stops the server gracefully: it stops accepting connections,
// ends the GET streams (their sessions stay; clients reconnect elsewhere
// or later, and resume with Last-Event-ID), and waits for the requests in
// flight, whose responses are delivered. With an event store shared by
// several instances (a [ports.EventWatcher], such as Redis's), the SSE
// response of a session's call in flight ends at once too, after an event
// id and an SSE retry field: its client resumes the stream at another
// instance, which follows it from the store, while the call goes on here
// and stores its events and response; Shutdown waits for those calls as
// for the requests. When ctx ends first it cancels the calls still
// running (every [Handler] served by this server aborts them, whatever
// their era), closes the connections and returns ctx's error.
//
// The engine is not stopped: calling its Abort (or Close) afterwards, for
// the other transports it serves, is the caller's business.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	started, done := s.started, s.done
	s.mu.Unlock()
	s.stopStreams()
	if !started {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	if err == nil {
		err = s.waitCalls(ctx)
	}
	if err != nil {
		s.abort()
		_ = s.srv.Close()
	}
	<-done
	return err
}

// waitCalls waits for the session calls whose streams were handed over
// (signals.calls) until ctx ends. No request adds one any more: the server
// has returned from them all.
func (s *Server) waitCalls(ctx context.Context) error {
	drained := make(chan struct{})
	go func() {
		s.sig.calls.Wait()
		close(drained)
	}()
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		return ctx.Err() // the calls end on s.abort, and the goroutine with them
	}
}
