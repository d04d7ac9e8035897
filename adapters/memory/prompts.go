package memory

import (
	"fmt"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// PromptRegistry is a [ports.PromptRegistry] kept in memory. The zero value
// is ready to use. List is answered from a sorted snapshot rebuilt only
// when the set changes.
type PromptRegistry struct {
	prompts sortedSet[ports.RegisteredPrompt]
}

// NewPromptRegistry returns an empty prompt registry.
func NewPromptRegistry() *PromptRegistry { return &PromptRegistry{} }

// Add stores p; a duplicate name is an error wrapping
// domain.ErrDuplicatePrompt.
func (r *PromptRegistry) Add(p ports.RegisteredPrompt) error {
	if p.Prompt == nil {
		return fmt.Errorf("hexmcp: memory prompt registry: prompt definition is nil")
	}
	return r.prompts.add(p.Prompt.Name, p, "prompt", domain.ErrDuplicatePrompt)
}

// Remove deletes a prompt and reports whether it was there.
func (r *PromptRegistry) Remove(name string) bool { return r.prompts.remove(name) }

// Get finds a prompt by name.
func (r *PromptRegistry) Get(name string) (ports.RegisteredPrompt, bool) { return r.prompts.get(name) }

// List returns the prompts sorted by name. The slice is shared: callers
// must not modify it.
func (r *PromptRegistry) List() []ports.RegisteredPrompt {
	return r.prompts.list(func(p ports.RegisteredPrompt) string { return p.Prompt.Name })
}

var _ ports.PromptRegistry = (*PromptRegistry)(nil)
