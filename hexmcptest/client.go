package hexmcptest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
)

// defaultTimeout bounds each request of a [Client] (the rounds of a
// stateless-era call and the answers of its handlers included) unless
// [ClientOptions.Timeout] says otherwise, so that a test that waits for an
// answer that never comes fails instead of hanging.
const defaultTimeout = 30 * time.Second

// maxRounds bounds the input_required rounds of one stateless-era request.
const maxRounds = 32

// Transport is how a [Client] reaches the server.
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

// ClientOptions configure a [Client]. The zero value is a client of the
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
// return an [*RPCError] to choose it, any other error is -32603 with its
// text); the stateless era has no error answer, so there it fails the call
// with that error.
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
	// Capabilities, when not nil, are declared instead of the ones the
	// handlers imply: to declare sub-capabilities such as
	// {"elicitation": {"form": {}, "url": {}}}, or a capability without
	// its handler.
	Capabilities map[string]any

	// OnNotification, when set, receives the notifications the server
	// sends: on the connection in memory, on a request's own stream over
	// HTTP. It is called on the client's reading goroutine, in order, and
	// must not block.
	OnNotification func(Notification)
	// Timeout bounds each request (default 30 seconds; negative: no
	// bound but the context's).
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
	return caps
}

// Client is a test client of one revision connected to a real server: a
// session of package client ([github.com/hexmcp/hexmcp/client]), with
// the test's bounds and the lists as slices. Its methods are safe for
// concurrent use. Close it (or let [Connect] do so at the end of the
// test).
type Client struct {
	opts      ClientOptions
	rev       domain.Revision
	features  domain.Features
	sess      *client.Session
	cleanup   func() error // what serves the client
	closeOnce sync.Once
	closeErr  error
}

// NewServer returns a server built from opts by [hexmcp.New], failing the
// test when the options are wrong, and closes it when the test ends.
func NewServer(tb testing.TB, opts hexmcp.Options) *hexmcp.Server {
	tb.Helper()
	srv, err := hexmcp.New(opts)
	if err != nil {
		tb.Fatalf("hexmcptest: building the server: %v", err)
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
//	hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{}, func(t *testing.T, c *hexmcptest.Client) {
//		res, err := c.CallTool(t.Context(), "add", map[string]any{"a": 2, "b": 3})
//		if err != nil || res.Text() != "5" {
//			t.Fatalf("add: %v %v", res, err)
//		}
//	})
func ForEachRevision(t *testing.T, srv *hexmcp.Server, opts ClientOptions, fn func(t *testing.T, c *Client)) {
	t.Helper()
	revs := Revisions(srv)
	if len(revs) == 0 {
		t.Fatal("hexmcptest: the server supports no revision (or is nil)")
	}
	for _, rev := range revs {
		t.Run(string(rev), func(t *testing.T) {
			o := opts
			o.Revision = rev
			fn(t, Connect(t, srv, o))
		})
	}
}

// Connect returns a client of srv made by [NewClient], failing the test
// when it cannot connect, and closes it when the test ends.
func Connect(tb testing.TB, srv *hexmcp.Server, opts ClientOptions) *Client {
	tb.Helper()
	c, err := NewClient(tb.Context(), srv, opts)
	if err != nil {
		tb.Fatalf("hexmcptest: connecting: %v", err)
	}
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Errorf("hexmcptest: closing the client: %v", err)
		}
	})
	return c
}

// NewClient connects a client to srv as opts say. In the handshake era it
// initializes the session (initialize, then notifications/initialized) and
// fails when the server does not agree to the revision; in the stateless
// era every request carries the revision, the capabilities and the client
// info in _meta. ctx bounds the connecting only.
func NewClient(ctx context.Context, srv *hexmcp.Server, opts ClientOptions) (*Client, error) {
	if srv.Engine() == nil {
		return nil, errors.New("hexmcptest: no server")
	}
	rev := opts.Revision
	if rev == "" {
		supported := srv.Engine().Policy().Supported()
		if len(supported) == 0 {
			return nil, errors.New("hexmcptest: the server supports no revision")
		}
		rev = supported[0]
	}
	if !(domain.RevisionPolicy{}).Supports(rev) {
		return nil, fmt.Errorf("hexmcptest: unknown protocol revision %q", rev)
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
		Elicitation:    opts.Elicitation,
		Sampling:       opts.Sampling,
		Roots:          opts.Roots,
		Capabilities:   opts.capabilities(),
		MaxInputRounds: maxRounds,
	}
	if opts.OnNotification != nil {
		copts.Notification = func(n client.Notification) { opts.OnNotification(n) }
	}
	var (
		tr      client.Transport
		cleanup func() error
	)
	switch opts.Transport {
	case InMemory:
		tr = memoryTransport{srv}
	case StreamableHTTP:
		tr, cleanup = serveHTTP(srv)
	default:
		return nil, fmt.Errorf("hexmcptest: unknown transport %v", opts.Transport)
	}
	if cleanup == nil {
		cleanup = func() error { return nil }
	}
	c := &Client{opts: opts, rev: rev, features: srv.Engine().Policy().Features(rev), cleanup: cleanup}
	cctx, cancel := c.withTimeout(ctx)
	defer cancel()
	sess, err := client.New(copts).Connect(cctx, tr)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("hexmcptest: %w", err), cleanup())
	}
	c.sess = sess
	return c, nil
}

// Revision is the protocol revision the client speaks.
func (c *Client) Revision() domain.Revision { return c.rev }

// Features is what the client's revision supports, as the server's policy
// says: for assertions that depend on the revision
// (c.Features().StructuredContent, c.Features().Elicitation, ...).
func (c *Client) Features() domain.Features { return c.features }

// Close ends the connection: the HTTP session is deleted, the handlers
// still answering the server are cancelled and what serves the client
// stops. It is safe to call more than once.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.sess.Close(), c.cleanup())
	})
	return c.closeErr
}

// ListTools returns every tool the server lists, all pages of tools/list.
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return client.Collect(c.sess.ListTools(ctx))
}

// CallTool calls the tool name with args (any value that encodes as the
// arguments object; nil sends none) and returns its result, after
// answering the server's questions with the handlers. A tool error is a
// result whose IsError is set; a request the server refuses is an
// [*RPCError] (an unknown tool, invalid arguments before 2025-11-25, a
// question the client cannot answer: -32021).
func (c *Client) CallTool(ctx context.Context, name string, args any) (*ToolResult, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return c.sess.CallTool(ctx, name, args)
}

// ListPrompts returns every prompt the server lists, all pages of
// prompts/list.
func (c *Client) ListPrompts(ctx context.Context) ([]Prompt, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return client.Collect(c.sess.ListPrompts(ctx))
}

// GetPrompt renders the prompt name with args (prompts/get), answering the
// server's questions with the handlers.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return c.sess.GetPrompt(ctx, name, args)
}

// ListResources returns every resource the server lists, all pages of
// resources/list.
func (c *Client) ListResources(ctx context.Context) ([]Resource, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return client.Collect(c.sess.ListResources(ctx))
}

// ListResourceTemplates returns every resource template the server lists,
// all pages of resources/templates/list.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return client.Collect(c.sess.ListResourceTemplates(ctx))
}

// ReadResource reads the resource at uri (resources/read), answering the
// server's questions with the handlers.
func (c *Client) ReadResource(ctx context.Context, uri string) ([]ResourceContents, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	res, err := c.sess.ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	return res.Contents, nil
}

// Call sends any request: params (nil, or a value that encodes as an
// object) as the request's params, and decodes its result into result
// (when not nil). In the stateless era the client adds its _meta (merged
// with a _meta of params) and answers input_required results as for
// CallTool.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	return c.sess.Call(ctx, method, params, result)
}

// withTimeout applies the client's Timeout to ctx.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.opts.Timeout < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.opts.Timeout)
}
