package hexmcp_test

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
)

// The rules of the house (README, "The shape of the SDK"), held by tests so
// that a change that breaks one fails here rather than in a review.

const module = "github.com/hexmcp/hexmcp"

// housePackage is one package of the module: its folder, relative to the
// root ("." for the root), and what its non-test files import of the
// module (folders too).
type housePackage struct {
	dir     string
	imports []string
}

// housePackages returns the packages below the root (otel's, a module of
// its own, included; node_modules and testdata aside), by folder.
func housePackages(t *testing.T) map[string]housePackage {
	t.Helper()
	pkgs := map[string]housePackage{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
			return filepath.SkipDir
		}
		bp, err := build.Default.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		p := housePackage{dir: filepath.ToSlash(path)}
		for _, imp := range bp.Imports {
			if imp == module {
				p.imports = append(p.imports, ".")
			} else if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
				p.imports = append(p.imports, rest)
			}
		}
		pkgs[p.dir] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// under reports whether dir is folder or below it.
func under(dir, folder string) bool { return dir == folder || strings.HasPrefix(dir, folder+"/") }

// public reports whether the package at dir is one a user imports: not
// internal, nor a test suite, an example or a command.
func public(dir string) bool {
	for _, part := range strings.Split(dir, "/") {
		if part == "internal" {
			return false
		}
	}
	return !under(dir, "test") && !under(dir, "examples") && !under(dir, "cmd")
}

// TestHouseLayers holds the layering of shared/architecture.md: domain
// imports nothing of the module, ports only domain, the engine no adapter,
// an adapter no other adapter (adapters/memory included: the stores'
// shared parts live below the adapters), nothing under adapters/ or
// extensions/ imports wiring or adapters/memory, and no example imports
// the engine (examples use the front door).
func TestHouseLayers(t *testing.T) {
	pkgs := housePackages(t)
	for _, want := range []string{".", "domain", "ports", "app", "adapters/http", "adapters/stdio", "adapters/websocket", "wiring", "examples/showcase"} {
		if _, ok := pkgs[want]; !ok {
			t.Fatalf("no package %s: the walk missed it", want)
		}
	}
	for _, p := range pkgs {
		for _, imp := range p.imports {
			var why string
			switch {
			case p.dir == "domain":
				why = "domain imports only the standard library"
			case p.dir == "ports" && imp != "domain":
				why = "ports imports only domain"
			case p.dir == "app" && !(imp == "domain" || imp == "ports" || under(imp, "internal")):
				why = "the engine depends on domain and ports only"
			case under(p.dir, "adapters") && under(imp, "adapters") && !under(imp, p.dir) && !under(p.dir, imp):
				why = "an adapter stands alone: it imports no other adapter"
			case (under(p.dir, "adapters") || under(p.dir, "extensions")) && (imp == "wiring" || imp == "adapters/memory"):
				why = "nothing under adapters/ or extensions/ imports wiring or adapters/memory"
			case under(p.dir, "examples") && imp == "app":
				why = "examples use the front door, not the engine"
			default:
				continue
			}
			t.Errorf("%s imports %s: %s", p.dir, imp, why)
		}
	}
}

// TestHouseSize holds the size of the house the README describes: at most
// 20 public packages, and no type with more than 60 methods (unexported
// ones counted).
func TestHouseSize(t *testing.T) {
	pkgs := housePackages(t)
	var pub []string
	for dir := range pkgs {
		if public(dir) {
			pub = append(pub, dir)
		}
	}
	sort.Strings(pub)
	if len(pub) > 20 || !slices.Contains(pub, "otel") {
		t.Errorf("%d public packages, want at most 20 (and the walk to find the ones there are): %v", len(pub), pub)
	}
	methods := map[string]int{}
	for dir := range pkgs {
		for _, f := range parseDir(t, dir) {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
					continue
				}
				if name := receiverName(fd.Recv.List[0].Type); name != "" {
					methods[dir+"."+name]++
				}
			}
		}
	}
	if methods["app.Engine"] == 0 {
		t.Fatal("no method of app.Engine counted: the count is broken")
	}
	for typ, n := range methods {
		if n > 60 {
			t.Errorf("%s has %d methods, more than 60: give a part of it a type of its own", typ, n)
		}
	}
}

// TestHouseDoors holds the two doors of the engine: hexmcp.Server embeds
// nothing (its methods are its own, not the engine's), and the Streamable
// HTTP adapter uses at most 6 exported names of app.
func TestHouseDoors(t *testing.T) {
	st := reflect.TypeFor[hexmcp.Server]()
	for i := range st.NumField() {
		if f := st.Field(i); f.Anonymous {
			t.Errorf("hexmcp.Server embeds %s", f.Type)
		}
	}
	used := map[string]bool{}
	for _, f := range parseDir(t, "adapters/http") {
		local := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"`+module+`/app"` {
				local = "app"
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && id.Obj == nil {
					used[sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	if len(used) == 0 || len(used) > 6 {
		names := make([]string, 0, len(used))
		for n := range used {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Errorf("adapters/http uses %d names of app, want 1 to 6: %v", len(used), names)
	}
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	return parseFiles(t, token.NewFileSet(), dir)
}

// parseFiles parses the non-test Go files of dir into fset.
func parseFiles(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// receiverName returns the name of a method's receiver type.
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
