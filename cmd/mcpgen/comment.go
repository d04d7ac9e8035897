package main

import (
	"go/ast"
	"go/doc/comment"
	"go/token"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// docLine is one line of a doc comment, without its comment marker.
type docLine struct {
	text string
	pos  token.Pos
}

// directiveLine is a //mcp: line of a doc comment.
type directiveLine struct {
	text string // the whole comment, "//mcp:tool name=x"
	pos  token.Pos
}

// otherDirective matches the directive comments CommentGroup.Text leaves
// out (//go:noinline, //lint:ignore, ...).
var otherDirective = regexp.MustCompile(`^//[a-z0-9]+:[a-z0-9]`)

// splitDoc separates a doc comment into its text lines and its //mcp:
// directive lines. Other directives are dropped, as go/doc drops them.
func splitDoc(cg *ast.CommentGroup) (lines []docLine, directives []directiveLine) {
	if cg == nil {
		return nil, nil
	}
	for _, c := range cg.List {
		switch {
		case strings.HasPrefix(c.Text, directivePrefix):
			directives = append(directives, directiveLine{text: c.Text, pos: c.Slash})
		case otherDirective.MatchString(c.Text):
		case strings.HasPrefix(c.Text, "//"):
			t := strings.TrimPrefix(c.Text, "//")
			t = strings.TrimPrefix(t, " ")
			lines = append(lines, docLine{text: t, pos: c.Slash})
		default: // /* ... */
			body := strings.TrimSuffix(strings.TrimPrefix(c.Text, "/*"), "*/")
			off := 2
			for _, l := range strings.Split(body, "\n") {
				lines = append(lines, docLine{text: l, pos: c.Slash + token.Pos(off)})
				off += len(l) + 1
			}
		}
	}
	return lines, directives
}

// paramsHeader introduces the parameter descriptions.
const paramsHeader = "Parameters:"

// paramItem matches one parameter description: "- name: text" (any list
// marker of Go doc comments, any indentation).
var paramItem = regexp.MustCompile(`^\s*(?:[-*+•]|[0-9]+[.)])\s+([^\s:]+):(?:\s+(.*))?$`)

// paramDoc is the description of one parameter.
type paramDoc struct {
	name, text string
	pos        token.Pos
}

// docProblem is a mistake in a doc comment, at pos.
type docProblem struct {
	pos token.Pos
	msg string
}

// extractParams removes the "Parameters:" block from lines and returns
// its items. The block is a line that reads exactly "Parameters:" followed
// by a Go doc list whose items are "name: description"; continuation lines
// (indented deeper, as gofmt writes them) extend the description. The
// block ends at the first line that is not part of the list.
func extractParams(lines []docLine) (rest []docLine, params []paramDoc, problems []docProblem) {
	start := -1
	for i, l := range lines {
		if strings.TrimRight(l.text, " \t") == paramsHeader {
			if start >= 0 {
				problems = append(problems, docProblem{l.pos, "a second Parameters: block; describe every parameter in one"})
				continue
			}
			start = i
		}
	}
	if start < 0 {
		return lines, nil, problems
	}
	end := start + 1
	var cur *paramDoc
	for end < len(lines) {
		l := lines[end]
		if strings.TrimSpace(l.text) == "" {
			// a blank line continues the list only if another item follows
			next := end + 1
			for next < len(lines) && strings.TrimSpace(lines[next].text) == "" {
				next++
			}
			if next < len(lines) && paramItem.MatchString(lines[next].text) {
				end = next
				continue
			}
			break
		}
		if m := paramItem.FindStringSubmatch(l.text); m != nil {
			params = append(params, paramDoc{name: m[1], text: strings.TrimSpace(m[2]), pos: l.pos})
			cur = &params[len(params)-1]
			end++
			continue
		}
		if cur != nil && (l.text[0] == ' ' || l.text[0] == '\t') {
			cur.text = strings.TrimSpace(cur.text + " " + strings.TrimSpace(l.text))
			end++
			continue
		}
		break
	}
	if len(params) == 0 {
		problems = append(problems, docProblem{lines[start].pos, `Parameters: must be followed by a list of "- name: description" lines`})
	}
	rest = append(append([]docLine{}, lines[:start]...), lines[end:]...)
	return rest, params, problems
}

// describe turns the remaining doc lines into a tool description: the doc
// text as go doc shows it, paragraphs unwrapped into single lines and
// separated by blank lines. A leading Go name (the "PerformCalculation" of
// "PerformCalculation performs ...") is dropped and the next word
// capitalized, since the model never sees that name.
func describe(lines []docLine, goName string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	var p comment.Parser
	pr := comment.Printer{TextWidth: -1}
	text := strings.TrimSpace(string(pr.Text(p.Parse(b.String()))))
	if after, ok := strings.CutPrefix(text, goName+" "); ok && after != "" {
		r, n := utf8.DecodeRuneInString(after)
		text = string(unicode.ToUpper(r)) + after[n:]
	}
	return text
}
