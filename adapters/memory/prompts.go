package memory

import (
	"fmt"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// promptRegistry is the [ports.PromptRegistry] of [NewPromptRegistry].
type promptRegistry struct {
	prompts sortedSet[ports.RegisteredPrompt]
}

// NewPromptRegistry returns an empty [ports.PromptRegistry] kept in
// memory, safe for concurrent use. List is answered from a sorted snapshot
// rebuilt only when the set changes.
func NewPromptRegistry() ports.PromptRegistry { return &promptRegistry{} }

// Add stores p; a duplicate name is an error wrapping
// domain.ErrDuplicatePrompt.
func (r *promptRegistry) Add(p ports.RegisteredPrompt) error {
	if p.Prompt == nil {
		return fmt.Errorf("hexmcp: memory prompt registry: prompt definition is nil")
	}
	return r.prompts.add(p.Prompt.Name, p, "prompt", domain.ErrDuplicatePrompt)
}

// Remove deletes a prompt and reports whether it was there.
func (r *promptRegistry) Remove(name string) bool { return r.prompts.remove(name) }

// Get finds a prompt by name.
func (r *promptRegistry) Get(name string) (ports.RegisteredPrompt, bool) { return r.prompts.get(name) }

// List returns the prompts sorted by name. The slice is shared: callers
// must not modify it.
func (r *promptRegistry) List() []ports.RegisteredPrompt {
	return r.prompts.list(func(p ports.RegisteredPrompt) string { return p.Prompt.Name })
}

var _ ports.PromptRegistry = (*promptRegistry)(nil)
