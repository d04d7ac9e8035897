package decl_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// strictShapes has, by value receiver, one method of each shape ToolsOf
// skips, and one tool.
type strictShapes struct{}

func (strictShapes) Tool(context.Context, greetIn) (string, error)    { return "", nil }
func (strictShapes) Variadic(...greetIn) string                       { return "" }
func (strictShapes) NoInput(context.Context) string                   { return "" }
func (strictShapes) NotStruct(context.Context, []greetIn) string      { return "" }
func (strictShapes) TwoInputs(greetIn, greetIn) string                { return "" }
func (strictShapes) NotError(greetIn) (string, string)                { return "", "" }
func (strictShapes) Errors(greetIn) (error, error)                    { return nil, nil }
func (strictShapes) Three(greetIn) (string, string, error)            { return "", "", nil }
func (strictShapes) PointerIn(context.Context, *greetIn) (int, error) { return 0, nil }

// StrictDiscovery says why each method is not a tool, naming it as a
// method expression.
func TestToolsOfStrictReasons(t *testing.T) {
	ts, err := decl.ToolsOf(strictShapes{}, nil)
	if err != nil || strings.Join(toolNames(ts), " ") != "pointerIn tool" {
		t.Fatalf("ToolsOf = %v, %v; want pointerIn and tool", toolNames(ts), err)
	}
	_, err = decl.ToolsOf(strictShapes{}, decl.StrictDiscovery())
	if err == nil {
		t.Fatal("StrictDiscovery accepted methods of other shapes")
	}
	for _, want := range []string{
		"method decl_test.strictShapes.Variadic is variadic",
		"method decl_test.strictShapes.NoInput takes no input struct",
		"method decl_test.strictShapes.NotStruct takes []decl_test.greetIn, not an input struct",
		"method decl_test.strictShapes.TwoInputs takes more than",
		"method decl_test.strictShapes.NotError has a second result that is not an error",
		"method decl_test.strictShapes.Errors returns (error, error)",
		"method decl_test.strictShapes.Three has more than two results",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
	for _, m := range []string{"Tool ", "PointerIn "} {
		if strings.Contains(err.Error(), "strictShapes."+m) {
			t.Errorf("the error names the tool %s: %v", m, err)
		}
	}
}

type pointerOnly struct{}

func (*pointerOnly) String() string { return "" }

type mapTools map[string]int

func (mapTools) Count(greetIn) int { return 0 }

// ToolsOf's other errors: every problem in one error; no hint about
// pointer receivers where there is nothing to find; a nil map with
// methods is a value like any other.
func TestToolsOfMoreErrors(t *testing.T) {
	_, err := decl.ToolsOf(noTools{})
	if err == nil || strings.Contains(err.Error(), "pass &v") {
		t.Errorf("no tools by value or pointer: %v, want no hint", err)
	}
	_, err = decl.ToolsOf(&pointerOnly{})
	if err == nil || !strings.Contains(err.Error(), "no exported method of *decl_test.pointerOnly has the tool shape") || strings.Contains(err.Error(), "pass &v") {
		t.Errorf("pointer with no tools: %v", err)
	}
	_, err = decl.ToolsOf(&discoverCalc{}, decl.StrictDiscovery(), decl.WithNamePrefix("bad prefix "))
	for _, want := range []string{"(*decl_test.discoverCalc).Ping", `"bad prefix add"`, "method (*decl_test.discoverCalc).Add: "} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the joined error lacks %q: %v", want, err)
		}
	}
	ts, err := decl.ToolsOf(mapTools(nil))
	if err != nil || len(ts) != 1 || ts[0].Definition().Name != "count" {
		t.Errorf("ToolsOf(nil map) = %v, %v", toolNames(ts), err)
	}
	ts, err = decl.ToolsOf(dupNames{}, decl.WithNamePrefix("x."))
	if err == nil || ts != nil || !strings.Contains(err.Error(), `"x.urlFetch"`) || !strings.Contains(err.Error(), "decl_test.dupNames give the same name") {
		t.Errorf("duplicates: %v", err)
	}
}

// A tool ToolsOf finds calls the method, on the value given.
func TestToolsOfHandlers(t *testing.T) {
	calc := &discoverCalc{testtools.Calc{Calls: 5}}
	ts, err := decl.ToolsOf(calc)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]decl.Tool{}
	for _, tool := range ts {
		byName[tool.Definition().Name] = tool
	}
	if got, err := call(t, byName["add"], `{"a":2,"b":3}`); got != 5.0 || err != nil || calc.Calls != 6 {
		t.Errorf("add = %v, %v, calls %d", got, err, calc.Calls)
	}
	if got, err := call(t, byName["urlFetch"], `{"url":"u"}`); got != "fetched u" || err != nil {
		t.Errorf("urlFetch = %v, %v", got, err)
	}
	if got, err := call(t, byName["reset"], `{}`); got != nil || err != nil || calc.Calls != 0 {
		t.Errorf("reset = %v, %v, calls %d", got, err, calc.Calls)
	}
}
