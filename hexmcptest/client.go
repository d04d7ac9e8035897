package hexmcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
)

// defaultTimeout bounds each request of a client (each round of a
// stateless-era call) and each answer of its handlers unless
// [ClientOptions.Timeout] says otherwise, so that a test that waits for an
// answer that never comes fails instead of hanging.
const defaultTimeout = 30 * time.Second

// maxRounds bounds the input_required rounds of one stateless-era request.
const maxRounds = 32

// Transport is how a client of [NewClient] reaches the server.
type Transport int

const (
	// InMemory serves the engine on an in-memory connection, as stdio or
	// WebSocket do: one connection per client (the default).
	InMemory Transport = iota
	// StreamableHTTP serves the server's HTTP handler
	// ([hexmcp.Server.HTTPHandler]) on an httptest server of the client's
	// own, bound to 127.0.0.1: POST requests with a session
	// (Mcp-Session-Id) in the handshake era, with the request metadata
	// headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*) in
	// the stateless era.
	StreamableHTTP
)

// String returns "memory" or "http".
func (t Transport) String() string {
	switch t {
	case InMemory:
		return "memory"
	case StreamableHTTP:
		return "http"
	}
	return fmt.Sprintf("Transport(%d)", int(t))
}

// ClientOptions configure the client of [NewClient], [Connect] and
// [ForEachRevision]: a session of package client
// ([github.com/hexmcp/hexmcp/client]). The zero value is a client of the
// newest revision the server supports, in memory, that declares no
// capability.
//
// The handlers answer the server's questions (see
// [hexmcp.RequestContext.Ask]) the same way in both eras: in the handshake
// era the server sends them as requests on the connection and the client
// answers each; in the stateless era (2026-07-28) the call's result is
// "input_required", the client runs the handlers on its inputRequests and
// calls again with their answers (inputResponses) and the requestState,
// until the result is complete. Handlers may run concurrently. A handler's
// error is the client's answer in the handshake era (a JSON-RPC error:
// return a [*client.RPCError] to choose it, any other error is -32603 with
// its text); the stateless era has no error answer, so there it fails the
// call with that error. [client.Accept] and [client.Reply] make the
// answers of an elicitation and of a sampling.
type ClientOptions struct {
	// Revision is the protocol revision the client speaks (default: the
	// newest the server supports). [ForEachRevision] sets it.
	Revision domain.Revision
	// Transport is how the client reaches the server (default InMemory).
	Transport Transport
	// ClientInfo names the client (default "hexmcptest" "1.0.0").
	ClientInfo domain.Implementation

	// Elicitation answers elicitation/create; when set the client declares
	// the elicitation capability (form mode).
	Elicitation func(ctx context.Context, p domain.ElicitParams) (*domain.ElicitResult, error)
	// Sampling answers sampling/createMessage; when set the client
	// declares the sampling capability.
	Sampling func(ctx context.Context, p domain.CreateMessageParams) (*domain.CreateMessageResult, error)
	// Roots answers roots/list; when set the client declares the roots
	// capability.
	Roots func(ctx context.Context) ([]domain.Root, error)
	// Tasks declares the tasks extension (client.TasksExtension), as
	// client.Options.Tasks does: a task-supporting tool's call may then
	// run as a task, which CallTool awaits and StartTool returns.
	Tasks bool
	// Capabilities, when not nil, are declared instead of the ones the
	// handlers imply: to declare sub-capabilities such as
	// {"elicitation": {"form": {}, "url": {}}}, or a capability without
	// its handler.
	Capabilities map[string]any

	// OnNotification, when set, receives the notifications the server
	// sends: on the connection in memory, on a request's own stream over
	// HTTP. It is called on the client's reading goroutine, in order, and
	// must not block.
	OnNotification func(client.Notification)
	// Timeout bounds each request the client sends (each page of a list,
	// each round of a stateless-era call; a subscriptions/listen stream
	// excepted) and each answer of a handler, so that a test that waits
	// for an answer that never comes fails instead of hanging (default 30
	// seconds; negative: no bound but the context's).
	Timeout time.Duration
}

// capabilities returns the capabilities the client declares.
func (o ClientOptions) capabilities() map[string]any {
	if o.Capabilities != nil {
		return o.Capabilities
	}
	caps := map[string]any{}
	if o.Elicitation != nil {
		caps["elicitation"] = map[string]any{}
	}
	if o.Sampling != nil {
		caps["sampling"] = map[string]any{}
	}
	if o.Roots != nil {
		caps["roots"] = map[string]any{}
	}
	if o.Tasks {
		caps["extensions"] = map[string]any{client.TasksExtension: map[string]any{}}
	}
	return caps
}

// NewServer returns a server built from opts by [hexmcp.New], failing the
// test when the options are wrong, and closes it when the test ends.
func NewServer(tb testing.TB, opts hexmcp.Options) *hexmcp.Server {
	tb.Helper()
	srv, err := hexmcp.New(opts)
	if err != nil {
		tb.Fatalf("hexmcp: building the server: %v", err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return srv
}

// Revisions returns the revisions srv supports, oldest first: those
// [ForEachRevision] runs.
func Revisions(srv *hexmcp.Server) []domain.Revision {
	if srv.Engine() == nil {
		return nil
	}
	revs := srv.Engine().Policy().Supported()
	slices.Reverse(revs)
	return revs
}

// ForEachRevision runs fn once for every revision srv supports, oldest
// first, as a subtest named after the revision, with a client of that
// revision made by [Connect] with opts (whose Revision it sets):
//
//	hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{}, func(t *testing.T, c *client.Session) {
//		res, err := c.CallTool(t.Context(), "add", map[string]any{"A": 2, "B": 3}) // the add of the package doc
//		if err != nil || res.Text() != "5" {
//			t.Fatalf("add: %v %v", res, err)
//		}
//	})
func ForEachRevision(t *testing.T, srv *hexmcp.Server, opts ClientOptions, fn func(t *testing.T, c *client.Session)) {
	t.Helper()
	revs := Revisions(srv)
	if len(revs) == 0 {
		t.Fatal("hexmcp: the server supports no revision (or is nil)")
	}
	for _, rev := range revs {
		t.Run(string(rev), func(t *testing.T) {
			o := opts
			o.Revision = rev
			fn(t, Connect(t, srv, o))
		})
	}
}

// Connect returns a client of srv made as [NewClient] makes one, failing
// the test when it cannot connect, and closes it (and stops what serves
// it) when the test ends.
func Connect(tb testing.TB, srv *hexmcp.Server, opts ClientOptions) *client.Session {
	tb.Helper()
	sess, stop, err := connect(tb.Context(), srv, opts)
	if err != nil {
		tb.Fatalf("hexmcp: connecting: %v", err)
	}
	tb.Cleanup(func() {
		err := sess.Close()
		if stop != nil {
			err = errors.Join(err, stop())
		}
		if err != nil {
			tb.Errorf("hexmcp: closing the client: %v", err)
		}
	})
	return sess
}

// NewClient connects a client to srv as opts say: a session of package
// client whose revision is pinned. In the handshake era it initializes the
// session (initialize, then notifications/initialized) and fails when the
// server does not agree to the revision; in the stateless era every
// request carries the revision, the capabilities and the client info in
// _meta. ctx bounds the connecting only. Closing the session stops what
// serves it (over [StreamableHTTP], an httptest server of its own, stopped
// once the session has ended).
func NewClient(ctx context.Context, srv *hexmcp.Server, opts ClientOptions) (*client.Session, error) {
	sess, stop, err := connect(ctx, srv, opts)
	if err != nil {
		return nil, err
	}
	if stop != nil {
		go func() {
			_ = sess.Wait()
			_ = stop()
		}()
	}
	return sess, nil
}

// connect opens the session and returns it with what stops the server's
// end, to call once the session is closed (nil when closing the session
// is enough).
func connect(ctx context.Context, srv *hexmcp.Server, opts ClientOptions) (*client.Session, func() error, error) {
	if srv.Engine() == nil {
		return nil, nil, errors.New("hexmcp: no server")
	}
	rev := opts.Revision
	if rev == "" {
		supported := srv.Engine().Policy().Supported()
		if len(supported) == 0 {
			return nil, nil, errors.New("hexmcp: the server supports no revision")
		}
		rev = supported[0]
	}
	if !(domain.RevisionPolicy{}).Supports(rev) {
		return nil, nil, fmt.Errorf("hexmcp: unknown protocol revision %q", rev)
	}
	if opts.ClientInfo.Name == "" && opts.ClientInfo.Version == "" {
		opts.ClientInfo = domain.Implementation{Name: "hexmcptest", Version: "1.0.0"}
	}
	if opts.Timeout == 0 {
		opts.Timeout = defaultTimeout
	}
	copts := client.Options{
		ClientInfo:     opts.ClientInfo,
		Revision:       rev,
		Elicitation:    bound(opts.Timeout, opts.Elicitation),
		Sampling:       bound(opts.Timeout, opts.Sampling),
		Roots:          boundRoots(opts.Timeout, opts.Roots),
		Capabilities:   opts.capabilities(),
		Tasks:          opts.Tasks,
		MaxInputRounds: maxRounds,
		Notification:   opts.OnNotification,
	}
	if opts.Timeout > 0 {
		copts.Middleware = []client.Middleware{timeout(opts.Timeout)}
	}
	var (
		tr   client.Transport
		stop func() error
	)
	switch opts.Transport {
	case InMemory:
		tr = memoryTransport{srv}
	case StreamableHTTP:
		tr, stop = serveHTTP(srv)
	default:
		return nil, nil, fmt.Errorf("hexmcp: unknown transport %v", opts.Transport)
	}
	sess, err := client.New(copts).Connect(ctx, tr)
	if err != nil {
		err = fmt.Errorf("hexmcp: %w", err)
		if stop != nil {
			err = errors.Join(err, stop())
		}
		return nil, nil, err
	}
	return sess, stop, nil
}

// timeout returns the client middleware that bounds each request by d,
// but for the subscriptions/listen stream, which lasts by design.
func timeout(d time.Duration) client.Middleware {
	return func(next client.MethodHandler) client.MethodHandler {
		return func(ctx context.Context, req *client.Request) (json.RawMessage, error) {
			if req.Method == "subscriptions/listen" {
				return next(ctx, req)
			}
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			return next(ctx, req)
		}
	}
}

// bound returns handler h with each answer bounded by d (h itself when
// nil or d is negative).
func bound[P, R any](d time.Duration, h func(context.Context, P) (R, error)) func(context.Context, P) (R, error) {
	if h == nil || d < 0 {
		return h
	}
	return func(ctx context.Context, p P) (R, error) {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return h(ctx, p)
	}
}

// boundRoots is bound for the roots handler, which takes no params.
func boundRoots(d time.Duration, h func(context.Context) ([]domain.Root, error)) func(context.Context) ([]domain.Root, error) {
	if h == nil || d < 0 {
		return h
	}
	return func(ctx context.Context) ([]domain.Root, error) {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return h(ctx)
	}
}
