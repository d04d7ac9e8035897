package decl

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"unicode"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// Tool is a declared tool, ready for the engine's AddTool: its definition
// and handler. Build one with [NewTool], [Func] or [NewRawTool]. A mistake in the
// declaration (a bad name, a function of the wrong shape, a struct tag that
// does not parse) is kept in the Tool and returned by AddTool; Err reports
// it earlier.
type Tool struct {
	def     domain.Tool
	handler ports.ToolHandler
	err     error
}

// Definition returns the tool's definition as it will be listed.
func (t Tool) Definition() domain.Tool { return t.def }

// Err returns the declaration error, if any.
func (t Tool) Err() error { return t.err }

type toolConfig struct {
	def            domain.Tool
	common         commonConfig
	name           bool
	inputSchema    bool
	outputSchema   bool
	noOutputSchema bool
	err            error
}

func (c *toolConfig) setErr(reason string) {
	if c.err == nil {
		c.err = &domain.DefinitionError{Kind: "tool", Name: c.def.Name, Reason: reason}
	}
}

// WithName sets the tool's name (1–128 characters of A-Z a-z 0-9 _ - .).
// An explicit name always wins over the one derived from the function.
func WithName(name string) ToolOption {
	return toolOption(func(c *toolConfig) { c.def.Name, c.name = name, true })
}

// WithAccessToken lets the tool's handler read the caller's raw bearer
// token (hexmcp.RequestContext.AccessToken), for a tool that must call another
// service on the user's behalf with it. Without it a handler sees the
// authenticated principal only (TransportInfo.Principal), never the token:
// the MCP authorization spec forbids passing a token issued for this
// server on to others, so ask for it only where the token is meant for
// that (or exchange it).
func WithAccessToken() ToolOption {
	return toolOption(func(c *toolConfig) { c.def.PassAccessToken = true })
}

// WithInputSchema replaces the input schema inferred from the input type.
// Its root must be {"type":"object",...}.
func WithInputSchema(schema json.RawMessage) ToolOption {
	return toolOption(func(c *toolConfig) { c.def.InputSchema, c.inputSchema = schema, true })
}

// WithOutputSchema declares the JSON Schema of structuredContent. Results
// are validated against it; a mismatch is logged as a bug in the tool and
// the client gets a generic internal error.
func WithOutputSchema(schema json.RawMessage) ToolOption {
	return toolOption(func(c *toolConfig) { c.def.OutputSchema, c.outputSchema = schema, true })
}

// WithOutputSchemaFrom declares the output schema inferred from the Go type
// of v (see [domain.InferSchema]); use it for outputs that are not structs,
// such as slices or numbers, whose structured form exists only from
// 2026-07-28 on.
func WithOutputSchemaFrom(v any) ToolOption {
	return toolOption(func(c *toolConfig) {
		s, err := domain.InferSchema(reflect.TypeOf(v))
		if err != nil {
			c.err = err
			return
		}
		c.def.OutputSchema, c.outputSchema = s, true
	})
}

// WithoutOutputSchema stops a struct output type from declaring an output
// schema (and so from being validated).
func WithoutOutputSchema() ToolOption {
	return toolOption(func(c *toolConfig) { c.def.OutputSchema, c.noOutputSchema = nil, true })
}

func applyOptions(opts []ToolOption) *toolConfig {
	c := &toolConfig{}
	for _, o := range opts {
		if o != nil {
			o.applyTool(c)
		}
	}
	c.def.Title, c.def.Description = c.common.title, c.common.description
	c.def.Icons, c.def.Meta, c.def.Scopes = c.common.icons, c.common.meta, c.common.scopes
	return c
}

// NewRawTool declares a tool with a JSON Schema of its own and a handler
// that receives the raw arguments (already validated against the schema),
// for tools built at run time.
func NewRawTool(name string, inputSchema json.RawMessage, h ports.ToolHandler, opts ...ToolOption) Tool {
	c := applyOptions(append([]ToolOption{WithName(name), WithInputSchema(inputSchema)}, opts...))
	return Tool{def: c.def, handler: h, err: c.err}
}

// Func declares a tool from a typed function. In must be a struct (or a
// pointer to one, or a map with string keys): its fields become the input
// schema (see [domain.InferInputSchema] for the struct tags). The function
// may read the request with hexmcp.RequestFrom(ctx). Its result is turned into
// content as [domain.RevisionPolicy.WrapValue] describes; when Out is a
// struct its schema is declared as outputSchema unless [WithoutOutputSchema]
// is given. Without [WithName], the name is derived from the function's Go
// name as [NewTool] describes.
func Func[In, Out any](fn func(ctx context.Context, in In) (Out, error), opts ...ToolOption) Tool {
	if fn == nil {
		return Tool{err: &domain.DefinitionError{Kind: "tool", Reason: "nil function"}}
	}
	inT, outT := reflect.TypeFor[In](), reflect.TypeFor[Out]()
	c := applyOptions(opts)
	if err := c.complete(fn, inT, outT); err != nil {
		return Tool{def: c.def, err: err}
	}
	decode := newDecoder[In](inT)
	h := func(ctx context.Context, args json.RawMessage) (any, error) {
		in, err := decode(args)
		if err != nil {
			return nil, err
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return any(out), nil
	}
	return Tool{def: c.def, handler: h}
}

// newDecoder returns the function that decodes arguments into an In. It
// uses strict JSON decoding: member names match case-sensitively and
// duplicate names are rejected.
func newDecoder[In any](t reflect.Type) func(json.RawMessage) (In, error) {
	safe := oneCopySafe(t)
	return func(args json.RawMessage) (In, error) {
		var in In
		if t.Kind() == reflect.Pointer {
			v := reflect.New(t.Elem())
			if err := decodeArguments(args, v.Interface(), safe); err != nil {
				return in, err
			}
			return v.Interface().(In), nil
		}
		if err := decodeArguments(args, &in, safe); err != nil {
			return in, err
		}
		return in, nil
	}
}

// decodeArguments decodes args into v (a pointer). Large arguments of a
// type that oneCopySafe accepts are decoded with oneCopyStrings.
func decodeArguments(args json.RawMessage, v any, oneCopy bool) error {
	var err error
	if oneCopy && len(args) >= largeArguments {
		err = jsonv2.Unmarshal(args, v, oneCopyStrings)
	} else {
		err = jsonv2.Unmarshal(args, v)
	}
	if err != nil {
		return &ArgumentsError{Err: err}
	}
	return nil
}

// largeArguments is the size of arguments from which their strings are
// decoded by oneCopyStrings.
const largeArguments = 64 << 10

// oneCopyStrings decodes a JSON string into a Go string as the default
// decoder does, but in one allocation: the default unescapes a string that
// has escapes into a buffer and then copies the buffer into the string, so
// that a 1 MiB text argument costs 2 MiB. Anything but a string (null, a
// number, ...) is left to the default (errors.ErrUnsupported), with its
// errors.
var oneCopyStrings = jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, s *string) error {
	if dec.PeekKind() != '"' {
		return errors.ErrUnsupported
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		*s = string(inner)
		return nil
	}
	b, err := jsontext.AppendUnquote(make([]byte, 0, len(v)), v) // room for the quotes too, as it asks
	if err != nil {
		return err
	}
	// b is new and never written again: it may back the string.
	*s = unsafe.String(unsafe.SliceData(b), len(b))
	return nil
}))

// oneCopySafe reports whether oneCopyStrings decodes values of type t as
// the default does: no string field of t, at any depth, has the string or
// format option, with which the default reports an error (or formats) that
// oneCopyStrings would not. Other types of strings (named types, strings
// inside an any) are decoded by the default anyway.
func oneCopySafe(t reflect.Type) bool {
	return stringTagsSafe(t, map[reflect.Type]bool{})
}

func stringTagsSafe(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return stringTagsSafe(t.Elem(), seen)
	case reflect.Map:
		return stringTagsSafe(t.Key(), seen) && stringTagsSafe(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if tag, ok := f.Tag.Lookup("json"); ok {
				_, opts, _ := strings.Cut(tag, ",")
				for opt := range strings.SplitSeq(opts, ",") {
					if opt == "string" || strings.HasPrefix(opt, "format:") {
						return false
					}
				}
			}
			if !stringTagsSafe(f.Type, seen) {
				return false
			}
		}
	}
	return true
}

// ArgumentsError reports arguments that cannot be decoded into the tool's
// input type. It is answered like a failed input-schema check.
type ArgumentsError struct{ Err error }

// Error describes the problem without Go type names.
func (e *ArgumentsError) Error() string { return DescribeDecodeError(e.Err) }

// Unwrap returns the decoding error.
func (e *ArgumentsError) Unwrap() error { return e.Err }

var (
	ctxType      = reflect.TypeFor[context.Context]()
	errorType    = reflect.TypeFor[error]()
	marshalerT   = reflect.TypeFor[json.Marshaler]()
	textMarshalT = reflect.TypeFor[encoding.TextMarshaler]()
	contentT     = reflect.TypeFor[domain.Content]()
	resultT      = reflect.TypeFor[domain.CallToolResult]()
)

// NewTool declares a tool from any function or method value of the form
//
//	func([ctx context.Context,] [rc *hexmcp.RequestContext,] [in In]) ([Out,] [error])
//
// where each bracketed part is optional and In is as for [Func]. A function
// that returns only an error (or nothing) is "void": its result is the text
// "(null)".
//
// Without [WithName] the name is the Go name of the function or method,
// without package or receiver, with its leading capital run made lower case
// the way Go initialisms read: GetWeather → getWeather, URLFetch → urlFetch,
// ID → id, listUsers → listUsers. Closures and function literals have no
// usable name and need WithName.
func NewTool(fn any, opts ...ToolOption) Tool {
	c := applyOptions(opts)
	fv := reflect.ValueOf(fn)
	if fn == nil || fv.Kind() != reflect.Func || fv.IsNil() {
		return Tool{def: c.def, err: &domain.DefinitionError{Kind: "tool", Name: c.def.Name, Reason: fmt.Sprintf("NewTool needs a function, got %T", fn)}}
	}
	ft := fv.Type()
	if ft.IsVariadic() {
		return Tool{def: c.def, err: &domain.DefinitionError{Kind: "tool", Name: c.def.Name, Reason: "variadic functions are not supported"}}
	}
	// parameters
	i, hasCtx, hasRC := 0, false, false
	if i < ft.NumIn() && ft.In(i) == ctxType {
		hasCtx = true
		i++
	}
	if i < ft.NumIn() && ft.In(i) == rcType {
		hasRC = true
		i++
	}
	var inT reflect.Type
	if i < ft.NumIn() {
		inT = ft.In(i)
		i++
	}
	if i != ft.NumIn() {
		return Tool{def: c.def, err: &domain.DefinitionError{Kind: "tool", Name: c.def.Name, Reason: "parameters must be ([context.Context,] [*hexmcp.RequestContext,] [input])"}}
	}
	// results
	var outT reflect.Type
	hasErr := false
	switch ft.NumOut() {
	case 0:
	case 1:
		if ft.Out(0) == errorType {
			hasErr = true
		} else {
			outT = ft.Out(0)
		}
	case 2:
		if ft.Out(1) != errorType {
			return Tool{def: c.def, err: &domain.DefinitionError{Kind: "tool", Name: c.def.Name, Reason: "the second result must be an error"}}
		}
		outT, hasErr = ft.Out(0), true
	default:
		return Tool{def: c.def, err: &domain.DefinitionError{Kind: "tool", Name: c.def.Name, Reason: "results must be ([output,] [error])"}}
	}
	if err := c.complete(fn, inT, outT); err != nil {
		return Tool{def: c.def, err: err}
	}
	oneCopy := inT != nil && oneCopySafe(inT)
	h := func(ctx context.Context, args json.RawMessage) (any, error) {
		in := make([]reflect.Value, 0, 3)
		if hasCtx {
			in = append(in, reflect.ValueOf(ctx))
		}
		if hasRC {
			in = append(in, requestFrom(ctx))
		}
		if inT != nil {
			pv := reflect.New(derefType(inT))
			if err := decodeArguments(args, pv.Interface(), oneCopy); err != nil {
				return nil, err
			}
			if inT.Kind() == reflect.Pointer {
				in = append(in, pv)
			} else {
				in = append(in, pv.Elem())
			}
		}
		out := fv.Call(in)
		var value any
		if outT != nil {
			value = out[0].Interface()
		}
		if hasErr {
			if e := out[len(out)-1]; !e.IsNil() {
				return nil, e.Interface().(error)
			}
		}
		return value, nil
	}
	return Tool{def: c.def, handler: h}
}

func derefType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// complete fills the name and schemas a declaration left out.
func (c *toolConfig) complete(fn any, inT, outT reflect.Type) error {
	if c.err != nil {
		return &domain.DefinitionError{Kind: "tool", Name: c.def.Name, Reason: c.err.Error(), Err: c.err}
	}
	if !c.name {
		name, err := nameFromFunc(fn)
		if err != nil {
			return err
		}
		c.def.Name = name
	}
	if !c.inputSchema {
		if inT == nil {
			c.def.InputSchema = json.RawMessage(`{"type":"object","properties":{}}`)
		} else {
			s, err := domain.InferInputSchema(inT)
			if err != nil {
				return &domain.DefinitionError{Kind: "tool", Name: c.def.Name, Reason: "input type: " + err.Error(), Err: err}
			}
			c.def.InputSchema = s
		}
	}
	if !c.outputSchema && !c.noOutputSchema && outT != nil && isPlainStruct(outT) {
		s, err := domain.InferSchema(outT)
		if err != nil {
			return &domain.DefinitionError{Kind: "tool", Name: c.def.Name, Reason: "output type: " + err.Error(), Err: err}
		}
		c.def.OutputSchema = s
	}
	return nil
}

// isPlainStruct reports whether t is a struct (or pointer to one) that
// encodes as a JSON object by its fields: the one case where the output
// schema is unambiguous. Content and result types are excluded.
func isPlainStruct(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == resultT || t.Implements(contentT) || reflect.PointerTo(t).Implements(contentT) {
		return false
	}
	for _, m := range []reflect.Type{marshalerT, textMarshalT} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return false
		}
	}
	return true
}

var anonFunc = regexp.MustCompile(`^func\d+$|^glob\.|^\d+$`)

// nameFromFunc derives a tool name from a function's Go name.
func nameFromFunc(fn any) (string, error) {
	rf := runtime.FuncForPC(reflect.ValueOf(fn).Pointer())
	if rf == nil {
		return "", &domain.DefinitionError{Kind: "tool", Reason: "cannot find the function's name; use WithName"}
	}
	full := rf.Name()
	if i := strings.IndexByte(full, '['); i >= 0 { // generic instantiation
		full = full[:i]
	}
	full = strings.TrimSuffix(full, "-fm") // method value
	base := full[strings.LastIndexByte(full, '.')+1:]
	if base == "" || anonFunc.MatchString(base) {
		return "", &domain.DefinitionError{Kind: "tool", Reason: fmt.Sprintf("%s is an anonymous function: give the tool a name with WithName", full)}
	}
	return ToolNameFromGo(base), nil
}

// ToolNameFromGo is the rule that names a tool after a Go function or
// method when no name is given ([NewTool], [ToolsOf], and the mcpgen
// generator): the leading run of capitals is lower-cased, keeping the last
// one when a lower-case letter follows: GetWeather → getWeather, URLFetch →
// urlFetch, ID → id, listUsers → listUsers.
func ToolNameFromGo(s string) string {
	r := []rune(s)
	n := 0
	for n < len(r) && unicode.IsUpper(r[n]) {
		n++
	}
	switch {
	case n == 0:
		return s
	case n == 1 || n == len(r):
	default:
		if unicode.IsLower(r[n]) {
			n--
		}
	}
	for i := 0; i < n; i++ {
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}
