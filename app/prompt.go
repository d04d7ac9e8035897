package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// Prompt is a declared prompt, ready for [Engine.AddPrompt]: its
// definition, the handler that renders it and its argument completers.
// Build one with [NewPrompt]. A mistake in the declaration is returned by
// Engine.AddPrompt.
type Prompt struct {
	def        *domain.Prompt
	handler    ports.PromptHandler
	completers map[string]ports.Completer
}

// Definition returns the prompt's definition as it will be listed.
func (p Prompt) Definition() *domain.Prompt { return p.def }

type promptConfig struct {
	common     commonConfig
	args       []domain.PromptArgument
	completers map[string]ports.Completer
}

// WithArguments declares arguments of a prompt, in order. prompts/get
// refuses a request that lacks a required one (-32602).
func WithArguments(args ...domain.PromptArgument) PromptOption {
	return promptOption(func(c *promptConfig) { c.args = append(c.args, args...) })
}

// WithArgument declares one argument of a prompt; complete, when not nil,
// suggests its values for completion/complete.
func WithArgument(arg domain.PromptArgument, complete ports.Completer) PromptOption {
	return promptOption(func(c *promptConfig) {
		c.args = append(c.args, arg)
		if complete != nil {
			if c.completers == nil {
				c.completers = make(map[string]ports.Completer)
			}
			c.completers[arg.Name] = complete
		}
	})
}

// NewPrompt declares the prompt name, rendered by handler.
func NewPrompt(name string, handler ports.PromptHandler, opts ...PromptOption) Prompt {
	c := &promptConfig{}
	for _, o := range opts {
		if o != nil {
			o.applyPrompt(c)
		}
	}
	return Prompt{
		def: &domain.Prompt{
			Name: name, Title: c.common.title, Description: c.common.description,
			Arguments: c.args, Icons: c.common.icons, Meta: c.common.meta, Scopes: c.common.scopes,
		},
		handler:    handler,
		completers: c.completers,
	}
}

var errNoPromptRegistry = errors.New("hexmcp: the engine has no prompt registry (Options.PromptRegistry)")

// AddPrompt registers a prompt: it checks the definition, stores it in the
// prompt registry and tells connected clients that the list changed
// (notifications/prompts/list_changed). A bad definition or a duplicate
// name is a returned error (see [domain.PromptDefinitionError]); so is an
// engine without Options.PromptRegistry.
func (e *Engine) AddPrompt(p Prompt) error {
	if err := e.prompts.add(p); err != nil {
		return err
	}
	e.prompts.changed()
	return nil
}

// add checks and registers a prompt (Engine.AddPrompt).
func (pc *promptCatalog) add(p Prompt) error {
	if pc.registry == nil {
		return errNoPromptRegistry
	}
	if p.def == nil {
		return &domain.PromptDefinitionError{Reason: "empty declaration (use NewPrompt)"}
	}
	if p.handler == nil {
		return &domain.PromptDefinitionError{Prompt: p.def.Name, Reason: "no handler"}
	}
	def := *p.def
	if err := def.Validate(); err != nil {
		return err
	}
	for name := range p.completers {
		found := false
		for _, a := range def.Arguments {
			found = found || a.Name == name
		}
		if !found {
			return &domain.PromptDefinitionError{Prompt: def.Name, Reason: fmt.Sprintf("completer for undeclared argument %q", name)}
		}
	}
	if err := pc.registry.Add(ports.RegisteredPrompt{Prompt: &def, Handler: p.handler, Completers: p.completers}); err != nil {
		return &domain.PromptDefinitionError{Prompt: def.Name, Reason: err.Error(), Err: err}
	}
	return nil
}

// AddPrompts registers several prompts and stops at the first error.
func (e *Engine) AddPrompts(ps ...Prompt) error { return addEach(ps, e.AddPrompt) }

// RemovePrompt removes the prompt name and reports whether it was
// registered.
func (e *Engine) RemovePrompt(name string) bool {
	return e.prompts.registry != nil && announce(e.prompts.registry.Remove(name), e.prompts.changed)
}

// has reports whether a prompt is registered: the prompts
// capability is advertised only then.
func (pc *promptCatalog) has() bool {
	return pc.registry != nil && len(pc.registry.List()) > 0
}

// changed drops cached encodings and sends
// notifications/prompts/list_changed to every initialized handshake-era
// session that was told about prompts and to the subscriptions/listen
// streams that asked for it.
func (pc *promptCatalog) changed() { pc.bus.raise(ports.Notice{Kind: ports.NoticePromptsChanged}) }

// run runs a prompt handler, turning a panic into an error.
func (pc *promptCatalog) run(ctx context.Context, p ports.RegisteredPrompt, args map[string]string) (r *domain.GetPromptResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			logf(pc.log, ctx, slog.LevelError, "hexmcp: prompt handler panicked", slog.Any("prompt", p.Prompt.Name), slog.Any("panic", fmt.Sprint(v)), slog.Any("stack", string(debug.Stack())))
			r, err = nil, errPanic
		}
	}()
	return p.Handler(ctx, args)
}
