package jsonschema

import (
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// The fast path.
//
// santhosh-tekuri's validator builds an error tree as it goes and allocates
// on every subschema (14 allocations and over a microsecond for the
// calculator's arguments). Most arguments are valid, so Validate first runs
// a small checker built from the compiled schema, which allocates nothing
// (about 180 ns for the same arguments). It answers
// valid, invalid or unknown; only valid is trusted. On anything else the
// library validates again and its result, with its error, is what Validate
// returns. So the checker can only make a wrong answer by saying valid where
// the library would not; it mirrors the library's rules keyword by keyword
// (including its number semantics, see fnum) and says unknown whenever it is
// not certain. Schemas using keywords it does not know (unevaluated*,
// $dynamicRef, $recursiveRef, content assertions, custom vocabularies) get
// no checker at all.
//
// This file builds the checker (fnode) from the compiled schema; its
// keyword rules are in rules.go, written once for the two forms in which
// an instance comes (decoded.go, fastjson.go).

type verdict int8

const (
	unknown verdict = iota
	valid
	invalid
)

func and(a, b verdict) verdict {
	if a == invalid || b == invalid {
		return invalid
	}
	if a == unknown || b == unknown {
		return unknown
	}
	return valid
}

// maxDepth bounds recursion of the checker (and so $ref cycles that consume
// no input, which the library reports as errors).
const maxDepth = 64

// Type bits, as in the library.
const (
	tNull uint8 = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

// fnum is a schema number usable with float64 arithmetic: the library
// compares the shortest decimal form of a float64 (fmt's %v) with the
// schema's exact rational. For a bound b that is a float64 exactly and whose
// shortest form is b again, comparing float64s gives the same answer.
type fnum struct {
	set bool
	ok  bool // usable as float64
	f   float64
}

func newFnum(r *big.Rat) fnum {
	if r == nil {
		return fnum{}
	}
	f, exact := r.Float64()
	if !exact || math.IsInf(f, 0) {
		return fnum{set: true}
	}
	back, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return fnum{set: true, ok: ok && back.Cmp(r) == 0, f: f}
}

type enumItem struct {
	kind uint8 // tNull, tBoolean, tNumber, tString; 0 for arrays and objects
	s    string
	b    bool
	n    fnum
}

type depItem struct {
	prop string
	req  []string
	sch  *fnode
}

type patItem struct {
	re  sjs.Regexp
	gre *regexp.Regexp // re itself when it is Go's (the default engine)
	sch *fnode
}

// match reports whether the pattern matches name, without making a Go
// string of it when the pattern is Go's.
func (p *patItem) match(name []byte) bool {
	if p.gre != nil {
		return p.gre.Match(name)
	}
	return p.re.MatchString(string(name))
}

type fnode struct {
	draft     int
	boolValue int8 // 1 true schema, -1 false schema, 0 neither
	types     uint8
	hasEnum   bool
	enum      []enumItem
	constItem []enumItem // nil, or the const value
	format    func(any) error
	// formatStrings: format accepts every value that is not a string, as
	// the library's own formats do (checkJSON then reads only strings)
	formatStrings bool
	ref           *fnode

	not                 *fnode
	allOf, anyOf, oneOf []*fnode
	ifS, thenS, elseS   *fnode

	minProps, maxProps int // -1 when absent
	required           []string
	props              map[string]*fnode
	patProps           []patItem
	addlSet, addlBool  bool
	addl               *fnode
	deps               []depItem // dependencies
	propNames          *fnode
	depSchemas         []depItem // dependentSchemas
	depRequired        []depItem // dependentRequired
	// readsNamed: the object keywords read only the members named in
	// named (no patternProperties, additionalProperties, propertyNames)
	readsNamed bool
	named      []string

	minItems, maxItems int
	unique             bool
	items              *fnode   // every item (items, draft < 2020)
	tuple              []*fnode // items array (draft < 2020) or prefixItems
	items2020          *fnode
	addlItemsSet       bool
	addlItemsBool      bool
	addlItems          *fnode
	contains           *fnode
	minContains        int
	maxContains        int

	minLen, maxLen int
	pattern        sjs.Regexp
	goPattern      *regexp.Regexp // pattern itself when it is Go's

	minimum, maximum, exMin, exMax fnum
	multipleOf                     bool
}

type fastBuilder struct {
	nodes map[*sjs.Schema]*fnode
	ok    bool
}

// buildFast returns the checker of s, or nil if s uses a keyword the
// checker does not handle.
func buildFast(s *sjs.Schema) *fnode {
	b := fastBuilder{nodes: map[*sjs.Schema]*fnode{}, ok: true}
	n := b.node(s)
	if !b.ok {
		return nil
	}
	return n
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func (b *fastBuilder) list(ss []*sjs.Schema) []*fnode {
	if len(ss) == 0 {
		return nil
	}
	out := make([]*fnode, len(ss))
	for i, s := range ss {
		out[i] = b.node(s)
	}
	return out
}

func (b *fastBuilder) node(s *sjs.Schema) *fnode {
	if s == nil || !b.ok {
		return nil
	}
	if n, ok := b.nodes[s]; ok {
		return n
	}
	n := &fnode{
		draft:    s.DraftVersion,
		minProps: -1, maxProps: -1,
		minItems: -1, maxItems: -1, minContains: -1, maxContains: -1,
		minLen: -1, maxLen: -1,
	}
	b.nodes[s] = n
	if s.Bool != nil {
		n.boolValue = -1
		if *s.Bool {
			n.boolValue = 1
		}
		return n
	}
	if s.RecursiveRef != nil || s.DynamicRef != nil || len(s.Extensions) > 0 ||
		s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil {
		b.ok = false
		return nil
	}
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			n.types |= typeBit(t)
		}
	}
	if s.Enum != nil {
		n.hasEnum = true
		for _, v := range s.Enum.Values {
			n.enum = append(n.enum, newEnumItem(v))
		}
	}
	if s.Const != nil {
		n.constItem = []enumItem{newEnumItem(*s.Const)}
	}
	if s.Format != nil {
		n.format = s.Format.Validate
		n.formatStrings = stringFormats[s.Format.Name]
	}
	n.ref = b.node(s.Ref)
	n.not = b.node(s.Not)
	n.allOf = b.list(s.AllOf)
	n.anyOf = b.list(s.AnyOf)
	n.oneOf = b.list(s.OneOf)
	n.ifS, n.thenS, n.elseS = b.node(s.If), b.node(s.Then), b.node(s.Else)

	n.minProps, n.maxProps = intOr(s.MinProperties, -1), intOr(s.MaxProperties, -1)
	n.required = s.Required
	if len(s.Properties) > 0 {
		n.props = make(map[string]*fnode, len(s.Properties))
		for k, v := range s.Properties {
			n.props[k] = b.node(v)
		}
	}
	for re, v := range s.PatternProperties {
		gre, _ := re.(*regexp.Regexp)
		n.patProps = append(n.patProps, patItem{re: re, gre: gre, sch: b.node(v)})
	}
	switch a := s.AdditionalProperties.(type) {
	case bool:
		n.addlSet, n.addlBool = true, a
	case *sjs.Schema:
		n.addlSet, n.addl = true, b.node(a)
	}
	for k, v := range s.Dependencies {
		switch v := v.(type) {
		case []string:
			n.deps = append(n.deps, depItem{prop: k, req: v})
		case *sjs.Schema:
			n.deps = append(n.deps, depItem{prop: k, sch: b.node(v)})
		}
	}
	n.propNames = b.node(s.PropertyNames)
	for k, v := range s.DependentSchemas {
		n.depSchemas = append(n.depSchemas, depItem{prop: k, sch: b.node(v)})
	}
	for k, v := range s.DependentRequired {
		n.depRequired = append(n.depRequired, depItem{prop: k, req: v})
	}
	if n.patProps == nil && !n.addlSet && n.propNames == nil {
		n.readsNamed, n.named = true, namedMembers(n)
	}

	n.minItems, n.maxItems = intOr(s.MinItems, -1), intOr(s.MaxItems, -1)
	n.unique = s.UniqueItems
	switch it := s.Items.(type) {
	case *sjs.Schema:
		n.items = b.node(it)
	case []*sjs.Schema:
		n.tuple = b.list(it)
	}
	if s.DraftVersion >= 2020 {
		n.tuple = b.list(s.PrefixItems)
		n.items2020 = b.node(s.Items2020)
	}
	switch a := s.AdditionalItems.(type) {
	case bool:
		n.addlItemsSet, n.addlItemsBool = true, a
	case *sjs.Schema:
		n.addlItemsSet, n.addlItems = true, b.node(a)
	}
	n.contains = b.node(s.Contains)
	n.minContains, n.maxContains = intOr(s.MinContains, -1), intOr(s.MaxContains, -1)

	n.minLen, n.maxLen = intOr(s.MinLength, -1), intOr(s.MaxLength, -1)
	n.pattern = s.Pattern
	n.goPattern, _ = s.Pattern.(*regexp.Regexp)

	n.minimum, n.maximum = newFnum(s.Minimum), newFnum(s.Maximum)
	n.exMin, n.exMax = newFnum(s.ExclusiveMinimum), newFnum(s.ExclusiveMaximum)
	n.multipleOf = s.MultipleOf != nil
	return n
}

// namedMembers returns the names of the members that n's object keywords
// read, each once: required (whose names the metaschema makes unique) and
// any others, in a new list only if there are others.
func namedMembers(n *fnode) []string {
	names := n.required
	shared := true
	add := func(ks ...string) {
		for _, k := range ks {
			if slices.Contains(names, k) {
				continue
			}
			if shared {
				names, shared = slices.Clone(names), false
			}
			names = append(names, k)
		}
	}
	for k := range n.props {
		add(k)
	}
	for _, ds := range [][]depItem{n.deps, n.depSchemas, n.depRequired} {
		for _, d := range ds {
			add(d.prop)
			add(d.req...)
		}
	}
	return names
}

// stringFormats are the library's formats (v6.0.3), each of which accepts
// any value that is not a string.
var stringFormats = map[string]bool{
	"json-pointer": true, "relative-json-pointer": true, "uuid": true, "duration": true,
	"period": true, "ipv4": true, "ipv6": true, "hostname": true, "email": true,
	"date": true, "time": true, "date-time": true, "uri": true, "iri": true,
	"uri-reference": true, "iri-reference": true, "uri-template": true, "semver": true,
	"regex": true,
}

func typeBit(t string) uint8 {
	switch t {
	case "null":
		return tNull
	case "boolean":
		return tBoolean
	case "number":
		return tNumber
	case "integer":
		return tInteger
	case "string":
		return tString
	case "array":
		return tArray
	case "object":
		return tObject
	}
	return 0
}

func newEnumItem(v any) enumItem {
	switch v := v.(type) {
	case nil:
		return enumItem{kind: tNull}
	case bool:
		return enumItem{kind: tBoolean, b: v}
	case string:
		return enumItem{kind: tString, s: v}
	case json.Number:
		r, ok := new(big.Rat).SetString(v.String())
		if !ok {
			return enumItem{kind: tNumber, n: fnum{set: true}}
		}
		return enumItem{kind: tNumber, n: newFnum(r)}
	case float64:
		return enumItem{kind: tNumber, n: newFnum(new(big.Rat).SetFloat64(v))}
	}
	return enumItem{} // array or object
}

// numValue is a number from the instance as the checker sees it.
type numValue struct {
	ok    bool // f is exact and comparable with fnum bounds
	f     float64
	isInt verdict
}

// matchPattern is pattern's MatchString for a string's characters.
func (n *fnode) matchPattern(s []byte) bool {
	if n.goPattern != nil {
		return n.goPattern.Match(s)
	}
	return n.pattern.MatchString(string(s))
}

func (n *fnode) checkNumber(num numValue) verdict {
	if n.multipleOf {
		return unknown
	}
	bounds := [...]*fnum{&n.minimum, &n.maximum, &n.exMin, &n.exMax}
	res := valid
	for i, b := range bounds {
		if !b.set {
			continue
		}
		if !b.ok || !num.ok {
			res = unknown
			continue
		}
		var pass bool
		switch i {
		case 0:
			pass = num.f >= b.f
		case 1:
			pass = num.f <= b.f
		case 2:
			pass = num.f > b.f
		case 3:
			pass = num.f < b.f
		}
		if !pass {
			return invalid
		}
	}
	return res
}
