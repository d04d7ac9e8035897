package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// importSet names the packages a generated file imports, avoiding the
// package's own identifiers.
type importSet struct {
	avoid map[string]bool
	paths map[string]string // path → package name, collected first
	names map[string]string // path → the name used in the file
}

func newImportSet(avoid map[string]bool) *importSet {
	return &importSet{avoid: avoid, paths: map[string]string{}, names: map[string]string{}}
}

func (im *importSet) need(path, name string) { im.paths[path] = name }

// assign picks every import's name: its package name, else mcp<name>,
// else a numbered one. Well-known packages go first, the rest by path, so
// the choice is deterministic.
func (im *importSet) assign() {
	order := []string{"context", "slices", hexmcpPath}
	var rest []string
	for p := range im.paths {
		if !slices.Contains(order, p) {
			rest = append(rest, p)
		}
	}
	sort.Strings(rest)
	used := map[string]bool{}
	for _, p := range append(order, rest...) {
		name, ok := im.paths[p]
		if !ok {
			continue
		}
		cand := name
		for n := 1; im.avoid[cand] || used[cand]; n++ {
			if n == 1 {
				cand = "mcp" + name
			} else {
				cand = fmt.Sprintf("%s%d", name, n)
			}
		}
		used[cand] = true
		im.names[p] = cand
	}
}

// decls returns the import block.
func (im *importSet) decl() string {
	var std, other []string
	for p, n := range im.names {
		line := strconv.Quote(p)
		if n != im.paths[p] || (strings.Contains(p, "/") && filepath.Base(p) != n) {
			line = n + " " + line
		}
		if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
			other = append(other, line)
		} else {
			std = append(std, line)
		}
	}
	sort.Strings(std)
	sort.Strings(other)
	var b strings.Builder
	b.WriteString("import (\n")
	for _, l := range std {
		b.WriteString("\t" + l + "\n")
	}
	if len(std) > 0 && len(other) > 0 {
		b.WriteString("\n")
	}
	for _, l := range other {
		b.WriteString("\t" + l + "\n")
	}
	b.WriteString(")\n")
	return b.String()
}

// fileGen renders one generated file.
type fileGen struct {
	g     *generator
	im    *importSet
	avoid map[string]bool // identifiers a receiver or local must not shadow
	b     bytes.Buffer
}

// qualifier writes types of other packages with the file's import names;
// in the collecting pass it records the packages.
func (fg *fileGen) qualifier(collect bool) types.Qualifier {
	return func(p *types.Package) string {
		if p == fg.g.pkg.Types {
			return ""
		}
		if collect {
			fg.im.need(p.Path(), p.Name())
			return p.Name()
		}
		return fg.im.names[p.Path()]
	}
}

func (fg *fileGen) typ(t types.Type) string { return types.TypeString(t, fg.qualifier(false)) }
func (fg *fileGen) sdk() string             { return fg.im.names[hexmcpPath] }

func (fg *fileGen) printf(format string, args ...any) { fmt.Fprintf(&fg.b, format, args...) }

// comment writes a doc comment, wrapped at 80 columns. Words never break,
// so a //mcp:tool in the text cannot start a line and read as a directive.
func (fg *fileGen) comment(format string, args ...any) {
	line := "//"
	for _, w := range strings.Fields(fmt.Sprintf(format, args...)) {
		if len(line)+1+len(w) > 80 && line != "//" && !strings.HasPrefix(w, "//") {
			fg.printf("%s\n", line)
			line = "//"
		}
		line += " " + w
	}
	fg.printf("%s\n", line)
}

// render writes the generated file for one source file.
func (g *generator) render(f *ast.File, name string, tools []*tool, groups map[groupKey]*group) ([]byte, error) {
	avoid := map[string]bool{}
	for n := range g.userNames {
		avoid[n] = true
	}
	for n := range g.genNames {
		avoid[n] = true
	}
	for _, gr := range groups {
		if gr.recv == nil {
			for _, fn := range gr.fileFn {
				avoid[fn] = true
			}
			avoid["MCPTools"] = true
		}
	}
	fg := &fileGen{g: g, im: newImportSet(avoid)}

	// The groups of this file, in the order of their first tool.
	var keys []groupKey
	for _, t := range tools {
		if k := (groupKey{t.recv}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}

	// First pass: collect the imports.
	fg.im.need("context", "context")
	fg.im.need(hexmcpPath, "hexmcp")
	collect := fg.qualifier(true)
	for _, t := range tools {
		for _, p := range t.inputs() {
			types.TypeString(p.typ, collect)
		}
		if t.out != nil {
			types.TypeString(t.out, collect)
		}
		if t.outType != nil {
			types.TypeString(t.outType, collect)
		}
	}
	for _, k := range keys {
		if gr := groups[k]; gr.allFile == name && len(gr.files) > 1 {
			fg.im.need("slices", "slices")
		}
	}
	fg.im.assign()
	fg.avoid = avoidSet(avoid, fg.im)

	// Second pass: the code.
	fg.printf("%s\n\n", header)
	if c := buildConstraint(f, name); c != "" {
		fg.printf("%s\n\n", c)
	}
	fg.printf("package %s\n\n", f.Name.Name)
	fg.printf("%s\n", fg.im.decl())
	for _, k := range keys {
		gr := groups[k]
		var mine []*tool
		for _, t := range tools {
			if t.recv == k.recv {
				mine = append(mine, t)
			}
		}
		for _, t := range mine {
			fg.inputType(t)
		}
		fg.groupFunc(gr, name, mine)
		if gr.allFile == name && len(gr.files) > 1 {
			fg.allFunc(gr)
		}
	}
	src, err := format.Source(fg.b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("mcpgen produced invalid Go for %s (a bug): %v\n%s", name, err, fg.b.Bytes())
	}
	return src, nil
}

// avoidSet is what a receiver or local variable must not be named.
func avoidSet(pkgNames map[string]bool, im *importSet) map[string]bool {
	a := map[string]bool{"ctx": true, "in": true}
	for n := range pkgNames {
		a[n] = true
	}
	for _, n := range im.names {
		a[n] = true
	}
	for _, n := range types.Universe.Names() {
		a[n] = true
	}
	return a
}

// inputType writes a tool's input struct.
func (fg *fileGen) inputType(t *tool) {
	if t.input == "" {
		return
	}
	fg.comment("%s is the input of the %s tool: the parameters of %s.", t.input, t.name, t.goString())
	fg.printf("type %s struct {\n", t.input)
	for _, p := range t.inputs() {
		typ := fg.typ(p.typ)
		if p.hasDef {
			typ = "*" + typ
		}
		jsonName := p.name
		if p.optional() || p.variadic {
			jsonName += ",omitempty"
		}
		tags := []string{"json:" + strconv.Quote(jsonName)}
		if p.desc != "" {
			tags = append(tags, "description:"+strconv.Quote(p.desc))
		}
		if len(p.enum) > 0 {
			tags = append(tags, "enum:"+strconv.Quote(strings.Join(p.enum, ",")))
		}
		if p.hasDef {
			tags = append(tags, "default:"+strconv.Quote(p.def))
		}
		tag := strings.Join(tags, " ")
		if strings.Contains(tag, "`") {
			tag = strconv.Quote(tag)
		} else {
			tag = "`" + tag + "`"
		}
		fg.printf("\t%s %s %s\n", p.field, typ, tag)
	}
	fg.printf("}\n\n")
}

// goString names the tool's function as Go code would: Calculator.Add,
// (*Calculator).Add or add.
func (t *tool) goString() string {
	switch {
	case t.recv == nil:
		return t.goName
	case t.recvPtr:
		return "(*" + t.recv.Name() + ")." + t.goName
	}
	return t.recv.Name() + "." + t.goName
}

// recvName chooses the receiver of a group's functions: the receiver name
// of its first method that has a usable one, else the type's initial.
func (fg *fileGen) recvName(gr *group) string {
	for _, t := range fg.g.tools {
		if t.recv == gr.recv && t.recvVar != "" && !fg.avoid[t.recvVar] {
			return t.recvVar
		}
	}
	r, _ := utf8.DecodeRuneInString(gr.recv.Name())
	first := string(unicode.ToLower(r))
	for _, c := range []string{first, "r", "recv"} {
		if !fg.avoid[c] && isIdent(c) {
			return c
		}
	}
	for n := 2; ; n++ {
		if c := fmt.Sprintf("recv%d", n); !fg.avoid[c] {
			return c
		}
	}
}

// isIdent reports whether s is an identifier and not a keyword.
func isIdent(s string) bool { return token.IsIdentifier(s) }

// recvDecl returns the receiver of a group's functions, "(c *Calculator) ",
// or "" for plain functions. It is a pointer when any method has a pointer
// receiver.
func (fg *fileGen) recvDecl(gr *group, recv string) string {
	if gr.recv == nil {
		return ""
	}
	ptr := false
	for _, t := range fg.g.tools {
		if t.recv == gr.recv && t.recvPtr {
			ptr = true
		}
	}
	if ptr {
		return "(" + recv + " *" + gr.recv.Name() + ") "
	}
	return "(" + recv + " " + gr.recv.Name() + ") "
}

// groupFunc writes the function returning this file's tools of a group.
func (fg *fileGen) groupFunc(gr *group, file string, tools []*tool) {
	fn := gr.fileFn[file]
	var recv string
	if gr.recv != nil {
		recv = fg.recvName(gr)
	}
	var names []string
	for _, t := range tools {
		names = append(names, t.name)
	}
	what := "the package's functions"
	if gr.recv != nil {
		what = "the methods of " + gr.recv.Name()
	}
	if fn == "MCPTools" {
		fg.comment("MCPTools returns the tools declared with //mcp:tool on %s: %s.", what, list(names))
	} else {
		fg.comment("%s returns the tools declared with //mcp:tool on %s in %s: %s.", fn, what, filepath.Base(file), list(names))
	}
	fg.printf("func %s%s() []%s.Tool {\n", fg.recvDecl(gr, recv), fn, fg.sdk())
	fg.printf("return []%s.Tool{\n", fg.sdk())
	for _, t := range tools {
		fg.toolExpr(t, recv)
	}
	fg.printf("}\n}\n\n")
}

// allFunc writes MCPTools for a group spread over several files.
func (fg *fileGen) allFunc(gr *group) {
	recv := ""
	if gr.recv != nil {
		recv = fg.recvName(gr)
	}
	var files, calls []string
	for _, f := range gr.files {
		files = append(files, filepath.Base(f))
		call := gr.fileFn[f] + "()"
		if recv != "" {
			call = recv + "." + call
		}
		calls = append(calls, call)
	}
	what := "the package's functions"
	if gr.recv != nil {
		what = "the methods of " + gr.recv.Name()
	}
	fg.comment("MCPTools returns the tools declared with //mcp:tool on %s, in %s.", what, list(files))
	fg.printf("func %sMCPTools() []%s.Tool {\n", fg.recvDecl(gr, recv), fg.sdk())
	fg.printf("return %s.Concat(%s)\n}\n\n", fg.im.names["slices"], strings.Join(calls, ", "))
}

// list joins names as prose: a, b and c.
func list(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// toolExpr writes one hexmcp.Func(...) element.
func (fg *fileGen) toolExpr(t *tool, recv string) {
	sdk := fg.sdk()
	usesCtx := false
	for _, p := range t.params {
		if p.kind != inputParam {
			usesCtx = true
		}
	}
	ctxName, inName, inType := "_", "_", "struct{}"
	if usesCtx {
		ctxName = "ctx"
	}
	if t.input != "" {
		inName, inType = "in", t.input
	}
	out := "any"
	if t.out != nil {
		out = fg.typ(t.out)
	}

	// locals for parameters with defaults
	locals := map[string]bool{recv: true}
	var body strings.Builder
	var args []string
	for _, p := range t.params {
		switch p.kind {
		case ctxParam:
			args = append(args, "ctx")
		case rcParam:
			args = append(args, sdk+".RequestFrom(ctx)")
		default:
			switch {
			case p.hasDef:
				local := p.name
				for fg.avoid[local] || locals[local] || !isIdent(local) {
					local += "Arg"
				}
				locals[local] = true
				fmt.Fprintf(&body, "%s := %s\nif in.%s != nil {\n%s = *in.%s\n}\n", local, fg.defaultLit(p), p.field, local, p.field)
				args = append(args, local)
			case p.variadic:
				args = append(args, "in."+p.field+"...")
			default:
				args = append(args, "in."+p.field)
			}
		}
	}
	call := t.goName + "(" + strings.Join(args, ", ") + ")"
	if t.recv != nil {
		call = recv + "." + call
	}
	switch t.result {
	case resValueErr:
		fmt.Fprintf(&body, "return %s\n", call)
	case resValue:
		fmt.Fprintf(&body, "return %s, nil\n", call)
	case resErr:
		fmt.Fprintf(&body, "return nil, %s\n", call)
	case resNone:
		fmt.Fprintf(&body, "%s\nreturn nil, nil\n", call)
	}

	fg.printf("%s.Func(\n", sdk)
	fg.printf("func(%s %s.Context, %s %s) (%s, error) {\n%s},\n", ctxName, fg.im.names["context"], inName, inType, out, body.String())
	fg.printf("%s.WithName(%s),\n", sdk, strconv.Quote(t.name))
	if t.opts.title != "" {
		fg.printf("%s.WithTitle(%s),\n", sdk, strconv.Quote(t.opts.title))
	}
	if t.desc != "" {
		fg.printf("%s.WithDescription(%s),\n", sdk, strconv.Quote(t.desc))
	}
	var ann []string
	if t.opts.title != "" {
		ann = append(ann, "Title: "+strconv.Quote(t.opts.title))
	}
	for i, h := range t.opts.hints {
		if h != nil {
			ann = append(ann, fmt.Sprintf("%s: %s.Bool(%t)", hintFields[i], sdk, *h))
		}
	}
	if len(ann) > 0 {
		fg.printf("%s.WithAnnotations(%s.ToolAnnotations{\n%s,\n}),\n", sdk, sdk, strings.Join(ann, ",\n"))
	}
	var icons []string
	flush := func() {
		if len(icons) > 0 {
			fg.printf("%s.WithIcons(%s),\n", sdk, strings.Join(icons, ", "))
			icons = nil
		}
	}
	for _, ic := range t.icons {
		switch {
		case ic.url != "":
			icons = append(icons, fmt.Sprintf("%s.Icon{Src: %s}", sdk, strconv.Quote(ic.url)))
		case ic.kind == iconString:
			icons = append(icons, fmt.Sprintf("%s.Icon{Src: %s}", sdk, ic.ident))
		case ic.kind == iconValue:
			icons = append(icons, ic.ident)
		case ic.kind == iconSlice:
			flush()
			fg.printf("%s.WithIcons(%s...),\n", sdk, ic.ident)
		}
	}
	flush()
	if len(t.opts.meta) > 0 {
		var es []string
		for _, m := range t.opts.meta {
			es = append(es, strconv.Quote(m.key)+": "+metaLit(m))
		}
		if len(es) == 1 {
			fg.printf("%s.WithMeta(map[string]any{%s}),\n", sdk, es[0])
		} else {
			fg.printf("%s.WithMeta(map[string]any{\n%s,\n}),\n", sdk, strings.Join(es, ",\n"))
		}
	}
	if t.outType != nil {
		fg.printf("%s.WithOutputSchemaFrom(%s),\n", sdk, fg.zero(t.outType))
	}
	fg.printf("),\n")
}

// defaultLit is the Go expression of a parameter's default value.
func (fg *fileGen) defaultLit(p *param) string {
	typ := fg.typ(p.typ)
	b := p.typ.Underlying().(*types.Basic)
	conv := func(lit string) string { return typ + "(" + lit + ")" }
	switch {
	case b.Info()&types.IsString != 0:
		if typ == "string" {
			return strconv.Quote(p.def)
		}
		return conv(strconv.Quote(p.def))
	case b.Info()&types.IsBoolean != 0:
		if typ == "bool" {
			return p.def
		}
		return conv(p.def)
	case b.Info()&types.IsInteger != 0:
		if typ == "int" {
			return p.def
		}
		return conv(p.def)
	default:
		if typ == "float64" && strings.ContainsAny(p.def, ".eE") {
			return p.def
		}
		return conv(p.def)
	}
}

// zero is the Go expression of the zero value of t, for
// WithOutputSchemaFrom.
func (fg *fileGen) zero(t types.Type) string {
	s := fg.typ(t)
	_, named := types.Unalias(t).(*types.Named)
	switch u := t.Underlying().(type) {
	case *types.Struct, *types.Array:
		return s + "{}"
	case *types.Slice, *types.Map:
		return s + "(nil)"
	case *types.Pointer:
		return "(" + s + ")(nil)"
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			if !named {
				return `""`
			}
			return s + `("")`
		case u.Info()&types.IsBoolean != 0:
			if !named {
				return "false"
			}
			return s + "(false)"
		case s == "int":
			return "0"
		}
		return s + "(0)"
	}
	return "*new(" + s + ")"
}

// metaLit is the Go value of a meta option: quoted values are strings;
// bare true, false and numbers are typed; anything else is a string.
func metaLit(m metaEntry) string {
	if m.quoted {
		return strconv.Quote(m.value)
	}
	switch {
	case m.value == "true" || m.value == "false":
		return m.value
	case jsonNumber.MatchString(m.value):
		if i, err := strconv.ParseInt(m.value, 10, 64); err == nil {
			if int64(int32(i)) == i {
				return m.value
			}
			return "int64(" + m.value + ")"
		}
		if !strings.ContainsAny(m.value, ".eE") {
			return "float64(" + m.value + ")"
		}
		return m.value
	}
	return strconv.Quote(m.value)
}
