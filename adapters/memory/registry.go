// Package memory holds in-memory adapters: a tool registry, a resource
// registry ([ResourceRegistry]) and a transport that connects a client and
// the engine through Go channels, for tests and for embedding a server in
// the same process as its client.
package memory

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// Registry is a [ports.ToolRegistry] kept in memory. The zero value is
// ready to use. List is answered from a sorted snapshot rebuilt only when
// the set of tools changes.
type Registry struct {
	mu     sync.RWMutex
	tools  map[string]ports.RegisteredTool
	sorted []ports.RegisteredTool // nil when stale
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Add stores t; a duplicate name is an error wrapping domain.ErrDuplicateTool.
func (r *Registry) Add(t ports.RegisteredTool) error {
	if t.Tool == nil {
		return fmt.Errorf("memory registry: tool definition is nil")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tools == nil {
		r.tools = make(map[string]ports.RegisteredTool)
	}
	if _, dup := r.tools[t.Tool.Name]; dup {
		return fmt.Errorf("tool %q: %w", t.Tool.Name, domain.ErrDuplicateTool)
	}
	r.tools[t.Tool.Name] = t
	r.sorted = nil
	return nil
}

// Remove deletes a tool and reports whether it was there.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; !ok {
		return false
	}
	delete(r.tools, name)
	r.sorted = nil
	return true
}

// Get finds a tool by name.
func (r *Registry) Get(name string) (ports.RegisteredTool, bool) {
	r.mu.RLock()
	t, ok := r.tools[name]
	r.mu.RUnlock()
	return t, ok
}

// List returns the tools sorted by name. The slice is shared: callers must
// not modify it.
func (r *Registry) List() []ports.RegisteredTool {
	r.mu.RLock()
	s := r.sorted
	r.mu.RUnlock()
	if s != nil {
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sorted == nil {
		s := make([]ports.RegisteredTool, 0, len(r.tools))
		for _, t := range r.tools {
			s = append(s, t)
		}
		slices.SortFunc(s, func(a, b ports.RegisteredTool) int { return strings.Compare(a.Tool.Name, b.Tool.Name) })
		r.sorted = s
	}
	return r.sorted
}

var _ ports.ToolRegistry = (*Registry)(nil)
