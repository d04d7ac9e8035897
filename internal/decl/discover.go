package decl

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/hexmcp/hexmcp/domain"
)

// DiscoverOption changes how [ToolsOf] finds tools.
type DiscoverOption func(*discoverConfig)

type discoverConfig struct {
	strict bool
	prefix string
}

// StrictDiscovery makes [ToolsOf] fail on every exported method that does
// not have the tool shape, instead of skipping it. Use it on types that exist
// only to hold tools, so that a method whose signature drifted is reported
// rather than silently left out.
func StrictDiscovery() DiscoverOption {
	return func(c *discoverConfig) { c.strict = true }
}

// WithNamePrefix puts prefix in front of every name [ToolsOf] derives:
// WithNamePrefix("calc.") turns the method Add into the tool "calc.add". The
// prefix is not changed by the case rule; the whole name must still be a
// valid tool name.
func WithNamePrefix(prefix string) DiscoverOption {
	return func(c *discoverConfig) { c.prefix = prefix }
}

// ToolsOf declares a tool for every exported method of v whose signature is
//
//	func([ctx context.Context,] [rc *hexmcp.RequestContext,] in In) ([Out,] [error])
//
// where In is a struct or a pointer to a struct, as for [Func]: its fields
// and their tags are the input schema. The method set is that of v's dynamic
// type, so methods with a pointer receiver are found only when v is a
// pointer. Each tool is built as [NewTool] builds it, with:
//
//   - name: the method name with its leading run of capitals made lower case
//     the way Go initialisms read, exactly as NewTool derives names:
//     Add → add, GetWeather → getWeather, URLFetch → urlFetch, ID → id;
//     [WithNamePrefix] goes in front;
//   - no description, no title, no annotations: reflection sees neither
//     comments nor parameter names, and the SDK never makes a description
//     up. Use the mcpgen generator (cmd/mcpgen) to take them from doc
//     comments, or build the tools with [NewTool] and options.
//
// The tools come in method-name order. Exported methods of any other shape
// (no input struct, more than one input, a non-struct input, variadic, or
// results other than ([Out,] [error])) are skipped, unless [StrictDiscovery]
// is given, which makes each of them an error. A method of the tool shape
// whose tool cannot be declared (its input type has no JSON Schema, or its
// name is not a valid tool name), two methods that give the same name, a nil
// v and a v with no method of the tool shape are errors in every mode. On
// error ToolsOf returns no tools and every problem joined in one error.
func ToolsOf(v any, opts ...DiscoverOption) ([]Tool, error) {
	var c discoverConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	rv := reflect.ValueOf(v)
	if v == nil || (rv.Kind() == reflect.Pointer && rv.IsNil()) {
		return nil, &domain.DefinitionError{Kind: "tool", Reason: fmt.Sprintf("ToolsOf needs a value with methods, got %T(nil)", v)}
	}
	rt := rv.Type()
	var (
		tools []Tool
		errs  []error
		seen  = map[string]string{}
	)
	for i := 0; i < rt.NumMethod(); i++ {
		m := rt.Method(i)
		mv := rv.Method(i)
		name := c.prefix + ToolNameFromGo(m.Name)
		if reason := toolShape(mv.Type()); reason != "" {
			if c.strict {
				errs = append(errs, &domain.DefinitionError{Kind: "tool", Reason: fmt.Sprintf("method %s %s (StrictDiscovery accepts only methods of the tool shape)", methodString(rt, m.Name), reason)})
			}
			continue
		}
		if err := domain.ValidateToolName(name); err != nil {
			errs = append(errs, &domain.DefinitionError{Kind: "tool", Name: name, Reason: fmt.Sprintf("method %s: %v", methodString(rt, m.Name), err), Err: err})
			continue
		}
		if other, dup := seen[name]; dup {
			errs = append(errs, &domain.DefinitionError{Kind: "tool", Name: name, Reason: fmt.Sprintf("methods %s and %s of %s give the same name", other, m.Name, rt)})
			continue
		}
		seen[name] = m.Name
		t := NewTool(mv.Interface(), WithName(name))
		if err := t.Err(); err != nil {
			errs = append(errs, err)
			continue
		}
		tools = append(tools, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(tools) == 0 {
		hint := ""
		if rt.Kind() != reflect.Pointer {
			pt := reflect.PointerTo(rt)
			for i := 0; i < pt.NumMethod(); i++ {
				if toolShape(methodFunc(pt.Method(i).Type)) == "" {
					hint = fmt.Sprintf(" (%s has some: methods with a pointer receiver need a pointer, pass &v)", pt)
					break
				}
			}
		}
		return nil, &domain.DefinitionError{Kind: "tool", Reason: fmt.Sprintf("no exported method of %s has the tool shape func([context.Context,] [*hexmcp.RequestContext,] In) ([Out,] [error]) with In a struct%s", rt, hint)}
	}
	return tools, nil
}

// methodString names a method as a Go method expression: (*pkg.T).M or pkg.T.M.
func methodString(rt reflect.Type, name string) string {
	if rt.Kind() == reflect.Pointer {
		return "(" + rt.String() + ")." + name
	}
	return rt.String() + "." + name
}

// methodFunc returns the type of a method expression without its receiver.
func methodFunc(t reflect.Type) reflect.Type {
	in := make([]reflect.Type, 0, t.NumIn())
	for i := 1; i < t.NumIn(); i++ {
		in = append(in, t.In(i))
	}
	out := make([]reflect.Type, 0, t.NumOut())
	for i := 0; i < t.NumOut(); i++ {
		out = append(out, t.Out(i))
	}
	return reflect.FuncOf(in, out, t.IsVariadic())
}

// toolShape returns why a method of type ft (receiver bound) is not a tool
// for ToolsOf, or "" when it is.
func toolShape(ft reflect.Type) string {
	if ft.IsVariadic() {
		return "is variadic"
	}
	i := 0
	if i < ft.NumIn() && ft.In(i) == ctxType {
		i++
	}
	if i < ft.NumIn() && ft.In(i) == rcType {
		i++
	}
	if i == ft.NumIn() {
		return "takes no input struct"
	}
	if derefType(ft.In(i)).Kind() != reflect.Struct {
		return fmt.Sprintf("takes %s, not an input struct", ft.In(i))
	}
	if i+1 != ft.NumIn() {
		return "takes more than ([context.Context,] [*hexmcp.RequestContext,] In)"
	}
	switch ft.NumOut() {
	case 0, 1:
	case 2:
		if ft.Out(1) != errorType {
			return "has a second result that is not an error"
		}
		if ft.Out(0) == errorType {
			return "returns (error, error)"
		}
	default:
		return "has more than two results"
	}
	return ""
}
