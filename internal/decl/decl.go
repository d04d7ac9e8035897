// Package decl holds the declarations a server's author writes: tools
// ([Func], [NewTool], [NewRawTool], [ToolsOf]), prompts ([NewPrompt]),
// resources ([NewResource], [NewResourceTemplate], [TextResource],
// [BlobResource]) and their options. Their one public name is the root
// package's (hexmcp.Func, hexmcp.Tool, …), which aliases these; the
// engine (package app) takes them apart with [ToolOf], [PromptOf] and
// [ResourceOf].
package decl

import (
	"context"
	"reflect"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// The engine's request context, which a function declared with NewTool or
// ToolsOf may take as a parameter (*app.RequestContext). Package app sets
// it when it loads ([SetRequestContext]): it imports this package, so this
// package cannot name the type.
var (
	rcType      reflect.Type
	requestFrom func(context.Context) reflect.Value
)

// SetRequestContext tells NewTool and ToolsOf the type of the engine's
// request context and how a handler finds it in its context. Package app
// calls it once, when it loads.
func SetRequestContext[T any](from func(context.Context) T) {
	rcType = reflect.TypeFor[T]()
	requestFrom = func(ctx context.Context) reflect.Value { return reflect.ValueOf(from(ctx)) }
}

// ToolOf returns what t declares: its definition, its handler and the
// declaration's error, if any.
func ToolOf(t Tool) (domain.Tool, ports.ToolHandler, error) { return t.def, t.handler, t.err }

// PromptOf returns what p declares: its definition (nil for a zero
// Prompt), the handler that renders it and its argument completers.
func PromptOf(p Prompt) (*domain.Prompt, ports.PromptHandler, map[string]ports.Completer) {
	return p.def, p.handler, p.completers
}

// ResourceOf returns what r declares: the resource's definition or the
// template's (one of them nil; both for a zero Resource), the handler that
// reads it, a template's variable completers and the declaration's error,
// if any.
func ResourceOf(r Resource) (*domain.Resource, *domain.ResourceTemplate, ports.ResourceHandler, map[string]ports.Completer, error) {
	return r.res, r.tmpl, r.handler, r.completers, r.err
}
