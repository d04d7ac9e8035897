package hexmcp_test

import (
	"go/ast"
	"go/token"
	"regexp"
	"strconv"
	"testing"
)

// otherPrefix matches a message that starts with the name of one of the
// SDK's packages or parts instead of "hexmcp: ".
var otherPrefix = regexp.MustCompile(`^(mcp[a-z]*|hexmcptest|app|domain|ports|porttest|wiring|memory|redis|jsonschema|stdio|websocket|sse|http|oauth|client|auth|skills|apps|tasks|contract|otel): `)

// TestOneErrorPrefix holds the README's promise that the SDK's errors and
// log messages start with "hexmcp:": no string literal of the module's
// code (tests, examples, test suites and commands aside; otel's included)
// starts with the name of another of its packages or parts. A part may
// still name itself after the prefix ("hexmcp: websocket: …").
func TestOneErrorPrefix(t *testing.T) {
	for dir := range housePackages(t) {
		if under(dir, "test") || under(dir, "examples") || under(dir, "cmd") {
			continue
		}
		fset := token.NewFileSet()
		for _, f := range parseFiles(t, fset, dir) {
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && otherPrefix.MatchString(s) {
					t.Errorf("a message with another prefix than hexmcp: %s: %q", fset.Position(lit.Pos()), s)
				}
				return true
			})
		}
	}
}
