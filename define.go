package hexmcp

import (
	"context"
	"encoding/json"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/ports"
)

// The definitions: tools, prompts, resources and their options. These are
// their only public names: the engine (package app) takes them as they are
// (Engine.AddTool, app.Options.Tools, …), and so do the extensions.

// Tool is a tool declared with [Func], [NewTool], [NewRawTool] or
// [ToolsOf], for Options.Tools or [Server.AddTool]. Its Definition method
// returns what clients are sent ([ToolDefinition]); Err the declaration's
// error, if any (New and AddTool return it too).
type Tool = decl.Tool

// Prompt is a prompt declared with [NewPrompt], for Options.Prompts or
// [Server.AddPrompt]. Its Definition method returns what clients are sent
// ([PromptDefinition]).
type Prompt = decl.Prompt

// Resource is a resource or resource template declared with
// [NewResource], [NewResourceTemplate], [TextResource] or [BlobResource],
// for Options.Resources or [Server.AddResource]. Its methods: Definition
// (of a resource), TemplateDefinition (of a template), IsTemplate, Err.
type Resource = decl.Resource

// ToolOption sets one field of a tool's definition: [WithName],
// [WithInputSchema], [WithOutputSchema], [WithAccessToken], and every
// [Option].
type ToolOption = decl.ToolOption

// PromptOption sets one field of a prompt's definition: [WithArguments],
// [WithArgument], and every [Option].
type PromptOption = decl.PromptOption

// ResourceOption sets one field of a resource's or template's definition:
// [WithMimeType], [WithSize], [WithTemplateCompleter],
// [WithRawTemplateValues], and every [Option].
type ResourceOption = decl.ResourceOption

// Option sets a field every kind of definition has (title, description,
// icons, _meta, scopes): it is a ToolOption, a PromptOption and a
// ResourceOption. [WithTitle], [WithDescription], [WithIcons], [WithMeta],
// [WithScopes] make one.
type Option = decl.Option

// AnnotationsOption sets the annotations of a tool ([ToolAnnotations]) or
// a resource ([Annotations]); [WithAnnotations] makes one.
type AnnotationsOption = decl.AnnotationsOption

// DiscoverOption changes how [ToolsOf] finds tools: [WithNamePrefix],
// [StrictDiscovery].
type DiscoverOption = decl.DiscoverOption

// RawToolHandler runs a tool declared with [NewRawTool]: arguments is the
// JSON object the client sent, already checked against the tool's input
// schema; the value returned becomes the result as for [NewTool], a
// [ToolError] an isError result.
type RawToolHandler = ports.ToolHandler

// PromptHandler renders a prompt for prompts/get ([NewPrompt]): args holds
// the arguments the client sent, every required one present. A
// [ProtocolError] becomes that JSON-RPC error; any other error a generic
// internal error.
type PromptHandler = ports.PromptHandler

// ResourceHandler reads a resource ([NewResource], [NewResourceTemplate]):
// uri is the URI the client asked for, vars a template's variables (nil for
// a plain resource). It returns [ErrResourceNotFound] (possibly wrapped)
// when the URI names nothing. Contents without a URI get uri; without a
// MIME type, the declaration's.
type ResourceHandler = ports.ResourceHandler

// Completer suggests values for a prompt argument ([WithArgument]) or a
// template variable ([WithTemplateCompleter]) for completion/complete:
// value is what the user has typed so far, context the values already given
// for the others.
type Completer = ports.Completer

// Func declares a tool from a typed function. In must be a struct (or a
// pointer to one, or a map with string keys): its fields are the input
// schema, from their json tags and the tags description, enum, default,
// minimum, maximum, pattern and their kin (see domain.InferInputSchema).
// The function may read its request with [RequestFrom]. Out becomes the
// result: a string, number or bool one text block; a map, struct or slice
// its JSON, and structuredContent where the revision allows; a content
// value ([Text], [Image], …) that block; a [*CallToolResult] as it is. When
// Out is a struct its schema is declared as outputSchema unless
// [WithoutOutputSchema]. Without [WithName] the name is the function's Go
// name as [NewTool] derives it.
func Func[In, Out any](fn func(ctx context.Context, in In) (Out, error), opts ...ToolOption) Tool {
	return decl.Func(fn, opts...)
}

// NewTool declares a tool from any function or method value of the form
//
//	func([ctx context.Context,] [rc *hexmcp.RequestContext,] [in In]) ([Out,] [error])
//
// where each bracketed part is optional and In and Out are as for [Func]. A
// function that returns only an error (or nothing) is "void": its result is
// the text "(null)". Without [WithName] the name is the Go name of the
// function or method, its leading capital run made lower case the way Go
// initialisms read: GetWeather → getWeather, URLFetch → urlFetch. Closures
// have no usable name and need WithName. A bad declaration is the error of
// [New] or [Server.AddTool], never a panic.
func NewTool(fn any, opts ...ToolOption) Tool { return decl.NewTool(fn, opts...) }

// NewRawTool declares a tool built at run time: a JSON Schema of its own
// (the input schema, which the arguments are checked against) and a
// handler of the raw arguments.
func NewRawTool(name string, inputSchema json.RawMessage, h RawToolHandler, opts ...ToolOption) Tool {
	return decl.NewRawTool(name, inputSchema, h, opts...)
}

// ToolsOf declares a tool for every exported method of v of the [NewTool]
// shape with an input struct, in method-name order, named as NewTool names
// them (with [WithNamePrefix] in front). Methods of another shape are
// skipped, or errors with [StrictDiscovery]. Reflection sees no comments:
// the tools have no description (the mcpgen generator takes them from doc
// comments).
func ToolsOf(v any, opts ...DiscoverOption) ([]Tool, error) { return decl.ToolsOf(v, opts...) }

// WithNamePrefix puts prefix in front of every name [ToolsOf] derives:
// WithNamePrefix("calc.") turns the method Add into the tool "calc.add".
func WithNamePrefix(prefix string) DiscoverOption { return decl.WithNamePrefix(prefix) }

// StrictDiscovery makes [ToolsOf] fail on every exported method that does
// not have the tool shape, instead of skipping it.
func StrictDiscovery() DiscoverOption { return decl.StrictDiscovery() }

// NewPrompt declares the prompt name, rendered by handler. Its arguments
// are declared with [WithArguments] or [WithArgument].
func NewPrompt(name string, handler PromptHandler, opts ...PromptOption) Prompt {
	return decl.NewPrompt(name, handler, opts...)
}

// NewResource declares the resource at uri, named name, read by read.
func NewResource(uri, name string, read ResourceHandler, opts ...ResourceOption) Resource {
	return decl.NewResource(uri, name, read, opts...)
}

// NewResourceTemplate declares a resource template (RFC 6570 level 1,
// "files:///{path}"): read gets the URI asked for and the template's
// variables, decoded and checked unless [WithRawTemplateValues].
func NewResourceTemplate(uriTemplate, name string, read ResourceHandler, opts ...ResourceOption) Resource {
	return decl.NewResourceTemplate(uriTemplate, name, read, opts...)
}

// TextResource declares a resource whose contents are the fixed text
// (MIME type text/plain unless [WithMimeType]).
func TextResource(uri, name, text string, opts ...ResourceOption) Resource {
	return decl.TextResource(uri, name, text, opts...)
}

// BlobResource declares a resource whose contents are the fixed bytes.
func BlobResource(uri, name string, data []byte, opts ...ResourceOption) Resource {
	return decl.BlobResource(uri, name, data, opts...)
}

// WithName sets a tool's name: 1 to 128 characters of A-Za-z0-9_.-.
func WithName(name string) ToolOption { return decl.WithName(name) }

// WithTitle sets the human-readable title of a tool, prompt or resource.
func WithTitle(title string) Option { return decl.WithTitle(title) }

// WithDescription sets the description of a tool, prompt or resource.
func WithDescription(d string) Option { return decl.WithDescription(d) }

// WithIcons adds icons to a tool, prompt or resource.
func WithIcons(icons ...Icon) Option { return decl.WithIcons(icons...) }

// WithMeta sets members of the _meta of a tool, prompt or resource.
func WithMeta(meta map[string]any) Option { return decl.WithMeta(meta) }

// WithScopes names the OAuth scopes a caller must hold, all of them, to
// call the tool, get the prompt or read (and follow) the resource: the
// server checks the authenticated principal's scopes on every transport
// and refuses a caller without them with [CodeInsufficientScope] (over
// Streamable HTTP a 403 whose challenge names the scopes, so that the
// client can ask for them). A request with no principal is refused too.
// [HideUnauthorized] also hides the definition from callers who lack them.
func WithScopes(scopes ...string) Option { return decl.WithScopes(scopes...) }

// WithAnnotations sets the annotations of a tool ([ToolAnnotations]) or a
// resource ([Annotations]).
func WithAnnotations[A ToolAnnotations | Annotations](a A) AnnotationsOption {
	return decl.WithAnnotations(a)
}

// WithInputSchema replaces a tool's inferred input schema.
func WithInputSchema(schema json.RawMessage) ToolOption { return decl.WithInputSchema(schema) }

// WithOutputSchema declares the JSON Schema of a tool's structuredContent.
func WithOutputSchema(schema json.RawMessage) ToolOption { return decl.WithOutputSchema(schema) }

// WithOutputSchemaFrom declares a tool's output schema inferred from the Go
// type of v.
func WithOutputSchemaFrom(v any) ToolOption { return decl.WithOutputSchemaFrom(v) }

// WithoutOutputSchema stops a struct output type from declaring an output
// schema.
func WithoutOutputSchema() ToolOption { return decl.WithoutOutputSchema() }

// WithAccessToken lets the tool's handler read the caller's raw bearer
// token ([RequestContext.AccessToken]), for a tool that must call another
// service on the user's behalf with it. Without it a handler sees the
// authenticated principal only, never the token: the MCP authorization
// spec forbids passing a token issued for this server on to others.
func WithAccessToken() ToolOption { return decl.WithAccessToken() }

// WithArguments declares arguments of a prompt.
func WithArguments(args ...PromptArgument) PromptOption { return decl.WithArguments(args...) }

// WithArgument declares one argument of a prompt, with its completer.
func WithArgument(arg PromptArgument, complete Completer) PromptOption {
	return decl.WithArgument(arg, complete)
}

// WithMimeType sets the MIME type of a resource or template.
func WithMimeType(mime string) ResourceOption { return decl.WithMimeType(mime) }

// WithSize sets the size of a resource's raw contents in bytes.
func WithSize(n int64) ResourceOption { return decl.WithSize(n) }

// WithTemplateCompleter sets the completer of a template variable.
func WithTemplateCompleter(name string, complete Completer) ResourceOption {
	return decl.WithTemplateCompleter(name, complete)
}

// WithRawTemplateValues hands a template's variables to its handler as they
// appear in the URI, neither decoded nor checked.
func WithRawTemplateValues() ResourceOption { return decl.WithRawTemplateValues() }

// ToolDefinition is a tool as clients are sent it (name, title,
// description, schemas, annotations, icons, scopes): what
// [Tool].Definition returns and what a [Visibility] tool filter is given.
type ToolDefinition = domain.Tool

// PromptDefinition is a prompt as clients are sent it (name, title,
// description, arguments): what [Prompt].Definition returns and what a
// [Visibility] prompt filter is given.
type PromptDefinition = domain.Prompt

// ToolAnnotations are the behaviour hints of a tool ([WithAnnotations]):
// Title, ReadOnlyHint, DestructiveHint, IdempotentHint, OpenWorldHint, each
// hint a *bool ([Bool]) so that an unset one is left out.
type ToolAnnotations = domain.ToolAnnotations

// Annotations are the annotations of a resource ([WithAnnotations]) or of
// a content block: Audience, Priority, LastModified.
type Annotations = domain.Annotations

// Bool returns a pointer to b, for the hints of [ToolAnnotations]:
// ToolAnnotations{ReadOnlyHint: hexmcp.Bool(true)}.
func Bool(b bool) *bool { return &b }

// Icon is an icon of a server, tool, prompt or resource ([WithIcons]): Src
// (https, http or a data: URI), MimeType, Sizes ("48x48", "any"), Theme
// ("light", "dark").
type Icon = domain.Icon

// PromptArgument declares an argument of a prompt ([WithArguments]): Name,
// Title, Description, Required.
type PromptArgument = domain.PromptArgument

// Implementation names the server (Options.Info) or a client
// ([RequestContext.Client]): Name, Version, Title, and icons, a
// description and a website URL.
type Implementation = domain.Implementation
