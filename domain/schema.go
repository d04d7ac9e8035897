package domain

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// SchemaError reports a Go type, or a struct tag, that InferSchema or
// InferInputSchema cannot describe as a JSON Schema. Find it with errors.As:
//
//	var se *domain.SchemaError
//	if errors.As(err, &se) { log.Printf("field %s: %s", se.Field, se.Reason) }
type SchemaError struct {
	// Type is the Go type that was passed in (reflect.Type.String(), for
	// example "main.SearchArgs").
	Type string
	// Field is the path of Go field names from Type to the field at fault,
	// joined by dots ("Filter.Range.Min"); fields promoted from embedded
	// structs include the embedded field's name ("Base.ID"), and the
	// elements of slices, arrays and maps add nothing to the path. It is
	// empty when Type itself is at fault.
	Field string
	// Reason says what is wrong, naming the offending Go type or tag.
	Reason string
}

// Error returns "cannot infer JSON Schema for <Type> field <Field>: <Reason>"
// (without the field part when Field is empty).
func (e *SchemaError) Error() string {
	if e.Field == "" {
		return "cannot infer JSON Schema for " + e.Type + ": " + e.Reason
	}
	return "cannot infer JSON Schema for " + e.Type + " field " + e.Field + ": " + e.Reason
}

// InferSchema returns the JSON Schema (draft 2020-12) describing values of
// type t as they travel in JSON, that is as encoding/json marshals them. The
// result is compact JSON (no spaces) with a fixed keyword order, so the same
// type always gives the same bytes. It never panics; a type or struct tag
// that cannot be described gives a *SchemaError.
//
// # Types
//
//   - bool → {"type":"boolean"}; string → {"type":"string"}.
//   - int, int8, int16, int32, int64 → {"type":"integer"}; uint, uint8,
//     uint16, uint32, uint64, uintptr → {"type":"integer","minimum":0}.
//   - float32, float64 and json.Number → {"type":"number"}.
//   - A slice whose element kind is uint8 ([]byte and named byte slices),
//     which encoding/json sends as base64 text →
//     {"type":"string","contentEncoding":"base64"}.
//   - Other slices → {"type":"array","items":S}, S describing the element.
//     An array [N]T → {"type":"array","items":S,"minItems":N,"maxItems":N}
//     (a [N]byte array is an array of integers, as in encoding/json).
//   - A map whose key kind is string or an integer kind, or whose key type
//     implements encoding.TextMarshaler → {"type":"object",
//     "additionalProperties":S}, S describing the value. Other keys are a
//     *SchemaError.
//   - A pointer → the schema of its element. No null is added: a pointer
//     only makes a struct field optional (see below).
//   - Interfaces (any, error, ...) and json.RawMessage → {} (any value).
//   - time.Time → {"type":"string","format":"date-time"}.
//   - Other types implementing json.Marshaler → {}, since their JSON form
//     is unknown; types implementing encoding.TextMarshaler (and not
//     json.Marshaler) → {"type":"string"}. Methods with a pointer receiver
//     count, as they do for encoding/json when the value is addressable.
//   - Structs → {"type":"object","properties":{...},"required":[...],
//     "additionalProperties":false}, described below.
//   - A named type is described by its underlying type
//     (type Operation string → {"type":"string"}), unless it has one of the
//     methods above or a JSONSchema method.
//   - Channels, functions, complex numbers and unsafe pointers cannot be
//     described: *SchemaError.
//
// # Custom schemas
//
// A type T (or *T) that has the method
//
//	JSONSchema() json.RawMessage
//
// with a value or a pointer receiver is described by what that method
// returns, taken as is (compacted). It is called on the zero value of T (on
// new(T) for a pointer receiver), so it must not depend on the value. It must
// return a JSON object, else InferSchema returns a *SchemaError; so does a
// panic in the method. This is how to describe an enum for a named type:
//
//	type Color string
//
//	func (Color) JSONSchema() json.RawMessage {
//		return json.RawMessage(`{"type":"string","enum":["red","green","blue"]}`)
//	}
//
// The returned schema is embedded where the type is used; a "$ref" inside it
// resolves against the document root. As with MarshalJSON, the JSONSchema
// method of an embedded field is promoted: the struct that embeds it is then
// described by that method. It wins over json.Marshaler and
// encoding.TextMarshaler.
//
// # Struct fields
//
// Properties follow encoding/json exactly: unexported fields are skipped;
// the `json` tag gives the name (`json:"name"`, `json:",omitempty"` keeps the
// Go name, `json:"-"` skips the field, a name that encoding/json would reject
// is ignored); the fields of an embedded struct (or pointer to struct)
// without a json name are promoted, and name conflicts are settled as
// encoding/json does (the shallowest field wins, then the only tagged one,
// else all conflicting fields are dropped). The `,string` option makes a
// bool, integer, float or string field {"type":"string"}. Properties keep
// the declaration order (promoted fields sit where the embedded field is).
//
// A property is listed in "required", in declaration order, unless its field
// has the omitempty or omitzero option, or has a pointer type, or is promoted
// through an embedded pointer (a nil one leaves it out). "required" is left
// out when empty. A struct with no properties gives
// {"type":"object","properties":{},"additionalProperties":false}.
//
// # Schema tags
//
// These struct tags on a field add keywords to the field's schema (for a
// pointer field, the schema of its element). An empty tag value counts as
// absent, except for default. Any misuse listed here is a *SchemaError.
//
//   - title:"..." and description:"..." → "title", "description" (any field).
//   - enum:"a,b,c" → "enum"; only for string, integer, number and boolean
//     schemas. Items are split at commas (so a string item cannot contain a
//     comma) and trimmed of surrounding spaces; they are typed like the field:
//     strings as written, integers as decimal integers within the range of
//     the Go type, numbers as JSON numbers, booleans as true or false.
//     Duplicates are an error.
//   - default:"..." → "default", typed like the field: a string schema takes
//     the text verbatim (default:"" is the empty string); integer, number and
//     boolean schemas parse it as for enum; any other schema (arrays,
//     objects, any, recursive references, custom schemas without a single
//     "type") parses it as JSON, which must be valid (and an array for an
//     array schema, an object for an object schema).
//   - minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf →
//     numbers written as JSON numbers (surrounding spaces ignored); only for
//     integer and number schemas. multipleOf must be greater than 0 and
//     minimum must not exceed maximum. A minimum tag replaces the implicit
//     minimum 0 of unsigned integers.
//   - minLength, maxLength → non-negative integers; pattern → a regular
//     expression that Go's regexp package compiles (the schema dialect is
//     ECMA-262, so keep to the common subset); format → any name ("email",
//     "uri", ...); only for string schemas (including time.Time, whose
//     format the tag replaces, []byte and text marshalers). minLength must
//     not exceed maxLength.
//   - minItems, maxItems → non-negative integers; uniqueItems:"true" (or
//     "false", which adds nothing); only for array schemas, and minItems and
//     maxItems not on fixed-size arrays, whose length is already given.
//     minItems must not exceed maxItems.
//
// Tags apply to the field's own schema: enum or pattern on a []string field
// is an error, not a constraint on the items. On a field whose type has a
// JSONSchema method only title, description and default are allowed; they
// are merged into the returned object (replacing the same keywords), and
// default is typed by that object's "type". A `,string` field is described
// as a string: its enum and default items are parsed by the Go type and
// written as encoding/json would quote them (5 → "5"), and the numeric
// tags are not allowed.
//
// # Recursive types
//
// A named type met again while it is being described (type Node struct {
// Children []*Node }) is written as {"$ref":"#/$defs/Node"} and its schema
// goes once under "$defs" at the root, keyed by the Go type name (made
// unique with a "_2", "_3", ... suffix, characters other than letters,
// digits, '_', '.' and '-' replaced by '_'). If t itself is recursive the
// root holds its schema inline and also under "$defs". Types that are not
// recursive are always written inline, wherever they are used.
//
// # Keyword order
//
// Each schema object lists its keywords in this order: "$ref", "type",
// "title", "description", "format", "contentEncoding", "enum", "default",
// "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum",
// "multipleOf", "minLength", "maxLength", "pattern", "items", "minItems",
// "maxItems", "uniqueItems", "properties", "required",
// "additionalProperties", "$defs". A schema returned by a JSONSchema method
// keeps its own order: a title, description or default tag replaces that
// keyword in place, or is inserted after the keywords listed before it
// above. No "$schema" keyword is written.
func InferSchema(t reflect.Type) (json.RawMessage, error) {
	g, err := newRootSchemaGen(t)
	if err != nil {
		return nil, err
	}
	doc, err := g.rootDocument()
	if err != nil {
		return nil, err
	}
	return doc.json(), nil
}

// InferInputSchema is InferSchema for a tool's input: t (or a pointer to it)
// must be a struct or a map whose key kind is string, else it returns a
// *SchemaError ("tool input must be a struct or a map with string keys").
// The root of the result is always {"type":"object",...}; a struct whose
// schema is not an object (it implements json.Marshaler or
// encoding.TextMarshaler, or its JSONSchema method returns no
// "type":"object") is a *SchemaError too. All the rules of InferSchema apply.
func InferInputSchema(t reflect.Type) (json.RawMessage, error) {
	g, err := newRootSchemaGen(t)
	if err != nil {
		return nil, err
	}
	base, err := g.deref(t)
	if err != nil {
		return nil, err
	}
	if base.Kind() != reflect.Struct && (base.Kind() != reflect.Map || base.Key().Kind() != reflect.String) {
		return nil, g.fail("tool input must be a struct or a map with string keys, not %s", base)
	}
	doc, err := g.rootDocument()
	if err != nil {
		return nil, err
	}
	if doc.schemaType() != "object" {
		return nil, g.fail("tool input must be described by an object schema, but %s is described as %s (a json.Marshaler or encoding.TextMarshaler can declare its shape with a JSONSchema method)", base, doc.json())
	}
	return doc.json(), nil
}

// schemaMaxNodes bounds the size of a schema, so that types which share
// deep substructures many times cannot make InferSchema run for ages.
const schemaMaxNodes = 100000

var (
	schemaProviderType      = reflect.TypeFor[interface{ JSONSchema() json.RawMessage }]()
	schemaMarshalerType     = reflect.TypeFor[json.Marshaler]()
	schemaTextMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	schemaTimeType          = reflect.TypeFor[time.Time]()
	schemaRawMessageType    = reflect.TypeFor[json.RawMessage]()
	schemaNumberType        = reflect.TypeFor[json.Number]()

	schemaJSONNumberRe  = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$`)
	schemaJSONIntegerRe = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)$`)
	schemaNaturalRe     = regexp.MustCompile(`^(?:0|[1-9][0-9]*)$`)
)

// schemaNode is one schema object under construction. Empty strings mean
// "keyword absent"; numeric keywords hold their JSON text.
type schemaNode struct {
	ref             string
	typ             string
	title           string
	description     string
	format          string
	contentEncoding string
	enum            []json.RawMessage
	def             json.RawMessage
	minimum         string
	exclMinimum     string
	maximum         string
	exclMaximum     string
	multipleOf      string
	minLength       string
	maxLength       string
	pattern         string
	items           *schemaNode
	minItems        string
	maxItems        string
	fixedLen        bool // an array [N]T: minItems/maxItems come from N
	uniqueItems     bool
	object          bool // write "properties" even when there are none
	props           []schemaProp
	required        []string
	addl            *schemaNode // "additionalProperties" schema
	closed          bool        // "additionalProperties":false
	defs            []schemaProp

	// custom holds the members of a schema returned by a JSONSchema
	// method, in their order; when set, only it is written.
	custom []schemaMember
}

type schemaProp struct {
	name string
	node *schemaNode
}

type schemaMember struct {
	key string
	val json.RawMessage
}

// schemaType returns the node's single "type", if any.
func (n *schemaNode) schemaType() string {
	if n.custom == nil {
		return n.typ
	}
	for _, m := range n.custom {
		if m.key == "type" {
			var s string
			if json.Unmarshal(m.val, &s) == nil {
				return s
			}
			return ""
		}
	}
	return ""
}

// setCustom sets key in a custom schema, replacing it in place, or else
// inserting it after the members that must precede it.
func (n *schemaNode) setCustom(key string, val json.RawMessage, after ...string) {
	for i, m := range n.custom {
		if m.key == key {
			n.custom[i].val = val
			return
		}
	}
	at := 0
	for i, m := range n.custom {
		if slices.Contains(after, m.key) {
			at = i + 1
		}
	}
	n.custom = slices.Insert(n.custom, at, schemaMember{key, val})
}

func (n *schemaNode) json() json.RawMessage {
	w := &schemaWriter{}
	w.node(n)
	return json.RawMessage(w.buf)
}

// schemaDef is a recursive type that goes under "$defs".
type schemaDef struct {
	name string
	node *schemaNode // nil while the type is being described
}

// schemaGen holds the state of one InferSchema call.
type schemaGen struct {
	root     reflect.Type
	path     []string
	active   map[reflect.Type]bool
	defs     map[reflect.Type]*schemaDef
	defNames map[string]bool
	nodes    int
}

func newSchemaGen(root reflect.Type) *schemaGen {
	return &schemaGen{
		root:     root,
		active:   map[reflect.Type]bool{},
		defs:     map[reflect.Type]*schemaDef{},
		defNames: map[string]bool{},
	}
}

// newRootSchemaGen is newSchemaGen for the type an Infer function is
// given; a nil type is a *SchemaError.
func newRootSchemaGen(t reflect.Type) (*schemaGen, error) {
	if t == nil {
		return nil, &SchemaError{Type: "<nil>", Reason: "the type is nil"}
	}
	return newSchemaGen(t), nil
}

// rootDocument describes the root type and returns its schema document.
func (g *schemaGen) rootDocument() (*schemaNode, error) {
	n, err := g.describe(g.root)
	if err != nil {
		return nil, err
	}
	return g.document(n), nil
}

func (g *schemaGen) fail(format string, args ...any) *SchemaError {
	return &SchemaError{
		Type:   g.root.String(),
		Field:  strings.Join(g.path, "."),
		Reason: fmt.Sprintf(format, args...),
	}
}

// deref strips pointers from t, failing on a pointer type that points to
// itself (type P *P).
func (g *schemaGen) deref(t reflect.Type) (reflect.Type, error) {
	var seen []reflect.Type
	for t.Kind() == reflect.Pointer {
		if slices.Contains(seen, t) {
			return nil, g.fail("pointer type %s points to itself", t)
		}
		seen = append(seen, t)
		t = t.Elem()
	}
	return t, nil
}

// document returns the root schema: n, or the body of the root type when it
// is recursive, with the "$defs" collected on the way.
func (g *schemaGen) document(n *schemaNode) *schemaNode {
	if n.ref != "" {
		if base, err := g.deref(g.root); err == nil {
			if d := g.defs[base]; d != nil && d.node != nil {
				n = d.node
			}
		}
	}
	if len(g.defs) == 0 {
		return n
	}
	root := *n
	root.defs = nil
	for _, d := range g.defs {
		root.defs = append(root.defs, schemaProp{d.name, d.node})
	}
	slices.SortFunc(root.defs, func(a, b schemaProp) int { return strings.Compare(a.name, b.name) })
	return &root
}

func (g *schemaGen) defName(t reflect.Type) string {
	name := []rune(t.Name())
	for i, r := range name {
		if !(r == '_' || r == '.' || r == '-' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			name[i] = '_'
		}
	}
	base := string(name)
	unique := base
	for i := 2; g.defNames[unique]; i++ {
		unique = base + "_" + strconv.Itoa(i)
	}
	g.defNames[unique] = true
	return unique
}

// describe returns the schema of t, handling recursion through named types.
func (g *schemaGen) describe(t reflect.Type) (*schemaNode, error) {
	g.nodes++
	if g.nodes > schemaMaxNodes {
		return nil, g.fail("the schema is too large (more than %d schemas); use a JSONSchema method or $defs by hand", schemaMaxNodes)
	}
	t, err := g.deref(t)
	if err != nil {
		return nil, err
	}
	if t.Name() == "" {
		return g.describeType(t)
	}
	if d := g.defs[t]; d != nil && d.node != nil {
		return &schemaNode{ref: "#/$defs/" + d.name}, nil
	}
	if g.active[t] {
		d := g.defs[t]
		if d == nil {
			d = &schemaDef{name: g.defName(t)}
			g.defs[t] = d
		}
		return &schemaNode{ref: "#/$defs/" + d.name}, nil
	}
	g.active[t] = true
	n, err := g.describeType(t)
	delete(g.active, t)
	if err != nil {
		return nil, err
	}
	if d := g.defs[t]; d != nil {
		d.node = n
		return &schemaNode{ref: "#/$defs/" + d.name}, nil
	}
	return n, nil
}

// schemaImplements reports whether t or *t implements iface.
func schemaImplements(t, iface reflect.Type) bool {
	return t.Implements(iface) || t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface)
}

// describeType describes t, which is not a pointer.
func (g *schemaGen) describeType(t reflect.Type) (*schemaNode, error) {
	if t.Kind() == reflect.Interface {
		return &schemaNode{}, nil
	}
	if schemaImplements(t, schemaProviderType) {
		return g.custom(t)
	}
	switch t {
	case schemaTimeType:
		return &schemaNode{typ: "string", format: "date-time"}, nil
	case schemaRawMessageType:
		return &schemaNode{}, nil
	case schemaNumberType:
		return &schemaNode{typ: "number"}, nil
	}
	if schemaImplements(t, schemaMarshalerType) {
		return &schemaNode{}, nil
	}
	if schemaImplements(t, schemaTextMarshalerType) {
		return &schemaNode{typ: "string"}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &schemaNode{typ: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &schemaNode{typ: "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &schemaNode{typ: "integer", minimum: "0"}, nil
	case reflect.Float32, reflect.Float64:
		return &schemaNode{typ: "number"}, nil
	case reflect.String:
		return &schemaNode{typ: "string"}, nil
	case reflect.Slice:
		if schemaIsByteSlice(t) {
			return &schemaNode{typ: "string", contentEncoding: "base64"}, nil
		}
		items, err := g.describe(t.Elem())
		if err != nil {
			return nil, err
		}
		return &schemaNode{typ: "array", items: items}, nil
	case reflect.Array:
		items, err := g.describe(t.Elem())
		if err != nil {
			return nil, err
		}
		n := strconv.Itoa(t.Len())
		return &schemaNode{typ: "array", items: items, minItems: n, maxItems: n, fixedLen: true}, nil
	case reflect.Map:
		switch k := t.Key(); k.Kind() {
		case reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !k.Implements(schemaTextMarshalerType) {
				return nil, g.fail("unsupported map key type %s in %s (keys must be strings, integers or implement encoding.TextMarshaler)", k, t)
			}
		}
		addl, err := g.describe(t.Elem())
		if err != nil {
			return nil, err
		}
		return &schemaNode{typ: "object", addl: addl}, nil
	case reflect.Struct:
		return g.describeStruct(t)
	default:
		return nil, g.fail("unsupported type %s (%s values cannot be represented in JSON)", t, schemaKindName(t))
	}
}

func schemaKindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Chan:
		return "channel"
	case reflect.Func:
		return "function"
	case reflect.Complex64, reflect.Complex128:
		return "complex number"
	case reflect.UnsafePointer:
		return "unsafe pointer"
	}
	return t.Kind().String()
}

// schemaIsByteSlice reports whether encoding/json sends t as base64 text.
func schemaIsByteSlice(t reflect.Type) bool {
	if t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.Uint8 {
		return false
	}
	p := reflect.PointerTo(t.Elem())
	return !p.Implements(schemaMarshalerType) && !p.Implements(schemaTextMarshalerType)
}

// custom calls the JSONSchema method of t.
func (g *schemaGen) custom(t reflect.Type) (*schemaNode, error) {
	v := reflect.Zero(t)
	method := t.String() + ".JSONSchema"
	if !t.Implements(schemaProviderType) {
		v = reflect.New(t)
		method = "(*" + t.String() + ").JSONSchema"
	}
	raw, panicked := schemaCall(v)
	if panicked != nil {
		return nil, g.fail("%s panicked: %v", method, panicked)
	}
	members, ok := schemaObjectMembers(raw)
	if !ok {
		return nil, g.fail("%s must return a JSON object, got %q", method, schemaTruncate(string(raw)))
	}
	return &schemaNode{custom: members}, nil
}

func schemaCall(v reflect.Value) (raw json.RawMessage, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	p, ok := v.Interface().(interface{ JSONSchema() json.RawMessage })
	if !ok {
		return nil, "the method cannot be called"
	}
	return p.JSONSchema(), nil
}

func schemaTruncate(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// schemaObjectMembers splits a JSON object into its members, in order,
// with each value compacted. It reports false if raw is not one valid JSON
// object.
func schemaObjectMembers(raw []byte) ([]schemaMember, bool) {
	if !json.Valid(raw) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	members := []schemaMember{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := tok.(string)
		if !ok {
			return nil, false
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, false
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, val); err != nil {
			return nil, false
		}
		members = append(members, schemaMember{key, buf.Bytes()})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return members, true
}

// schemaField is a struct field as encoding/json sees it.
type schemaField struct {
	name   string // JSON name
	tagged bool   // the name comes from the json tag
	index  []int
	goPath []string
	typ    reflect.Type
	tag    reflect.StructTag
	omit   bool // omitempty or omitzero
	quoted bool // the ,string option applies
	viaPtr bool // promoted through an embedded pointer
}

// schemaStructFields lists the JSON properties of struct type t following
// the rules of encoding/json: promotion of embedded structs level by level,
// then the dominance rules for names that occur more than once.
func schemaStructFields(t reflect.Type) []schemaField {
	type embedded struct {
		typ    reflect.Type
		index  []int
		goPath []string
		viaPtr bool
	}
	var fields []schemaField
	visited := map[reflect.Type]bool{}
	next := []embedded{{typ: t}}
	nextCount := map[reflect.Type]int{}
	for len(next) > 0 {
		current, count := next, nextCount
		next, nextCount = nil, map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := range e.typ.NumField() {
				sf := e.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !schemaValidName(name) {
					name = ""
				}
				index := append(slices.Clip(e.index), i)
				goPath := append(slices.Clip(e.goPath), sf.Name)
				ft, ptr := sf.Type, false
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft, ptr = ft.Elem(), true
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					nextCount[ft]++
					if nextCount[ft] == 1 {
						next = append(next, embedded{typ: ft, index: index, goPath: goPath, viaPtr: e.viaPtr || ptr})
					}
					continue
				}
				f := schemaField{
					name:   name,
					tagged: name != "",
					index:  index,
					goPath: goPath,
					typ:    sf.Type,
					tag:    sf.Tag,
					viaPtr: e.viaPtr,
				}
				if f.name == "" {
					f.name = sf.Name
				}
				for opt := range strings.SplitSeq(opts, ",") {
					switch opt {
					case "omitempty", "omitzero":
						f.omit = true
					case "string":
						f.quoted = schemaQuotable(ft)
					}
				}
				fields = append(fields, f)
				if count[e.typ] > 1 {
					// The embedded struct occurs more than once at this
					// depth: its fields are ambiguous and a duplicate
					// makes the dominance rule drop them.
					fields = append(fields, f)
				}
			}
		}
	}

	byName := map[string][]int{}
	for i, f := range fields {
		byName[f.name] = append(byName[f.name], i)
	}
	var out []schemaField
	for i, f := range fields {
		same := byName[f.name]
		if same[0] != i {
			continue // the group is settled at its first member
		}
		if w, ok := schemaDominant(fields, same); ok {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b schemaField) int { return slices.Compare(a.index, b.index) })
	return out
}

// schemaDominant picks the field that wins among fields with one name: the
// shallowest, and among those the only tagged one; none if that is
// ambiguous.
func schemaDominant(fields []schemaField, group []int) (schemaField, bool) {
	depth := len(fields[group[0]].index)
	for _, i := range group {
		depth = min(depth, len(fields[i].index))
	}
	var shallow, tagged []int
	for _, i := range group {
		if len(fields[i].index) == depth {
			shallow = append(shallow, i)
			if fields[i].tagged {
				tagged = append(tagged, i)
			}
		}
	}
	switch {
	case len(shallow) == 1:
		return fields[shallow[0]], true
	case len(tagged) == 1:
		return fields[tagged[0]], true
	}
	return schemaField{}, false
}

// schemaValidName reports whether encoding/json accepts name as a key from
// a json tag.
func schemaValidName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", r) && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// schemaQuotable reports whether the ,string option changes how
// encoding/json encodes a value of type t (t not a pointer).
func schemaQuotable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return !schemaImplements(t, schemaMarshalerType) && !schemaImplements(t, schemaTextMarshalerType)
	}
	return false
}

func (g *schemaGen) describeStruct(t reflect.Type) (*schemaNode, error) {
	n := &schemaNode{typ: "object", object: true, closed: true}
	for _, f := range schemaStructFields(t) {
		depth := len(g.path)
		g.path = append(g.path, f.goPath...)
		var fn *schemaNode
		var err error
		if f.quoted {
			fn = &schemaNode{typ: "string"}
		} else {
			fn, err = g.describe(f.typ)
		}
		if err == nil {
			err = g.applyTags(fn, f)
		}
		g.path = g.path[:depth]
		if err != nil {
			return nil, err
		}
		n.props = append(n.props, schemaProp{f.name, fn})
		if !f.omit && f.typ.Kind() != reflect.Pointer && !f.viaPtr {
			n.required = append(n.required, f.name)
		}
	}
	return n, nil
}

// applyTags adds the keywords of f's schema tags to n, f's schema.
func (g *schemaGen) applyTags(n *schemaNode, f schemaField) error {
	tag := f.tag
	vt := f.typ // the Go type that values are parsed for
	if d, err := g.deref(vt); err == nil {
		vt = d
	}
	st := n.schemaType()

	title, description := tag.Get("title"), tag.Get("description")
	if n.custom != nil {
		if title != "" {
			n.setCustom("title", schemaQuote(title), "$ref", "type")
		}
		if description != "" {
			n.setCustom("description", schemaQuote(description), "$ref", "type", "title")
		}
		for _, name := range []string{"enum", "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf",
			"minLength", "maxLength", "pattern", "format", "minItems", "maxItems", "uniqueItems"} {
			if tag.Get(name) != "" {
				return g.fail("tag %s is not allowed: %s provides its own schema with a JSONSchema method (only title, description and default may be added)", name, vt)
			}
		}
		if s, ok := tag.Lookup("default"); ok {
			v, err := g.parseValue("default", s, st, vt, false)
			if err != nil {
				return err
			}
			n.setCustom("default", v, "$ref", "type", "title", "description", "format", "contentEncoding", "enum")
		}
		return nil
	}
	if title != "" {
		n.title = title
	}
	if description != "" {
		n.description = description
	}

	// allowed checks that tag name fits the schema type.
	allowed := func(name string, types ...string) error {
		if slices.Contains(types, st) {
			return nil
		}
		what := "a field without a single type"
		switch st {
		case "integer", "object", "array":
			what = "an " + st + " field"
		case "string", "number", "boolean":
			what = "a " + st + " field"
		}
		if f.quoted {
			what += " (the ,string option makes it a string)"
		}
		list := types[len(types)-1]
		if len(types) > 1 {
			list = strings.Join(types[:len(types)-1], ", ") + " or " + list
		}
		return g.fail("tag %s is only allowed on %s fields, not on %s", name, list, what)
	}

	if s := tag.Get("enum"); s != "" {
		if err := allowed("enum", "string", "integer", "number", "boolean"); err != nil {
			return err
		}
		seen := map[string]bool{}
		n.enum = nil
		for item := range strings.SplitSeq(s, ",") {
			v, err := g.parseValue("enum", strings.TrimSpace(item), st, vt, f.quoted)
			if err != nil {
				return err
			}
			if seen[string(v)] {
				return g.fail("tag enum lists %s twice", v)
			}
			seen[string(v)] = true
			n.enum = append(n.enum, v)
		}
	}
	if s, ok := tag.Lookup("default"); ok {
		v, err := g.parseValue("default", s, st, vt, f.quoted)
		if err != nil {
			return err
		}
		n.def = v
	}

	numbers := []struct {
		name string
		dst  *string
	}{
		{"minimum", &n.minimum},
		{"exclusiveMinimum", &n.exclMinimum},
		{"maximum", &n.maximum},
		{"exclusiveMaximum", &n.exclMaximum},
		{"multipleOf", &n.multipleOf},
	}
	for _, k := range numbers {
		s := strings.TrimSpace(tag.Get(k.name))
		if s == "" {
			continue
		}
		if err := allowed(k.name, "integer", "number"); err != nil {
			return err
		}
		x, ok := schemaParseNumber(s)
		if !ok {
			return g.fail("tag %s: %q is not a finite JSON number", k.name, s)
		}
		if k.name == "multipleOf" && x <= 0 {
			return g.fail("tag multipleOf must be greater than 0, not %s", s)
		}
		*k.dst = s
	}
	if n.minimum != "" && n.maximum != "" {
		lo, _ := schemaParseNumber(n.minimum)
		hi, _ := schemaParseNumber(n.maximum)
		if lo > hi {
			return g.fail("minimum %s is greater than maximum %s", n.minimum, n.maximum)
		}
	}

	naturals := []struct {
		name  string
		dst   *string
		types []string
	}{
		{"minLength", &n.minLength, []string{"string"}},
		{"maxLength", &n.maxLength, []string{"string"}},
		{"minItems", &n.minItems, []string{"array"}},
		{"maxItems", &n.maxItems, []string{"array"}},
	}
	for _, k := range naturals {
		s := strings.TrimSpace(tag.Get(k.name))
		if s == "" {
			continue
		}
		if err := allowed(k.name, k.types...); err != nil {
			return err
		}
		if n.fixedLen {
			return g.fail("tag %s is not allowed on the fixed-size array %s", k.name, vt)
		}
		if _, err := strconv.Atoi(s); err != nil || !schemaNaturalRe.MatchString(s) {
			return g.fail("tag %s: %q is not a non-negative integer", k.name, s)
		}
		*k.dst = s
	}
	for _, pair := range [][2]*string{{&n.minLength, &n.maxLength}, {&n.minItems, &n.maxItems}} {
		if *pair[0] != "" && *pair[1] != "" {
			lo, _ := strconv.Atoi(*pair[0])
			hi, _ := strconv.Atoi(*pair[1])
			if lo > hi {
				what := "Length"
				if pair[0] == &n.minItems {
					what = "Items"
				}
				return g.fail("min%s %d is greater than max%s %d", what, lo, what, hi)
			}
		}
	}

	if s := tag.Get("pattern"); s != "" {
		if err := allowed("pattern", "string"); err != nil {
			return err
		}
		if _, err := regexp.Compile(s); err != nil {
			return g.fail("tag pattern: %v", err)
		}
		n.pattern = s
	}
	if s := tag.Get("format"); s != "" {
		if err := allowed("format", "string"); err != nil {
			return err
		}
		n.format = s
	}
	if s := strings.TrimSpace(tag.Get("uniqueItems")); s != "" {
		if err := allowed("uniqueItems", "array"); err != nil {
			return err
		}
		switch s {
		case "true":
			n.uniqueItems = true
		case "false":
			n.uniqueItems = false
		default:
			return g.fail("tag uniqueItems: %q is not true or false", s)
		}
	}
	return nil
}

// schemaParseNumber parses a finite number written as a JSON number.
func schemaParseNumber(s string) (float64, bool) {
	if !schemaJSONNumberRe.MatchString(s) {
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	return x, err == nil && !math.IsInf(x, 0)
}

// parseValue turns the text of an enum item or a default into a JSON value
// for a schema of type st describing Go type vt. With quoted (the ,string
// option) the value is parsed by vt's kind and written as a JSON string
// holding its JSON text, as encoding/json sends it.
func (g *schemaGen) parseValue(tagName, s, st string, vt reflect.Type, quoted bool) (json.RawMessage, error) {
	if quoted {
		kind := map[reflect.Kind]string{reflect.Bool: "boolean", reflect.String: "string", reflect.Float32: "number", reflect.Float64: "number"}[vt.Kind()]
		if kind == "" {
			kind = "integer"
		}
		var v json.RawMessage
		var err error
		if kind == "string" {
			v, err = json.Marshal(s) // encoding/json quotes the string the same way
		} else {
			v, err = g.parseValue(tagName, strings.TrimSpace(s), kind, vt, false)
		}
		if err != nil {
			return nil, err
		}
		return schemaQuote(string(v)), nil
	}
	switch st {
	case "string":
		return schemaQuote(s), nil
	case "integer":
		s = strings.TrimSpace(s)
		if !schemaJSONIntegerRe.MatchString(s) {
			return nil, g.fail("tag %s: %q is not an integer", tagName, s)
		}
		switch vt.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			x, err := strconv.ParseInt(s, 10, vt.Bits())
			if err != nil {
				return nil, g.fail("tag %s: %s is out of range for %s", tagName, s, vt)
			}
			return json.RawMessage(strconv.FormatInt(x, 10)), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			x, err := strconv.ParseUint(s, 10, vt.Bits())
			if err != nil {
				return nil, g.fail("tag %s: %s is out of range for %s", tagName, s, vt)
			}
			return json.RawMessage(strconv.FormatUint(x, 10)), nil
		}
		return json.RawMessage(s), nil
	case "number":
		s = strings.TrimSpace(s)
		bits := 64
		if vt.Kind() == reflect.Float32 {
			bits = 32
		}
		if !schemaJSONNumberRe.MatchString(s) {
			return nil, g.fail("tag %s: %q is not a JSON number", tagName, s)
		}
		x, err := strconv.ParseFloat(s, bits)
		if err != nil || math.IsInf(x, 0) {
			return nil, g.fail("tag %s: %s is out of range for %s", tagName, s, vt)
		}
		var v []byte
		if bits == 32 {
			v, err = json.Marshal(float32(x))
		} else {
			v, err = json.Marshal(x)
		}
		if err != nil {
			return nil, g.fail("tag %s: %v", tagName, err)
		}
		return v, nil
	case "boolean":
		switch s = strings.TrimSpace(s); s {
		case "true", "false":
			return json.RawMessage(s), nil
		}
		return nil, g.fail("tag %s: %q is not true or false", tagName, s)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil || !json.Valid([]byte(s)) {
		return nil, g.fail("tag %s: %q is not valid JSON", tagName, schemaTruncate(s))
	}
	v := buf.Bytes()
	if st == "array" && v[0] != '[' || st == "object" && v[0] != '{' {
		return nil, g.fail("tag %s: %s is not a JSON %s", tagName, schemaTruncate(string(v)), st)
	}
	return v, nil
}

// schemaQuote returns s as a JSON string.
func schemaQuote(s string) json.RawMessage {
	return schemaAppendString(nil, s)
}

// schemaAppendString appends s to b as a JSON string. Unlike encoding/json
// it does not escape <, > and &, so text stays readable; invalid UTF-8
// becomes U+FFFD.
func schemaAppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// schemaWriter writes schema nodes as compact JSON in the documented
// keyword order.
type schemaWriter struct {
	buf   []byte
	comma bool
}

func (w *schemaWriter) key(k string) {
	if w.comma {
		w.buf = append(w.buf, ',')
	}
	w.comma = true
	w.buf = schemaAppendString(w.buf, k)
	w.buf = append(w.buf, ':')
}

func (w *schemaWriter) str(k, v string) {
	if v != "" {
		w.key(k)
		w.buf = schemaAppendString(w.buf, v)
	}
}

func (w *schemaWriter) raw(k, v string) {
	if v != "" {
		w.key(k)
		w.buf = append(w.buf, v...)
	}
}

func (w *schemaWriter) sub(k string, n *schemaNode) {
	w.key(k)
	w.node(n)
}

func (w *schemaWriter) props(k string, props []schemaProp) {
	w.key(k)
	w.buf = append(w.buf, '{')
	w.comma = false
	for _, p := range props {
		w.sub(p.name, p.node)
	}
	w.buf = append(w.buf, '}')
	w.comma = true
}

// schemaArray writes the member k, an array of items, each appended by
// add.
func schemaArray[T any](w *schemaWriter, k string, items []T, add func([]byte, T) []byte) {
	w.key(k)
	w.buf = append(w.buf, '[')
	for i, v := range items {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = add(w.buf, v)
	}
	w.buf = append(w.buf, ']')
}

func (w *schemaWriter) node(n *schemaNode) {
	w.buf = append(w.buf, '{')
	w.comma = false
	if n.custom != nil {
		for _, m := range n.custom {
			w.raw(m.key, string(m.val))
		}
		w.buf = append(w.buf, '}')
		w.comma = true
		return
	}
	w.str("$ref", n.ref)
	w.str("type", n.typ)
	w.str("title", n.title)
	w.str("description", n.description)
	w.str("format", n.format)
	w.str("contentEncoding", n.contentEncoding)
	if n.enum != nil {
		schemaArray(w, "enum", n.enum, func(b []byte, v json.RawMessage) []byte { return append(b, v...) })
	}
	w.raw("default", string(n.def))
	w.raw("minimum", n.minimum)
	w.raw("exclusiveMinimum", n.exclMinimum)
	w.raw("maximum", n.maximum)
	w.raw("exclusiveMaximum", n.exclMaximum)
	w.raw("multipleOf", n.multipleOf)
	w.raw("minLength", n.minLength)
	w.raw("maxLength", n.maxLength)
	w.str("pattern", n.pattern)
	if n.items != nil {
		w.sub("items", n.items)
	}
	w.raw("minItems", n.minItems)
	w.raw("maxItems", n.maxItems)
	if n.uniqueItems {
		w.raw("uniqueItems", "true")
	}
	if n.object {
		w.props("properties", n.props)
	}
	if len(n.required) > 0 {
		schemaArray(w, "required", n.required, schemaAppendString)
	}
	if n.addl != nil {
		w.sub("additionalProperties", n.addl)
	} else if n.closed {
		w.raw("additionalProperties", "false")
	}
	if len(n.defs) > 0 {
		w.props("$defs", n.defs)
	}
	w.buf = append(w.buf, '}')
	w.comma = true
}
