package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the *_mcp.go.golden files and testdata/run/output.golden from this run")

// goldenDirs are the packages of the golden tests.
func goldenDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden packages: %v", err)
	}
	return dirs
}

// TestGolden compares the generated code of every package under
// testdata/golden with the *_mcp.go.golden files next to its sources.
func TestGolden(t *testing.T) {
	for _, dir := range goldenDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			out, err := generate(config{dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.remove) > 0 {
				t.Errorf("stale files to remove in a clean testdata package: %v", out.remove)
			}
			var got []string
			for path, src := range out.files {
				golden := path + ".golden"
				got = append(got, golden)
				if *update {
					if err := os.WriteFile(golden, src, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./cmd/mcpgen -update to create it)", err)
				}
				if !bytes.Equal(src, want) {
					t.Errorf("%s differs from the generated code (- golden, + got):\n%s", filepath.Base(golden), lineDiff(string(want), string(src)))
				}
			}
			all, _ := filepath.Glob(filepath.Join(dir, "*"+suffix+".golden"))
			for _, g := range all {
				abs, _ := filepath.Abs(g)
				found := false
				for _, p := range got {
					found = found || p == abs
				}
				if !found {
					t.Errorf("%s: no file is generated for it any more", g)
				}
			}
		})
	}
}

// lineDiff is a small line diff for failure messages.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("- " + wl + "\n+ " + gl + "\n")
		}
	}
	return b.String()
}

// goCmd runs the go command in the working directory.
func goCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(goBin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// writeOverlay writes a go build -overlay file mapping each generated file
// path to a file holding its contents.
func writeOverlay(t *testing.T, files map[string][]byte) string {
	t.Helper()
	tmp := t.TempDir()
	replace := map[string]string{}
	i := 0
	for path, src := range files {
		i++
		p := filepath.Join(tmp, filepath.Base(path))
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		replace[path] = p
	}
	raw, _ := json.Marshal(map[string]any{"Replace": replace})
	overlay := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlay, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return overlay
}

// TestGoldenCompiles builds and vets the golden packages with their golden
// files in place: the generated code compiles against the SDK as it is.
func TestGoldenCompiles(t *testing.T) {
	files := map[string][]byte{}
	for _, dir := range goldenDirs(t) {
		gs, _ := filepath.Glob(filepath.Join(dir, "*"+suffix+".golden"))
		for _, g := range gs {
			abs, _ := filepath.Abs(strings.TrimSuffix(g, ".golden"))
			src, err := os.ReadFile(g)
			if err != nil {
				t.Fatal(err)
			}
			files[abs] = src
		}
	}
	if out, err := goCmd(t, "vet", "-overlay="+writeOverlay(t, files), "./testdata/golden/..."); err != nil {
		t.Fatalf("go vet of the golden packages failed: %v\n%s", err, out)
	}
}

// TestGeneratedCodeRuns generates the code of testdata/run, a main package
// that registers the generated tools on an engine and calls them over the
// in-memory transport, and compares what it prints with output.golden.
func TestGeneratedCodeRuns(t *testing.T) {
	out, err := generate(config{dir: filepath.Join("testdata", "run")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := goCmd(t, "run", "-overlay="+writeOverlay(t, out.files), "./testdata/run")
	if err != nil {
		t.Fatalf("go run failed: %v\n%s", err, got)
	}
	golden := filepath.Join("testdata", "run", "output.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the responses differ from %s (- golden, + got):\n%s", golden, lineDiff(string(want), got))
	}
}

// TestStaleCodeDoesNotCompile changes a tool's signature without
// regenerating: the build must fail rather than call the method wrongly.
func TestStaleCodeDoesNotCompile(t *testing.T) {
	dir := filepath.Join("testdata", "run")
	out, err := generate(config{dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(dir, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"parameter type", "a, b float64, operation Operation", "a, b int, operation Operation", "PerformCalculation"},
		{"parameter added", "a, b float64, operation Operation", "a, b float64, operation Operation, precision int", "not enough arguments"},
		{"result type", "func Summarize(words []string, limit *int) Summary {", "func Summarize(words []string, limit *int) *Summary {", "Summarize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := strings.Replace(string(src), tc.old, tc.new, 1)
			if changed == string(src) {
				t.Fatalf("%q not found in main.go", tc.old)
			}
			files := map[string][]byte{}
			for k, v := range out.files {
				files[k] = v
			}
			abs, _ := filepath.Abs(filepath.Join(dir, "main.go"))
			files[abs] = []byte(changed)
			got, err := goCmd(t, "build", "-o", os.DevNull, "-overlay="+writeOverlay(t, files), "./testdata/run")
			if err == nil {
				t.Fatal("stale generated code compiled")
			}
			if !strings.Contains(got, "main_mcp.go") || !strings.Contains(got, tc.want) {
				t.Errorf("the build failed, but not in the generated code as expected (%q):\n%s", tc.want, got)
			}
		})
	}
}

// tempPackage copies files into a new directory under testdata (inside the
// module, so the SDK resolves) and removes it when the test ends.
func tempPackage(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := os.MkdirTemp("testdata", "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// readDir returns the .go files of dir by name.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".go") {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			m[e.Name()] = string(b)
		}
	}
	return m
}

func names(m map[string]string) []string {
	var ns []string
	for n := range m {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// TestIdempotent runs the command twice on a copy of a golden package (the
// second run must change nothing), then removes directives and checks that
// stale generated files go and hand-written ones stay.
func TestIdempotent(t *testing.T) {
	src := readDir(t, filepath.Join("testdata", "golden", "methods"))
	goldens := map[string]string{}
	for _, name := range []string{"store_mcp.go", "store_admin_mcp.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", "methods", name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		goldens[name] = string(b)
	}
	src["notes_mcp.go"] = "// Hand-written, not generated: mcpgen must leave it alone.\n\npackage methods\n"
	// Code that calls the generated functions before they exist: the type
	// errors it causes must not stop the first run.
	src["use.go"] = "package methods\n\nvar _ = append((&Store{}).MCPTools(), MCPTools()...)\n"
	dir := tempPackage(t, src)
	t.Chdir(dir)

	var stdout, stderr bytes.Buffer
	if code := run([]string{"-v"}, &stdout, &stderr); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr.String())
	}
	if got, want := stdout.String(), "store_admin_mcp.go\nstore_mcp.go\n"; got != want {
		t.Errorf("first run wrote %q, want %q", got, want)
	}
	first := readDir(t, ".")
	for _, name := range []string{"store_mcp.go", "store_admin_mcp.go"} {
		if first[name] != goldens[name] {
			t.Errorf("the command wrote a %s that differs from its golden file", name)
		}
	}

	stdout.Reset()
	if code := run([]string{"-v"}, &stdout, &stderr); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("the second run touched files: %q", stdout.String())
	}
	second := readDir(t, ".")
	if strings.Join(names(first), " ") != strings.Join(names(second), " ") {
		t.Fatalf("files changed: %v → %v", names(first), names(second))
	}
	for n := range first {
		if first[n] != second[n] {
			t.Errorf("%s changed on the second run", n)
		}
	}

	// Remove the directives of store_admin.go: its generated file is stale
	// and goes; store_mcp.go's MCPTools then lists Store's tools directly.
	admin := strings.ReplaceAll(second["store_admin.go"], "//mcp:tool", "// (no longer a tool)")
	if err := os.WriteFile("store_admin.go", []byte(admin), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := run([]string{"-v"}, &stdout, &stderr); code != 0 {
		t.Fatalf("third run: exit %d: %s", code, stderr.String())
	}
	if got, want := stdout.String(), "store_mcp.go\nstore_admin_mcp.go\n"; got != want {
		t.Errorf("third run touched %q, want %q", got, want)
	}
	third := readDir(t, ".")
	if _, ok := third["store_admin_mcp.go"]; ok {
		t.Error("the stale store_admin_mcp.go was not deleted")
	}
	if third["notes_mcp.go"] != src["notes_mcp.go"] {
		t.Error("the hand-written notes_mcp.go was changed")
	}
	if strings.Contains(third["store_mcp.go"], "slices.Concat") || !strings.Contains(third["store_mcp.go"], "func (s *Store) MCPTools() []mcphexmcp.Tool {") {
		t.Errorf("store_mcp.go should now return Store's tools directly:\n%s", third["store_mcp.go"])
	}
	if out, err := goCmd(t, "vet", "."); err != nil {
		t.Errorf("the regenerated package does not vet: %v\n%s", err, out)
	}
}

// TestHandWrittenFileIsNotOverwritten: a hand-written x_mcp.go where mcpgen
// would write is an error, not lost work.
func TestHandWrittenFileIsNotOverwritten(t *testing.T) {
	mine := "// Mine.\n\npackage p\n"
	dir := tempPackage(t, map[string]string{
		"x.go":     "package p\n\n// F does.\n//\n//mcp:tool\nfunc F() {}\n",
		"x_mcp.go": mine,
	})
	if stderr := failedRun(t, dir); !strings.Contains(stderr, "x_mcp.go") || !strings.Contains(stderr, "not written by mcpgen") {
		t.Errorf("stderr = %q", stderr)
	}
	if b, _ := os.ReadFile("x_mcp.go"); string(b) != mine {
		t.Error("x_mcp.go was overwritten")
	}
}

// failedRun runs mcpgen in dir (which stays the working directory) and
// returns its standard error, failing t unless it exits with 1.
func failedRun(t *testing.T, dir string) string {
	t.Helper()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	if code := run(nil, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", code, stderr.String())
	}
	return stderr.String()
}

// A file mcpgen cannot write (here a directory stands where x_mcp.go
// goes) fails the run, naming it.
func TestUnwritableOutputIsAnError(t *testing.T) {
	dir := tempPackage(t, map[string]string{
		"x.go": "package p\n\n// F does.\n//\n//mcp:tool\nfunc F() {}\n",
	})
	if err := os.Mkdir(filepath.Join(dir, "x_mcp.go"), 0o755); err != nil {
		t.Fatal(err)
	}
	if stderr := failedRun(t, dir); !strings.Contains(stderr, "x_mcp.go") {
		t.Errorf("stderr = %q, want it to name x_mcp.go", stderr)
	}
}

// A package that does not parse is an error, whatever its tools.
func TestSyntaxErrorIsAnError(t *testing.T) {
	dir := tempPackage(t, map[string]string{
		"x.go": "package p\n\n// F does.\n//\n//mcp:tool\nfunc F() {}\n",
		"y.go": "package p\n\nfunc G( {}\n",
	})
	if stderr := failedRun(t, dir); !strings.Contains(stderr, "y.go") {
		t.Errorf("stderr = %q, want it to name y.go", stderr)
	}
	if _, err := os.Stat("x_mcp.go"); err == nil {
		t.Error("x_mcp.go was written for a package that does not parse")
	}
}

// want is one expected error: on the first line of x.go containing at,
// with message msg.
type want struct{ at, msg string }

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string // x.go
		want []want
	}{
		{"unknown option", `package p

// F does.
//
//mcp:tool nmae=f
func F() {}
`, []want{{"nmae=f", `unknown option "nmae" (known options: ` + knownOptions + `)`}}},

		{"bad name", `package p

// F does.
//
//mcp:tool name=bad/name
func F() {}
`, []want{{"name=bad/name", `bad tool name "bad/name": tool name has character '/' at 3; only A-Z a-z 0-9 _ - . are allowed`}}},

		{"unsupported parameter types", `package p

import "io"

// F does.
//
//mcp:tool
func F(c chan int,
	f func(),
	r io.Reader,
	m map[int]string,
	z complex128) {
}
`, []want{
			{"c chan int", "parameter c: channel type chan int is not supported"},
			{"f func()", "parameter f: function type func() is not supported"},
			{"r io.Reader", "parameter r: interface type io.Reader cannot be decoded from JSON (only any can)"},
			{"m map[int]string", "parameter m: map keys must be strings, not int"},
			{"z complex128", "parameter z: complex128 has no JSON form (complex numbers are not supported)"},
		}},

		{"not a function", `package p

// T is a type.
//
//mcp:tool
type T struct{}

//mcp:tool
var V = 1

func G() {
	//mcp:tool
}
`, []want{
			{"//mcp:tool\ntype", "//mcp:tool must be in the doc comment of a function or method declaration"},
			{"//mcp:tool\nvar", "//mcp:tool must be in the doc comment of a function or method declaration"},
			{"\t//mcp:tool", "//mcp:tool must be in the doc comment of a function or method declaration"},
		}},

		{"unknown directive", `package p

// F does.
//
//mcp:tools
func F() {}
`, []want{{"//mcp:tools", "unknown directive //mcp:tools (mcpgen knows //mcp:tool)"}}},

		{"bad option values", `package p

// F does.
//
//mcp:tool title="Calc
func F() {}

// G does.
//
//mcp:tool readOnly=yes
func G() {}

// H does.
//
//mcp:tool name=a name=b
func H() {}

// I does.
//
//mcp:tool title
func I() {}

// J does.
//
//mcp:tool icon=ftp://example.com/i.png outputSchema=Nope
func J() {}
`, []want{
			{`title="Calc`, `option title: unterminated quoted value "Calc`},
			{"readOnly=yes", `option readOnly takes true or false, not "yes"`},
			{"name=a name=b", "option name given twice"},
			{"tool title\n", "option title needs a value (title=...)"},
			{"icon=ftp", `icon=ftp://example.com/i.png: icon: src "ftp://example.com/i.png" must be an https:, http: or data: URI`},
			{"icon=ftp", "outputSchema=Nope: undefined: Nope"},
		}},

		{"parameters block", `package p

import "context"

// F does.
//
// Parameters:
//   - a: First
//   - c: Not a parameter
//   - a: Again
//   - ctx: The context
//
//mcp:tool
func F(ctx context.Context, a int) {}

// G does.
//
// Parameters:
//
// Nothing listed.
//
//mcp:tool
func G() {}
`, []want{
			{"- c: Not", "Parameters: c is not a parameter of F"},
			{"- a: Again", "Parameters: a is described twice"},
			{"- ctx:", "Parameters: ctx is injected by the SDK, not part of the tool's input; leave it out"},
			{"Parameters:\n//\n// Nothing", `Parameters: must be followed by a list of "- name: description" lines`},
		}},

		{"defaults", `package p

// Mode is a mode.
type Mode string

// The modes.
const (
	Fast Mode = "fast"
	Slow Mode = "slow"
)

// F does.
//
//mcp:tool default.nope=1 default.n=ten default.p=1 default.m=medium default.xs=[]
func F(n int, p *int, m Mode, xs []int) {}
`, []want{
			{"default.nope", "default.nope: F has no parameter nope"},
			{"default.nope", `default.n: "ten" is not a valid int (invalid syntax)`},
			{"default.nope", "default.p: p is a pointer, optional already (nil when left out); give defaults to non-pointer parameters"},
			{"default.nope", `default.m: "medium" is not one of the values of Mode (fast, slow)`},
			{"default.nope", "default.xs: defaults are supported for string, boolean and numeric parameters, not []int"},
		}},

		{"duplicate tool names", `package p

// F does.
//
//mcp:tool name=same
func F() {}

// G does.
//
//mcp:tool name=same
func G() {}
`, []want{{"//mcp:tool name=same\nfunc G", `tool name "same" is already used by F at x.go:5`}}},

		{"signatures", `package p

// F does.
//
//mcp:tool
func F(int) {}

// G does.
//
//mcp:tool
func G() (int, int) { return 0, 0 }

// H does.
//
//mcp:tool
func H[T any](x T) {}

// I does.
//
//mcp:tool
func I(x Undefined) {}

// init sets up.
//
//mcp:tool
func init() {}
`, []want{
			{"func F(int)", "parameter 1 of F has no name: a tool parameter's name is its JSON name"},
			{"func G()", "G returns (int, int): a tool returns ([T,] [error])"},
			{"func H[", "H is generic: a tool needs a concrete signature"},
			{"func I(", "parameter x: invalid type (undefined: Undefined)"},
			{"func init(", "init cannot be a tool"},
		}},

		{"generated names clash", `package p

// MCPTools is the user's own.
func MCPTools() {}

// calculateInput is the user's own.
type calculateInput struct{}

// F does.
//
//mcp:tool name=calculate
func F(a int) {}
`, []want{
			{"name=calculate", "the input type of tool \"calculate\" would be named calculateInput, which is declared at x.go:7; rename the tool or the declaration"},
			{"name=calculate", "mcpgen generates MCPTools for the package, but the package already declares it at x.go:4"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tempPackage(t, map[string]string{"x.go": tc.src})
			t.Chdir(dir)
			var wantLines []string
			for _, w := range tc.want {
				i := strings.Index(tc.src, w.at)
				if i < 0 {
					t.Fatalf("%q not found in the source", w.at)
				}
				line := strings.Count(tc.src[:i], "\n") + 1
				wantLines = append(wantLines, fmt.Sprintf("x.go:%d: %s", line, w.msg))
			}
			var stdout, stderr bytes.Buffer
			code := run(nil, &stdout, &stderr)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr.String())
			}
			if got, want := strings.TrimSpace(stderr.String()), strings.Join(wantLines, "\n"); got != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
			}
			if _, err := os.Stat("x_mcp.go"); err == nil {
				t.Error("x_mcp.go was written despite the errors")
			}
		})
	}
}

// TestCheck: -check writes nothing and fails while generated files are
// missing, out of date or stale.
func TestCheck(t *testing.T) {
	dir := tempPackage(t, map[string]string{
		"x.go": "package p\n\n// F does.\n//\n//mcp:tool\nfunc F() {}\n",
	})
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-check"}, &stdout, &stderr); code != 1 || stderr.String() != "x_mcp.go is out of date: run go generate (or mcpgen)\n" {
		t.Fatalf("missing file: exit %d, stderr %q", code, stderr.String())
	}
	if _, err := os.Stat("x_mcp.go"); err == nil {
		t.Fatal("-check wrote x_mcp.go")
	}
	if code := run(nil, &stdout, &stderr); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"-check"}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("up to date: exit %d, stderr %q", code, stderr.String())
	}
	if err := os.WriteFile("x.go", []byte("package p\n\nfunc F() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"-check"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "x_mcp.go is out of date") {
		t.Fatalf("stale file: exit %d, stderr %q", code, stderr.String())
	}
}
