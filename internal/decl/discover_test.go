package decl_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// discoverCalc holds tools of every accepted shape (testtools.Calc's) and
// methods of other shapes that discovery must skip.
type discoverCalc struct{ testtools.Calc }

// Skipped shapes.
func (c *discoverCalc) Ping(context.Context) error         { return nil }
func (c *discoverCalc) String() string                     { return "calc" }
func (c *discoverCalc) Scale(_ context.Context, f float64) {}
func (c *discoverCalc) Pair(addIn, addIn) float64          { return 0 }
func (c *discoverCalc) Many(...addIn) float64              { return 0 }
func (c *discoverCalc) Twice(addIn) (float64, float64)     { return 0, 0 }

func toolNames(ts []decl.Tool) []string {
	var names []string
	for _, t := range ts {
		names = append(names, t.Definition().Name)
	}
	return names
}

func TestToolsOfNamesAndShapes(t *testing.T) {
	ts, err := decl.ToolsOf(&discoverCalc{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(toolNames(ts), " "), "add reset urlFetch whoAmI"; got != want {
		t.Fatalf("names = %q, want %q (method-name order, skipped shapes left out)", got, want)
	}
	for _, tool := range ts {
		def := tool.Definition()
		if def.Description != "" || def.Title != "" || def.Annotations != nil {
			t.Errorf("%s: discovery made up a description, title or annotations: %+v", def.Name, def)
		}
	}
	equalJSON(t, string(ts[0].Definition().InputSchema),
		`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`)
	equalJSON(t, string(ts[2].Definition().InputSchema),
		`{"type":"object","properties":{"url":{"type":"string","description":"Address to fetch"}},"required":["url"],"additionalProperties":false}`)
}

func TestToolsOfStrict(t *testing.T) {
	_, err := decl.ToolsOf(&discoverCalc{}, decl.StrictDiscovery())
	if err == nil {
		t.Fatal("StrictDiscovery accepted methods of other shapes")
	}
	for _, m := range []string{"Ping", "String", "Scale", "Pair", "Many", "Twice"} {
		if !strings.Contains(err.Error(), "discoverCalc)."+m+" ") {
			t.Errorf("the error does not name %s: %v", m, err)
		}
	}
	var de *domain.DefinitionError
	if !errors.As(err, &de) || de.Kind != "tool" {
		t.Errorf("the error is not a tool *domain.DefinitionError: %T %v", err, err)
	}
	// A type whose exported methods are all tools passes.
	ts, err := decl.ToolsOf(onlyTools{}, decl.StrictDiscovery())
	if err != nil || len(ts) != 1 {
		t.Fatalf("ToolsOf(onlyTools) = %d tools, %v", len(ts), err)
	}
}

type onlyTools struct{}

func (onlyTools) Echo(in testtools.FetchIn) string { return in.URL }

type dupNames struct{}

func (dupNames) URLFetch(testtools.FetchIn) string { return "" }
func (dupNames) UrlFetch(testtools.FetchIn) string { return "" }

type badInput struct{}

func (badInput) Stream(struct{ C chan int }) string { return "" }

type noTools struct{}

func (noTools) String() string { return "" }

func TestToolsOfErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		opts []decl.DiscoverOption
		want string
	}{
		{"nil", nil, nil, "needs a value with methods"},
		{"nil pointer", (*discoverCalc)(nil), nil, "needs a value with methods"},
		{"value with pointer methods", discoverCalc{}, nil, "pass &v"},
		{"no tools", noTools{}, nil, "no exported method of decl_test.noTools has the tool shape"},
		{"duplicate names", dupNames{}, nil, "URLFetch and UrlFetch"},
		{"bad input type", badInput{}, nil, "input type"},
		{"bad prefix", onlyTools{}, []decl.DiscoverOption{decl.WithNamePrefix("calc/")}, `"calc/echo"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := decl.ToolsOf(tc.v, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ToolsOf = %d tools, %v; want an error containing %q", len(ts), err, tc.want)
			}
			if ts != nil {
				t.Errorf("ToolsOf returned tools with an error")
			}
		})
	}
}

// Shapes is a type whose methods become tools with ToolsOf.
type Shapes struct{}

// RectIn is the input of Shapes.RectArea.
type RectIn struct {
	W float64 `json:"w" description:"Width"`
	H float64 `json:"h" description:"Height"`
}

// RectArea is a tool: it takes one input struct.
func (Shapes) RectArea(_ context.Context, in RectIn) (float64, error) { return in.W * in.H, nil }

// String is skipped: it takes no input struct.
func (Shapes) String() string { return "shapes" }

func ExampleToolsOf() {
	tools, err := decl.ToolsOf(Shapes{}, decl.WithNamePrefix("shapes."))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range tools {
		def := t.Definition()
		fmt.Println(def.Name, string(def.InputSchema))
	}
	// Output:
	// shapes.rectArea {"type":"object","properties":{"w":{"type":"number","description":"Width"},"h":{"type":"number","description":"Height"}},"required":["w","h"],"additionalProperties":false}
}
