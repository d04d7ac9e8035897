package decl_test

import (
	"context"
	"testing"

	"github.com/hexmcp/hexmcp/internal/decl"
)

// The names NewTool derives from Go names are valid tool names (ones the
// engine's AddTool takes); WithName wins; no description is made up.
func TestNamesFromFunctions(t *testing.T) {
	var calc calculator
	for _, tc := range []struct {
		tool decl.Tool
		want string
	}{
		{decl.NewTool(GetWeather), "getWeather"},
		{decl.NewTool(URLFetch), "urlFetch"},
		{decl.NewTool(listUsers), "listUsers"},
		{decl.NewTool(calc.PerformCalculation), "performCalculation"},
		{decl.NewTool((*calculator).Reset), "reset"},
		{decl.NewTool(ID), "id"},
		{decl.NewTool(GetWeather, decl.WithName("get_weather")), "get_weather"},
	} {
		if err := tc.tool.Err(); err != nil {
			t.Fatal(err)
		}
		if got := tc.tool.Definition().Name; got != tc.want {
			t.Errorf("name = %q, want %q", got, tc.want)
		}
		if d := tc.tool.Definition().Description; d != "" {
			t.Errorf("description made up: %q", d)
		}
		// What AddTool checks of a declaration, short of compiling its schemas.
		def, h, err := decl.ToolOf(tc.tool)
		if err != nil || h == nil {
			t.Errorf("%s: ToolOf = handler %t, %v", tc.want, h != nil, err)
		}
		if err := def.Validate(); err != nil {
			t.Error(err)
		}
	}
}

func GetWeather() string { return "" }
func URLFetch() string   { return "" }
func listUsers() []int   { return nil }
func ID() int            { return 0 }

type calculator struct{}

func (calculator) PerformCalculation(a addIn) float64 { return a.A }
func (*calculator) Reset()                            {}

func TestOutputSchemaInferredForStructs(t *testing.T) {
	type out struct {
		Temperature float64 `json:"temperature"`
	}
	tl := decl.Func(func(context.Context, struct{}) (out, error) { return out{1}, nil }, decl.WithName("w"))
	if got := string(tl.Definition().OutputSchema); got != `{"type":"object","properties":{"temperature":{"type":"number"}},"required":["temperature"],"additionalProperties":false}` {
		t.Fatalf("outputSchema = %s", got)
	}
	if s := decl.Func(func(context.Context, struct{}) (out, error) { return out{}, nil }, decl.WithName("w"), decl.WithoutOutputSchema()).Definition().OutputSchema; s != nil {
		t.Fatal("WithoutOutputSchema ignored")
	}
	if s := decl.NewTool(func() []int { return nil }, decl.WithName("l")).Definition().OutputSchema; s != nil {
		t.Fatal("a slice output must not get a schema implicitly")
	}
	if s := decl.NewTool(func() []int { return nil }, decl.WithName("l"), decl.WithOutputSchemaFrom([]int{})).Definition().OutputSchema; string(s) != `{"type":"array","items":{"type":"integer"}}` {
		t.Fatalf("WithOutputSchemaFrom = %s", s)
	}
}
