package hexmcp_test

import (
	"go/ast"
	"go/token"
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
// code (tests, examples, test suites and commands aside; otel's included)
// starts with the name of another of its packages or parts. A part may
// still name itself after the prefix ("hexmcp: websocket: …").
func TestOneErrorPrefix(t *testing.T) {
	inspectSDK(t, func(fset *token.FileSet, n ast.Node) {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return
		}
		if s, err := strconv.Unquote(lit.Value); err == nil && otherPrefix.MatchString(s) {
			t.Errorf("a message with another prefix than hexmcp: %s: %q", fset.Position(lit.Pos()), s)
		}
	})
}

// inspectSDK calls f with every node of the module's code that users
// run: tests, examples, test suites and commands aside.
func inspectSDK(t *testing.T, f func(fset *token.FileSet, n ast.Node)) {
	t.Helper()
	for dir := range housePackages(t) {
		if under(dir, "test") || under(dir, "examples") || under(dir, "cmd") {
			continue
		}
		fset := token.NewFileSet()
		for _, file := range parseFiles(t, fset, dir) {
			ast.Inspect(file, func(n ast.Node) bool {
				f(fset, n)
				return true
			})
		}
	}
}

// TestLogMessagesPrefixed holds the same promise for messages the code
// builds: the message of every log call of the module's code (a call of a
// function or method named logf or LogAttrs: the argument after the
// level) is a string literal that starts with "hexmcp: ", or such a
// literal followed by more (+), or a variable a wrapper passes on. A
// message made by a call (a String method, fmt.Sprintf) would escape the
// rule unseen; it is refused here.
func TestLogMessagesPrefixed(t *testing.T) {
	calls := 0
	inspectSDK(t, func(fset *token.FileSet, n ast.Node) {
		call, ok := n.(*ast.CallExpr)
		if !ok || !isLogCall(call) {
			return
		}
		for i, arg := range call.Args[:len(call.Args)-1] {
			if !isLevel(arg) {
				continue
			}
			calls++
			if msg := call.Args[i+1]; !prefixedMessage(msg) {
				t.Errorf("a log message that may not start with hexmcp: %s", fset.Position(msg.Pos()))
			}
			return
		}
	})
	if calls < 90 {
		t.Fatalf("found %d log calls: the test no longer finds them", calls)
	}
}

// isLogCall reports whether call calls a function or method named logf or
// LogAttrs.
func isLogCall(call *ast.CallExpr) bool {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name == "logf"
	case *ast.SelectorExpr:
		return fn.Sel.Name == "logf" || fn.Sel.Name == "LogAttrs"
	}
	return false
}

// isLevel reports whether e is a log level: slog.LevelX, or a variable
// named level.
func isLevel(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "level" || e.Name == "lvl"
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "slog" && strings.HasPrefix(e.Sel.Name, "Level")
	}
	return false
}

// prefixedMessage reports whether e is a message that keeps the prefix: a
// literal that starts with it (possibly followed by more), or a variable.
func prefixedMessage(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return true // a variable a wrapper passes on, or a named constant (Audit's)
	case *ast.BasicLit:
		s, err := strconv.Unquote(e.Value)
		return err == nil && strings.HasPrefix(s, "hexmcp: ")
	case *ast.BinaryExpr:
		return e.Op == token.ADD && prefixedMessage(e.X) && !isIdent(e.X)
	}
	return false
}

func isIdent(e ast.Expr) bool { _, ok := e.(*ast.Ident); return ok }
