package hexmcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
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

// conn is one way to the server.
type conn interface {
	// call sends a request and returns its result, or an *RPCError.
	call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error)
	// notify sends a notification.
	notify(ctx context.Context, method string, params map[string]any) error
	// close ends the connection and what serves it.
	close() error
}

// Client is a test client of one revision connected to a real server. Its
// methods are safe for concurrent use. Close it (or let [Connect] do so at
// the end of the test).
type Client struct {
	opts      ClientOptions
	rev       domain.Revision
	features  domain.Features
	meta      map[string]any // stateless era: the _meta of every request
	conn      conn
	in        *inbound
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
	c := &Client{opts: opts, rev: rev, features: srv.Engine().Policy().Features(rev)}
	caps := opts.capabilities()
	handshake := c.features.Era == domain.EraHandshake
	if !handshake {
		c.meta = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    rev,
			"io.modelcontextprotocol/clientCapabilities": caps,
			"io.modelcontextprotocol/clientInfo":         opts.ClientInfo,
		}
	}
	c.in = newInbound(c.answer, opts.OnNotification)
	switch opts.Transport {
	case InMemory:
		c.conn = dialMemory(srv, c.in, handshake)
	case StreamableHTTP:
		c.conn = dialHTTP(srv, c.in, rev, handshake)
	default:
		return nil, fmt.Errorf("hexmcptest: unknown transport %v", opts.Transport)
	}
	if handshake {
		if err := c.initialize(ctx, caps); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	return c, nil
}

// initialize opens the handshake-era session.
func (c *Client) initialize(ctx context.Context, caps map[string]any) error {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	raw, err := c.conn.call(ctx, "initialize", map[string]any{
		"protocolVersion": c.rev,
		"capabilities":    caps,
		"clientInfo":      c.opts.ClientInfo,
	})
	if err != nil {
		return fmt.Errorf("hexmcptest: initialize: %w", err)
	}
	var res struct {
		ProtocolVersion domain.Revision `json:"protocolVersion"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("hexmcptest: decoding the initialize result: %w", err)
	}
	if res.ProtocolVersion != c.rev {
		return fmt.Errorf("hexmcptest: the server answered initialize for %s with protocol revision %q", c.rev, res.ProtocolVersion)
	}
	if err := c.conn.notify(ctx, "notifications/initialized", nil); err != nil {
		return fmt.Errorf("hexmcptest: notifications/initialized: %w", err)
	}
	return nil
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
		c.in.stop()
		c.closeErr = c.conn.close()
		c.in.wait()
	})
	return c.closeErr
}

// ListTools returns every tool the server lists, all pages of tools/list.
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	return listAll[Tool](ctx, c, "tools/list", "tools")
}

// CallTool calls the tool name with args (any value that encodes as the
// arguments object; nil sends none) and returns its result, after
// answering the server's questions with the handlers. A tool error is a
// result whose IsError is set; a request the server refuses is an
// [*RPCError] (an unknown tool, invalid arguments before 2025-11-25, a
// question the client cannot answer: -32021).
func (c *Client) CallTool(ctx context.Context, name string, args any) (*ToolResult, error) {
	params := map[string]any{"name": name}
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("hexmcptest: encoding the arguments of %s: %w", name, err)
		}
		params["arguments"] = json.RawMessage(b)
	}
	raw, err := c.request(ctx, "tools/call", params)
	if err != nil {
		return nil, err
	}
	res := &ToolResult{Raw: raw}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("hexmcptest: decoding the result of %s: %w", name, err)
	}
	return res, nil
}

// ListPrompts returns every prompt the server lists, all pages of
// prompts/list.
func (c *Client) ListPrompts(ctx context.Context) ([]Prompt, error) {
	return listAll[Prompt](ctx, c, "prompts/list", "prompts")
}

// GetPrompt renders the prompt name with args (prompts/get), answering the
// server's questions with the handlers.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	raw, err := c.request(ctx, "prompts/get", params)
	if err != nil {
		return nil, err
	}
	res := &PromptResult{Raw: raw}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("hexmcptest: decoding the prompt %s: %w", name, err)
	}
	return res, nil
}

// ListResources returns every resource the server lists, all pages of
// resources/list.
func (c *Client) ListResources(ctx context.Context) ([]Resource, error) {
	return listAll[Resource](ctx, c, "resources/list", "resources")
}

// ListResourceTemplates returns every resource template the server lists,
// all pages of resources/templates/list.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	return listAll[ResourceTemplate](ctx, c, "resources/templates/list", "resourceTemplates")
}

// ReadResource reads the resource at uri (resources/read), answering the
// server's questions with the handlers.
func (c *Client) ReadResource(ctx context.Context, uri string) ([]ResourceContents, error) {
	raw, err := c.request(ctx, "resources/read", map[string]any{"uri": uri})
	if err != nil {
		return nil, err
	}
	var res struct {
		Contents []ResourceContents `json:"contents"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("hexmcptest: decoding the contents of %s: %w", uri, err)
	}
	return res.Contents, nil
}

// Call sends any request: params (nil, or a value that encodes as an
// object) as the request's params, and decodes its result into result
// (when not nil). In the stateless era the client adds its _meta (merged
// with a _meta of params) and answers input_required results as for
// CallTool.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	p := map[string]any{}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("hexmcptest: encoding the params of %s: %w", method, err)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(b, &members); err != nil {
			return fmt.Errorf("hexmcptest: the params of %s must be an object: %w", method, err)
		}
		for k, v := range members {
			p[k] = v
		}
	}
	raw, err := c.request(ctx, method, p)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("hexmcptest: decoding the result of %s: %w", method, err)
	}
	return nil
}

// withTimeout applies the client's Timeout to ctx.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.opts.Timeout < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.opts.Timeout)
}

// request sends a request and returns its final result. In the stateless
// era it adds the client's _meta and answers input_required results with
// the handlers, round after round.
func (c *Client) request(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	if c.meta == nil {
		return c.conn.call(ctx, method, params)
	}
	meta := maps.Clone(c.meta)
	if m, ok := params["_meta"]; ok {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("hexmcptest: encoding the _meta of %s: %w", method, err)
		}
		var own map[string]any
		if err := json.Unmarshal(b, &own); err != nil {
			return nil, fmt.Errorf("hexmcptest: the _meta of %s must be an object: %w", method, err)
		}
		for k, v := range own {
			if _, ours := meta[k]; !ours {
				meta[k] = v
			}
		}
	}
	var (
		answers map[string]any
		state   string
	)
	for round := 0; ; round++ {
		p := maps.Clone(params)
		p["_meta"] = meta
		if len(answers) > 0 {
			p["inputResponses"] = answers
		}
		if state != "" {
			p["requestState"] = state
		}
		raw, err := c.conn.call(ctx, method, p)
		if err != nil {
			return nil, err
		}
		var head struct {
			ResultType    string `json:"resultType"`
			InputRequests map[string]struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			} `json:"inputRequests"`
			RequestState string `json:"requestState"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("hexmcptest: decoding the result of %s: %w", method, err)
		}
		if head.ResultType != "input_required" {
			return raw, nil
		}
		if len(head.InputRequests) == 0 {
			return nil, fmt.Errorf("hexmcptest: %s answered input_required without inputRequests", method)
		}
		if round+1 == maxRounds {
			return nil, fmt.Errorf("hexmcptest: %s still asks for input after %d rounds", method, maxRounds)
		}
		// The answers of earlier rounds travel in the requestState; a
		// server that keeps none gets them all again.
		if head.RequestState != "" || answers == nil {
			answers = map[string]any{}
		}
		state = head.RequestState
		for _, key := range slices.Sorted(maps.Keys(head.InputRequests)) {
			q := head.InputRequests[key]
			res, err := c.answer(ctx, q.Method, q.Params)
			if err != nil {
				return nil, fmt.Errorf("hexmcptest: answering %s %q of %s: %w", q.Method, key, method, err)
			}
			answers[key] = res
		}
	}
}

// listAll gathers every page of a list method.
func listAll[T any](ctx context.Context, c *Client, method, field string) ([]T, error) {
	out := []T{}
	cursor := ""
	seen := map[string]bool{}
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := c.request(ctx, method, params)
		if err != nil {
			return nil, err
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("hexmcptest: decoding the result of %s: %w", method, err)
		}
		var items []T
		if v, ok := page[field]; ok {
			if err := json.Unmarshal(v, &items); err != nil {
				return nil, fmt.Errorf("hexmcptest: decoding %s of %s: %w", field, method, err)
			}
		}
		out = append(out, items...)
		var next string
		if v, ok := page["nextCursor"]; ok && string(v) != "null" {
			if err := json.Unmarshal(v, &next); err != nil {
				return nil, fmt.Errorf("hexmcptest: decoding nextCursor of %s: %w", method, err)
			}
		}
		if next == "" {
			return out, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("hexmcptest: %s gave the cursor %q twice", method, next)
		}
		seen[next] = true
		cursor = next
	}
}

// answer runs the handler of one of the server's questions and returns its
// answer.
func (c *Client) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case domain.MethodElicit:
		if c.opts.Elicitation == nil {
			return nil, methodNotFound(method)
		}
		p, err := decodeElicit(params)
		if err != nil {
			return nil, &RPCError{Code: domain.CodeInvalidParams, Message: "Invalid params: " + err.Error()}
		}
		res, err := c.opts.Elicitation(ctx, p)
		if err != nil {
			return nil, err
		}
		if res == nil {
			return nil, errors.New("hexmcptest: the Elicitation handler returned no result")
		}
		return res, nil
	case domain.MethodCreateMessage:
		if c.opts.Sampling == nil {
			return nil, methodNotFound(method)
		}
		var p domain.CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &RPCError{Code: domain.CodeInvalidParams, Message: "Invalid params: " + err.Error()}
		}
		res, err := c.opts.Sampling(ctx, p)
		if err != nil {
			return nil, err
		}
		if res == nil {
			return nil, errors.New("hexmcptest: the Sampling handler returned no result")
		}
		return res, nil
	case domain.MethodListRoots:
		if c.opts.Roots == nil {
			return nil, methodNotFound(method)
		}
		roots, err := c.opts.Roots(ctx)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = []domain.Root{}
		}
		return &domain.ListRootsResult{Roots: roots}, nil
	case "ping":
		return struct{}{}, nil
	}
	return nil, methodNotFound(method)
}

func methodNotFound(method string) *RPCError {
	return &RPCError{Code: domain.CodeMethodNotFound, Message: "Method not found: the client has no handler for " + method}
}

// decodeElicit decodes the params of elicitation/create.
func decodeElicit(raw json.RawMessage) (domain.ElicitParams, error) {
	var w struct {
		Meta            map[string]any    `json:"_meta"`
		Mode            domain.ElicitMode `json:"mode"`
		Message         string            `json:"message"`
		RequestedSchema json.RawMessage   `json:"requestedSchema"`
		URL             string            `json:"url"`
		ElicitationID   string            `json:"elicitationId"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return domain.ElicitParams{}, err
	}
	if w.Mode == "" {
		w.Mode = domain.ElicitModeForm
	}
	return domain.ElicitParams{Mode: w.Mode, Message: w.Message, RequestedSchema: w.RequestedSchema,
		URL: w.URL, ElicitationID: w.ElicitationID, Meta: w.Meta}, nil
}
