package app

import (
	"context"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
)

// The method table: every MCP request method the engine serves is one entry
// here, and nothing else lists them. Dispatch (requestWith), the choice of
// what runs apart from a connection's reader (runsAsCall), the HTTP
// adapter's header rules (through the exchange port's Method) and the
// middleware chain all read it.

// serveFunc answers one request of a method, its era and revision resolved.
type serveFunc func(e *Engine, ctx context.Context, s *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError)

// method is one entry of the method table.
type method struct {
	MethodSpec
	// present tells whether the engine serves the method at all (nil:
	// always): the resources/* methods only with a resource registry, and
	// so on. A method not present is answered -32601, as an unknown one.
	present func(*Engine) bool
	serve   serveFunc
}

// MethodSpec describes one request method of the engine's method table:
// its name, the eras it exists in, whether it runs as a call or answers
// with a stream, and the headers the stateless era mirrors of it.
type MethodSpec = exchange.MethodSpec

var methodList = []method{
	{MethodSpec: MethodSpec{Name: "initialize", Handshake: true},
		serve: func(e *Engine, ctx context.Context, s *session, m message, p *wireParams, _ callInfo) ([]byte, *rpcError) {
			return e.life.initialize(ctx, s, m, p)
		}},
	{MethodSpec: MethodSpec{Name: "ping", Handshake: true},
		serve: func(_ *Engine, _ context.Context, _ *session, m message, _ *wireParams, _ callInfo) ([]byte, *rpcError) {
			return append(appendResponseHead(nil, m.id), "{}}"...), nil
		}},
	// 2026-07-28: the level travels per request, in _meta.
	{MethodSpec: MethodSpec{Name: "logging/setLevel", Handshake: true},
		serve: func(e *Engine, _ context.Context, s *session, m message, p *wireParams, _ callInfo) ([]byte, *rpcError) {
			return e.life.setLevel(s, m, p)
		}},
	{MethodSpec: MethodSpec{Name: "server/discover", Stateless: true},
		serve: func(e *Engine, _ context.Context, _ *session, m message, _ *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.life.discover(m, ci)
		}},
	{MethodSpec: MethodSpec{Name: "tools/list", Handshake: true, Stateless: true},
		serve: func(e *Engine, ctx context.Context, _ *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.tools.list(ctx, m, p, ci)
		}},
	{MethodSpec: MethodSpec{Name: "tools/call", Handshake: true, Stateless: true, Call: true, NameParam: "name", ParamHeaders: true},
		serve: func(e *Engine, ctx context.Context, _ *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.tools.call(ctx, m, p, ci)
		}},
	{MethodSpec: MethodSpec{Name: "resources/list", Handshake: true, Stateless: true}, present: hasResourceRegistry,
		serve: func(e *Engine, ctx context.Context, _ *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.resources.list(ctx, m, p, ci)
		}},
	{MethodSpec: MethodSpec{Name: "resources/templates/list", Handshake: true, Stateless: true}, present: hasResourceRegistry,
		serve: func(e *Engine, ctx context.Context, _ *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.resources.listTemplates(ctx, m, p, ci)
		}},
	{MethodSpec: MethodSpec{Name: "resources/read", Handshake: true, Stateless: true, Call: true, NameParam: "uri"}, present: hasResourceRegistry,
		serve: func(e *Engine, ctx context.Context, _ *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.resources.read(ctx, m, p, ci)
		}},
	// 2026-07-28: subscriptions/listen instead.
	{MethodSpec: MethodSpec{Name: "resources/subscribe", Handshake: true}, present: hasResourceRegistry,
		serve: func(e *Engine, ctx context.Context, s *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.resources.subscribe(ctx, s, m, p, ci, true)
		}},
	{MethodSpec: MethodSpec{Name: "resources/unsubscribe", Handshake: true}, present: hasResourceRegistry,
		serve: func(e *Engine, ctx context.Context, s *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.resources.subscribe(ctx, s, m, p, ci, false)
		}},
	{MethodSpec: MethodSpec{Name: "subscriptions/listen", Stateless: true, Call: true, Stream: true},
		serve: func(e *Engine, ctx context.Context, s *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.listen.serve(ctx, s, m, p, ci)
		}},
	{MethodSpec: MethodSpec{Name: "prompts/list", Handshake: true, Stateless: true}, present: hasPromptRegistry,
		serve: func(e *Engine, ctx context.Context, _ *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.prompts.list(ctx, m, p, ci)
		}},
	{MethodSpec: MethodSpec{Name: "prompts/get", Handshake: true, Stateless: true, Call: true, NameParam: "name"}, present: hasPromptRegistry,
		serve: func(e *Engine, ctx context.Context, _ *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.prompts.get(ctx, m, p, ci)
		}},
	{MethodSpec: MethodSpec{Name: "completion/complete", Handshake: true, Stateless: true}, present: hasCompleters,
		serve: func(e *Engine, ctx context.Context, _ *session, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.completions.serve(ctx, m, p, ci)
		}},
}

func hasResourceRegistry(e *Engine) bool { return e.resources.registry != nil }
func hasPromptRegistry(e *Engine) bool   { return e.prompts.registry != nil }
func hasCompleters(e *Engine) bool       { return e.completions.has() }

// methods indexes methodList by name.
var methods = func() map[string]*method {
	idx := make(map[string]*method, len(methodList))
	for i := range methodList {
		idx[methodList[i].Name] = &methodList[i]
	}
	return idx
}()

// LookupMethod returns the entry of the method table for a request
// method, and whether the engine knows the method at all.
func LookupMethod(name string) (MethodSpec, bool) {
	if m, ok := methods[name]; ok {
		return m.MethodSpec, true
	}
	return MethodSpec{}, false
}

// runsAsCall tells the methods that a connection runs apart from its
// reader ([MethodSpec.Call], [ExtensionMethod.Call]).
func (e *Engine) runsAsCall(name string) bool {
	m, ok := methods[name]
	if !ok {
		m, ok = e.ext.methods[name]
	}
	return ok && m.Call
}

// existsIn reports whether the method exists in era.
func (m *method) existsIn(era domain.Era) bool {
	if era == domain.EraStateless {
		return m.Stateless
	}
	return m.Handshake
}
