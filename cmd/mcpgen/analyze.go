package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
)

type paramKind int

const (
	inputParam paramKind = iota
	ctxParam             // context.Context: the call's context
	rcParam              // *app.RequestContext: app.RequestFrom(ctx)
)

// param is one parameter of a tool function.
type param struct {
	kind     paramKind
	name     string     // the Go name, also the JSON name
	field    string     // the input struct's field
	typ      types.Type // the parameter's type
	variadic bool
	desc     string
	enum     []string
	def      string // default value, as written in the directive
	hasDef   bool
	pos      token.Pos
}

// optional reports whether the parameter may be left out: pointers, and
// parameters with a default (whose field is then a pointer).
func (p *param) optional() bool { return isPointer(p.typ) || p.hasDef }

type resultKind int

const (
	resValueErr resultKind = iota // (T, error)
	resValue                      // T
	resErr                        // error
	resNone                       // nothing
)

// icon is one icon option, resolved.
type icon struct {
	url   string   // a URL written in the directive, or
	ident string   // the name of a package-level constant or variable
	kind  iconKind // what ident holds
}

type iconKind int

const (
	iconString iconKind = iota // its Src
	iconValue                  // a domain.Icon
	iconSlice                  // a []domain.Icon
)

// tool is one //mcp:tool function, analyzed.
type tool struct {
	file    string
	goName  string
	recv    *types.TypeName // receiver type, nil for plain functions
	recvPtr bool
	recvVar string // the receiver's name in the source, if usable
	name    string
	input   string // the generated input type, "" when there are no inputs
	params  []*param
	result  resultKind
	out     types.Type
	opts    toolOptions
	desc    string
	icons   []icon
	outType types.Type // outputSchema=
	pos     token.Pos  // the first directive line
}

// inputs returns the parameters that form the input schema.
func (t *tool) inputs() []*param {
	var ps []*param
	for _, p := range t.params {
		if p.kind == inputParam {
			ps = append(ps, p)
		}
	}
	return ps
}

// analyze reads one marked function. It returns nil after reporting
// errors.
func (g *generator) analyze(f *ast.File, fd *ast.FuncDecl) *tool {
	nerr := len(g.diags)
	if fd.Recv == nil && (fd.Name.Name == "init" || fd.Name.Name == "main") {
		g.errorf(fd.Pos(), "%s cannot be a tool", fd.Name.Name)
		return nil
	}
	fn, _ := g.pkg.TypesInfo.Defs[fd.Name].(*types.Func)
	if fn == nil {
		g.errorf(fd.Pos(), "cannot type-check %s", fd.Name.Name)
		return nil
	}
	t := &tool{file: g.fset.File(f.Pos()).Name(), goName: fd.Name.Name}
	lines, directives := splitDoc(fd.Doc)
	seen := map[string]bool{}
	for _, dl := range directives {
		if !isToolDirective(dl.text) {
			continue // reported by scanFile
		}
		if t.pos == token.NoPos {
			t.pos = dl.pos
		}
		if err := parseOptions(strings.TrimPrefix(dl.text, toolDirective), &t.opts, seen); err != nil {
			g.errorf(dl.pos, "%v", err)
		}
	}

	sig := fn.Type().(*types.Signature)
	if sig.TypeParams().Len() > 0 {
		g.errorf(fd.Pos(), "%s is generic: a tool needs a concrete signature", t.goName)
		return nil
	}
	if r := sig.Recv(); r != nil {
		rt := types.Unalias(r.Type())
		if p, ok := rt.(*types.Pointer); ok {
			t.recvPtr = true
			rt = types.Unalias(p.Elem())
		}
		named, ok := rt.(*types.Named)
		if !ok {
			g.errorf(fd.Pos(), "cannot find the receiver type of %s", t.goName)
			return nil
		}
		if named.TypeParams().Len() > 0 {
			g.errorf(fd.Pos(), "%s is a method of the generic type %s: a tool needs a concrete receiver", t.goName, named.Obj().Name())
			return nil
		}
		t.recv = named.Obj()
		if n := r.Name(); n != "" && n != "_" {
			t.recvVar = n
		}
	}

	// name
	t.name = decl.ToolNameFromGo(t.goName)
	if t.opts.hasName {
		t.name = t.opts.name
	}
	if err := domain.ValidateToolName(t.name); err != nil {
		g.errorf(t.pos, "bad tool name %q: %s", t.name, reasonOf(err))
	}

	// parameters
	fields := map[string]*param{}
	for i := 0; i < sig.Params().Len(); i++ {
		v := sig.Params().At(i)
		p := &param{name: v.Name(), typ: v.Type(), pos: v.Pos()}
		if !p.pos.IsValid() {
			p.pos = fd.Pos()
		}
		t.params = append(t.params, p)
		if sig.Variadic() && i == sig.Params().Len()-1 {
			p.variadic = true
		}
		switch {
		case isNamed(v.Type(), "context", "Context"):
			p.kind = ctxParam
			continue
		case isPointer(v.Type()) && isNamed(types.Unalias(v.Type()).(*types.Pointer).Elem(), appPath, "RequestContext"):
			p.kind = rcParam
			continue
		case isNamed(v.Type(), appPath, "RequestContext"):
			g.errorf(p.pos, "parameter %s: take a *hexmcp.RequestContext, not a hexmcp.RequestContext", p.name)
			continue
		}
		if p.name == "" || p.name == "_" {
			g.errorf(p.pos, "parameter %d of %s has no name: a tool parameter's name is its JSON name", i+1, t.goName)
			continue
		}
		if err := g.checkType(v.Type(), p.pos); err != "" {
			g.errorf(p.pos, "parameter %s: %s", p.name, err)
			continue
		}
		p.field = exported(p.name)
		if !token.IsExported(p.field) {
			g.errorf(p.pos, "parameter %s: its name must start with a letter that has an upper case, to make an exported field", p.name)
			continue
		}
		if o := fields[p.field]; o != nil {
			g.errorf(p.pos, "parameters %s and %s would both be the field %s", o.name, p.name, p.field)
			continue
		}
		fields[p.field] = p
		p.enum = g.enumOf(p)
	}

	// results
	res := sig.Results()
	switch res.Len() {
	case 0:
		t.result = resNone
	case 1:
		if isError(res.At(0).Type()) {
			t.result = resErr
		} else {
			t.result, t.out = resValue, res.At(0).Type()
		}
	case 2:
		if !isError(res.At(1).Type()) || isError(res.At(0).Type()) {
			g.errorf(fd.Pos(), "%s returns (%s, %s): a tool returns ([T,] [error])", t.goName, g.ts(res.At(0).Type()), g.ts(res.At(1).Type()))
		}
		t.result, t.out = resValueErr, res.At(0).Type()
	default:
		g.errorf(fd.Pos(), "%s has %d results: a tool returns ([T,] [error])", t.goName, res.Len())
	}
	if t.out != nil {
		if msg := g.checkResult(t.out, fd.Pos()); msg != "" {
			g.errorf(fd.Pos(), "result of %s: %s", t.goName, msg)
		}
	}

	// doc comment
	rest, pdocs, problems := extractParams(lines)
	for _, pr := range problems {
		g.errorf(pr.pos, "%s", pr.msg)
	}
	described := map[string]bool{}
	for _, pd := range pdocs {
		var p *param
		for _, q := range t.params {
			if q.name == pd.name {
				p = q
			}
		}
		switch {
		case p == nil:
			g.errorf(pd.pos, "Parameters: %s is not a parameter of %s", pd.name, t.goName)
		case p.kind != inputParam:
			g.errorf(pd.pos, "Parameters: %s is injected by the SDK, not part of the tool's input; leave it out", pd.name)
		case described[pd.name]:
			g.errorf(pd.pos, "Parameters: %s is described twice", pd.name)
		default:
			described[pd.name] = true
			p.desc = pd.text
		}
	}
	if t.opts.hasDescription {
		t.desc = t.opts.description
	} else {
		t.desc = describe(rest, t.goName)
	}

	g.applyDefaults(t)
	g.resolveIcons(t)
	g.resolveOutputSchema(t)
	if len(g.diags) > nerr {
		return nil
	}
	t.input = inputTypeName(t.name)
	if len(t.inputs()) == 0 {
		t.input = ""
	}
	return t
}

// ts writes a type for a message: the package's own types unqualified,
// others by package name (p.Mode → Mode, time.Time).
func (g *generator) ts(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == g.pkg.Types {
			return ""
		}
		return p.Name()
	})
}

// reasonOf returns the reason of a domain error without its prefix.
func reasonOf(err error) string {
	if de, ok := err.(*domain.DefinitionError); ok {
		return de.Reason
	}
	return err.Error()
}

// isNamed reports whether t is the named type path.name.
func isNamed(t types.Type, path, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == path && n.Obj().Name() == name
}

func isPointer(t types.Type) bool {
	_, ok := types.Unalias(t).(*types.Pointer)
	return ok
}

func isError(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// exported makes a parameter name a field name: operation → Operation.
func exported(name string) string {
	r, n := utf8.DecodeRuneInString(name)
	return string(unicode.ToUpper(r)) + name[n:]
}

// checkType returns why a parameter of type t cannot be part of an input
// schema, or "".
func (g *generator) checkType(t types.Type, pos token.Pos) string {
	return g.checkTypeIn(t, pos, map[types.Type]bool{})
}

func (g *generator) checkTypeIn(t types.Type, pos token.Pos, seen map[types.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	switch u := types.Unalias(t).Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Kind() == types.Invalid:
			return "invalid type (" + g.typeErrorAt(pos) + ")"
		case u.Info()&types.IsComplex != 0:
			return fmt.Sprintf("%s has no JSON form (complex numbers are not supported)", g.ts(t))
		case u.Kind() == types.UnsafePointer:
			return fmt.Sprintf("%s has no JSON form", g.ts(t))
		}
	case *types.Pointer:
		return g.checkTypeIn(u.Elem(), pos, seen)
	case *types.Slice:
		return g.checkTypeIn(u.Elem(), pos, seen)
	case *types.Array:
		return g.checkTypeIn(u.Elem(), pos, seen)
	case *types.Map:
		if k, ok := u.Key().Underlying().(*types.Basic); !ok || k.Info()&types.IsString == 0 {
			return fmt.Sprintf("map keys must be strings, not %s", g.ts(u.Key()))
		}
		return g.checkTypeIn(u.Elem(), pos, seen)
	case *types.Struct:
		// described by the SDK at registration, by reference to the type
	case *types.Interface:
		if !u.Empty() {
			return fmt.Sprintf("interface type %s cannot be decoded from JSON (only any can)", g.ts(t))
		}
	case *types.Chan:
		return fmt.Sprintf("channel type %s is not supported", g.ts(t))
	case *types.Signature:
		return fmt.Sprintf("function type %s is not supported", g.ts(t))
	case *types.TypeParam:
		return fmt.Sprintf("type parameter %s is not supported", g.ts(t))
	default:
		return fmt.Sprintf("type %s is not supported", g.ts(t))
	}
	return ""
}

// typeErrorAt returns the type error that explains an invalid type in a
// tool's signature: the one reported on pos's line, else the first.
func (g *generator) typeErrorAt(pos token.Pos) string {
	p := g.fset.Position(pos)
	for _, e := range g.typeErrs {
		if strings.HasPrefix(e.Pos, fmt.Sprintf("%s:%d:", p.Filename, p.Line)) {
			return e.Msg
		}
	}
	if len(g.typeErrs) > 0 {
		return g.typeErrs[0].Msg
	}
	return "unknown type"
}

// checkResult returns why a result type cannot be a tool's output, or "".
func (g *generator) checkResult(t types.Type, pos token.Pos) string {
	switch u := types.Unalias(t).Underlying().(type) {
	case *types.Basic:
		if u.Kind() == types.Invalid {
			return "invalid type (" + g.typeErrorAt(pos) + ")"
		}
		if u.Info()&types.IsComplex != 0 || u.Kind() == types.UnsafePointer {
			return fmt.Sprintf("%s has no JSON form", g.ts(t))
		}
	case *types.Chan, *types.Signature:
		return fmt.Sprintf("%s has no JSON form", g.ts(t))
	}
	return ""
}

// enumOf returns the enum of a parameter whose type (or pointer element)
// is a named string or integer type of this module with constants declared
// in its package, in declaration order. Types that choose their own JSON
// form (MarshalJSON, MarshalText, JSONSchema) get none, and so do types of
// other modules and the standard library, whose constants are often units
// or flags rather than the list of values (time.Duration, os.FileMode).
func (g *generator) enumOf(p *param) []string {
	t := types.Unalias(p.typ)
	if pt, ok := t.(*types.Pointer); ok {
		t = types.Unalias(pt.Elem())
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil || !g.inModule(named.Obj().Pkg()) {
		return nil
	}
	b, ok := named.Underlying().(*types.Basic)
	if !ok || b.Info()&(types.IsString|types.IsInteger) == 0 {
		return nil
	}
	for _, m := range []string{"MarshalJSON", "MarshalText", "JSONSchema"} {
		if obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(named), true, named.Obj().Pkg(), m); obj != nil {
			return nil
		}
	}
	type item struct {
		val string
		pos token.Position
	}
	var items []item
	scope := named.Obj().Pkg().Scope()
	for _, n := range scope.Names() {
		c, ok := scope.Lookup(n).(*types.Const)
		if !ok || !types.Identical(c.Type(), named) {
			continue
		}
		var v string
		if c.Val().Kind() == constant.String {
			v = constant.StringVal(c.Val())
			if strings.Contains(v, ",") || strings.TrimSpace(v) != v {
				g.errorf(p.pos, "parameter %s: constant %s = %q of %s cannot be listed in an enum tag (it has a comma or surrounding spaces)", p.name, n, v, named.Obj().Name())
				return nil
			}
		} else {
			v = c.Val().ExactString()
		}
		items = append(items, item{v, g.fset.Position(c.Pos())})
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i].pos, items[j].pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	var vals []string
	for _, it := range items {
		if !contains(vals, it.val) {
			vals = append(vals, it.val)
		}
	}
	return vals
}

// inModule reports whether pkg belongs to the module of the package being
// generated (outside a module: whether it is that package).
func (g *generator) inModule(pkg *types.Package) bool {
	if pkg == g.pkg.Types {
		return true
	}
	if g.pkg.Module == nil || g.pkg.Module.Path == "" {
		return false
	}
	mod := g.pkg.Module.Path
	return pkg.Path() == mod || strings.HasPrefix(pkg.Path(), mod+"/")
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// jsonNumber is a number as JSON writes it.
var jsonNumber = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$`)

// applyDefaults checks the default.<param> options and attaches them.
func (g *generator) applyDefaults(t *tool) {
	for _, name := range t.opts.defaultOrder {
		val := t.opts.defaults[name]
		var p *param
		for _, q := range t.params {
			if q.name == name {
				p = q
			}
		}
		switch {
		case p == nil:
			g.errorf(t.pos, "default.%s: %s has no parameter %s", name, t.goName, name)
			continue
		case p.kind != inputParam:
			g.errorf(t.pos, "default.%s: %s is injected by the SDK and takes no default", name, name)
			continue
		case p.variadic:
			g.errorf(t.pos, "default.%s: a variadic parameter takes no default", name)
			continue
		case isPointer(p.typ):
			g.errorf(t.pos, "default.%s: %s is a pointer, optional already (nil when left out); give defaults to non-pointer parameters", name, name)
			continue
		}
		b, ok := types.Unalias(p.typ).Underlying().(*types.Basic)
		if !ok {
			g.errorf(t.pos, "default.%s: defaults are supported for string, boolean and numeric parameters, not %s", name, g.ts(p.typ))
			continue
		}
		var err error
		switch {
		case b.Info()&types.IsString != 0:
		case b.Info()&types.IsBoolean != 0:
			if val != "true" && val != "false" {
				err = fmt.Errorf("%q is not true or false", val)
			}
		case b.Info()&types.IsUnsigned != 0:
			_, err = strconv.ParseUint(val, 10, int(sizeOf(b)))
		case b.Info()&types.IsInteger != 0:
			_, err = strconv.ParseInt(val, 10, int(sizeOf(b)))
		case b.Info()&types.IsFloat != 0:
			if !jsonNumber.MatchString(val) {
				err = fmt.Errorf("%q is not a number", val)
			} else {
				_, err = strconv.ParseFloat(val, int(sizeOf(b)))
			}
		default:
			err = fmt.Errorf("defaults are supported for string, boolean and numeric parameters, not %s", g.ts(p.typ))
		}
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok {
				err = fmt.Errorf("%q is not a valid %s (%v)", val, g.ts(p.typ), ne.Err)
			}
			g.errorf(t.pos, "default.%s: %v", name, err)
			continue
		}
		if p.enum != nil && !contains(p.enum, val) {
			g.errorf(t.pos, "default.%s: %q is not one of the values of %s (%s)", name, val, g.ts(p.typ), strings.Join(p.enum, ", "))
			continue
		}
		p.def, p.hasDef = val, true
	}
}

// sizeOf returns the size in bits of a basic numeric type.
func sizeOf(b *types.Basic) int {
	switch b.Kind() {
	case types.Int8, types.Uint8:
		return 8
	case types.Int16, types.Uint16:
		return 16
	case types.Int32, types.Uint32, types.Float32:
		return 32
	}
	return 64
}

// resolveIcons reads the icon options: a URL (anything with a colon), or
// the name of a package-level constant or variable of this package that
// holds a URL (a string), a domain.Icon or a []domain.Icon.
func (g *generator) resolveIcons(t *tool) {
	for _, v := range t.opts.icons {
		if strings.Contains(v, ":") {
			if err := (domain.Icon{Src: v}).Validate(); err != nil {
				g.errorf(t.pos, "icon=%s: %v", v, err)
				continue
			}
			t.icons = append(t.icons, icon{url: v})
			continue
		}
		if !token.IsIdentifier(v) {
			g.errorf(t.pos, "icon=%s: give a URL (https:, http: or data:) or the name of a package-level constant or variable", v)
			continue
		}
		obj := g.pkg.Types.Scope().Lookup(v)
		switch obj.(type) {
		case *types.Const, *types.Var:
		default:
			g.errorf(t.pos, "icon=%s: no package-level constant or variable %s in package %s", v, v, g.pkg.Types.Name())
			continue
		}
		ic := icon{ident: v}
		typ := types.Unalias(obj.Type())
		switch {
		case isBasicString(typ):
			ic.kind = iconString
			if c, ok := obj.(*types.Const); ok {
				if err := (domain.Icon{Src: constant.StringVal(c.Val())}).Validate(); err != nil {
					g.errorf(t.pos, "icon=%s: %v", v, err)
					continue
				}
			}
		case isNamed(typ, domainPath, "Icon"):
			ic.kind = iconValue
		default:
			if s, ok := typ.(*types.Slice); ok && isNamed(s.Elem(), domainPath, "Icon") {
				ic.kind = iconSlice
				break
			}
			g.errorf(t.pos, "icon=%s: %s is a %s; it must be a string (the URL), a domain.Icon or a []domain.Icon", v, v, g.ts(obj.Type()))
			continue
		}
		t.icons = append(t.icons, ic)
	}
}

func isBasicString(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// resolveOutputSchema evaluates outputSchema=<type> in the scope of the
// function's file, so that imported packages can be named.
func (g *generator) resolveOutputSchema(t *tool) {
	if t.opts.outputSchema == "" {
		return
	}
	// Evaluated at the directive: in the file's scope, outside the
	// function, whose parameters must not shadow package names.
	tv, err := types.Eval(g.fset, g.pkg.Types, t.pos, t.opts.outputSchema)
	if err != nil {
		if te, ok := err.(types.Error); ok {
			err = errors.New(te.Msg)
		}
		g.errorf(t.pos, "outputSchema=%s: %v", t.opts.outputSchema, err)
		return
	}
	if !tv.IsType() {
		g.errorf(t.pos, "outputSchema=%s: not a type", t.opts.outputSchema)
		return
	}
	switch tv.Type.Underlying().(type) {
	case *types.Interface, *types.Chan, *types.Signature:
		g.errorf(t.pos, "outputSchema=%s: %s has no schema of its own; name a struct, slice, map or basic type", t.opts.outputSchema, g.ts(tv.Type))
		return
	}
	t.outType = tv.Type
}

// inputTypeName names the input struct of a tool: calculate →
// calculateInput, get_weather → getWeatherInput, calc.add → calcAddInput.
func inputTypeName(tool string) string {
	parts := strings.FieldsFunc(tool, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	var b strings.Builder
	for i, p := range parts {
		if i == 0 {
			b.WriteString(decl.ToolNameFromGo(p))
			continue
		}
		b.WriteString(exported(p))
	}
	s := b.String()
	if s == "" || !unicode.IsLetter([]rune(s)[0]) {
		s = "tool" + exported(s)
	}
	return s + "Input"
}
