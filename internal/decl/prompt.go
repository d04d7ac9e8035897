package decl

import (
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// Prompt is a declared prompt, ready for AddPrompt: its
// definition, the handler that renders it and its argument completers.
// Build one with [NewPrompt]. A mistake in the declaration is returned by
// AddPrompt.
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
