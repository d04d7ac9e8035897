package hexmcp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// readmeBlock is one ```go block of README.md: its first line's number and
// its text.
type readmeBlock struct {
	line int
	src  string
}

// readmeBlocks returns the ```go blocks of README.md.
func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	var cur *readmeBlock
	for i, line := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && line == "```go":
			cur = &readmeBlock{line: i + 2}
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.src += line + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: a go block is not closed", cur.line-1)
	}
	if len(blocks) == 0 {
		t.Fatal("README.md has no go block")
	}
	return blocks
}

var (
	embedPattern = regexp.MustCompile(`(?m)^//go:embed (\S+)$`)
	testFunc     = regexp.MustCompile(`(?m)^func Test\w*\(t \*testing\.T\)`)
)

// Every Go block of the README is a complete file (a package clause, its
// imports, nothing elided), gofmt'ed, and compiles against this module: each
// is built as a package of its own, laid over testdata/readme/ with
// -overlay (nothing is written in the tree; the //line directive makes the
// compiler's errors name README.md's lines). A block with a Test function
// is a _test.go file, compiled by go test -c, and its tests must pass.
func TestREADMECompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every README block with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	replace := map[string]string{}
	var mains, tests, testSrcs []string
	for i, b := range readmeBlocks(t) {
		where := fmt.Sprintf("README.md:%d", b.line)
		if !strings.HasPrefix(b.src, "package ") {
			t.Errorf("%s: the block does not start with a package clause", where)
		}
		if strings.Contains(b.src, "…") {
			t.Errorf("%s: the block elides code (…)", where)
		}
		if f, err := format.Source([]byte(b.src)); err != nil || !bytes.Equal(f, []byte(b.src)) {
			t.Errorf("%s: the block is not gofmt'ed (%v)", where, err)
		}
		pkg := fmt.Sprintf("testdata/readme/block%02d", i+1)
		name := "main.go"
		if testFunc.MatchString(b.src) {
			name = "readme_test.go"
			tests = append(tests, "./"+pkg)
			testSrcs = append(testSrcs, b.src)
		} else {
			mains = append(mains, "./"+pkg)
		}
		src := filepath.Join(tmp, fmt.Sprintf("block%02d.go", i+1))
		if err := os.WriteFile(src, []byte(fmt.Sprintf("//line README.md:%d\n%s", b.line, b.src)), 0o644); err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(root, pkg, name)] = src
		for _, m := range embedPattern.FindAllStringSubmatch(b.src, -1) {
			placeholder := filepath.Join(tmp, fmt.Sprintf("block%02d-embed", i+1))
			if err := os.WriteFile(placeholder, []byte("<!doctype html><title>embedded</title>\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			replace[filepath.Join(root, pkg, filepath.FromSlash(m[1]))] = placeholder
		}
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if len(mains) > 0 {
		run(append([]string{"build", "-overlay=" + overlayFile}, mains...)...)
	}
	for i, p := range tests {
		bin := filepath.Join(tmp, fmt.Sprintf("readme%d.test", i))
		run("test", "-vet=off", "-c", "-o", bin, "-overlay="+overlayFile, p)
		if t.Failed() {
			continue
		}
		// A README test must also pass, in a directory of its own (with a
		// testdata folder); one that checks a contract lock writes it first
		// (HEXMCP_WRITE_CONTRACT=1), as its reader would, then checks it.
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "testdata"), 0o755); err != nil {
			t.Fatal(err)
		}
		envs := [][]string{nil}
		if strings.Contains(testSrcs[i], "CheckContract") {
			envs = [][]string{{"HEXMCP_WRITE_CONTRACT=1"}, {"HEXMCP_WRITE_CONTRACT="}}
		}
		for _, env := range envs {
			cmd := exec.Command(bin)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("the README's %s %v: %v\n%s", p, env, err, out)
			}
		}
	}
}

// The first block is examples/quickstart, and ten lines of code below its
// imports, as its heading says.
func TestREADMEQuickstart(t *testing.T) {
	first := readmeBlocks(t)[0]
	quick, err := os.ReadFile(filepath.Join("examples", "quickstart", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	code := string(quick)
	if i := strings.Index(code, "package "); i > 0 {
		code = code[i:] // after the package's doc comment
	}
	if code != first.src {
		t.Errorf("README.md:%d differs from examples/quickstart/main.go", first.line)
	}
	_, body, ok := strings.Cut(first.src, "\n)\n")
	if !ok {
		t.Fatalf("README.md:%d: no import block", first.line)
	}
	lines := 0
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "//") {
			lines++
		}
	}
	if lines > 10 {
		t.Errorf("README.md:%d: a server in ten lines takes %d", first.line, lines)
	}
}
