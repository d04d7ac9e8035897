package app

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
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
	// notification outside a session has neither, and initialize has its
	// Era (the handshake era) but no Revision yet: it is negotiated by
	// the answer (the result's protocolVersion).
	Revision domain.Revision
	Era      domain.Era
	// SessionID is the handshake-era session's id on transports that name
	// sessions (Streamable HTTP); empty otherwise.
	SessionID string
	// Transport is what the transport knows: headers, the authenticated
	// principal, the peer's address.
	Transport handlerapi.TransportInfo
	// Trace is the W3C trace context the request carried in its _meta
	// (traceparent, tracestate, baggage), zero when none.
	Trace TraceContext
	// ClientCapabilities are the client's capabilities that apply to the
	// request, a JSON object: the session's (from initialize) in the
	// handshake era, the request's _meta ones in the stateless era; nil
	// when none are known (a notification, a request outside a session).
	ClientCapabilities stdjson.RawMessage

	call *middlewareCall // the engine's own answer, for the last handler
}

// IsNotification reports whether the message is a notification (no id,
// no answer).
func (r *Request) IsNotification() bool { return r.ID == nil }

// ClientKey names the client for limits counted per client: the
// authenticated subject, else the peer's IP address (see
// hexmcp.TransportInfo.ClientKey); empty when neither is known (stdio).
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
	// detached marks a copy made by Request.Detached; progress is where
	// its handler's progress goes.
	detached bool
	progress ProgressFunc
	logs     LogFunc
}

// methodChain runs the requests and notifications the engine serves
// through Options.Middleware (the extensions' included), the first
// outermost, to the engine's own answer (Engine.answer). A server without
// middleware has a nil handler and pays nothing.
type methodChain struct {
	handler MethodHandler // nil: no middleware
	res     *results
	log     ports.Logger
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
		e.notify(ctx, c.s, c.m)
		return nil, nil
	}
	if c.detached {
		// The request's own stream has ended: nothing is written to it.
		ctx = context.WithValue(ctx, relatedKey{}, nil)
		if c.progress != nil {
			ctx = context.WithValue(ctx, progressSinkKey{}, c.progress)
		}
		if c.logs != nil {
			ctx = context.WithValue(ctx, logSinkKey{}, c.logs)
		}
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
		Revision: ci.rev, Era: ci.era, Trace: ci.trace, ClientCapabilities: stdjson.RawMessage(ci.caps)}
	req.Transport, _ = ctx.Value(transportKey{}).(handlerapi.TransportInfo)
	if s != nil {
		req.SessionID = s.id
	}
	if p != nil {
		req.Name, _ = stringParam(p.Name)
		req.URI, _ = stringParam(p.URI)
	}
	return req
}

// serve answers a request through the middleware.
func (mc *methodChain) serve(ctx context.Context, entry *method, s *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	req := newRequest(ctx, s, m, p, ci)
	c := &middlewareCall{entry: entry, s: s, m: m, p: p, ci: ci}
	req.call = c
	res, err := mc.handler(ctx, req)
	if err != nil {
		if errors.Is(err, errNoAnswer) {
			return nil, nil
		}
		var rf *refusal
		if errors.As(err, &rf) {
			r := *rf.r
			r.id = m.id
			return nil, &r
		}
		var pe *domain.ProtocolError
		if errors.As(err, &pe) {
			return nil, &rpcError{id: m.id, err: pe}
		}
		logf(mc.log, ctx, slog.LevelError, "hexmcp: middleware failed", slog.Any("method", m.method), slog.Any("error", err))
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}
	if c.out != nil && len(res) == len(c.out)-c.head-1 && (len(res) == 0 || &res[0] == &c.out[c.head]) {
		return c.out, nil // the engine's answer, unchanged
	}
	if len(res) == 0 || !jsontext.Value(res).IsValid() {
		logf(mc.log, ctx, slog.LevelError, "hexmcp: middleware answered with a result that is not JSON", slog.Any("method", m.method))
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}
	if ci.features.ResultType && jsontext.Value(res).Kind() == '{' {
		// A result of the middleware's own, in a revision whose results
		// carry the result _meta (serverInfo): it gets it too, as the
		// engine's own would.
		var obj map[string]jsontext.Value
		if json.Unmarshal(res, &obj) == nil && mc.res.addMeta(obj, ci.rev) == nil {
			if b, err := json.Marshal(obj, json.Deterministic(true)); err == nil {
				res = b
			}
		}
	}
	out := appendResponseHead(make([]byte, 0, len(res)+len(m.id)+32), m.id)
	out = append(out, res...)
	return append(out, '}'), nil
}

// notification handles a message without an id, through the middleware
// when there is some, with the context of the message's transport
// (headers, principal). Notifications get no answer, even when they are
// malformed.
func (e *Engine) notification(ctx context.Context, s *session, m message) {
	if e.mw.handler == nil {
		e.notify(ctx, s, m)
		return
	}
	e.mw.notification(ctx, s, m)
}

// notification runs a notification through the middleware.
func (mc *methodChain) notification(ctx context.Context, s *session, m message) {
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
	if _, err := mc.handler(ctx, req); err != nil {
		logf(mc.log, ctx, slog.LevelDebug, "hexmcp: middleware refused a notification", slog.Any("method", m.method), slog.Any("error", err))
	}
}

// registeredToolKey carries the tool being called to runTool.
type registeredToolKey struct{}

// Detached returns a copy of r that middleware may pass to next after it
// has answered the request itself (the tasks extension runs a tools/call
// in the background this way): the engine's answer to the copy is not
// mixed with the answer to r, and its handler runs apart from r's
// stream, which has ended. So, in every era, the handler asks the client
// for input through an input_required result ([RequestContext.Ask]
// returns a *hexmcp.InputRequiredError for an unanswered question, and next
// answers with the input_required result, never a request to the
// client); its progress reports go to [Request.WithProgress]'s function
// (none: dropped); its log messages go to the session's stream in the
// handshake era, nowhere in the stateless one, and to
// [Request.WithLog]'s function in both. Call next with the copy once at
// most.
func (r *Request) Detached() *Request {
	c := *r
	if r.call != nil {
		mc := *r.call
		mc.out, mc.head = nil, 0
		mc.detached = true
		mc.m.slot = nil
		mc.ci.features.InputRequired = true
		mc.ci.progressToken = nil
		c.call = &mc
	}
	return &c
}

// ProgressFunc receives the progress a detached request's handler
// reports ([RequestContext.ReportProgress]): progress, total (0 when
// unknown) and the message.
type ProgressFunc func(ctx context.Context, progress, total float64, message string)

// WithProgress returns a copy of the detached request r whose handler's
// progress reports go to f ([RequestContext.CanReportProgress] is then
// true); the tasks extension turns them into the task's status message.
// On a request that is not detached it changes nothing.
func (r *Request) WithProgress(f ProgressFunc) *Request {
	return r.withDetached(func(mc *middlewareCall) { mc.progress = f })
}

// LogFunc receives what a detached request's handler logs
// ([RequestContext.Log]): the level, the logger name and the data.
type LogFunc func(ctx context.Context, level domain.LogLevel, logger string, data any)

// WithLog returns a copy of the detached request r whose handler's log
// messages go to f as well as where [Request.Detached] says (the tasks
// extension writes them to the server's log with the task's id). On a
// request that is not detached it changes nothing.
func (r *Request) WithLog(f LogFunc) *Request {
	return r.withDetached(func(mc *middlewareCall) { mc.logs = f })
}

// withDetached returns a copy of r whose call, when r is detached, is a
// copy changed by set.
func (r *Request) withDetached(set func(*middlewareCall)) *Request {
	c := *r
	if r.call != nil && r.call.detached {
		mc := *r.call
		set(&mc)
		c.call = &mc
	}
	return &c
}

// CheckToolCall refuses a tools/call as the engine would before it runs
// the tool, for middleware that answers the call itself (the tasks
// extension runs it in the background): the tool req names, looked up as
// its caller sees it. An unknown tool, or one hidden from the caller
// ([Options.Visibility], hexmcp.HideUnauthorized), is an error answered
// -32602 "Unknown tool: <name>" (a name that is no string too); a tool
// whose scopes (hexmcp.WithScopes) the caller's principal lacks, one answered
// hexmcp.CodeInsufficientScope with the scope challenge (over Streamable HTTP,
// 403 and WWW-Authenticate). Returned by the middleware, the error is
// answered exactly as the engine's own would be. nil: the call may go on
// (its arguments are checked when it runs). A request that is no
// tools/call the engine made is an error.
func (e *Engine) CheckToolCall(ctx context.Context, req *Request) error {
	c := req.call
	if c == nil || c.entry == nil || c.p == nil || req.Method != "tools/call" {
		return errors.New("hexmcp: CheckToolCall needs a tools/call the engine made")
	}
	name, ok := stringParam(c.p.Name)
	if !ok || name == "" {
		return &refusal{newRPCError(c.m.id, domain.CodeInvalidParams, `Invalid params: "name" must be a non-empty string`, nil)}
	}
	rt, ok := e.tools.find(ctx, c.ci, name)
	if !ok {
		return &refusal{newRPCError(c.m.id, domain.CodeInvalidParams, "Unknown tool: "+name, nil)}
	}
	if rerr := checkScopes(ctx, c.m.id, rt.Tool.Scopes); rerr != nil {
		return &refusal{rerr}
	}
	return nil
}

// refusal is an answer of the engine's own ([Engine.CheckToolCall]) that
// middleware returns as its error: it is sent as the engine sends it, its
// scope challenge included.
type refusal struct{ r *rpcError }

func (f *refusal) Error() string { return f.r.err.Error() }
func (f *refusal) Unwrap() error { return f.r.err }

// Derive returns a detached request (see [Request.Detached]) for method
// with params, a JSON object, served in r's context: r's session,
// revision, client capabilities and transport. Middleware continues with
// it work r's client asked for in an earlier request (the tasks extension
// resumes a task's tools/call on the tasks/update that brings its last
// answer, at whichever instance that arrives). Pass it to the next
// handler of the chain r came through, once at most. The copy shares no
// bytes with r's message: a background run of it does not keep r's
// request alive. An unknown method or params that are not a JSON object
// are an error.
func (r *Request) Derive(method string, params stdjson.RawMessage) (*Request, error) {
	if r.call == nil || r.call.entry == nil {
		return nil, errors.New("hexmcp: Derive needs a request the engine made")
	}
	entry := methods[method]
	if entry == nil {
		return nil, fmt.Errorf("hexmcp: Derive: unknown method %q", method)
	}
	raw := jsontext.Value(bytes.Clone(params))
	if raw.Kind() != '{' || !raw.IsValid() {
		return nil, errors.New("hexmcp: Derive: params must be a JSON object")
	}
	m := r.call.m
	m.method, m.params = method, msgParams{raw: raw}
	p, rerr := decodeParams(m.params, m.id)
	if rerr != nil {
		return nil, fmt.Errorf("hexmcp: Derive: %w", rerr.err)
	}
	m.id = bytes.Clone(m.id)
	d := r.Detached()
	d.Method, d.Params, d.ID = method, stdjson.RawMessage(raw), stdjson.RawMessage(m.id)
	d.Name, _ = stringParam(p.Name)
	d.URI, _ = stringParam(p.URI)
	d.call.entry, d.call.m, d.call.p = entry, m, p
	d.call.m.slot = nil
	// The members of r's _meta it keeps are copied: r's message is not.
	d.call.ci.caps, d.call.ci.clientInfo = bytes.Clone(d.call.ci.caps), bytes.Clone(d.call.ci.clientInfo)
	d.ClientCapabilities = stdjson.RawMessage(d.call.ci.caps)
	return d, nil
}
