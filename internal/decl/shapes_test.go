package decl_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
)

type greetIn struct {
	Name string `json:"name"`
}

type ctxKey struct{}

// call runs the handler of t, which must be declared without error, on
// args with a context that carries "from ctx" under ctxKey.
func call(t *testing.T, tool decl.Tool, args string) (any, error) {
	t.Helper()
	_, h, err := decl.ToolOf(tool)
	if err != nil || h == nil {
		t.Fatalf("ToolOf = handler %t, %v", h != nil, err)
	}
	return h(context.WithValue(context.Background(), ctxKey{}, "from ctx"), json.RawMessage(args))
}

// NewTool takes every shape of func([ctx,] [rc,] [in]) ([out,] [error]),
// and its handler passes each part where the function wants it.
func TestNewToolShapesAccepted(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name   string
		fn     any
		args   string
		want   any
		err    error
		schema string
	}{
		{"void", func() {}, `{}`, nil, nil, `{"type":"object","properties":{}}`},
		{"only error", func() error { return boom }, `{}`, nil, boom, ""},
		{"nil error", func() error { return nil }, `{}`, nil, nil, ""},
		{"only value", func() int { return 7 }, `{}`, 7, nil, ""},
		{"ctx", func(ctx context.Context) (string, error) { return ctx.Value(ctxKey{}).(string), nil }, `{}`, "from ctx", nil, ""},
		{"ctx and error", func(ctx context.Context) (string, error) { return "lost", boom }, `{}`, nil, boom, ""},
		{"rc", func(rc *hexmcp.RequestContext) string { return fmt.Sprint(rc == nil) }, `{}`, "true", nil, `{"type":"object","properties":{}}`},
		{"ctx rc in", func(ctx context.Context, rc *hexmcp.RequestContext, in greetIn) (string, error) {
			return fmt.Sprint(ctx.Value(ctxKey{}), " ", rc == nil, " ", in.Name), nil
		}, `{"name":"ann"}`, "from ctx true ann", nil, `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`},
		{"pointer in", func(in *greetIn) string { return "hi " + in.Name }, `{"name":"bo"}`, "hi bo", nil, ""},
		{"in and error", func(in greetIn) (int, error) { return len(in.Name), nil }, `{"name":"abc"}`, 3, nil, ""},
		{"map in", func(in map[string]int) int { return in["a"] + in["b"] }, `{"a":1,"b":2}`, 3, nil, `{"type":"object","additionalProperties":{"type":"integer"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := decl.NewTool(tc.fn, decl.WithName("t"))
			if err := tool.Err(); err != nil {
				t.Fatal(err)
			}
			if tc.schema != "" {
				equalJSON(t, string(tool.Definition().InputSchema), tc.schema)
			}
			got, err := call(t, tool, tc.args)
			if err != tc.err || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("handler = %v, %v; want %v, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// The handler of a tool with an input refuses arguments that do not decode
// with an *ArgumentsError that says where, without Go type names; large
// arguments decode as small ones do.
func TestNewToolDecodesArguments(t *testing.T) {
	tool := decl.NewTool(func(in greetIn) string { return in.Name }, decl.WithName("t"))
	_, err := call(t, tool, `{"name":5}`)
	var ae *decl.ArgumentsError
	if !errors.As(err, &ae) || err.Error() != "unexpected number at /name" {
		t.Fatalf("bad arguments: %v (%T), want an *ArgumentsError", err, err)
	}
	if ae.Unwrap() == nil || ae.Unwrap() != ae.Err {
		t.Errorf("Unwrap = %v", ae.Unwrap())
	}
	big := strings.Repeat(`a\"b`, 20000)
	got, err := call(t, tool, `{"name":"`+big+`"}`)
	if err != nil || got != strings.Repeat(`a"b`, 20000) {
		t.Errorf("large arguments: %.20v, %v", got, err)
	}
	fn := decl.Func(func(_ context.Context, in greetIn) (string, error) { return in.Name, nil }, decl.WithName("f"))
	if _, err := call(t, fn, `{"name":true}`); !errors.As(err, &ae) || err.Error() != "unexpected boolean at /name" {
		t.Errorf("Func, bad arguments: %v", err)
	}
	if _, err := call(t, fn, `{"name":"x","name":"y"}`); !errors.As(err, &ae) {
		t.Errorf("Func, a duplicate member: %v, want an *ArgumentsError", err)
	}
}

// NewTool refuses what is not a function of the tool shape, with a
// tool *domain.DefinitionError that names the tool and says why.
func TestNewToolShapesRefused(t *testing.T) {
	type chanOut struct{ C chan int }
	for _, tc := range []struct {
		name string
		fn   any
		want string
	}{
		{"nil", nil, "NewTool needs a function, got <nil>"},
		{"not a func", 42, "NewTool needs a function, got int"},
		{"nil func", (func())(nil), "NewTool needs a function, got func()"},
		{"variadic", func(...int) {}, "variadic functions are not supported"},
		{"bad shape", func(a, b int) {}, "parameters must be"},
		{"two inputs", func(context.Context, greetIn, greetIn) {}, "parameters must be"},
		{"rc before ctx", func(*hexmcp.RequestContext, context.Context) {}, "input type"},
		{"bad results", func() (int, int) { return 0, 0 }, "the second result must be an error"},
		{"three results", func() (int, int, error) { return 0, 0, nil }, "results must be ([output,] [error])"},
		{"bad input", func(s string) {}, "input type"},
		{"bad output", func() chanOut { return chanOut{} }, "output type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := decl.NewTool(tc.fn, decl.WithName("x"))
			def, h, err := decl.ToolOf(tool)
			wantToolError(t, tc.name, err, tc.want)
			if !strings.Contains(fmt.Sprint(err), `"x"`) {
				t.Errorf("the error does not name the tool: %v", err)
			}
			if h != nil || tool.Err() != err || def.Name != "x" {
				t.Errorf("ToolOf = %q, handler %t, %v", def.Name, h != nil, err)
			}
		})
	}
	var nilFunc func(context.Context, greetIn) (string, error)
	wantToolError(t, "Func(nil)", decl.Func(nilFunc).Err(), "nil function")
	badTag := decl.Func(func(context.Context, struct {
		N int `json:"n" minimum:"abc"`
	}) (int, error) {
		return 0, nil
	}, decl.WithName("x"))
	wantToolError(t, "Func, bad tag", badTag.Err(), "input type")
	if _, h, _ := decl.ToolOf(badTag); h != nil || badTag.Definition().Name != "x" {
		t.Errorf("Func, bad tag: handler %t, name %q", h != nil, badTag.Definition().Name)
	}
	badOut := decl.Func(func(context.Context, greetIn) (chanOut, error) { return chanOut{}, nil }, decl.WithName("x"))
	wantToolError(t, "Func, bad output", badOut.Err(), "output type")
}

// Func declares a typed function: named after it unless WithName, its
// handler decoding the input (a struct, a pointer to one, a map) and
// returning the result or the error.
func TestFunc(t *testing.T) {
	tool := decl.Func(Greet)
	if err := tool.Err(); err != nil || tool.Definition().Name != "greet" {
		t.Fatalf("Func(Greet) = %q, %v", tool.Definition().Name, err)
	}
	if got, err := call(t, tool, `{"name":"ann"}`); got != "hello ann" || err != nil {
		t.Errorf("greet = %v, %v", got, err)
	}
	if got, err := call(t, tool, `{"name":""}`); got != nil || err == nil || err.Error() != "no name" {
		t.Errorf("greet with no name = %v, %v; want the function's error", got, err)
	}
	ptr := decl.Func(func(_ context.Context, in *greetIn) (int, error) { return len(in.Name), nil }, decl.WithName("p"))
	if got, err := call(t, ptr, `{"name":"abcd"}`); got != 4 || err != nil {
		t.Errorf("pointer input = %v, %v", got, err)
	}
	m := decl.Func(func(_ context.Context, in map[string]string) (string, error) { return in["k"], nil }, decl.WithName("m"))
	if got, err := call(t, m, `{"k":"v"}`); got != "v" || err != nil {
		t.Errorf("map input = %v, %v", got, err)
	}
	var ae *decl.ArgumentsError
	if _, err := call(t, ptr, `[]`); !errors.As(err, &ae) {
		t.Errorf("pointer input, an array: %v, want an *ArgumentsError", err)
	}
	anon := decl.Func(func(context.Context, greetIn) (string, error) { return "", nil })
	wantToolError(t, "Func of a literal without a name", anon.Err(), "anonymous function")
}

func Greet(_ context.Context, in greetIn) (string, error) {
	if in.Name == "" {
		return "", errors.New("no name")
	}
	return "hello " + in.Name, nil
}

// NewRawTool keeps the schema and handler it is given.
func TestNewRawTool(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	tool := decl.NewRawTool("raw", schema, func(_ context.Context, args json.RawMessage) (any, error) { return string(args), nil },
		decl.WithDescription("D"), decl.WithOutputSchema(json.RawMessage(`{"type":"object"}`)))
	def := tool.Definition()
	if tool.Err() != nil || def.Name != "raw" || string(def.InputSchema) != string(schema) || def.Description != "D" || string(def.OutputSchema) != `{"type":"object"}` {
		t.Fatalf("NewRawTool = %+v, %v", def, tool.Err())
	}
	if got, err := call(t, tool, `{"q":1}`); got != `{"q":1}` || err != nil {
		t.Errorf("handler = %v, %v", got, err)
	}
	bad := decl.NewRawTool("raw", schema, nil, decl.WithAnnotations(domain.Annotations{}))
	wantToolError(t, "NewRawTool with resource annotations", bad.Err(), "domain.ToolAnnotations")
}

// Names derived from Go names: generic instantiations and method values
// lose their decoration; closures and literals have none.
func TestNameFromFunc(t *testing.T) {
	if got := decl.NewTool(genericTool[int]); got.Err() != nil || got.Definition().Name != "genericTool" {
		t.Errorf("generic = %q, %v", got.Definition().Name, got.Err())
	}
	for name, fn := range map[string]any{
		"literal":        func() {},
		"global closure": globalClosure,
	} {
		wantToolError(t, name, decl.NewTool(fn).Err(), "anonymous function")
	}
	if got := decl.NewTool(GetWeather, decl.WithName("")); got.Err() != nil || got.Definition().Name != "" {
		t.Errorf("an explicit empty name is kept for AddTool to refuse: %q, %v", got.Definition().Name, got.Err())
	}
}

func genericTool[T any]() string { return "" }

var globalClosure = func() string { return "" }

func TestToolNameFromGo(t *testing.T) {
	for in, want := range map[string]string{
		"":           "",
		"a":          "a",
		"A":          "a",
		"ID":         "id",
		"IDs":        "iDs",
		"URLFetch":   "urlFetch",
		"GetWeather": "getWeather",
		"listUsers":  "listUsers",
		"X1":         "x1",
		"URL2Fetch":  "url2Fetch",
		"ÀBc":        "àBc",
		"ÉTÉ":        "été",
		"HTTP":       "http",
		"Get_URL":    "get_URL",
	} {
		if got := decl.ToolNameFromGo(in); got != want {
			t.Errorf("ToolNameFromGo(%q) = %q, want %q", in, got, want)
		}
	}
}

// Large arguments decode as small ones do: a string with a bad escape is
// refused, and a type whose string fields take the string option (which
// the one-copy decoder of large strings would not honour) gets what the
// default decoder gives for small ones.
func TestNewToolLargeArguments(t *testing.T) {
	pad := strings.Repeat("x", 70000)
	tool := decl.NewTool(func(in greetIn) string { return in.Name }, decl.WithName("t"))
	var ae *decl.ArgumentsError
	for _, args := range []string{`{"name":"` + pad + `\q"}`, `{"name":"` + pad + "\xff" + `"}`} {
		if _, err := call(t, tool, args); !errors.As(err, &ae) {
			t.Errorf("a bad string in large arguments: %v, want an *ArgumentsError", err)
		}
	}
	type quoted struct {
		S   string `json:"s,string"`
		Pad string `json:"pad"`
	}
	tool = decl.NewTool(func(in quoted) string { return in.S }, decl.WithName("q"))
	small, serr := call(t, tool, `{"s":"\"abc\"","pad":""}`)
	large, lerr := call(t, tool, `{"s":"\"abc\"","pad":"`+pad+`"}`)
	if small != large || fmt.Sprint(serr) != fmt.Sprint(lerr) {
		t.Errorf("the string option: %q, %v in large arguments, %q, %v in small ones", large, lerr, small, serr)
	}
}
