package jsonschema

import (
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

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

// maxExact is 2^53: integers up to it are exact float64s.
const maxExact = 1 << 53

func toNum(v any) (numValue, bool) {
	var i int64
	switch v := v.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return numValue{}, false
		}
		is := invalid
		if v == math.Trunc(v) {
			is = valid
		}
		return numValue{ok: true, f: v, isInt: is}, true
	case json.Number:
		is := unknown
		if isIntLiteral(string(v)) {
			is = valid
		}
		return numValue{isInt: is}, true
	case int:
		i = int64(v)
	case int64:
		i = v
	case int32:
		i = int64(v)
	case int16:
		i = int64(v)
	case int8:
		i = int64(v)
	case uint, uint64, uint32, uint16, uint8, uintptr, float32:
		return numValue{isInt: unknown}, true
	default:
		return numValue{}, false
	}
	if i > maxExact || i < -maxExact {
		return numValue{isInt: valid}, true
	}
	return numValue{ok: true, f: float64(i), isInt: valid}, true
}

// isIntLiteral reports whether s is an optional minus and decimal digits.
func isIntLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return isIndex(s)
}

// typeOf returns the type bit of a JSON value, 0 for anything else.
func typeOf(v any) uint8 {
	switch v := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case string:
		return tString
	case map[string]any:
		return tObject
	case []any:
		return tArray
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return tNumber
	case json.Number, int, int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8:
		return tNumber
	}
	return 0
}

func (n *fnode) check(v any, depth int) verdict {
	if n == nil {
		return valid
	}
	if n.boolValue != 0 {
		if n.boolValue > 0 {
			return valid
		}
		return invalid
	}
	if depth > maxDepth {
		return unknown
	}
	t := typeOf(v)
	if t == 0 {
		return unknown
	}
	var num numValue
	if t == tNumber {
		num, _ = toNum(v)
	}
	res := valid

	// type
	if n.types != 0 && n.types&t == 0 {
		if t == tNumber && n.types&tInteger != 0 {
			if num.isInt != valid {
				return num.isInt // invalid, or unknown
			}
		} else {
			return invalid
		}
	}
	// enum and const
	if n.hasEnum {
		if r := matchEnum(n.enum, v, t, num); r != valid {
			return r
		}
	}
	if n.constItem != nil {
		if r := matchEnum(n.constItem, v, t, num); r != valid {
			return r
		}
	}
	// format
	if n.format != nil && n.format(v) != nil {
		return invalid
	}
	// $ref
	if n.ref != nil {
		r := n.ref.check(v, depth+1)
		if n.draft < 2019 {
			return r
		}
		if res = and(res, r); res == invalid {
			return invalid
		}
	}

	switch t {
	case tObject:
		res = and(res, n.checkObject(v.(map[string]any), depth))
	case tArray:
		res = and(res, n.checkArray(v.([]any), depth))
	case tString:
		res = and(res, n.checkString(v.(string)))
	case tNumber:
		res = and(res, n.checkNumber(num))
	}
	if res == invalid {
		return invalid
	}
	return and(res, n.checkCond(v, depth))
}

func matchEnum(items []enumItem, v any, t uint8, num numValue) verdict {
	res := invalid
	for i := range items {
		it := &items[i]
		switch t {
		case tString:
			if it.kind == tString && it.s == v.(string) {
				return valid
			}
		case tBoolean:
			if it.kind == tBoolean && it.b == v.(bool) {
				return valid
			}
		case tNull:
			if it.kind == tNull {
				return valid
			}
		case tNumber:
			if it.kind == tNumber {
				if !num.ok || !it.n.ok {
					res = unknown
				} else if it.n.f == num.f {
					return valid
				}
			}
		default: // array or object
			if it.kind == 0 {
				res = unknown
			}
		}
	}
	return res
}

func has(obj map[string]any, keys []string) bool {
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			return false
		}
	}
	return true
}

func (n *fnode) checkObject(obj map[string]any, depth int) verdict {
	if n.minProps >= 0 && len(obj) < n.minProps {
		return invalid
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		return invalid
	}
	if !has(obj, n.required) {
		return invalid
	}
	res := valid
	for i := range n.deps {
		d := &n.deps[i]
		if _, ok := obj[d.prop]; !ok {
			continue
		}
		if d.sch != nil {
			if res = and(res, d.sch.check(obj, depth+1)); res == invalid {
				return invalid
			}
		} else if !has(obj, d.req) {
			return invalid
		}
	}
	if n.props != nil || n.patProps != nil || n.addlSet {
		for k, pv := range obj {
			evaluated := false
			if s, ok := n.props[k]; ok {
				evaluated = true
				if res = and(res, s.check(pv, depth+1)); res == invalid {
					return invalid
				}
			}
			for i := range n.patProps {
				if n.patProps[i].re.MatchString(k) {
					evaluated = true
					if res = and(res, n.patProps[i].sch.check(pv, depth+1)); res == invalid {
						return invalid
					}
				}
			}
			if !evaluated && n.addlSet {
				if n.addl == nil {
					if !n.addlBool {
						return invalid
					}
				} else if res = and(res, n.addl.check(pv, depth+1)); res == invalid {
					return invalid
				}
			}
		}
	}
	if n.draft == 4 {
		return res
	}
	if n.propNames != nil {
		for k := range obj {
			if res = and(res, n.propNames.check(k, depth+1)); res == invalid {
				return invalid
			}
		}
	}
	if n.draft == 6 {
		return res
	}
	for i := range n.depSchemas {
		d := &n.depSchemas[i]
		if _, ok := obj[d.prop]; ok {
			if res = and(res, d.sch.check(obj, depth+1)); res == invalid {
				return invalid
			}
		}
	}
	for i := range n.depRequired {
		d := &n.depRequired[i]
		if _, ok := obj[d.prop]; ok && !has(obj, d.req) {
			return invalid
		}
	}
	return res
}

// maxUnique is the longest array whose uniqueItems the checker decides.
const maxUnique = 32

func uniqueItems(arr []any) verdict {
	if len(arr) > maxUnique {
		return unknown
	}
	for i := 1; i < len(arr); i++ {
		for j := 0; j < i; j++ {
			a, b := arr[i], arr[j]
			switch a := a.(type) {
			case string:
				if b, ok := b.(string); ok && a == b {
					return invalid
				}
			case bool:
				if b, ok := b.(bool); ok && a == b {
					return invalid
				}
			case nil:
				if b == nil {
					return invalid
				}
			case float64:
				switch b := b.(type) {
				case float64:
					if a == b {
						return invalid
					}
				case string, bool, nil, map[string]any, []any:
				default:
					return unknown
				}
			default:
				return unknown
			}
		}
	}
	return valid
}

func (n *fnode) checkArray(arr []any, depth int) verdict {
	if n.minItems >= 0 && len(arr) < n.minItems {
		return invalid
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		return invalid
	}
	res := valid
	if n.unique && len(arr) > 1 {
		if res = uniqueItems(arr); res == invalid {
			return invalid
		}
	}
	evaluated := min(len(n.tuple), len(arr))
	for i := range evaluated {
		if res = and(res, n.tuple[i].check(arr[i], depth+1)); res == invalid {
			return invalid
		}
	}
	if n.draft < 2020 {
		if n.items != nil {
			for _, it := range arr {
				if res = and(res, n.items.check(it, depth+1)); res == invalid {
					return invalid
				}
			}
			evaluated = len(arr)
		}
		if n.addlItemsSet {
			if n.addlItems == nil {
				if !n.addlItemsBool && evaluated != len(arr) {
					return invalid
				}
			} else {
				for _, it := range arr[evaluated:] {
					if res = and(res, n.addlItems.check(it, depth+1)); res == invalid {
						return invalid
					}
				}
			}
		}
	} else if n.items2020 != nil {
		for _, it := range arr[evaluated:] {
			if res = and(res, n.items2020.check(it, depth+1)); res == invalid {
				return invalid
			}
		}
	}
	if n.contains != nil {
		matched, unsure := 0, 0
		for _, it := range arr {
			switch n.contains.check(it, depth+1) {
			case valid:
				matched++
			case unknown:
				unsure++
			}
		}
		lo, hi := matched, matched+unsure // the true count is in [lo, hi]
		want := 1
		if n.minContains >= 0 {
			want = n.minContains
		}
		switch {
		case hi < want:
			return invalid
		case lo < want:
			res = and(res, unknown)
		}
		if n.maxContains >= 0 {
			switch {
			case lo > n.maxContains:
				return invalid
			case hi > n.maxContains:
				res = and(res, unknown)
			}
		}
	}
	return res
}

func (n *fnode) checkString(s string) verdict {
	if n.minLen >= 0 || n.maxLen >= 0 {
		l := utf8.RuneCountInString(s)
		if n.minLen >= 0 && l < n.minLen {
			return invalid
		}
		if n.maxLen >= 0 && l > n.maxLen {
			return invalid
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		return invalid
	}
	return valid
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

func (n *fnode) checkCond(v any, depth int) verdict {
	res := valid
	if n.not != nil {
		switch n.not.check(v, depth+1) {
		case valid:
			return invalid
		case unknown:
			res = unknown
		}
	}
	for _, s := range n.allOf {
		if res = and(res, s.check(v, depth+1)); res == invalid {
			return invalid
		}
	}
	if len(n.anyOf) > 0 {
		some := invalid
		for _, s := range n.anyOf {
			r := s.check(v, depth+1)
			if r == valid {
				some = valid
				break
			}
			if r == unknown {
				some = unknown
			}
		}
		if res = and(res, some); res == invalid {
			return invalid
		}
	}
	if len(n.oneOf) > 0 {
		matched := 0
		for _, s := range n.oneOf {
			switch s.check(v, depth+1) {
			case valid:
				matched++
			case unknown:
				return unknown
			}
		}
		if matched != 1 {
			return invalid
		}
	}
	if n.ifS != nil {
		switch n.ifS.check(v, depth+1) {
		case valid:
			res = and(res, n.thenS.check(v, depth+1))
		case invalid:
			res = and(res, n.elseS.check(v, depth+1))
		default:
			return unknown
		}
	}
	return res
}
