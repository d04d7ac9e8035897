package main

import (
	"bytes"
	"go/ast"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// buildConstraint returns the //go:build line a generated file needs to be
// compiled exactly when its source file is: the source's own //go:build
// line, and the GOOS/GOARCH of a name like x_linux.go (which x_linux_mcp.go
// would lose).
func buildConstraint(f *ast.File, name string) string {
	var exprs []string
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if expr, ok := strings.CutPrefix(c.Text, "//go:build "); ok {
				exprs = append(exprs, strings.TrimSpace(expr))
			}
		}
	}
	if tag := fileNameConstraint(filepath.Base(name)); tag != "" {
		exprs = append(exprs, tag)
	}
	switch len(exprs) {
	case 0:
		return ""
	case 1:
		return "//go:build " + exprs[0]
	}
	for i, e := range exprs {
		if strings.ContainsAny(e, "|&") {
			exprs[i] = "(" + e + ")"
		}
	}
	return "//go:build " + strings.Join(exprs, " && ")
}

// fileNameConstraint returns the constraint implied by a file name's
// _GOOS, _GOARCH or _GOOS_GOARCH suffix, as go/build reads it.
func fileNameConstraint(name string) string {
	name = strings.TrimSuffix(name, ".go")
	if i := strings.Index(name, "_"); i >= 0 {
		name = name[i:] // the first element never counts
	} else {
		return ""
	}
	parts := strings.Split(name, "_")
	n := len(parts)
	if n >= 2 && knownOS[parts[n-2]] && knownArch[parts[n-1]] {
		return parts[n-2] + " && " + parts[n-1]
	}
	if n >= 1 && (knownOS[parts[n-1]] || knownArch[parts[n-1]]) {
		return parts[n-1]
	}
	return ""
}

// knownOS and knownArch are go/build's lists (syslist.go).
var knownOS = set("aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 solaris wasip1 windows zos")
var knownArch = set("386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm")

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// apply writes the files that changed and deletes the stale ones. It
// returns the paths it touched.
func (o *output) apply() ([]string, error) {
	var touched []string
	var paths []string
	for p := range o.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, o.files[p]) {
			continue
		} else if err == nil && !isGenerated(old) {
			return touched, &os.PathError{Op: "write", Path: relPath(p), Err: errNotGenerated}
		}
		if err := os.WriteFile(p, o.files[p], 0o644); err != nil {
			return touched, err
		}
		touched = append(touched, p)
	}
	for _, p := range o.remove {
		if err := os.Remove(p); err != nil {
			return touched, err
		}
		touched = append(touched, p)
	}
	return touched, nil
}

// outdated returns the files apply would touch: generated files that are
// missing or differ, and stale ones.
func (o *output) outdated() []string {
	var paths []string
	for p, src := range o.files {
		if old, err := os.ReadFile(p); err != nil || !bytes.Equal(old, src) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return append(paths, o.remove...)
}

type notGenerated struct{}

func (notGenerated) Error() string {
	return "the file exists and was not written by mcpgen (its first line is not \"" + header + "\"); rename it"
}

var errNotGenerated error = notGenerated{}
