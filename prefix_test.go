package hexmcp_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// otherPrefix matches a message that starts with the name of one of the
// SDK's packages or parts instead of "hexmcp: ".
var otherPrefix = regexp.MustCompile(`^(mcp[a-z]*|hexmcptest|app|domain|ports|porttest|wiring|memory|redis|jsonschema|stdio|websocket|sse|http|oauth|client|auth|skills|apps|tasks|contract|otel): `)

// TestOneErrorPrefix holds the README's promise that the SDK's errors and
// log messages start with "hexmcp:": no string literal of the module's
// code (tests, examples, test suites and commands aside) starts with the
// name of another of its packages or parts. A part may still name itself
// after the prefix ("hexmcp: websocket: …").
func TestOneErrorPrefix(t *testing.T) {
	var bad []string
	for _, root := range []string{".", "otel"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				switch d.Name() {
				case "test", "examples", "cmd", "testdata", "node_modules":
					return filepath.SkipDir
				}
				if path != root && (strings.HasPrefix(d.Name(), ".") || root == "." && path == "otel") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && otherPrefix.MatchString(s) {
					bad = append(bad, fset.Position(lit.Pos()).String()+": "+strconv.Quote(s))
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range bad {
		t.Errorf("a message with another prefix than hexmcp: %s", b)
	}
}
