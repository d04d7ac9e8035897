package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/internal/decl"
)

func TestSplitOptions(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []option
		err  string
	}{
		{"", nil, ""},
		{" name=calculate  readOnly\tidempotent=false", []option{
			{key: "name", value: "calculate", hasValue: true},
			{key: "readOnly"},
			{key: "idempotent", value: "false", hasValue: true},
		}, ""},
		{` title="A \"quoted\" title" description=""`, []option{
			{key: "title", value: `A "quoted" title`, hasValue: true, quoted: true},
			{key: "description", value: "", hasValue: true, quoted: true},
		}, ""},
		{" icon=data:image/png;base64,AAAA== meta.example.com/k=v=w", []option{
			{key: "icon", value: "data:image/png;base64,AAAA==", hasValue: true},
			{key: "meta.example.com/k", value: "v=w", hasValue: true},
		}, ""},
		{` title="x`, nil, `option title: unterminated quoted value "x`},
		{` title="x"y`, nil, `option title: a space must follow the closing quote, not "y"`},
		{` title=a"b"`, nil, `option title: unexpected quote in value "a\"b\"": quote the whole value (title="...")`},
		{` "name"=x`, nil, `unexpected quote in option name "\"": only values may be quoted (key="value")`},
		{` =x`, nil, `option with no name before "=x"`},
	} {
		got, err := splitOptions(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("splitOptions(%q) error = %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitOptions(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseOptionsAcrossLines(t *testing.T) {
	var o toolOptions
	seen := map[string]bool{}
	for _, line := range []string{" name=calc readOnly icon=https://a.example/i.png", " icon=https://b.example/i.png openWorld=false"} {
		if err := parseOptions(line, &o, seen); err != nil {
			t.Fatal(err)
		}
	}
	if o.name != "calc" || len(o.icons) != 2 || *o.hints[0] != true || *o.hints[3] != false || o.hints[1] != nil {
		t.Errorf("options = %+v", o)
	}
	if err := parseOptions(" name=again", &o, seen); err == nil || err.Error() != "option name given twice" {
		t.Errorf("a second name: %v", err)
	}
}

// docOf parses a function and returns its doc comment.
func docOf(t *testing.T, src string) *ast.CommentGroup {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package p\n\n"+src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return f.Decls[0].(*ast.FuncDecl).Doc
}

func TestDocComment(t *testing.T) {
	for _, tc := range []struct {
		name, src, desc string
		params          map[string]string
	}{
		{"summary and long description", `// Search finds documents.
//
// Results are ranked by relevance
// and cut at the limit.
//
// Parameters:
//   - query: What to look for
//   - limit: How many results, at most; a long text
//     that goes on
//
// Deprecated: use Find.
//
//mcp:tool
//go:noinline
func Search(query string, limit int) {}`,
			"Finds documents.\n\nResults are ranked by relevance and cut at the limit.\n\nDeprecated: use Find.",
			map[string]string{"query": "What to look for", "limit": "How many results, at most; a long text that goes on"}},

		{"list before gofmt, loose list, other markers", `// Parameters:
// * a: First
//
// + b: Second
//
// Adds.
//mcp:tool
func Add(a, b int) {}`,
			"Adds.",
			map[string]string{"a": "First", "b": "Second"}},

		{"no doc", `//mcp:tool
func F() {}`, "", map[string]string{}},

		{"name not first", `// Returns the answer.
//mcp:tool
func F() {}`, "Returns the answer.", map[string]string{}},

		{"lists and code stay", `// Convert converts:
//
//   - one
//   - two
//
// Example:
//
//	convert(1)
//mcp:tool
func Convert() {}`, "Converts:\n\n  - one\n  - two\n\nExample:\n\n\tconvert(1)", map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cg := docOf(t, tc.src)
			lines, dirs := splitDoc(cg)
			if len(dirs) != 1 || dirs[0].text != "//mcp:tool" {
				t.Errorf("directives = %+v", dirs)
			}
			rest, params, problems := extractParams(lines)
			if len(problems) > 0 {
				t.Fatalf("problems: %+v", problems)
			}
			got := map[string]string{}
			for _, p := range params {
				got[p.name] = p.text
			}
			if !reflect.DeepEqual(got, tc.params) {
				t.Errorf("params = %q, want %q", got, tc.params)
			}
			name := strings.Fields(tc.src[strings.Index(tc.src, "func ")+5:])[0]
			name = name[:strings.IndexByte(name, '(')]
			if d := describe(rest, name); d != tc.desc {
				t.Errorf("description = %q, want %q", d, tc.desc)
			}
		})
	}
}

// namesCase has methods whose tool names app derives with its own rule.
type namesCase struct{}

func (namesCase) GetWeather(struct{})    {}
func (namesCase) URLFetch(struct{})      {}
func (namesCase) ID(struct{})            {}
func (namesCase) A(struct{})             {}
func (namesCase) HTTPServerURL(struct{}) {}
func (namesCase) X2Y(struct{})           {}

// TestLowerInitialMatchesApp: the generator names tools as hexmcp.NewTool and
// hexmcp.ToolsOf do.
func TestLowerInitialMatchesApp(t *testing.T) {
	tools, err := hexmcp.ToolsOf(namesCase{})
	if err != nil {
		t.Fatal(err)
	}
	rt := reflect.TypeOf(namesCase{})
	for i, tool := range tools {
		goName := rt.Method(i).Name
		if got, want := decl.ToolNameFromGo(goName), tool.Definition().Name; got != want {
			t.Errorf("decl.ToolNameFromGo(%s) = %s, app says %s", goName, got, want)
		}
	}
	if decl.ToolNameFromGo("listUsers") != "listUsers" || decl.ToolNameFromGo("URLFetch") != "urlFetch" {
		t.Error("ToolNameFromGo breaks the documented examples")
	}
}

func TestInputTypeName(t *testing.T) {
	for in, want := range map[string]string{
		"calculate": "calculateInput", "get_weather": "getWeatherInput", "calc.add": "calcAddInput",
		"URLFetch": "urlFetchInput", "2fa-check": "tool2faCheckInput",
	} {
		if got := inputTypeName(in); got != want {
			t.Errorf("inputTypeName(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestFileNameConstraint(t *testing.T) {
	for in, want := range map[string]string{
		"x.go": "", "x_linux.go": "linux", "x_linux_arm64.go": "linux && arm64", "linux.go": "",
		"x_amd64.go": "amd64", "x_test_mcp.go": "", "store_admin.go": "",
	} {
		if got := fileNameConstraint(in); got != want {
			t.Errorf("fileNameConstraint(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestCamelFile(t *testing.T) {
	for in, want := range map[string]string{
		"web_fetch.go": "WebFetchGo", "v0_tools.go": "V0ToolsGo", "a9z-Z.go": "A9zZGo", "ok.go": "OkGo",
	} {
		if got := camelFile(in); got != want {
			t.Errorf("camelFile(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestMetaLit(t *testing.T) {
	for _, tc := range []struct {
		m    metaEntry
		want string
	}{
		{metaEntry{value: "math"}, `"math"`},
		{metaEntry{value: "3"}, `3`},
		{metaEntry{value: "3", quoted: true}, `"3"`},
		{metaEntry{value: "1.5"}, `1.5`},
		{metaEntry{value: "true"}, `true`},
		{metaEntry{value: "4000000000"}, `int64(4000000000)`},
		{metaEntry{value: "1.0.2"}, `"1.0.2"`},
	} {
		if got := metaLit(tc.m); got != tc.want {
			t.Errorf("metaLit(%+v) = %s, want %s", tc.m, got, tc.want)
		}
	}
}
