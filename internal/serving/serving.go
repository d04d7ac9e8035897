// Package serving runs an engine on a transport with a lifecycle (Start,
// Done, Err, Shutdown): what the front door's Serve and ServeStdio and the
// fx modules of wiring run. Users serve through those, or call a
// transport's Serve with the engine themselves.
package serving

import (
	"context"
	"errors"
	"sync"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/ports"
)

// Server runs an engine on a transport, with a lifecycle that fits
// go.uber.org/fx hooks or a main function: Start serves in the background,
// Shutdown stops reading, lets requests in flight finish until its context
// ends, then cancels what is left. That hard stop is the server's own:
// other servers of the same engine, and the engine itself, go on.
type Server struct {
	engine    *app.Engine
	transport ports.Transport

	mu     sync.Mutex
	cancel context.CancelFunc
	abort  context.CancelFunc // cancels this server's calls (WithAbort)
	done   chan struct{}
	err    error
}

// New returns a server for e on t.
func New(e *app.Engine, t ports.Transport) *Server {
	return &Server{engine: e, transport: t}
}

// Engine returns the server's engine, to add or remove tools at run time.
func (s *Server) Engine() *app.Engine { return s.engine }

// Run serves until the transport ends (for stdio: standard input closed)
// or ctx is cancelled, and returns after requests in flight have answered.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	<-s.done
	return s.Err()
}

// ErrAlreadyStarted is returned by a second Start.
var ErrAlreadyStarted = errors.New("hexmcp: server already started")

// Start begins serving in the background and returns at once. The context
// is used for values only: stop the server with Shutdown.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done != nil {
		return ErrAlreadyStarted
	}
	abortCtx, abort := context.WithCancel(context.Background())
	serveCtx, cancel := context.WithCancel(ports.WithAbort(ctx, abortCtx))
	s.cancel, s.abort, s.done = cancel, abort, make(chan struct{})
	go func() {
		err := s.transport.Serve(serveCtx, s.engine)
		abort() // nothing of this server runs any more; release the hooks
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.done)
	}()
	return nil
}

// Done is closed when the server has stopped serving.
func (s *Server) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		return nil
	}
	return s.done
}

// Err returns the transport's error once Done is closed.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Shutdown stops reading new messages and waits for the requests in flight
// to answer. When ctx ends first, it cancels their contexts (this server's
// only: the engine and its other servers are not touched; [app.Engine.Abort]
// is the engine-wide stop), waits for the transport to return, and reports
// ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	cancel, abort, done := s.cancel, s.abort, s.done
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		abort()
		<-done
		return ctx.Err()
	}
}
