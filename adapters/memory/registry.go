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
	"errors"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// registry keeps the registered items of one kind (tools, prompts,
// resources, resource templates) by key, in a [sortedSet]: the
// registries of this package are made of it. Each has its own Get, on the
// request path, which calls the set directly: a generic Get here costs
// about ten nanoseconds more a call.
type registry[T any] struct {
	set sortedSet[T]
	// defined reports whether an item has its definition (a nil one is
	// refused with errNil).
	defined func(T) bool
	// key is an item's key (a name, a URI, a URI template).
	key func(T) string
	// what names the kind in the error of a duplicate key, which wraps
	// dup.
	what string
	dup  error
	// errNil is the error of an item without its definition.
	errNil error
}

// Add stores v; a duplicate key is an error wrapping r.dup.
func (r *registry[T]) Add(v T) error {
	if !r.defined(v) {
		return r.errNil
	}
	return r.set.add(r.key(v), v, r.what, r.dup)
}

// Remove deletes the item of key and reports whether it was there.
func (r *registry[T]) Remove(key string) bool { return r.set.remove(key) }

// List returns the items sorted by key. The slice is shared: callers must
// not modify it.
func (r *registry[T]) List() []T { return r.set.list(r.key) }

// toolRegistry is the [ports.ToolRegistry] of [NewRegistry].
type toolRegistry struct {
	registry[ports.RegisteredTool]
}

// Get finds a tool by name.
func (r *toolRegistry) Get(name string) (ports.RegisteredTool, bool) { return r.set.get(name) }

// promptRegistry is the [ports.PromptRegistry] of [NewPromptRegistry].
type promptRegistry struct {
	registry[ports.RegisteredPrompt]
}

// Get finds a prompt by name.
func (r *promptRegistry) Get(name string) (ports.RegisteredPrompt, bool) { return r.set.get(name) }

// NewRegistry returns an empty [ports.ToolRegistry] kept in memory, safe
// for concurrent use. A duplicate name is an error wrapping
// domain.ErrDuplicateTool. List is answered from a sorted snapshot rebuilt
// only when the set of tools changes.
func NewRegistry() ports.ToolRegistry {
	return &toolRegistry{registry[ports.RegisteredTool]{
		defined: func(t ports.RegisteredTool) bool { return t.Tool != nil },
		key:     func(t ports.RegisteredTool) string { return t.Tool.Name },
		what:    "tool", dup: domain.ErrDuplicateTool,
		errNil: errors.New("hexmcp: memory registry: tool definition is nil"),
	}}
}

// NewPromptRegistry returns an empty [ports.PromptRegistry] kept in
// memory, safe for concurrent use. A duplicate name is an error wrapping
// domain.ErrDuplicatePrompt. List is answered from a sorted snapshot
// rebuilt only when the set changes.
func NewPromptRegistry() ports.PromptRegistry {
	return &promptRegistry{registry[ports.RegisteredPrompt]{
		defined: func(p ports.RegisteredPrompt) bool { return p.Prompt != nil },
		key:     func(p ports.RegisteredPrompt) string { return p.Prompt.Name },
		what:    "prompt", dup: domain.ErrDuplicatePrompt,
		errNil: errors.New("hexmcp: memory prompt registry: prompt definition is nil"),
	}}
}

var (
	_ ports.ToolRegistry   = (*toolRegistry)(nil)
	_ ports.PromptRegistry = (*promptRegistry)(nil)
)
