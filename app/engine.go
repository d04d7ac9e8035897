// Package app is the protocol engine: it turns JSON-RPC messages into calls
// of the tools in a registry and their return values into results, for every
// revision of MCP from 2024-11-05 to 2026-07-28, on any transport that
// implements [ports.Conn]. It knows nothing of stdio, HTTP or fx.
//
// # Asking the client for input
//
// A handler of tools/call, prompts/get or resources/read may ask the client
// for input: the user (elicitation/create), the client's LLM
// (sampling/createMessage) or the client's roots (roots/list). The same
// handler code works in both eras:
//
//   - Handshake era (2024-11-05 … 2025-11-25): Ask sends the requests to
//     the client on the session, waits for the answers and returns them.
//   - Stateless era (2026-07-28, multi round-trip requests): the first time,
//     Ask finds no answer and returns an error wrapping hexmcp.ErrInputRequired;
//     the handler returns it (wrapped or not) and the engine answers the
//     request with resultType "input_required", the questions (inputRequests)
//     and a signed requestState. The client gathers the answers and sends the
//     request again with them; the handler runs again from the start and this
//     time Ask returns the answers. Answers of earlier rounds travel in the
//     requestState, so a handler may ask several times in turn.
//
// So that a handler is correct in both eras:
//
//  1. Return the error of Ask (or of Elicit, CreateMessage, ListRoots) when
//     it is not nil; never swallow it.
//  2. Do nothing that must happen only once before the last question: in the
//     stateless era the code before a question runs again on every round.
//     Ask what you need first, then act.
//  3. Give every question its own key, stable across rounds ("confirm",
//     "step2"): the key finds the answer on the retry. Ask questions that do
//     not depend on each other in one Ask call: they then travel together.
//  4. Check the answer: a user may decline or cancel an elicitation
//     ([domain.ElicitResult.Accepted]).
//
// A question the client has not declared the capability for is not sent:
// Ask returns a *hexmcp.MissingCapabilityError, which the engine answers with
// -32021 (data.requiredCapabilities names what is missing); check
// [RequestContext.CanAsk] first, with the same questions, to do without it.
package app

import (
	"context"
	"log/slog"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/ports"
)

// Engine is the protocol engine. It is safe for concurrent use; one engine
// serves any number of connections at once.
type Engine struct {
	// The engine is composed of parts, each a type of its own with the
	// state it keeps, reaching the others it needs through pointers set
	// once by compose: the Engine keeps the exported API and the dispatch
	// of a message to the method table (dispatch.go), and the parts serve
	// the rest.

	opts   Options
	policy domain.RevisionPolicy
	log    ports.Logger

	// abort cancels every handler's context (hard stop); stopWatch stops
	// watching the tool registry.
	abortCtx  context.Context
	abort     context.CancelFunc
	stopWatch func()

	res         results         // what every result carries (results.go)
	vis         viewFilter      // what each request sees: Options.Visibility (visibility.go)
	sessions    sessionSet      // the handshake-era sessions held here (sessions.go)
	input       inputRounds     // multi round-trip requests (inputrounds.go, requeststate.go)
	env         requestEnv      // what a handler's RequestContext reaches (request.go)
	tools       toolCatalog     // tools/list, tools/call (tool_methods.go)
	resources   resourceCatalog // resources/* (resource_methods.go)
	prompts     promptCatalog   // prompts/* (prompt_methods.go)
	completions completions     // completion/complete (completion.go)
	listen      listeners       // subscriptions/listen streams (listeners.go, listen*.go)
	bus         noticeBus       // notices raised here and on the other instances (bus.go)
	fwd         forwarder       // a client's messages that belong elsewhere (forward.go)
	fan         fanout          // a notice served on the sessions and streams held here (fanout.go)
	ext         extensions      // Options.Extensions (extension.go)
	life        lifecycle       // initialize, server/discover, logging/setLevel (lifecycle.go)
	mw          methodChain     // Options.Middleware (middleware.go)
	// waits counts the calls of stdio and WebSocket connections waiting
	// for their client's answer (Options.MaxWaitingBytesPerClient;
	// serve.go).
	waits waitBook
	// flights holds the budgets of the calls in flight on those
	// connections per client and in total (Options.MaxInFlightBytesPerClient,
	// MaxInFlightBytes; flights.go).
	flights *flightBook
}

// NewEngine returns an engine with the given options.
func NewEngine(opts Options) (*Engine, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	e := compose(opts)
	if err := e.ext.add(&e.opts); err != nil {
		e.Close()
		return nil, err
	}
	e.listen.topics = e.ext.topics
	if len(e.opts.Middleware) > 0 { // the extensions' included
		e.mw.handler = chain(e.answer, e.opts.Middleware)
	}
	if len(opts.ToolMiddleware) > 0 {
		e.tools.middleware = chain(runTool, opts.ToolMiddleware)
	}
	e.bus.start(opts.MaxBusQueue, opts.MaxBusQueueBytes, opts.Logger)
	if w, ok := opts.ToolRegistry.(ports.ToolRegistryWatcher); ok {
		e.stopWatch = w.Watch(e.tools.changed)
	}
	// Options.Tools, Resources (the extensions' included) and Prompts, in
	// order, up to the first error.
	addInitial := func() error {
		if err := e.AddTools(e.opts.Tools...); err != nil {
			return err
		}
		if err := e.AddResources(e.opts.Resources...); err != nil {
			return err
		}
		return e.AddPrompts(e.opts.Prompts...)
	}
	if err := addInitial(); err != nil {
		e.Close()
		return nil, err
	}
	e.opts.Tools, e.opts.Resources, e.opts.Prompts = nil, nil, nil
	for _, attach := range e.ext.attach {
		attach(e)
	}
	return e, nil
}

// compose makes the engine's parts from opts (defaults applied) and
// connects them.
func compose(opts Options) *Engine {
	e := &Engine{opts: opts, policy: opts.Policy, log: opts.Logger}
	e.flights = newFlightBook(opts.MaxInFlightBytesPerClient, opts.MaxInFlightBytes)
	e.abortCtx, e.abort = context.WithCancel(context.Background())
	log := opts.Logger
	e.vis = viewFilter{rules: opts.Visibility, tools: opts.ToolRegistry, resources: opts.ResourceRegistry, prompts: opts.PromptRegistry}
	e.res = results{policy: opts.Policy, info: opts.Info, ttlMs: opts.ListTTL.Milliseconds(), pageSize: opts.PageSize, scope: "public", log: log}
	if opts.PrivateCache || e.vis.filtersAny() {
		e.res.scope = "private"
	}
	e.sessions = sessionSet{onEnd: opts.OnSessionEnd, clock: opts.Clock, log: log}
	e.input = inputRounds{keys: opts.StateKeys, clock: opts.Clock, ttl: opts.RequestStateTTL, validator: opts.Validator, res: &e.res, log: log}
	e.env = requestEnv{policy: opts.Policy, timeout: opts.ClientRequestTimeout, input: &e.input, tools: &e.tools, vis: &e.vis}
	parts := catalogParts{vis: &e.vis, res: &e.res, input: &e.input, env: &e.env, bus: &e.bus}
	e.tools = toolCatalog{registry: opts.ToolRegistry, validator: opts.Validator, policy: opts.Policy, log: log, catalogParts: parts}
	e.resources = resourceCatalog{registry: opts.ResourceRegistry, policy: opts.Policy, maxURILength: opts.MaxURILength,
		maxSubscriptions: opts.MaxSubscriptions, maxSubscriptionBytes: opts.MaxSubscriptionBytes, log: log, catalogParts: parts}
	e.prompts = promptCatalog{registry: opts.PromptRegistry, policy: opts.Policy, log: log, catalogParts: parts}
	e.completions = completions{prompts: &e.prompts, resources: &e.resources, vis: &e.vis, res: &e.res, env: &e.env, log: log}
	e.listen = listeners{max: opts.MaxListeners, maxPerClient: opts.MaxListenersPerClient, maxSubscriptions: opts.MaxListenSubscriptions,
		maxURILength: opts.MaxURILength, idle: opts.ListenIdleTimeout, log: log,
		vis: &e.vis, resources: &e.resources, prompts: &e.prompts, res: &e.res}
	e.bus = noticeBus{bus: opts.Bus, deliver: e.fan.deliver}
	e.fwd = forwarder{bus: &e.bus, sessions: &e.sessions, perMessage: opts.MaxForwardsPerMessage, perClient: opts.MaxForwardsPerClient,
		clock: opts.Clock, log: log}
	e.fan = fanout{policy: opts.Policy, sessions: &e.sessions, listen: &e.listen, vis: &e.vis,
		tools: &e.tools, resources: &e.resources, prompts: &e.prompts, fwd: &e.fwd}
	e.ext = extensions{res: &e.res, log: log}
	e.life = lifecycle{policy: opts.Policy, instructions: opts.Instructions, maxDeclaration: opts.MaxClientDeclarationBytes, clock: opts.Clock,
		res: &e.res, sessions: &e.sessions, vis: &e.vis, resources: &e.resources, prompts: &e.prompts, completions: &e.completions, ext: &e.ext}
	e.mw = methodChain{res: &e.res, log: log}
	return e
}

// Logger returns the logger the engine writes its own log to, for
// transports to share.
func (e *Engine) Logger() ports.Logger { return e.log }

// Shared returns Options.Shared: what a transport of the engine shares with
// the other instances of the server, where its own options say nothing.
func (e *Engine) Shared() ports.SharedState { return e.opts.Shared }

// Policy returns the engine's revision policy.
func (e *Engine) Policy() domain.RevisionPolicy { return e.policy }

// AddTool registers a tool (a hexmcp.Tool: declared with hexmcp.Func,
// hexmcp.NewTool and their kin): it checks the definition (name, schemas, icons),
// compiles the schemas, stores it in the registry and tells connected
// clients that the list changed. A bad definition or a duplicate name is a
// returned error (see [domain.DefinitionError]), never a panic.
func (e *Engine) AddTool(t decl.Tool) error {
	rt, err := e.tools.prepare(t)
	if err != nil {
		return err
	}
	if err := e.tools.registry.Add(rt); err != nil {
		return &domain.DefinitionError{Kind: "tool", Name: rt.Tool.Name, Reason: err.Error(), Err: err}
	}
	e.tools.changed()
	return nil
}

// AddTools registers several tools and stops at the first error.
func (e *Engine) AddTools(ts ...decl.Tool) error { return addEach(ts, e.AddTool) }

// RemoveTool removes a tool and reports whether it was registered.
func (e *Engine) RemoveTool(name string) bool {
	return announce(e.tools.registry.Remove(name), e.tools.changed)
}

// addEach adds every item with add and stops at the first error.
func addEach[T any](items []T, add func(T) error) error {
	for _, it := range items {
		if err := add(it); err != nil {
			return err
		}
	}
	return nil
}

// announce calls changed (a list-changed notice) when removed, and returns
// removed.
func announce(removed bool, changed func()) bool {
	if removed {
		changed()
	}
	return removed
}

// Abort cancels the context of every handler still running, on every
// connection and session of every server of the engine, and of those it
// serves later: it is the engine-wide, permanent hard stop (Close calls
// it). A server whose own graceful shutdown runs out of time cancels only
// its own calls instead: the connections ([Engine.ServeConn]) and
// Streamable HTTP sessions the engine serves with a context given a hard
// stop of its own by [ports.WithAbort] (or one derived from it) cancel
// their handlers' contexts when that stop is done, as on Abort, while the
// engine's other connections go on.
func (e *Engine) Abort() { e.abort() }

// hookAbort makes cancel run when engineAbort (Engine.Abort) and any hard
// stop ctx carries (ports.WithAbort) is done. The returned func unhooks all of
// them.
func hookAbort(engineAbort, ctx context.Context, cancel func()) func() bool {
	stop := context.AfterFunc(engineAbort, cancel)
	extra := ports.Aborts(ctx)
	if len(extra) == 0 {
		return stop
	}
	stops := make([]func() bool, 0, len(extra)+1)
	stops = append(stops, stop)
	for _, a := range extra {
		stops = append(stops, context.AfterFunc(a, cancel))
	}
	return func() bool {
		ok := true
		for _, st := range stops {
			ok = st() && ok
		}
		return ok
	}
}

// Close stops watching the registry and aborts running handlers.
func (e *Engine) Close() error {
	if e.stopWatch != nil {
		e.stopWatch()
	}
	e.bus.close()
	e.abort()
	e.ext.close()
	return nil
}

// logf writes msg to log when log takes messages of level.
func logf(log ports.Logger, ctx context.Context, level slog.Level, msg string, fields ...slog.Attr) {
	if log.Enabled(ctx, level) {
		log.LogAttrs(ctx, level, msg, fields...)
	}
}

func compactJSON(raw []byte) []byte {
	if len(raw) == 0 {
		return raw
	}
	out, err := compact(raw)
	if err != nil {
		return raw // Validate reports it
	}
	return out
}
