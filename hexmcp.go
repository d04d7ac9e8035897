// Package hexmcp builds Model Context Protocol servers that expose Go
// functions as tools to LLM clients, over stdio, Streamable HTTP and
// WebSocket, for every revision from 2024-11-05 to 2026-07-28 at once.
//
// It is the front door of the SDK: [New] assembles a server with safe
// defaults (in-memory registries, JSON Schema 2020-12 validation of every
// call's arguments, the server's own log on standard error through slog),
// and everything a server's author writes has its name here: tools
// ([Func], [NewTool], [NewRawTool], [ToolsOf]), prompts ([NewPrompt]),
// resources ([NewResource], [NewResourceTemplate], [TextResource]), their
// options (WithName, WithDescription, [WithScopes], …), the request a
// handler serves ([RequestContext], [RequestFrom]), content ([Text],
// [Image], [CallToolResult], …), errors for the model ([ToolError],
// [ToolErrorf]), questions to the client ([ElicitForm], [ElicitInput], …),
// middleware, visibility and extensions. A complete stdio server:
//
//	func main() {
//		srv, err := hexmcp.New(hexmcp.Options{
//			Info:  hexmcp.Implementation{Name: "calc", Version: "1.0.0"},
//			Tools: []hexmcp.Tool{hexmcp.Func(add, hexmcp.WithDescription("Adds two numbers."))},
//		})
//		if err != nil {
//			log.Fatal(err)
//		}
//		if err := srv.ServeStdio(context.Background()); err != nil {
//			log.Fatal(err)
//		}
//	}
//
// # The server
//
// A [Server] serves: [Server.ServeStdio], [Server.Serve] (any
// ports.Transport), [Server.ListenAndServe] (Streamable HTTP at /mcp, the
// HTTP+SSE transport of 2024-11-05 at /sse and /message, and WebSocket at
// /ws when asked, with authentication and net/http middleware given in
// [HTTPOptions]); or it hands out handlers to mount on a mux of your own
// ([Server.HTTPHandler], [Server.SSEHandler], [Server.WebSocketHandler]).
// While it
// runs, [Server.AddTool], [Server.RemoveTool] and their kin for prompts,
// resources and templates change what it offers (connected clients are
// told); [Server.NotifyResourceUpdated], [Server.VisibilityChanged] and
// [Server.NotifyElicitationComplete] tell clients what changed elsewhere;
// [Server.Close] stops it. One Server may serve several transports at once.
//
// # Middleware, visibility, scopes
//
// [Options].Middleware wraps every request ([Middleware], in the net/http
// shape), [Options].ToolMiddleware every tool call ([ToolMiddleware]); the
// ready-made ones are [Audit], [RateLimit], [ToolTimeout] and
// [ConfirmDestructive].
// [Options].Visibility ([Visibility]) decides per request which tools,
// prompts and resources a caller sees; [WithScopes] makes a definition
// require OAuth scopes of the caller, and [HideUnauthorized] hides it from
// those who lack them.
//
// # Authorization, several instances, extensions
//
// An OAuth 2.1 resource server is adapters/oauth (package mcpoauth): its
// verifier is the Authenticator of [HTTPOptions], its metadata is mounted
// on HTTPOptions.Mux. Several instances behind a load balancer share
// sessions, events, notifications and state keys through Redis with
// adapters/redis (package mcpredis; Options.Shared). MCP extensions
// ([Extension], [Options].Extensions) come as packages: extensions/skills,
// extensions/tasks, extensions/apps.
//
// # The layers underneath
//
// They stay importable one by one, for those who extend the SDK: domain
// (the model and the revision policy), ports (the interfaces), adapters
// (transports, stores, loggers, the validator), app (the protocol engine,
// reached from a Server with [Server.Engine]) and wiring (fx modules built
// on the same defaults as New). Most names here are aliases of theirs, so
// values pass between the layers unconverted.
package hexmcp

import (
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
)

// Options configure a server; every field is optional, and a zero field
// takes its default. The fields, by group:
//
//   - Who the server is: Info (an [Implementation]: name, version, title),
//     Instructions for the model.
//   - What it offers: Tools, Prompts, Resources (registered by [New] in
//     order; more may be added while it runs), Extensions.
//   - Who sees what, and what runs around the handlers: Visibility, a
//     [Visibility]; Middleware, [Middleware]s; ToolMiddleware,
//     [ToolMiddleware]s; OnSessionEnd, called with a [SessionEnd].
//   - Its ports: ToolRegistry, ResourceRegistry, PromptRegistry, Validator
//     (JSON Schema 2020-12 unless DisableValidation), Logger (slog's text
//     format on standard error), StateKeys, and Shared (what the instances
//     behind a load balancer share: mcpredis.Share).
//   - Its limits: PageSize, MaxConcurrentRequests, ClientRequestTimeout,
//     RequestStateTTL, MaxListeners, MaxSubscriptions and the other Max…
//     fields ([Unlimited] turns a bound off where it may be).
//   - What stateless-era results say: ListTTL, PrivateCache.
//
// [New] fills the ports left nil as [Defaults] says. It is the engine's
// own options type, app.Options, whose fields are documented one by one
// (go doc github.com/hexmcp/hexmcp/app Options).
type Options = app.Options

// Defaults returns opts with every port it leaves nil filled with the SDK's
// adapters: an in-memory tool registry (memory.NewRegistry), in-memory
// resource and prompt registries, and JSON Schema 2020-12 validation
// (jsonschema.New) unless opts.DisableValidation. The engine itself
// (app.NewEngine) defaults the rest: the limits, the logger (slog's text
// format on standard error), the clock and the requestState keys. [New]
// and the wiring package's fx modules both build on Defaults, so a server
// gets the same defaults either way.
func Defaults(opts Options) Options {
	if opts.ToolRegistry == nil {
		opts.ToolRegistry = memory.NewRegistry()
	}
	if opts.ResourceRegistry == nil {
		opts.ResourceRegistry = memory.NewResourceRegistry()
	}
	if opts.PromptRegistry == nil {
		opts.PromptRegistry = memory.NewPromptRegistry()
	}
	if opts.Validator == nil && !opts.DisableValidation {
		opts.Validator = jsonschema.New()
	}
	return opts
}

// Server is an MCP server. It is safe for concurrent use, and one Server
// may serve several transports at once. Its methods:
//
//   - serve it: [Server.ServeStdio], [Server.Serve] (a ports.Transport),
//     [Server.ListenAndServe] (Streamable HTTP, HTTP+SSE, and WebSocket,
//     with authentication and middleware);
//   - mount it: [Server.HTTPHandler], [Server.SSEHandler],
//     [Server.WebSocketHandler];
//   - change what it offers while it runs: [Server.AddTool],
//     [Server.AddTools], [Server.RemoveTool], [Server.AddPrompt],
//     [Server.AddPrompts], [Server.RemovePrompt], [Server.AddResource],
//     [Server.AddResources], [Server.AddResourceTemplate],
//     [Server.RemoveResource], [Server.RemoveResourceTemplate];
//   - tell clients what changed: [Server.NotifyResourceUpdated],
//     [Server.VisibilityChanged], [Server.NotifyElicitationComplete];
//   - stop it: [Server.Close];
//   - extend the SDK with it: [Server.Engine].
type Server struct {
	eng *app.Engine
}

// New returns a server built from opts, with [Defaults] for the ports
// opts leaves nil. The tools, prompts and resources of opts are registered
// in order; the first bad definition (a bad name or schema, a duplicate)
// is New's error, which wraps a [DefinitionError].
func New(opts Options) (*Server, error) {
	e, err := app.NewEngine(Defaults(opts))
	if err != nil {
		return nil, err
	}
	return &Server{eng: e}, nil
}

// Engine returns the protocol engine the server runs, for those who extend
// the SDK: the wiring package, adapters constructed by hand
// (mcphttp.NewHandler, websocket.NewHandler, a transport's Serve), tests that
// drive the engine message by message. A server's own code needs none of
// it: the Server's methods are the front door. It returns nil for a nil
// Server.
func (s *Server) Engine() *app.Engine {
	if s == nil {
		return nil
	}
	return s.eng
}

// AddTool registers a tool while the server runs: it checks the definition
// (name, schemas, icons), compiles its schemas, stores it and tells the
// connected clients that the list changed
// (notifications/tools/list_changed). A bad definition or a duplicate name
// is a returned error (wrapping a [DefinitionError]), never a
// panic.
func (s *Server) AddTool(t Tool) error { return s.eng.AddTool(t) }

// AddTools registers several tools as [Server.AddTool] does and stops at
// the first error.
func (s *Server) AddTools(ts ...Tool) error { return s.eng.AddTools(ts...) }

// RemoveTool removes the tool name and reports whether it was registered;
// the connected clients are told that the list changed.
func (s *Server) RemoveTool(name string) bool { return s.eng.RemoveTool(name) }

// AddPrompt registers a prompt while the server runs and tells the
// connected clients that the list changed
// (notifications/prompts/list_changed). A bad definition or a duplicate
// name is a returned error (wrapping a [DefinitionError]).
func (s *Server) AddPrompt(p Prompt) error { return s.eng.AddPrompt(p) }

// AddPrompts registers several prompts as [Server.AddPrompt] does and stops
// at the first error.
func (s *Server) AddPrompts(ps ...Prompt) error { return s.eng.AddPrompts(ps...) }

// RemovePrompt removes the prompt name and reports whether it was
// registered.
func (s *Server) RemovePrompt(name string) bool { return s.eng.RemovePrompt(name) }

// AddResource registers a resource or a resource template while the server
// runs and tells the connected clients that the list changed
// (notifications/resources/list_changed). A bad definition, a duplicate URI
// or a URI longer than Options.MaxURILength is a returned error (wrapping a
// [DefinitionError]).
func (s *Server) AddResource(r Resource) error { return s.eng.AddResource(r) }

// AddResources registers several resources or templates as
// [Server.AddResource] does and stops at the first error.
func (s *Server) AddResources(rs ...Resource) error { return s.eng.AddResources(rs...) }

// AddResourceTemplate is [Server.AddResource] for a declaration that must
// be a template (from [NewResourceTemplate]).
func (s *Server) AddResourceTemplate(t Resource) error { return s.eng.AddResourceTemplate(t) }

// RemoveResource removes the resource at uri and reports whether it was
// registered.
func (s *Server) RemoveResource(uri string) bool { return s.eng.RemoveResource(uri) }

// RemoveResourceTemplate removes the template of that URI template and
// reports whether it was registered.
func (s *Server) RemoveResourceTemplate(uriTemplate string) bool {
	return s.eng.RemoveResourceTemplate(uriTemplate)
}

// NotifyResourceUpdated tells the sessions subscribed to uri
// (resources/subscribe) and the subscriptions/listen streams that follow it
// that the resource changed (notifications/resources/updated). It reports
// how many were told here; with a bus (Options.Shared or Options.Bus), those
// of the other instances are told too.
func (s *Server) NotifyResourceUpdated(uri string) int { return s.eng.NotifyResourceUpdated(uri) }

// VisibilityChanged tells the server that what Options.Visibility decides
// may have changed (a user's rights changed): every session and listen
// stream whose visible list of tools, resources or prompts changed gets its
// list-changed notification, on every instance with a bus (Options.Shared
// or Options.Bus).
func (s *Server) VisibilityChanged() { s.eng.VisibilityChanged() }

// NotifyElicitationComplete tells the client of the handshake-era session
// sessionID ([RequestContext.SessionID]) that the out-of-band interaction
// of its URL-mode elicitation elicitationID ended
// (notifications/elicitation/complete), for an interaction that ends
// outside the request (an OAuth callback reaching any instance). It
// reports how many sessions were told here; with a bus (Options.Shared or
// Options.Bus), every instance holding the session tells it.
func (s *Server) NotifyElicitationComplete(sessionID, elicitationID string) int {
	return s.eng.NotifyElicitationComplete(sessionID, elicitationID)
}

// Close stops the server: it stops watching the registries, cancels the
// calls still running and closes the extensions. The Serve methods stop
// by their context; call Close once they have returned.
func (s *Server) Close() error { return s.eng.Close() }
