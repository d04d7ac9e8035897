package contract

import (
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strings"
)

// Change is one difference between a lock and a live server.
type Change struct {
	// Breaking tells a change that can break a client or a model that
	// learned the lock's contract from one that cannot.
	Breaking bool `json:"breaking"`
	// Kind is tool, prompt, resource or resourceTemplate.
	Kind string `json:"kind"`
	// Name is the definition's key: a name, a uri or a uriTemplate.
	Name string `json:"name"`
	// Pointer is where in the definition the change is (RFC 6901; empty:
	// the whole definition).
	Pointer string `json:"pointer"`
	// Message says what changed.
	Message string `json:"message"`
}

// String is the change in one line: "BREAKING tool add /inputSchema/required: …".
func (c Change) String() string {
	tag := "compatible"
	if c.Breaking {
		tag = "BREAKING"
	}
	at := c.Pointer
	if at == "" {
		at = "/"
	}
	return fmt.Sprintf("%s %s %q %s: %s", tag, c.Kind, c.Name, at, c.Message)
}

// Compare lists the changes from the lock old to the server's lock cur:
// breaking ones first, then compatible ones, each group in the order of
// the lists and keys.
func Compare(old, cur *Lock) []Change {
	var d differ
	for _, li := range lists {
		d.kind = li.kind
		olds, curs := index(*li.get(old), li.key), index(*li.get(cur), li.key)
		for _, k := range sortedKeys(olds) {
			d.name = k
			c, ok := curs[k]
			if !ok {
				d.add(true, "", "%s removed", li.kind)
				continue
			}
			switch li.kind {
			case "tool":
				d.tool(olds[k], c)
			case "prompt":
				d.prompt(olds[k], c)
			default:
				d.resource(olds[k], c)
			}
		}
		for _, k := range sortedKeys(curs) {
			if _, ok := olds[k]; !ok {
				d.name = k
				d.add(false, "", "new %s", li.kind)
			}
		}
	}
	slices.SortStableFunc(d.changes, func(a, b Change) int {
		switch {
		case a.Breaking == b.Breaking:
			return 0
		case a.Breaking:
			return -1
		}
		return 1
	})
	return d.changes
}

// Breaking returns the breaking changes among cs.
func Breaking(cs []Change) []Change {
	var out []Change
	for _, c := range cs {
		if c.Breaking {
			out = append(out, c)
		}
	}
	return out
}

func index(defs []map[string]any, key string) map[string]map[string]any {
	m := make(map[string]map[string]any, len(defs))
	for _, d := range defs {
		m[keyOf(d, key)] = d
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

type differ struct {
	kind, name string
	changes    []Change
	// refs are the $ref pairs being compared, against cycles.
	refs map[[2]string]bool
}

func (d *differ) add(breaking bool, ptr, format string, args ...any) {
	d.changes = append(d.changes, Change{Breaking: breaking, Kind: d.kind, Name: d.name, Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}

// wording lists changed texts (title, description) as compatible.
func (d *differ) wording(ptr string, old, cur map[string]any, fields ...string) {
	for _, f := range fields {
		if !reflect.DeepEqual(old[f], cur[f]) {
			d.add(false, ptr+"/"+f, "%s changed", f)
		}
	}
}

func (d *differ) tool(old, cur map[string]any) {
	d.wording("", old, cur, "title", "description")
	oi, ci := old["inputSchema"], cur["inputSchema"]
	d.schema("/inputSchema", schemaAt{oi, oi}, schemaAt{ci, ci}, true)
	oo, hasOld := old["outputSchema"]
	co, hasCur := cur["outputSchema"]
	switch {
	case hasOld && !hasCur:
		d.add(true, "/outputSchema", "output schema removed: structured results are no longer promised")
	case !hasOld && hasCur:
		d.add(false, "/outputSchema", "output schema added")
	case hasOld:
		d.schema("/outputSchema", schemaAt{oo, oo}, schemaAt{co, co}, false)
	}
	d.annotations(old, cur)
	for _, f := range sortedKeys(cur) {
		switch f {
		case "name", "title", "description", "inputSchema", "outputSchema", "annotations":
			continue
		}
		if !reflect.DeepEqual(old[f], cur[f]) {
			d.add(false, "/"+escape(f), "%s changed", f)
		}
	}
	for _, f := range sortedKeys(old) {
		if _, ok := cur[f]; !ok && f != "outputSchema" && f != "annotations" && f != "title" && f != "description" {
			d.add(false, "/"+escape(f), "%s removed", f)
		}
	}
}

// hints are the tool annotations, each with the value the spec gives it
// when unset and the value that is the safer promise.
var hints = []struct {
	name        string
	unset, safe bool
	says        string
}{
	{"readOnlyHint", false, true, "read-only"},
	{"destructiveHint", true, false, "destructive"},
	{"idempotentHint", false, true, "idempotent"},
	{"openWorldHint", true, false, "open-world"},
}

// annotations: a hint that moves away from its safer value breaks the
// clients that decided on it (a host that ran a read-only tool unasked);
// a move toward it is compatible. destructiveHint and idempotentHint mean
// something only when readOnlyHint is false.
func (d *differ) annotations(old, cur map[string]any) {
	oa, _ := old["annotations"].(map[string]any)
	ca, _ := cur["annotations"].(map[string]any)
	hint := func(a map[string]any, h string, unset bool) bool {
		if b, ok := a[h].(bool); ok {
			return b
		}
		return unset
	}
	oRO, cRO := hint(oa, "readOnlyHint", false), hint(ca, "readOnlyHint", false)
	for _, h := range hints {
		o, c := hint(oa, h.name, h.unset), hint(ca, h.name, h.unset)
		if (h.name == "destructiveHint" || h.name == "idempotentHint") && (oRO || cRO) {
			continue // the read-only hint says it all
		}
		if o == c {
			continue
		}
		ptr := "/annotations/" + h.name
		if o == h.safe {
			d.add(true, ptr, "no longer %s (%s %v → %v)", h.says, h.name, o, c)
		} else {
			d.add(false, ptr, "now %s (%s %v → %v)", h.says, h.name, o, c)
		}
	}
	if !reflect.DeepEqual(oa["title"], ca["title"]) {
		d.add(false, "/annotations/title", "title changed")
	}
}

func (d *differ) prompt(old, cur map[string]any) {
	d.wording("", old, cur, "title", "description")
	args := func(p map[string]any) (map[string]map[string]any, []string) {
		m := map[string]map[string]any{}
		var order []string
		list, _ := p["arguments"].([]any)
		for _, a := range list {
			if am, ok := a.(map[string]any); ok {
				n, _ := am["name"].(string)
				m[n] = am
				order = append(order, n)
			}
		}
		return m, order
	}
	oa, _ := args(old)
	ca, corder := args(cur)
	for _, n := range sortedKeys(oa) {
		ptr := "/arguments/" + escape(n)
		c, ok := ca[n]
		if !ok {
			d.add(true, ptr, "argument %q removed", n)
			continue
		}
		or, _ := oa[n]["required"].(bool)
		cr, _ := c["required"].(bool)
		switch {
		case cr && !or:
			d.add(true, ptr+"/required", "argument %q is now required", n)
		case or && !cr:
			d.add(false, ptr+"/required", "argument %q is now optional", n)
		}
		d.wording(ptr, oa[n], c, "title", "description")
	}
	for _, n := range corder {
		if _, ok := oa[n]; ok {
			continue
		}
		if r, _ := ca[n]["required"].(bool); r {
			d.add(true, "/arguments/"+escape(n), "new required argument %q", n)
		} else {
			d.add(false, "/arguments/"+escape(n), "new optional argument %q", n)
		}
	}
}

func (d *differ) resource(old, cur map[string]any) {
	if !reflect.DeepEqual(old["mimeType"], cur["mimeType"]) {
		d.add(true, "/mimeType", "MIME type changed from %v to %v", show(old["mimeType"]), show(cur["mimeType"]))
	}
	d.wording("", old, cur, "name", "title", "description")
	for _, f := range sortedKeys(cur) {
		switch f {
		case "uri", "uriTemplate", "mimeType", "name", "title", "description":
			continue
		}
		if !reflect.DeepEqual(old[f], cur[f]) {
			d.add(false, "/"+escape(f), "%s changed", f)
		}
	}
}

// schemaAt is a schema and the root its local $refs resolve against.
type schemaAt struct {
	s    any
	root any
}

// maxDepth bounds how deep the comparison goes into nested schemas.
const maxDepth = 64

// schema compares two JSON Schemas at ptr. For an input schema (in) the new
// one must accept every value the old one accepted: a narrowing breaks the
// callers. For an output schema the new one must promise everything the old
// one promised: a widening breaks the readers.
func (d *differ) schema(ptr string, old, cur schemaAt, in bool) {
	if d.refs == nil {
		d.refs = map[[2]string]bool{}
	}
	d.schemaDepth(ptr, old, cur, in, 0)
}

func (d *differ) schemaDepth(ptr string, old, cur schemaAt, in bool, depth int) {
	if depth > maxDepth {
		return
	}
	old, oref := resolve(old)
	cur, cref := resolve(cur)
	if oref != "" || cref != "" {
		k := [2]string{oref, cref}
		if d.refs[k] {
			return // already being compared further up
		}
		d.refs[k] = true
		defer delete(d.refs, k)
	}
	om, oObj := old.s.(map[string]any)
	cm, cObj := cur.s.(map[string]any)
	if !oObj || !cObj {
		d.boolSchemas(ptr, old.s, cur.s, in)
		return
	}
	d.types(ptr, om, cm, in)
	d.enums(ptr, om, cm, in)
	d.bounds(ptr, om, cm, in)
	d.strict(ptr, om, cm, in)
	d.object(ptr, old, cur, om, cm, in, depth)
	if oi, ok := om["items"]; ok {
		if ci, ok := cm["items"]; ok {
			d.schemaDepth(ptr+"/items", schemaAt{oi, old.root}, schemaAt{ci, cur.root}, in, depth+1)
		} else if !in {
			d.add(true, ptr+"/items", "items no longer constrained")
		} else {
			d.add(false, ptr+"/items", "items no longer constrained")
		}
	} else if _, ok := cm["items"]; ok {
		d.add(in, ptr+"/items", "items now constrained")
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "prefixItems", "contains", "patternProperties", "dependentRequired", "dependentSchemas", "propertyNames", "unevaluatedProperties", "unevaluatedItems"} {
		if !reflect.DeepEqual(strip(om[k]), strip(cm[k])) {
			d.add(true, ptr+"/"+k, "%s changed (not analysed further: taken as breaking)", k)
		}
	}
	for _, k := range []string{"title", "description", "default", "examples"} {
		if !reflect.DeepEqual(om[k], cm[k]) {
			d.add(false, ptr+"/"+k, "%s changed", k)
		}
	}
}

// resolve follows a local $ref ("#/…") of s, returning the schema it names
// and the ref ("" when none).
func resolve(s schemaAt) (schemaAt, string) {
	m, ok := s.s.(map[string]any)
	if !ok {
		return s, ""
	}
	ref, _ := m["$ref"].(string)
	if !strings.HasPrefix(ref, "#") {
		return s, ""
	}
	target := s.root
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		tm, ok := target.(map[string]any)
		if !ok {
			return s, ""
		}
		if target, ok = tm[tok]; !ok {
			return s, ""
		}
	}
	return schemaAt{target, s.root}, ref
}

// boolSchemas compares schemas of which one at least is true or false.
func (d *differ) boolSchemas(ptr string, old, cur any, in bool) {
	accepts := func(s any) (all, none bool) {
		switch v := s.(type) {
		case bool:
			return v, !v
		case map[string]any:
			return len(v) == 0, false
		}
		return true, false // absent
	}
	oAll, oNone := accepts(old)
	cAll, cNone := accepts(cur)
	if oAll == cAll && oNone == cNone && (oAll || oNone || reflect.DeepEqual(old, cur)) {
		return // true and {} are one schema
	}
	wider := (!oAll && cAll) || (oNone && !cNone)
	narrower := (oAll && !cAll) || (!oNone && cNone)
	switch {
	case narrower:
		d.add(in, ptr, "schema narrowed")
	case wider:
		d.add(!in, ptr, "schema widened")
	default:
		d.add(true, ptr, "schema changed")
	}
}

// typeSet is the set of JSON types a schema allows (nil: any).
func typeSet(m map[string]any) map[string]bool {
	switch t := m["type"].(type) {
	case string:
		return map[string]bool{t: true}
	case []any:
		s := map[string]bool{}
		for _, v := range t {
			if str, ok := v.(string); ok {
				s[str] = true
			}
		}
		return s
	}
	return nil
}

func allows(set map[string]bool, t string) bool {
	return set == nil || set[t] || (t == "integer" && set["number"])
}

func (d *differ) types(ptr string, om, cm map[string]any, in bool) {
	ot, ct := typeSet(om), typeSet(cm)
	if reflect.DeepEqual(ot, ct) {
		return
	}
	// narrowed: a type the old schema allowed that the new one does not.
	for _, t := range sortedKeys(ot) {
		if !allows(ct, t) {
			d.add(in, ptr+"/type", "no longer allows %s", t)
		}
	}
	if ot != nil && ct == nil {
		d.add(!in, ptr+"/type", "type no longer constrained")
	}
	for _, t := range sortedKeys(ct) {
		if !allows(ot, t) {
			d.add(!in, ptr+"/type", "now allows %s", t)
		}
	}
	if ot == nil && ct != nil {
		d.add(in, ptr+"/type", "type now constrained")
	}
}

// enumOf is a schema's allowed values (enum, or const as one value;
// nil, false: any value).
func enumOf(m map[string]any) ([]any, bool) {
	if c, ok := m["const"]; ok {
		return []any{c}, true
	}
	e, ok := m["enum"].([]any)
	return e, ok
}

func (d *differ) enums(ptr string, om, cm map[string]any, in bool) {
	oe, oOK := enumOf(om)
	ce, cOK := enumOf(cm)
	at := ptr + "/enum"
	if _, ok := om["const"]; ok {
		at = ptr + "/const"
	} else if _, ok := cm["const"]; ok {
		at = ptr + "/const"
	}
	has := func(list []any, v any) bool {
		return slices.ContainsFunc(list, func(x any) bool { return sameValue(x, v) })
	}
	switch {
	case !oOK && !cOK:
	case oOK && !cOK:
		d.add(!in, at, "values no longer restricted")
	case !oOK && cOK:
		d.add(in, at, "values now restricted to %s", show(ce))
	default:
		for _, v := range oe {
			if !has(ce, v) {
				d.add(in, at, "value %s removed", show(v))
			}
		}
		for _, v := range ce {
			if !has(oe, v) {
				d.add(!in, at, "value %s added", show(v))
			}
		}
	}
}

// lower and upper are the bound keywords: a raised lower bound or a lowered
// upper bound narrows the schema.
var lower = []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
var upper = []string{"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}

// bounds compares the numeric bounds; narrowingBreaks is true for an input
// schema (a narrowing breaks its callers), false for an output one (a
// widening breaks its readers).
func (d *differ) bounds(ptr string, om, cm map[string]any, narrowingBreaks bool) {
	check := func(k string, isLower bool) {
		ov, oOK := number(om[k])
		cv, cOK := number(cm[k])
		var narrowed, widened bool
		switch {
		case !oOK && !cOK:
			return
		case !oOK:
			narrowed = true
		case !cOK:
			widened = true
		default:
			c := cv.Cmp(ov)
			narrowed = (isLower && c > 0) || (!isLower && c < 0)
			widened = (isLower && c < 0) || (!isLower && c > 0)
		}
		switch {
		case narrowed:
			d.add(narrowingBreaks, ptr+"/"+k, "bound tightened (%s %s → %s)", k, show(om[k]), show(cm[k]))
		case widened:
			d.add(!narrowingBreaks, ptr+"/"+k, "bound loosened (%s %s → %s)", k, show(om[k]), show(cm[k]))
		}
	}
	for _, k := range lower {
		check(k, true)
	}
	for _, k := range upper {
		check(k, false)
	}
	if !reflect.DeepEqual(om["multipleOf"], cm["multipleOf"]) {
		d.add(true, ptr+"/multipleOf", "multipleOf changed (%s → %s)", show(om["multipleOf"]), show(cm["multipleOf"]))
	}
}

// strict compares the keywords whose any change may turn a value away
// (pattern, format): added or changed narrows, removed widens.
func (d *differ) strict(ptr string, om, cm map[string]any, in bool) {
	for _, k := range []string{"pattern", "format", "contentEncoding", "contentMediaType"} {
		o, oOK := om[k]
		c, cOK := cm[k]
		switch {
		case reflect.DeepEqual(o, c):
		case !cOK:
			d.add(!in, ptr+"/"+k, "%s %s removed", k, show(o))
		case !oOK:
			d.add(in, ptr+"/"+k, "%s %s added", k, show(c))
		default:
			d.add(true, ptr+"/"+k, "%s changed (%s → %s)", k, show(o), show(c))
		}
	}
}

func (d *differ) object(ptr string, old, cur schemaAt, om, cm map[string]any, in bool, depth int) {
	op, _ := om["properties"].(map[string]any)
	cp, _ := cm["properties"].(map[string]any)
	or, cr := stringSet(om["required"]), stringSet(cm["required"])
	for _, n := range sortedKeys(op) {
		at := ptr + "/properties/" + escape(n)
		c, ok := cp[n]
		if !ok {
			if in {
				d.add(true, at, "parameter %q removed (or renamed)", n)
			} else {
				d.add(true, at, "property %q no longer promised", n)
			}
			continue
		}
		d.schemaDepth(at, schemaAt{op[n], old.root}, schemaAt{c, cur.root}, in, depth+1)
	}
	for _, n := range sortedKeys(cp) {
		if _, ok := op[n]; ok {
			continue
		}
		at := ptr + "/properties/" + escape(n)
		switch {
		case in && cr[n]:
			// reported below, as a new required parameter
		case in:
			d.add(false, at, "new optional parameter %q", n)
		default:
			d.add(false, at, "new property %q", n)
		}
	}
	for _, n := range sortedKeys(cr) {
		if or[n] {
			continue
		}
		switch {
		case in && op[n] == nil:
			d.add(true, ptr+"/required", "new required parameter %q", n)
		case in:
			d.add(true, ptr+"/required", "parameter %q is now required", n)
		default:
			d.add(false, ptr+"/required", "property %q is now always present", n)
		}
	}
	for _, n := range sortedKeys(or) {
		if cr[n] {
			continue
		}
		if in {
			d.add(false, ptr+"/required", "parameter %q is now optional", n)
		} else {
			d.add(true, ptr+"/required", "property %q may now be absent", n)
		}
	}
	oa, oHas := om["additionalProperties"]
	ca, cHas := cm["additionalProperties"]
	switch {
	case oHas && cHas:
		d.schemaDepth(ptr+"/additionalProperties", schemaAt{oa, old.root}, schemaAt{ca, cur.root}, in, depth+1)
	case oHas:
		d.boolSchemas(ptr+"/additionalProperties", oa, true, in)
	case cHas:
		d.boolSchemas(ptr+"/additionalProperties", true, ca, in)
	}
}

func stringSet(v any) map[string]bool {
	s := map[string]bool{}
	list, _ := v.([]any)
	for _, x := range list {
		if str, ok := x.(string); ok {
			s[str] = true
		}
	}
	return s
}

// number reads a numeric keyword exactly.
func number(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number) // locks are decoded with UseNumber
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetString(n.String())
}

// sameValue compares JSON values, numbers by value (1 and 1.0 are one).
func sameValue(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x.Cmp(y) == 0
	}
	return reflect.DeepEqual(a, b)
}

// strip drops the annotations (texts, defaults, examples) of a schema tree,
// so that a wording change inside a composed schema is not taken for a
// change of what it accepts.
func strip(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			switch k {
			case "title", "description", "default", "examples", "$comment":
				continue
			}
			out[k] = strip(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = strip(x)
		}
		return out
	}
	return v
}

// show writes a value for a message.
func show(v any) string {
	if v == nil {
		return "none"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// escape writes a JSON Pointer token (RFC 6901).
func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
