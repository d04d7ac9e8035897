package showcasebin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// fakeTB records the failure Build reports instead of ending the test.
type fakeTB struct {
	testing.TB
	failed string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatal(args ...any) { f.failed = fmt.Sprint(args...) }

func (f *fakeTB) Fatalf(format string, args ...any) { f.failed = fmt.Sprintf(format, args...) }

func TestMain(m *testing.M) { os.Exit(Run(m, "showcasebin")) }

func TestRunMakesTheDir(t *testing.T) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || !strings.HasPrefix(filepath.Base(dir), "hexmcp-showcasebin-") {
		t.Fatalf("Run's directory %q: %v %v", dir, fi, err)
	}
}

func TestBuildOutsideRun(t *testing.T) {
	saved := dir
	dir = ""
	defer func() { dir = saved }()
	tb := &fakeTB{TB: t}
	if bin := Build(tb, Options{}); bin != "" || !strings.Contains(tb.failed, "Build outside showcasebin.Run") {
		t.Fatalf("Build outside Run returned %q and failed with %q", bin, tb.failed)
	}
}

func TestInputs(t *testing.T) {
	files, err := inputs(goTool(), []string{"*_test.go", "no-such-*.file"})
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		filepath.Join(root, "examples", "showcase", "main.go"),
		filepath.Join(root, "go.mod"),
		filepath.Join(root, "go.sum"),
		"showcasebin_test.go",
	} {
		if !slices.Contains(files, want) {
			t.Errorf("inputs lack %s (got %q)", want, files)
		}
	}
	if slices.Contains(files, "showcasebin.go") {
		t.Errorf("inputs hold showcasebin.go, which no pattern matches")
	}
	if err := record(append(files, "no-such-file")); err != nil {
		t.Fatalf("record: %v", err)
	}
}

func TestInputsBadPattern(t *testing.T) {
	if _, err := inputs(goTool(), []string{"["}); !errors.Is(err, filepath.ErrBadPattern) {
		t.Fatalf("inputs with pattern [: %v, want ErrBadPattern", err)
	}
}

func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the showcase")
	}
	opts := Options{ExtraInputs: []string{"*.go"}}
	bin := Build(t, opts)
	want := filepath.Join(dir, "showcase")
	if runtime.GOOS == "windows" {
		want += ".exe"
	}
	if bin != want {
		t.Fatalf("Build returned %q, want %q", bin, want)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("%s is not executable: %v", bin, fi.Mode())
	}
	if again := Build(t, Options{ExtraInputs: []string{"*.go"}}); again != bin {
		t.Fatalf("a second Build returned %q, want %q", again, bin)
	}
	for _, other := range []Options{
		{Race: true, ExtraInputs: opts.ExtraInputs},
		{},
		{ExtraInputs: []string{"*.go", "*.mjs"}},
	} {
		tb := &fakeTB{TB: t}
		if got := Build(tb, other); got != "" || !strings.Contains(tb.failed, "builds the showcase once") {
			t.Errorf("Build with %+v after %+v returned %q and failed with %q", other, opts, got, tb.failed)
		}
	}
}
