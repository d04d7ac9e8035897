package decl_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
)

// The options every kind takes land in the definition of each: title,
// description, icons (added up), _meta (merged), scopes (copied).
func TestCommonOptions(t *testing.T) {
	scopes := []string{"a", "b"}
	icon1, icon2 := domain.Icon{Src: "https://example.com/1.png"}, domain.Icon{Src: "https://example.com/2.png"}
	common := []decl.Option{
		decl.WithTitle("T"), decl.WithDescription("D"), decl.WithIcons(icon1), decl.WithIcons(icon2),
		decl.WithMeta(map[string]any{"k": 1, "j": 1}), decl.WithMeta(map[string]any{"j": 2}), decl.WithScopes(scopes...),
		{}, // the zero Option sets nothing
	}
	var topts []decl.ToolOption
	var popts []decl.PromptOption
	var ropts []decl.ResourceOption
	for _, o := range common {
		topts, popts, ropts = append(topts, o), append(popts, o), append(ropts, o)
	}
	topts, popts, ropts = append(topts, nil), append(popts, nil), append(ropts, nil) // nil options are skipped
	wantIcons := []domain.Icon{icon1, icon2}
	wantMeta := map[string]any{"k": 1, "j": 2}
	wantScopes := []string{"a", "b"}
	tool := decl.NewTool(GetWeather, topts...)
	prompt := decl.NewPrompt("p", nil, popts...)
	res := decl.TextResource("x://r", "r", "t", ropts...)
	tmpl := decl.NewResourceTemplate("x://{a}", "t", nil, ropts...)
	scopes[0] = "changed" // the definitions have their own copy
	check := func(kind, title, desc string, icons []domain.Icon, meta map[string]any, sc []string) {
		t.Helper()
		if title != "T" || desc != "D" || !reflect.DeepEqual(icons, wantIcons) || !reflect.DeepEqual(meta, wantMeta) || !reflect.DeepEqual(sc, wantScopes) {
			t.Errorf("%s: title %q, description %q, icons %v, meta %v, scopes %v", kind, title, desc, icons, meta, sc)
		}
	}
	if tool.Err() != nil {
		t.Fatal(tool.Err())
	}
	td := tool.Definition()
	check("tool", td.Title, td.Description, td.Icons, td.Meta, td.Scopes)
	pd := prompt.Definition()
	check("prompt", pd.Title, pd.Description, pd.Icons, pd.Meta, pd.Scopes)
	if res.Err() != nil {
		t.Fatal(res.Err())
	}
	rd := res.Definition()
	check("resource", rd.Title, rd.Description, rd.Icons, rd.Meta, rd.Scopes)
	if tmpl.Err() != nil {
		t.Fatal(tmpl.Err())
	}
	md := tmpl.TemplateDefinition()
	check("template", md.Title, md.Description, md.Icons, md.Meta, md.Scopes)
}

// WithAnnotations gives a tool its domain.ToolAnnotations and a resource
// its domain.Annotations; the other kind is a declaration error; the zero
// AnnotationsOption sets nothing.
func TestWithAnnotations(t *testing.T) {
	readOnly := true
	ta := domain.ToolAnnotations{Title: "Look", ReadOnlyHint: &readOnly}
	tool := decl.NewTool(GetWeather, decl.WithAnnotations(ta), decl.AnnotationsOption{})
	if tool.Err() != nil || !reflect.DeepEqual(tool.Definition().Annotations, &ta) {
		t.Errorf("tool annotations = %+v, %v", tool.Definition().Annotations, tool.Err())
	}
	if a := decl.NewTool(GetWeather, decl.AnnotationsOption{}).Definition().Annotations; a != nil {
		t.Errorf("the zero AnnotationsOption set %+v", a)
	}
	priority := 0.5
	ra := domain.Annotations{Audience: []string{"user"}, Priority: &priority}
	for _, r := range []decl.Resource{
		decl.TextResource("x://a", "a", "x", decl.WithAnnotations(ra), decl.AnnotationsOption{}),
		decl.NewResourceTemplate("x://{a}", "a", nil, decl.WithAnnotations(ra)),
	} {
		res, tmpl, _, _, err := decl.ResourceOf(r)
		got := (*domain.Annotations)(nil)
		if res != nil {
			got = res.Annotations
		} else {
			got = tmpl.Annotations
		}
		if err != nil || !reflect.DeepEqual(got, &ra) {
			t.Errorf("resource annotations = %+v, %v", got, err)
		}
	}
	if r := decl.TextResource("x://a", "a", "x", decl.AnnotationsOption{}); r.Definition().Annotations != nil {
		t.Errorf("the zero AnnotationsOption set %+v", r.Definition().Annotations)
	}
	wantToolError(t, "a tool with domain.Annotations",
		decl.NewTool(GetWeather, decl.WithAnnotations(domain.Annotations{Audience: []string{"user"}})).Err(), "domain.ToolAnnotations")
	wantResourceError(t, "a resource with domain.ToolAnnotations",
		decl.TextResource("x://b", "b", "x", decl.WithAnnotations(domain.ToolAnnotations{Title: "B"})).Err(), "domain.Annotations")
	wantResourceError(t, "a template with domain.ToolAnnotations",
		decl.NewResourceTemplate("x://{b}", "b", nil, decl.WithAnnotations(domain.ToolAnnotations{Title: "B"})).Err(), "domain.Annotations")
}

// The tool-only options: WithAccessToken, the schemas; the first
// declaration error is the one kept.
func TestToolOptions(t *testing.T) {
	def := decl.NewTool(GetWeather, decl.WithAccessToken()).Definition()
	if !def.PassAccessToken {
		t.Error("WithAccessToken ignored")
	}
	if decl.NewTool(GetWeather).Definition().PassAccessToken {
		t.Error("PassAccessToken without WithAccessToken")
	}
	in := json.RawMessage(`{"type":"object","properties":{"z":{"type":"string"}}}`)
	out := json.RawMessage(`{"type":"object","properties":{"t":{"type":"number"}}}`)
	type result struct {
		T float64 `json:"t"`
	}
	tool := decl.NewTool(func(greetIn) result { return result{} }, decl.WithName("x"), decl.WithInputSchema(in), decl.WithOutputSchema(out))
	if d := tool.Definition(); tool.Err() != nil || string(d.InputSchema) != string(in) || string(d.OutputSchema) != string(out) {
		t.Errorf("explicit schemas: %s %s %v", d.InputSchema, d.OutputSchema, tool.Err())
	}
	tool = decl.NewTool(func(greetIn) result { return result{} }, decl.WithName("x"), decl.WithOutputSchemaFrom(0))
	if d := tool.Definition(); tool.Err() != nil || string(d.OutputSchema) != `{"type":"integer"}` {
		t.Errorf("WithOutputSchemaFrom wins over the struct's schema: %s %v", d.OutputSchema, tool.Err())
	}
	tool = decl.NewTool(func(greetIn) result { return result{} }, decl.WithName("x"), decl.WithOutputSchemaFrom(0), decl.WithoutOutputSchema())
	if d := tool.Definition(); d.OutputSchema != nil {
		t.Errorf("WithoutOutputSchema after WithOutputSchemaFrom: %s", d.OutputSchema)
	}
	bad := decl.NewTool(GetWeather, decl.WithName("x"), decl.WithOutputSchemaFrom(make(chan int)), decl.WithAnnotations(domain.Annotations{}))
	err := bad.Err()
	wantToolError(t, "WithOutputSchemaFrom(chan)", err, `invalid tool "x"`)
	var se *domain.SchemaError
	if !errors.As(err, &se) || strings.Contains(err.Error(), "domain.ToolAnnotations") {
		t.Errorf("the first error is not the one kept, or not wrapped: %v", err)
	}
	if _, h, _ := decl.ToolOf(bad); h != nil {
		t.Error("a tool with a declaration error has a handler")
	}
}

// An output schema is inferred only for a plain struct (or a pointer to
// one): not for content, results, or a type that marshals itself.
func TestOutputSchemaOnlyForPlainStructs(t *testing.T) {
	type plain struct {
		N int `json:"n"`
	}
	for _, tc := range []struct {
		name string
		fn   any
		want bool
	}{
		{"struct", func() plain { return plain{} }, true},
		{"pointer to struct", func() (*plain, error) { return nil, nil }, true},
		{"string", func() string { return "" }, false},
		{"result", func() domain.CallToolResult { return domain.CallToolResult{} }, false},
		{"pointer to result", func() *domain.CallToolResult { return nil }, false},
		{"content", func() *domain.TextContent { return nil }, false},
		{"content value", func() domain.TextContent { return domain.TextContent{} }, false},
		{"json.Marshaler", func() selfJSON { return selfJSON{} }, false},
		{"json.Marshaler by pointer", func() ptrJSON { return ptrJSON{} }, false},
		{"TextMarshaler", func() selfText { return selfText{} }, false},
		{"TextMarshaler by pointer", func() *ptrText { return nil }, false},
	} {
		tool := decl.NewTool(tc.fn, decl.WithName("x"))
		if err := tool.Err(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := tool.Definition().OutputSchema != nil; got != tc.want {
			t.Errorf("%s: output schema %s, want one: %t", tc.name, tool.Definition().OutputSchema, tc.want)
		}
	}
}

type selfJSON struct{ N int }

func (selfJSON) MarshalJSON() ([]byte, error) { return []byte(`1`), nil }

type ptrJSON struct{ N int }

func (*ptrJSON) MarshalJSON() ([]byte, error) { return []byte(`1`), nil }

type selfText struct{ N int }

func (selfText) MarshalText() ([]byte, error) { return []byte(`t`), nil }

type ptrText struct{ N int }

func (*ptrText) MarshalText() ([]byte, error) { return []byte(`t`), nil }

// A prompt's declaration: its arguments in order, the completers of those
// that have one, its handler.
func TestNewPrompt(t *testing.T) {
	h := func(context.Context, map[string]string) (*domain.GetPromptResult, error) {
		return &domain.GetPromptResult{Description: "rendered"}, nil
	}
	one := func(context.Context, string, map[string]string) ([]string, error) { return []string{"one"}, nil }
	two := func(context.Context, string, map[string]string) ([]string, error) { return []string{"two"}, nil }
	p := decl.NewPrompt("p", h,
		decl.WithArguments(domain.PromptArgument{Name: "a"}, domain.PromptArgument{Name: "b", Required: true}),
		decl.WithArgument(domain.PromptArgument{Name: "c"}, one),
		decl.WithArgument(domain.PromptArgument{Name: "d"}, nil),
		decl.WithArgument(domain.PromptArgument{Name: "e"}, two),
		nil)
	def, handler, completers := decl.PromptOf(p)
	if def != p.Definition() || def.Name != "p" {
		t.Fatalf("definition %+v", def)
	}
	var names []string
	for _, a := range def.Arguments {
		names = append(names, a.Name)
	}
	if strings.Join(names, " ") != "a b c d e" || !def.Arguments[1].Required {
		t.Errorf("arguments %+v", def.Arguments)
	}
	if r, err := handler(context.Background(), nil); err != nil || r.Description != "rendered" {
		t.Errorf("handler = %+v, %v", r, err)
	}
	if len(completers) != 2 {
		t.Fatalf("completers for %d arguments, want c and e", len(completers))
	}
	for name, want := range map[string]string{"c": "one", "e": "two"} {
		if got, _ := completers[name](context.Background(), "", nil); len(got) != 1 || got[0] != want {
			t.Errorf("completer of %s = %v", name, got)
		}
	}
	if _, _, c := decl.PromptOf(decl.NewPrompt("p", h, decl.WithArgument(domain.PromptArgument{Name: "a"}, nil))); c != nil {
		t.Errorf("completers without any: %v", c)
	}
	if def, h, c := decl.PromptOf(decl.Prompt{}); def != nil || h != nil || c != nil {
		t.Error("the zero Prompt declares something")
	}
}
