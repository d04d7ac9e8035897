package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/ports"
)

var errNoPromptRegistry = errors.New("hexmcp: the engine has no prompt registry (Options.PromptRegistry)")

// AddPrompt registers a prompt (a hexmcp.Prompt, from hexmcp.NewPrompt):
// it checks the definition, stores it in the
// prompt registry and tells connected clients that the list changed
// (notifications/prompts/list_changed). A bad definition or a duplicate
// name is a returned error (see [domain.DefinitionError]); so is an
// engine without Options.PromptRegistry.
func (e *Engine) AddPrompt(p decl.Prompt) error {
	if err := e.prompts.add(p); err != nil {
		return err
	}
	e.prompts.changed()
	return nil
}

// add checks and registers a prompt (Engine.AddPrompt).
func (pc *promptCatalog) add(p decl.Prompt) error {
	if pc.registry == nil {
		return errNoPromptRegistry
	}
	pdef, handler, completers := decl.PromptOf(p)
	if pdef == nil {
		return &domain.DefinitionError{Kind: "prompt", Reason: "empty declaration (use NewPrompt)"}
	}
	if handler == nil {
		return &domain.DefinitionError{Kind: "prompt", Name: pdef.Name, Reason: "no handler"}
	}
	def := *pdef
	if err := def.Validate(); err != nil {
		return err
	}
	for name := range completers {
		found := false
		for _, a := range def.Arguments {
			found = found || a.Name == name
		}
		if !found {
			return &domain.DefinitionError{Kind: "prompt", Name: def.Name, Reason: fmt.Sprintf("completer for undeclared argument %q", name)}
		}
	}
	if err := pc.registry.Add(ports.RegisteredPrompt{Prompt: &def, Handler: handler, Completers: completers}); err != nil {
		return &domain.DefinitionError{Kind: "prompt", Name: def.Name, Reason: err.Error(), Err: err}
	}
	return nil
}

// AddPrompts registers several prompts and stops at the first error.
func (e *Engine) AddPrompts(ps ...decl.Prompt) error { return addEach(ps, e.AddPrompt) }

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
			logf(pc.log, ctx, slog.LevelError, "hexmcp: prompt handler panicked", panicAttrs(ctx, v, slog.Any("prompt", p.Prompt.Name))...)
			r, err = nil, errPanic
		}
	}()
	return p.Handler(ctx, args)
}
