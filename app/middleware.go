package app

import (
	"context"
	stdjson "encoding/json"
	"errors"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// Request is one incoming MCP request or notification, as method
// middleware sees it. Middleware reads it; what it changes is not seen by
// the engine.
type Request struct {
	// Method is the JSON-RPC method.
	Method string
	// ID is the request's id as sent; nil for a notification.
	ID stdjson.RawMessage
	// Params holds the params as sent (nil when absent), already checked to
	// be a JSON object of valid UTF-8 without duplicate members.
	Params stdjson.RawMessage
	// Name is params.name (tools/call, prompts/get) and URI params.uri
	// (resources/read, resources/subscribe, …), when they are strings.
	Name, URI string
	// Revision and Era are the request's, resolved: the session's for a
	// handshake-era request, its _meta's for a stateless one. A
	// notification outside a session has neither.
	Revision domain.Revision
	Era      domain.Era
	// SessionID is the handshake-era session's id on transports that name
	// sessions (Streamable HTTP); empty otherwise.
	SessionID string
	// Transport is what the transport knows: headers, the authenticated
	// principal, the peer's address.
	Transport TransportInfo
	// Trace is the W3C trace context the request carried in its _meta
	// (traceparent, tracestate, baggage), zero when none.
	Trace TraceContext

	call *middlewareCall // the engine's own answer, for the last handler
}

// IsNotification reports whether the message is a notification (no id,
// no answer).
func (r *Request) IsNotification() bool { return r.ID == nil }

// ClientKey names the client for limits counted per client: the
// authenticated subject, else the peer's IP address (see
// [TransportInfo.ClientKey]); empty when neither is known (stdio).
func (r *Request) ClientKey() string { return r.Transport.ClientKey() }

// MethodHandler answers a [Request]: with the encoded JSON-RPC result (the
// value of the response's "result" member), or with an error. A
// *[domain.ProtocolError] (or an error wrapping one) is sent as that
// JSON-RPC error, with the request's id; any other error is answered
// -32603 "Internal error" and logged with its details, never sent. For a
// notification the result and the error are dropped.
type MethodHandler func(ctx context.Context, req *Request) (stdjson.RawMessage, error)

// Middleware wraps the handling of every incoming request and
// notification, as net/http middleware wraps an http.Handler: it may look
// at the request, call next (or not, and answer itself), and look at or
// replace what next answered. Middleware runs the same on every transport
// and in both eras; for the methods that run apart from a connection's
// reader ([MethodSpec.Call]: tools/call, prompts/get, resources/read,
// subscriptions/listen) it runs there too, so it may block, and the ctx it
// gets is cancelled with the request. A request the engine refuses
// before it is resolved (malformed JSON-RPC, an unknown method, a
// stateless request with bad _meta, a handshake-era request outside an
// initialized session) is answered without middleware.
type Middleware func(next MethodHandler) MethodHandler

// ToolCall is one call of a tool, as tool middleware sees it.
type ToolCall struct {
	// Tool is the tool's definition.
	Tool *domain.Tool
	// Arguments are the call's arguments, already validated against the
	// tool's input schema.
	Arguments stdjson.RawMessage
}

// ToolHandler runs a tool call: the handler's return value (turned into
// the result afterwards, as for any handler) or its error (a
// *[domain.ToolError] is the model's to read: an isError result).
type ToolHandler func(ctx context.Context, call *ToolCall) (any, error)

// ToolMiddleware wraps every call of every tool, inside method middleware:
// it sees the tool, the validated arguments and the handler's return
// value or error, and may answer itself (a value, or a
// [domain.NewToolError] the model reads). [RequestFrom](ctx) gives the
// request.
type ToolMiddleware func(next ToolHandler) ToolHandler

// middlewareCall is what the last handler of a chain needs to let the
// engine answer.
type middlewareCall struct {
	entry *method
	s     *session
	m     message
	p     *wireParams
	ci    callInfo
	// out is the engine's own response and head the length of its
	// prefix up to the result, so that an unchanged result is sent as it
	// is.
	out  []byte
	head int
}

// buildMiddleware composes Options.Middleware around the engine's own
// answer and Options.ToolMiddleware around the tools' handlers; nil chains
// when there are none, so that a server without middleware pays nothing.
func (e *Engine) buildMiddleware() {
	if len(e.opts.Middleware) > 0 {
		e.middleware = chain(e.answer, e.opts.Middleware)
	}
	if len(e.opts.ToolMiddleware) > 0 {
		e.toolMiddleware = chain(e.runTool, e.opts.ToolMiddleware)
	}
}

// chain wraps h in mws, the first outermost; nil entries are skipped.
func chain[H any, M ~func(H) H](h H, mws []M) H {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}

// answer is the last handler of the method middleware: the engine's own
// answer to the request.
func (e *Engine) answer(ctx context.Context, req *Request) (stdjson.RawMessage, error) {
	c := req.call
	if c == nil {
		return nil, errors.New("hexmcp: a Request made outside the engine reached its handler")
	}
	if c.entry == nil { // a notification
		e.notify(c.s, c.m)
		return nil, nil
	}
	out, rerr := c.entry.serve(e, ctx, c.s, c.m, c.p, c.ci)
	if rerr != nil {
		return nil, rerr.err
	}
	if out == nil { // no answer: a cancelled call
		return nil, errNoAnswer
	}
	c.out, c.head = out, len(`{"jsonrpc":"2.0","id":`)+len(c.m.id)+len(`,"result":`)
	return stdjson.RawMessage(out[c.head : len(out)-1]), nil
}

// errNoAnswer is what the engine's own answer returns through middleware
// for a request that gets no response.
var errNoAnswer = errors.New("hexmcp: the request has no answer")

// newRequest is the Request of middleware for a message.
func newRequest(ctx context.Context, s *session, m message, p *wireParams, ci callInfo) *Request {
	req := &Request{Method: m.method, ID: stdjson.RawMessage(m.id), Params: stdjson.RawMessage(m.params.raw),
		Revision: ci.rev, Era: ci.era, Trace: ci.trace}
	req.Transport, _ = ctx.Value(transportKey{}).(TransportInfo)
	if s != nil {
		req.SessionID = s.id
	}
	if p != nil {
		req.Name, _ = stringParam(p.Name)
		req.URI, _ = stringParam(p.URI)
	}
	return req
}

// serveThroughMiddleware answers a request through Options.Middleware.
func (e *Engine) serveThroughMiddleware(ctx context.Context, entry *method, s *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	req := newRequest(ctx, s, m, p, ci)
	c := &middlewareCall{entry: entry, s: s, m: m, p: p, ci: ci}
	req.call = c
	res, err := e.middleware(ctx, req)
	if err != nil {
		if errors.Is(err, errNoAnswer) {
			return nil, nil
		}
		var pe *domain.ProtocolError
		if errors.As(err, &pe) {
			return nil, &rpcError{id: m.id, err: pe}
		}
		e.logf(ctx, ports.LevelError, "hexmcp: middleware failed", ports.F("method", m.method), ports.F("error", err))
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}
	if c.out != nil && len(res) == len(c.out)-c.head-1 && (len(res) == 0 || &res[0] == &c.out[c.head]) {
		return c.out, nil // the engine's answer, unchanged
	}
	if len(res) == 0 || !jsontext.Value(res).IsValid() {
		e.logf(ctx, ports.LevelError, "hexmcp: middleware answered with a result that is not JSON", ports.F("method", m.method))
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}
	out := appendResponseHead(make([]byte, 0, len(res)+len(m.id)+32), m.id)
	out = append(out, res...)
	return append(out, '}'), nil
}

// notification handles a message without an id, through the middleware
// when there is some. Notifications get no answer, even when they are
// malformed.
func (e *Engine) notification(s *session, m message) {
	ctx := context.Background()
	if s != nil {
		ctx = s.base
	}
	e.notificationCtx(ctx, s, m)
}

// notificationCtx is notification with the context of the message's
// transport (headers, principal).
func (e *Engine) notificationCtx(ctx context.Context, s *session, m message) {
	if e.middleware == nil {
		e.notify(s, m)
		return
	}
	var ci callInfo
	if s != nil {
		s.mu.Lock()
		if s.initialized {
			ci.era, ci.rev = domain.EraHandshake, s.rev
		}
		s.mu.Unlock()
	}
	if p := m.params.p; p != nil && p.Meta != nil {
		ci.trace.TraceParent, _ = stringParam(p.Meta.TraceParent)
		ci.trace.TraceState, _ = stringParam(p.Meta.TraceState)
		ci.trace.Baggage, _ = stringParam(p.Meta.Baggage)
	}
	req := newRequest(ctx, s, m, nil, ci)
	req.call = &middlewareCall{s: s, m: m}
	if _, err := e.middleware(ctx, req); err != nil {
		e.logf(ctx, ports.LevelDebug, "hexmcp: middleware refused a notification", ports.F("method", m.method), ports.F("error", err))
	}
}

// runTool is the last handler of the tool middleware: the tool's own
// handler.
func (e *Engine) runTool(ctx context.Context, call *ToolCall) (any, error) {
	rt, _ := ctx.Value(registeredToolKey{}).(ports.RegisteredTool)
	if rt.Handler == nil {
		return nil, errors.New("hexmcp: a ToolCall made outside the engine reached its handler")
	}
	return rt.Handler(ctx, call.Arguments)
}

// registeredToolKey carries the tool being called to runTool.
type registeredToolKey struct{}

// Detached returns a copy of r that middleware may pass to next after it
// has answered the request itself (the tasks extension runs a tools/call
// in the background this way): the engine's answer to the copy is not
// mixed with the answer to r. Call next with the copy once at most.
func (r *Request) Detached() *Request {
	c := *r
	if r.call != nil {
		mc := *r.call
		mc.out, mc.head = nil, 0
		c.call = &mc
	}
	return &c
}
