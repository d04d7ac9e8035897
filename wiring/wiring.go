// Package wiring assembles servers with go.uber.org/fx. A complete stdio
// server is
//
//	fx.New(wiring.Core, wiring.Stdio, wiring.Tools(myTools...)).Run()
//
// Core builds the protocol engine from whatever ports the application
// provides and fills the rest with defaults: an in-memory tool registry,
// JSON Schema 2020-12 validation, and a logger on standard error (a
// *slog.Logger or *zap.Logger in the graph is used when present). To swap a
// port, provide your own implementation as the port's interface type, e.g.
// a tool registry of your own (NewMyRegistry returns a type that implements
// ports.ToolRegistry; the default is memory.NewRegistry's):
//
//	fx.Provide(fx.Annotate(NewMyRegistry, fx.As(new(ports.ToolRegistry))))
//
// There is no Redis registry (each instance registers its own tools); [Redis]
// shares what the instances behind a load balancer must share (sessions,
// SSE events, requestState keys, the notification bus, tasks).
//
// Tools join the value group "mcp.tools" ([Tools], [AsTool]); resources and
// resource templates the value group "mcp.resources" ([Resources],
// [AsResource]), stored in the ports.ResourceRegistry of the graph or an
// in-memory one. The resources capability is advertised only when at least
// one resource or template is registered. Prompts join the value group
// "mcp.prompts" ([Prompts], [AsPrompt]), stored in the ports.PromptRegistry
// of the graph or an in-memory one; the prompts capability is advertised
// only when at least one prompt is registered.
package wiring

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/deflog"
	"github.com/hexmcp/hexmcp/internal/serving"
	"github.com/hexmcp/hexmcp/ports"
)

// toolGroup is the fx value group that collects the server's tools.
const toolGroup = "mcp.tools"

// resourceGroup is the fx value group that collects the server's resources
// and resource templates.
const resourceGroup = "mcp.resources"

// promptGroup is the fx value group that collects the server's prompts.
const promptGroup = "mcp.prompts"

// Config is the server's optional configuration: the options of
// hexmcp.New (the same type), whose defaults every field left zero takes.
// Supply it as a value or a pointer, not both (that fails the start):
//
//	fx.Supply(wiring.Config{Info: domain.Implementation{Name: "calc", Version: "1.0.0"}})
//
// Its ports (registries, validator, logger, state keys) left nil come from
// the graph when it holds them, else from hexmcp.Defaults; its Tools,
// Resources and Prompts are registered before those of the groups.
type Config = hexmcp.Options

// engineParams are what Core takes from the graph; everything is
// optional.
type engineParams struct {
	fx.In

	// Config and ConfigPtr: a supplied Config, as a value or as a pointer.
	Config    Config                `optional:"true"`
	ConfigPtr *Config               `optional:"true"`
	Registry  ports.ToolRegistry    `optional:"true"`
	Validator ports.SchemaValidator `optional:"true"`
	Logger    ports.Logger          `optional:"true"`
	Slog      *slog.Logger          `optional:"true"`
	Zap       *zap.Logger           `optional:"true"`
	Tools     []hexmcp.Tool         `group:"mcp.tools"`
	// ResourceRegistry stores resources; an in-memory one by default.
	ResourceRegistry ports.ResourceRegistry `optional:"true"`
	Resources        []hexmcp.Resource      `group:"mcp.resources"`
	// PromptRegistry stores prompts; an in-memory one by default.
	PromptRegistry ports.PromptRegistry `optional:"true"`
	Prompts        []hexmcp.Prompt      `group:"mcp.prompts"`
	// StateKeys sign the requestState of multi round-trip requests; a
	// random key by default, which suits one instance only: servers
	// behind a load balancer provide shared keys (memory.NewStateKeys).
	StateKeys ports.StateKeys `optional:"true"`
	// Shared is what the instances behind a load balancer share (Redis
	// provides it): used when Config.Shared is empty.
	Shared ports.SharedState `optional:"true"`
}

// ErrConfigTwice fails the start of an application that supplies a Config
// both as a value and as a pointer.
var ErrConfigTwice = errors.New("hexmcp: wiring.Config is supplied both as a value and as a pointer; supply one")

// newServer builds the server with hexmcp.New of the supplied Config
// completed from the graph, and registers the groups' tools, resources
// and prompts; a bad one stops the application from starting, with its
// error.
func newServer(p engineParams) (*hexmcp.Server, error) {
	opts := p.Config
	if p.ConfigPtr != nil {
		if !reflect.ValueOf(p.Config).IsZero() {
			return nil, ErrConfigTwice
		}
		opts = *p.ConfigPtr
	}
	opts.ToolRegistry = cmp.Or(opts.ToolRegistry, p.Registry)
	opts.ResourceRegistry = cmp.Or(opts.ResourceRegistry, p.ResourceRegistry)
	opts.PromptRegistry = cmp.Or(opts.PromptRegistry, p.PromptRegistry)
	opts.Validator = cmp.Or(opts.Validator, p.Validator)
	opts.StateKeys = cmp.Or(opts.StateKeys, p.StateKeys)
	if opts.Shared.IsZero() {
		opts.Shared = p.Shared
	}
	if opts.Logger == nil {
		opts.Logger = chooseLogger(p.Logger, p.Slog, p.Zap)
	}
	opts.Tools = append(slices.Clip(opts.Tools), p.Tools...)
	opts.Resources = append(slices.Clip(opts.Resources), p.Resources...)
	opts.Prompts = append(slices.Clip(opts.Prompts), p.Prompts...)
	return hexmcp.New(opts)
}

// chooseLogger picks the logger of a part: the ports.Logger in the graph,
// else the *slog.Logger in the graph, else the *zap.Logger in the graph
// through zap's slog handler (go.uber.org/zap/exp/zapslog), else slog
// on standard error (never standard output: stdout may be the MCP channel).
func chooseLogger(l ports.Logger, s *slog.Logger, z *zap.Logger) ports.Logger {
	switch {
	case l != nil:
		return l
	case s != nil:
		return s
	case z != nil:
		return slog.New(zapslog.NewHandler(z.Core(), zapslog.WithCaller(true)))
	}
	return deflog.New()
}

// Core provides *hexmcp.Server, built from the graph by hexmcp.New,
// and its *app.Engine (for the transports' modules and extenders), and
// closes it ([hexmcp.Server.Close]: stop watching the registries, cancel
// what still runs) on the application's stop, after the transports' own
// stop hooks (fx runs stop hooks in reverse order, and every transport
// hook is added after the engine it needs was built). A server's own code
// takes the *hexmcp.Server: fx.Invoke(func(s *hexmcp.Server) error { return
// s.AddTool(t) }).
var Core = fx.Module("hexmcp",
	fx.Provide(newLifecycleServer, (*hexmcp.Server).Engine),
)

// newLifecycleServer is newServer with the server's close hooked into lc.
func newLifecycleServer(p engineParams, lc fx.Lifecycle) (*hexmcp.Server, error) {
	srv, err := newServer(p)
	if err != nil {
		return nil, err
	}
	lc.Append(fx.Hook{OnStop: func(context.Context) error { return srv.Close() }})
	return srv, nil
}

// stopMargin is how long before fx's stop deadline a transport's hook
// cancels its calls, so that they end (and the process exits) before fx
// gives up on the hook.
const stopMargin = time.Second

// stopContext bounds a transport's OnStop: its calls get at most
// hexmcp.DefaultShutdownTimeout to finish, and are cancelled stopMargin
// before fx's own deadline (the hooks run one after another under one
// deadline), so that a call that would never end (one waiting for a
// client's answer) cannot hold the application past it.
func stopContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := hexmcp.DefaultShutdownTimeout
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)-stopMargin)
	}
	return context.WithTimeout(ctx, d)
}

// stopTransport is the stop hook of a transport whose Shutdown is
// shutdown: it shuts down under stopContext, past whose deadline the
// transport's calls still running are cancelled (Core closes the engine
// itself). That cut is the stop on schedule (a call waiting for a
// client's answer that never comes is one): logged as a warning, not a
// failure of the application's stop. Only fx's own deadline passing or
// another error fails the hook.
func stopTransport(e *app.Engine, transport string, shutdown func(context.Context) error) func(context.Context) error {
	return func(outer context.Context) error {
		ctx, cancel := stopContext(outer)
		defer cancel()
		err := shutdown(ctx)
		if err != nil && errors.Is(err, context.DeadlineExceeded) && outer.Err() == nil {
			e.Logger().LogAttrs(outer, slog.LevelWarn, "hexmcp: calls still running at the stop deadline were cancelled",
				slog.Any("transport", transport))
			return nil
		}
		return err
	}
}

// supplyGroup supplies each item as a member of an fx value group.
func supplyGroup[T any](group string, items []T) fx.Option {
	opts := make([]fx.Option, len(items))
	for i, it := range items {
		opts[i] = fx.Supply(fx.Annotated{Group: group, Target: it})
	}
	return fx.Options(opts...)
}

// asGroup annotates a constructor so that its result joins a value group.
func asGroup(constructor any, group string) any {
	return fx.Annotate(constructor, fx.ResultTags(`group:"`+group+`"`))
}

// Tools adds tools to the server.
func Tools(tools ...hexmcp.Tool) fx.Option { return supplyGroup(toolGroup, tools) }

// AsTool annotates a constructor of a hexmcp.Tool (or of []hexmcp.Tool, with
// flatten) so that its result joins the tool group:
//
//	fx.Provide(wiring.AsTool(NewCalculatorTool))
func AsTool(constructor any) any { return asGroup(constructor, toolGroup) }

// Resources adds resources and resource templates to the server.
func Resources(resources ...hexmcp.Resource) fx.Option { return supplyGroup(resourceGroup, resources) }

// AsResource annotates a constructor of a hexmcp.Resource (or of
// []hexmcp.Resource, with flatten) so that its result joins the resource group:
//
//	fx.Provide(wiring.AsResource(NewConfigResource))
func AsResource(constructor any) any { return asGroup(constructor, resourceGroup) }

// Prompts adds prompts to the server.
func Prompts(prompts ...hexmcp.Prompt) fx.Option { return supplyGroup(promptGroup, prompts) }

// AsPrompt annotates a constructor of a hexmcp.Prompt (or of []hexmcp.Prompt,
// with flatten) so that its result joins the prompt group:
//
//	fx.Provide(wiring.AsPrompt(NewReviewPrompt))
func AsPrompt(constructor any) any { return asGroup(constructor, promptGroup) }

// stdioParams are what the Stdio module takes from the graph.
type stdioParams struct {
	fx.In

	Options *stdio.Options `optional:"true"`
}

// newStdioTransport returns the stdio transport, configured by an optional
// *stdio.Options in the graph.
func newStdioTransport(p stdioParams) *stdio.Transport {
	var o stdio.Options
	if p.Options != nil {
		o = *p.Options
	}
	return stdio.New(o)
}

// Stdio serves the engine on standard input and output. The application
// stops when standard input closes (the client went away), after the calls
// in flight have answered; on fx's stop it stops reading and gives those
// calls until the stop deadline.
var Stdio = fx.Module("hexmcp.stdio",
	fx.Provide(newStdioTransport),
	fx.Invoke(func(lc fx.Lifecycle, sd fx.Shutdowner, e *app.Engine, t *stdio.Transport) {
		Serve(lc, sd, e, t)
	}),
)

// Serve hooks a server for e on t into the lifecycle: started with the
// application, shut down gracefully with it, and shutting the application
// down when the transport ends by itself. Transport modules use it.
func Serve(lc fx.Lifecycle, sd fx.Shutdowner, e *app.Engine, t ports.Transport) {
	srv := serving.New(e, t)
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			if err := srv.Start(context.Background()); err != nil {
				return err
			}
			go func() {
				<-srv.Done()
				_ = sd.Shutdown()
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			// Past the deadline this cancels this server's calls only;
			// Core closes the engine itself.
			ctx, cancel := stopContext(ctx)
			defer cancel()
			return srv.Shutdown(ctx)
		},
	})
}
