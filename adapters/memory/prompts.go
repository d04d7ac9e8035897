package memory

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// PromptRegistry is a [ports.PromptRegistry] kept in memory. The zero value
// is ready to use. List is answered from a sorted snapshot rebuilt only
// when the set changes.
type PromptRegistry struct {
	mu      sync.RWMutex
	prompts map[string]ports.RegisteredPrompt
	sorted  []ports.RegisteredPrompt // nil when stale
}

// NewPromptRegistry returns an empty prompt registry.
func NewPromptRegistry() *PromptRegistry { return &PromptRegistry{} }

// Add stores p; a duplicate name is an error wrapping
// domain.ErrDuplicatePrompt.
func (r *PromptRegistry) Add(p ports.RegisteredPrompt) error {
	if p.Prompt == nil {
		return fmt.Errorf("memory prompt registry: prompt definition is nil")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.prompts == nil {
		r.prompts = make(map[string]ports.RegisteredPrompt)
	}
	if _, dup := r.prompts[p.Prompt.Name]; dup {
		return fmt.Errorf("prompt %q: %w", p.Prompt.Name, domain.ErrDuplicatePrompt)
	}
	r.prompts[p.Prompt.Name] = p
	r.sorted = nil
	return nil
}

// Remove deletes a prompt and reports whether it was there.
func (r *PromptRegistry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.prompts[name]; !ok {
		return false
	}
	delete(r.prompts, name)
	r.sorted = nil
	return true
}

// Get finds a prompt by name.
func (r *PromptRegistry) Get(name string) (ports.RegisteredPrompt, bool) {
	r.mu.RLock()
	p, ok := r.prompts[name]
	r.mu.RUnlock()
	return p, ok
}

// List returns the prompts sorted by name. The slice is shared: callers
// must not modify it.
func (r *PromptRegistry) List() []ports.RegisteredPrompt {
	r.mu.RLock()
	s := r.sorted
	r.mu.RUnlock()
	if s != nil {
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sorted == nil {
		s := make([]ports.RegisteredPrompt, 0, len(r.prompts))
		for _, p := range r.prompts {
			s = append(s, p)
		}
		slices.SortFunc(s, func(a, b ports.RegisteredPrompt) int { return strings.Compare(a.Prompt.Name, b.Prompt.Name) })
		r.sorted = s
	}
	return r.sorted
}

var _ ports.PromptRegistry = (*PromptRegistry)(nil)
