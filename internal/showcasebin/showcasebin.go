// Package showcasebin builds the showcase server (examples/showcase) for the
// test packages that run it as a child process (test/e2e, test/cluster):
// once per test binary, into a temporary directory that lives as long as
// the test binary's tests, and so that `go test` caches a pass only while
// the showcase's sources, go.mod, go.sum and the caller's other inputs are
// unchanged. Such a package's TestMain is
//
//	func TestMain(m *testing.M) { os.Exit(showcasebin.Run(m, "e2e")) }
//
// and its tests call Build for the binary's path.
package showcasebin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// showcasePkg is the import path Build builds.
const showcasePkg = "github.com/hexmcp/hexmcp/examples/showcase"

// buildTimeout bounds the one `go build` of the showcase; past it the build
// is killed and Build fails.
const buildTimeout = 5 * time.Minute

// Options say how Build builds the showcase.
type Options struct {
	// Race builds the showcase with the race detector (go build -race).
	Race bool
	// ExtraInputs are filepath.Glob patterns, relative to the working
	// directory (the test's package directory), of the files the tests
	// depend on beyond the showcase's Go sources and embedded files, go.mod
	// and go.sum (which Build records by itself): the Node clients and
	// their manifests, say. Build opens every match, so that `go test`
	// records it; a pattern that matches nothing is no error.
	ExtraInputs []string
}

// dir is the directory Run made for the binary ("" outside Run).
var dir string

// Run is the body of TestMain for a package whose tests call Build: it
// parses the flags, makes the temporary directory Build writes the binary
// to (hexmcp-<name>-* in os.TempDir), runs m's tests, removes the directory
// and returns the code for os.Exit. When the directory cannot be made, it
// prints the error after "<name>:" to standard error and returns 1
// without running the tests.
func Run(m *testing.M, name string) int {
	flag.Parse()
	d, err := os.MkdirTemp("", "hexmcp-"+name+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	dir = d
	code := m.Run()
	_ = os.RemoveAll(d)
	return code
}

// The one build of this test binary.
var (
	buildOnce sync.Once
	firstOpts Options // the Options of the call that built
	showcase  string  // the binary, once built
	buildErr  error   // why the build failed
)

// Build returns the path of the showcase binary, building it on the first
// call in the test binary: it records the inputs (the showcase's sources in
// this module, go.mod, go.sum and opts.ExtraInputs), then runs `go build`
// within buildTimeout, writing the binary as showcase (showcase.exe on
// Windows) in the directory of Run, which TestMain must have called. Later
// calls return the same path, or fail with the same error, and must pass
// the same Options (one test binary builds one showcase); other Options
// fail tb. Every failure fails tb.
func Build(tb testing.TB, opts Options) string {
	tb.Helper()
	if dir == "" {
		tb.Fatal("showcasebin: Build outside showcasebin.Run: the package's TestMain must be os.Exit(showcasebin.Run(m, name))")
		return ""
	}
	buildOnce.Do(func() {
		firstOpts = Options{Race: opts.Race, ExtraInputs: slices.Clone(opts.ExtraInputs)}
		showcase, buildErr = build(dir, opts)
	})
	if !sameOptions(opts, firstOpts) {
		tb.Fatalf("showcasebin: Build with %+v after a build with %+v: one test binary builds the showcase once", opts, firstOpts)
		return ""
	}
	if buildErr != nil {
		tb.Fatal(buildErr)
		return ""
	}
	return showcase
}

// sameOptions reports whether a and b build the same binary from the same
// recorded inputs.
func sameOptions(a, b Options) bool {
	return a.Race == b.Race && slices.Equal(a.ExtraInputs, b.ExtraInputs)
}

// build records the inputs and builds the showcase into dir.
func build(dir string, opts Options) (string, error) {
	bin := filepath.Join(dir, "showcase")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	goTool := goTool()
	files, err := inputs(goTool, opts.ExtraInputs)
	if err != nil {
		return "", err
	}
	if err := record(files); err != nil {
		return "", err
	}
	args := []string{"build", "-o", bin}
	if opts.Race {
		args = append(args, "-race")
	}
	args = append(args, showcasePkg)
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goTool, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}

// goTool returns the go command of the toolchain that built the test
// binary, or "go" from the PATH when that one is not there.
func goTool() string {
	tool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(tool); err != nil {
		return "go"
	}
	return tool
}

// inputs lists the files a run of the showcase depends on: the Go sources
// and embedded files of the showcase's packages in this module, the
// module's go.mod and go.sum, and the matches of patterns.
func inputs(goTool string, patterns []string) ([]string, error) {
	out, err := exec.Command(goTool, "list", "-deps",
		"-f", "{{if and .Module .Module.Main}}{{range .GoFiles}}{{$.Dir}}/{{.}}\n{{end}}{{range .EmbedFiles}}{{$.Dir}}/{{.}}\n{{end}}{{end}}",
		showcasePkg).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go list the showcase's sources: %w\n%s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list the showcase's sources: %w", err)
	}
	files := strings.Fields(string(out))
	root, err := exec.Command(goTool, "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		files = append(files, filepath.Join(strings.TrimSpace(string(root)), name))
	}
	for _, pattern := range patterns {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return nil, fmt.Errorf("showcasebin: input pattern %q: %w", pattern, err)
		}
		files = append(files, matches...)
	}
	return files, nil
}

// record opens every file of files that exists: `go test` records the
// files a test opens and reuses a cached result only while they are
// unchanged, so a change to the server or to a client invalidates the
// cache instead of replaying a stale pass.
func record(files []string) error {
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return err
		}
		_ = f.Close()
	}
	return nil
}
