// Package memory holds in-memory adapters: tool, resource and prompt
// registries, state keys, a notification bus, session, event and task
// stores, and a transport that connects a client and the engine through Go
// channels, for tests, for a server that runs as one instance, and for
// embedding a server in the same process as its client.
//
// The bus and the stores are implemented below the adapters, in
// internal/memstore, so that other adapters and extensions use them as
// their defaults without importing this package; the names here are
// theirs (type aliases), and the fields of their options and their methods
// are documented there (go doc
// github.com/hexmcp/hexmcp/internal/memstore SessionStoreOptions). The
// limits they share with the other implementations of the same ports are
// internal/portlimits's; each option's documentation gives its default.
package memory

import (
	"fmt"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// toolRegistry is the [ports.ToolRegistry] of [NewRegistry].
type toolRegistry struct {
	tools sortedSet[ports.RegisteredTool]
}

// NewRegistry returns an empty [ports.ToolRegistry] kept in memory, safe
// for concurrent use. List is answered from a sorted snapshot rebuilt only
// when the set of tools changes.
func NewRegistry() ports.ToolRegistry { return &toolRegistry{} }

// Add stores t; a duplicate name is an error wrapping domain.ErrDuplicateTool.
func (r *toolRegistry) Add(t ports.RegisteredTool) error {
	if t.Tool == nil {
		return fmt.Errorf("hexmcp: memory registry: tool definition is nil")
	}
	return r.tools.add(t.Tool.Name, t, "tool", domain.ErrDuplicateTool)
}

// Remove deletes the tool of that name and reports whether it was there.
func (r *toolRegistry) Remove(name string) bool { return r.tools.remove(name) }

// Get finds a tool by name.
func (r *toolRegistry) Get(name string) (ports.RegisteredTool, bool) { return r.tools.get(name) }

// List returns the tools sorted by name. The slice is shared: callers must
// not modify it.
func (r *toolRegistry) List() []ports.RegisteredTool {
	return r.tools.list(func(t ports.RegisteredTool) string { return t.Tool.Name })
}

var _ ports.ToolRegistry = (*toolRegistry)(nil)
