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

// ResourceHandler reads a resource. uri is the URI the client asked for;
// vars holds a template's variables (nil for a plain resource). A handler
// returns [domain.ErrResourceNotFound] (possibly wrapped) when the URI names
// nothing, a [domain.ProtocolError] for a specific JSON-RPC error, and any
// other error for an internal error. Contents without a URI get uri; without
// a MIME type, the declaration's.
type ResourceHandler func(ctx context.Context, uri string, vars map[string]string) ([]domain.ResourceContents, error)

// RegisteredResource is a resource with its handler, as the registry keeps
// it.
type RegisteredResource struct {
	Resource *domain.Resource
	Handler  ResourceHandler
}

// RegisteredResourceTemplate is a resource template with its handler, as
// the registry keeps it.
type RegisteredResourceTemplate struct {
	Template *domain.ResourceTemplate
	Handler  ResourceHandler
	// Completers suggest values for the template's variables, by variable
	// name (optional).
	Completers map[string]Completer
}

// ResourceRegistry stores the server's resources and resource templates.
// Implementations must be safe for concurrent use.
type ResourceRegistry interface {
	// Add stores r; a URI already present is an error wrapping
	// domain.ErrDuplicateResource.
	Add(r RegisteredResource) error
	// Remove deletes the resource of that URI and reports whether it was
	// there.
	Remove(uri string) bool
	// Get finds a resource by URI.
	Get(uri string) (RegisteredResource, bool)
	// List returns every resource, sorted by URI.
	List() []RegisteredResource
	// AddTemplate stores t; a URI template already present is an error
	// wrapping domain.ErrDuplicateResource.
	AddTemplate(t RegisteredResourceTemplate) error
	// RemoveTemplate deletes the template of that URI template and reports
	// whether it was there.
	RemoveTemplate(uriTemplate string) bool
	// ListTemplates returns every template, sorted by URI template.
	ListTemplates() []RegisteredResourceTemplate
	// Match finds the first template, in ListTemplates order, that uri
	// matches ([domain.ResourceTemplate.Match], which honours the
	// template's RawValues), with its variables.
	Match(uri string) (RegisteredResourceTemplate, map[string]string, bool)
}

// Completer suggests values for one prompt argument or resource template
// variable (completion/complete). value is what the user has typed so far;
// context holds the values already given for the other arguments or
// variables (nil when the client sent none). The engine sends at most 100
// values, with the total and hasMore when there are more.
type Completer func(ctx context.Context, value string, context map[string]string) ([]string, error)

// PromptHandler renders a prompt for prompts/get. args holds the arguments
// the client sent; every argument declared required is present. A
// [domain.ProtocolError] becomes that JSON-RPC error; any other error a
// generic internal error.
type PromptHandler func(ctx context.Context, args map[string]string) (*domain.GetPromptResult, error)

// RegisteredPrompt is a prompt with its handler and argument completers,
// as the registry keeps it.
type RegisteredPrompt struct {
	Prompt  *domain.Prompt
	Handler PromptHandler
	// Completers suggest values for arguments, by argument name (optional).
	Completers map[string]Completer
}

// PromptRegistry stores the server's prompts. Implementations must be safe
// for concurrent use.
type PromptRegistry interface {
	// Add stores p; a name already present is an error wrapping
	// domain.ErrDuplicatePrompt.
	Add(p RegisteredPrompt) error
	// Remove deletes the prompt of that name and reports whether it was
	// there.
	Remove(name string) bool
	// Get finds a prompt by name.
	Get(name string) (RegisteredPrompt, bool)
	// List returns every prompt, sorted by name.
	List() []RegisteredPrompt
}
