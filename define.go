package hexmcp

import (
	"context"
	"encoding/json"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// The definitions: tools, prompts, resources and their options. Each name
// here is the app package's (the protocol engine), so that a server needs
// one import; the app package documents them in full.

// Tool is a tool declared with [Func], [NewTool] or [NewRawTool].
type Tool = app.Tool

// Prompt is a prompt declared with [NewPrompt].
type Prompt = app.Prompt

// Resource is a resource or resource template declared with
// [NewResource], [NewResourceTemplate], [TextResource] or [BlobResource].
type Resource = app.Resource

// ToolOption sets one field of a tool's definition.
type ToolOption = app.ToolOption

// PromptOption sets one field of a prompt's definition.
type PromptOption = app.PromptOption

// ResourceOption sets one field of a resource's or template's definition.
type ResourceOption = app.ResourceOption

// Option sets a field every kind of definition has (title, description,
// icons, _meta): it is a ToolOption, a PromptOption and a ResourceOption.
type Option = app.Option

// AnnotationsOption sets the annotations of a tool or a resource.
type AnnotationsOption = app.AnnotationsOption

// RequestContext is what a handler knows of the request it serves: the
// revision, the session, the principal, progress and logging to the
// client, and the questions it may ask the client. See [RequestFrom].
type RequestContext = app.RequestContext

// Implementation names the server (Options.Info).
type Implementation = domain.Implementation

// ToolAnnotations are the behaviour hints of a tool ([WithAnnotations]).
type ToolAnnotations = domain.ToolAnnotations

// ToolError is an error a tool reports to the model: the call is answered
// with a result whose isError is true and whose text is the message. Any
// other error a handler returns is a server failure, answered with a
// generic JSON-RPC error and logged with its details.
type ToolError = domain.ToolError

// NewToolError returns a [ToolError] with the given message.
func NewToolError(message string) *ToolError { return domain.NewToolError(message) }

// Func declares a tool from a typed function: In's fields are the input
// schema, Out is the result (see [app.Func]).
func Func[In, Out any](fn func(ctx context.Context, in In) (Out, error), opts ...ToolOption) Tool {
	return app.Func(fn, opts...)
}

// NewTool declares a tool from any function or method value of the tool
// shape (see [app.NewTool]).
func NewTool(fn any, opts ...ToolOption) Tool { return app.NewTool(fn, opts...) }

// NewRawTool declares a tool with a JSON Schema of its own and a handler of
// the raw arguments (see [app.NewRawTool]).
func NewRawTool(name string, inputSchema json.RawMessage, h ports.ToolHandler, opts ...ToolOption) Tool {
	return app.NewRawTool(name, inputSchema, h, opts...)
}

// ToolsOf declares a tool for every exported method of v of the tool shape
// (see [app.ToolsOf]).
func ToolsOf(v any, opts ...app.DiscoverOption) ([]Tool, error) { return app.ToolsOf(v, opts...) }

// NewPrompt declares the prompt name, rendered by handler (see
// [app.NewPrompt]).
func NewPrompt(name string, handler ports.PromptHandler, opts ...PromptOption) Prompt {
	return app.NewPrompt(name, handler, opts...)
}

// NewResource declares the resource at uri, read by read (see
// [app.NewResource]).
func NewResource(uri, name string, read ports.ResourceHandler, opts ...ResourceOption) Resource {
	return app.NewResource(uri, name, read, opts...)
}

// NewResourceTemplate declares a resource template (see
// [app.NewResourceTemplate]).
func NewResourceTemplate(uriTemplate, name string, read ports.ResourceHandler, opts ...ResourceOption) Resource {
	return app.NewResourceTemplate(uriTemplate, name, read, opts...)
}

// TextResource declares a resource whose contents are the fixed text.
func TextResource(uri, name, text string, opts ...ResourceOption) Resource {
	return app.TextResource(uri, name, text, opts...)
}

// BlobResource declares a resource whose contents are the fixed bytes.
func BlobResource(uri, name string, data []byte, opts ...ResourceOption) Resource {
	return app.BlobResource(uri, name, data, opts...)
}

// WithName sets a tool's name.
func WithName(name string) ToolOption { return app.WithName(name) }

// WithTitle sets the human-readable title of a tool, prompt or resource.
func WithTitle(title string) Option { return app.WithTitle(title) }

// WithDescription sets the description of a tool, prompt or resource.
func WithDescription(d string) Option { return app.WithDescription(d) }

// WithIcons adds icons to a tool, prompt or resource.
func WithIcons(icons ...domain.Icon) Option { return app.WithIcons(icons...) }

// WithMeta sets members of the _meta of a tool, prompt or resource.
func WithMeta(meta map[string]any) Option { return app.WithMeta(meta) }

// WithAnnotations sets the annotations of a tool ([ToolAnnotations]) or a
// resource (domain.Annotations).
func WithAnnotations[A domain.ToolAnnotations | domain.Annotations](a A) AnnotationsOption {
	return app.WithAnnotations(a)
}

// WithInputSchema replaces a tool's inferred input schema.
func WithInputSchema(schema json.RawMessage) ToolOption { return app.WithInputSchema(schema) }

// WithOutputSchema declares the JSON Schema of a tool's structuredContent.
func WithOutputSchema(schema json.RawMessage) ToolOption { return app.WithOutputSchema(schema) }

// WithOutputSchemaFrom declares a tool's output schema inferred from the Go
// type of v.
func WithOutputSchemaFrom(v any) ToolOption { return app.WithOutputSchemaFrom(v) }

// WithoutOutputSchema stops a struct output type from declaring an output
// schema.
func WithoutOutputSchema() ToolOption { return app.WithoutOutputSchema() }

// WithArguments declares arguments of a prompt.
func WithArguments(args ...domain.PromptArgument) PromptOption { return app.WithArguments(args...) }

// WithArgument declares one argument of a prompt, with its completer.
func WithArgument(arg domain.PromptArgument, complete ports.Completer) PromptOption {
	return app.WithArgument(arg, complete)
}

// WithMimeType sets the MIME type of a resource or template.
func WithMimeType(mime string) ResourceOption { return app.WithMimeType(mime) }

// WithSize sets the size of a resource's raw contents in bytes.
func WithSize(n int64) ResourceOption { return app.WithSize(n) }

// WithTemplateCompleter sets the completer of a template variable.
func WithTemplateCompleter(name string, complete ports.Completer) ResourceOption {
	return app.WithTemplateCompleter(name, complete)
}

// WithRawTemplateValues hands a template's variables to its handler as they
// appear in the URI, neither decoded nor checked.
func WithRawTemplateValues() ResourceOption { return app.WithRawTemplateValues() }

// RequestFrom returns the request context in a handler's ctx, or nil
// outside a request.
func RequestFrom(ctx context.Context) *RequestContext { return app.RequestFrom(ctx) }
