package ports

import (
	"context"
	"encoding/json"

	"github.com/hexmcp/hexmcp/domain"
)

// ToolHandler runs a tool. arguments is the JSON object the client sent,
// already checked against the tool's input schema. The returned value is
// turned into a result by the revision policy ([domain.RevisionPolicy.WrapValue]);
// a [domain.ToolError] becomes an isError result; any other error a generic
// JSON-RPC internal error. The request context is in ctx (see app.RequestFrom).
type ToolHandler func(ctx context.Context, arguments json.RawMessage) (any, error)

// RegisteredTool is a tool with its handler and compiled schemas, as the
// registry keeps it.
type RegisteredTool struct {
	Tool    *domain.Tool
	Handler ToolHandler
	// Input validates arguments; nil means no validation.
	Input Schema
	// Output validates structuredContent; nil means no validation.
	Output Schema
}

// ToolRegistry stores the server's tools. Implementations must be safe for
// concurrent use.
type ToolRegistry interface {
	// Add stores t; a name already present is an error wrapping
	// domain.ErrDuplicateTool.
	Add(t RegisteredTool) error
	// Remove deletes the tool of that name and reports whether it was there.
	Remove(name string) bool
	// Get finds a tool by name.
	Get(name string) (RegisteredTool, bool)
	// List returns every tool, sorted by name, so that the order is the same
	// for every client and connection.
	List() []RegisteredTool
}

// ToolRegistryWatcher is implemented by registries whose contents can change
// from outside the engine (for example a registry shared between processes).
// The engine subscribes to send notifications/tools/list_changed.
type ToolRegistryWatcher interface {
	// Watch calls fn after each change until stop is called.
	Watch(fn func()) (stop func())
}
