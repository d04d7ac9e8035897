package jsonschema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Problem is one way in which a value breaks its schema.
type Problem struct {
	// Path is the JSON Pointer (RFC 6901) of the offending value inside the
	// validated value: "" for the value itself, "/a/0/b" for a nested one.
	Path string
	// Message says what is wrong in words, without the path, e.g.
	// `got string, want number` or `missing property "b"`.
	Message string
}

// String returns "path: message", or the message alone for the root.
func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// maxShown is the most problems [ValidationError.Error] spells out.
const maxShown = 8

// ValidationError reports a value that does not match its schema. Its
// message is fit to show a client: it has no schema locations, file names
// or Go types.
type ValidationError struct {
	// Problems lists every problem found, sorted by Path (array indexes in
	// numeric order), problems at the same path in the schema's keyword
	// order. It is never empty.
	Problems []Problem

	err error // why the value could not be validated at all, if that is the problem
}

// Error returns the problems as "path: message", joined with "; ". After
// eight problems it says how many more there are.
func (e *ValidationError) Error() string { return joinProblems(e.Problems) }

// Unwrap returns why the value could not be validated at all (it wraps
// [ports.ErrUndecodable]), nil for a value that breaks the schema.
func (e *ValidationError) Unwrap() error { return e.err }

func joinProblems(ps []Problem) string {
	if len(ps) == 0 {
		return "value does not match the schema"
	}
	if len(ps) == 1 {
		return ps[0].String()
	}
	var b strings.Builder
	for i, p := range ps {
		if i == maxShown {
			fmt.Fprintf(&b, "; and %d more", len(ps)-maxShown)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// problems flattens a santhosh-tekuri error tree into sorted, de-duplicated
// problems.
func problems(ve *sjs.ValidationError) []Problem {
	var f flattener
	f.walk(ve)
	items := f.out
	slices.SortStableFunc(items, func(a, b item) int { return comparePointers(a.Path, b.Path) })
	// One keyword may report several problems at one path (propertyNames,
	// one per name; dependentRequired, one per property), in the order the
	// library iterated a map in: they are put in the order of their
	// messages, so that the error reads the same every time.
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && items[j].Path == items[i].Path && items[j].kind == items[i].kind {
			j++
		}
		slices.SortStableFunc(items[i:j], func(a, b item) int { return strings.Compare(a.Message, b.Message) })
		i = j
	}
	ps := make([]Problem, 0, len(items))
	for i := 0; i < len(items); i++ {
		it := items[i]
		if it.missing != nil {
			// One message for the missing properties of a location, which
			// allOf or $ref may split into several.
			missing := slices.Clone(it.missing)
			for i+1 < len(items) && items[i+1].missing != nil && items[i+1].Path == it.Path {
				i++
				for _, m := range items[i].missing {
					if !slices.Contains(missing, m) {
						missing = append(missing, m)
					}
				}
			}
			it.Message = requiredMessage(missing)
		}
		if !seen(ps, it.Problem) {
			ps = append(ps, it.Problem)
		}
	}
	return ps
}

// seen reports whether ps, sorted by path, ends with problems at p.Path
// that include p.
func seen(ps []Problem, p Problem) bool {
	for i := len(ps) - 1; i >= 0 && ps[i].Path == p.Path; i-- {
		if ps[i].Message == p.Message {
			return true
		}
	}
	return false
}

// item is a Problem while flattening.
type item struct {
	Problem
	missing []string     // the missing properties of a "required" problem
	kind    reflect.Type // of the library's error: the keyword that failed
}

type flattener struct {
	out []item
}

func (f *flattener) add(ve *sjs.ValidationError, msg string) {
	it := item{Problem: Problem{Path: pointer(ve.InstanceLocation), Message: msg}, kind: reflect.TypeOf(ve.ErrorKind)}
	if r, ok := ve.ErrorKind.(*kind.Required); ok {
		it.missing = r.Missing
	}
	f.out = append(f.out, it)
}

func (f *flattener) walkCauses(ve *sjs.ValidationError) {
	for _, c := range ve.Causes {
		f.walk(c)
	}
}

func (f *flattener) walk(ve *sjs.ValidationError) {
	switch k := ve.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		if len(ve.Causes) == 0 {
			f.add(ve, "value does not match the schema")
			return
		}
		f.walkCauses(ve)
	case *kind.AnyOf:
		f.alternatives(ve, `"anyOf"`)
	case *kind.OneOf:
		if len(k.Subschemas) == 0 {
			f.alternatives(ve, `"oneOf"`)
			return
		}
		f.add(ve, fmt.Sprintf(`value matches more than one "oneOf" alternative (%d and %d)`, k.Subschemas[0], k.Subschemas[1]))
	default:
		f.add(ve, describe(ve.ErrorKind))
	}
}

// alternatives reports an anyOf or a oneOf that no alternative matched.
//
// alternatives that failed only because the value has another type ("got
// string, want object") are set aside. If they are all like that, the
// result is one type problem listing every type wanted. If exactly one
// alternative is left, the value was evidently meant for it, and its
// problems are reported. Otherwise the result is one problem saying that no
// alternative matched.
func (f *flattener) alternatives(ve *sjs.ValidationError, keyword string) {
	path := pointer(ve.InstanceLocation)
	var (
		got   string
		wants []string
		kept  [][]item
	)
	for _, c := range ve.Causes {
		if t, ok := onlyTypeError(c); ok && pointer(c.InstanceLocation) == path {
			got = t.Got
			for _, w := range t.Want {
				if !slices.Contains(wants, w) {
					wants = append(wants, w)
				}
			}
			continue
		}
		var sub flattener
		sub.walk(c)
		kept = append(kept, sub.out)
	}
	switch {
	case len(kept) == 0 && len(wants) > 0:
		f.out = append(f.out, item{Problem: Problem{Path: path, Message: "got " + got + ", want " + strings.Join(wants, " or ")}})
	case len(kept) == 1 && len(kept[0]) > 0:
		f.out = append(f.out, kept[0]...)
	default:
		f.out = append(f.out, item{Problem: Problem{Path: path, Message: "value does not match any " + keyword + " alternative"}})
	}
}

// onlyTypeError reports whether ve is, once wrappers are peeled off, a
// single type mismatch.
func onlyTypeError(ve *sjs.ValidationError) (*kind.Type, bool) {
	for {
		if t, ok := ve.ErrorKind.(*kind.Type); ok {
			return t, true
		}
		switch ve.ErrorKind.(type) {
		case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
			if len(ve.Causes) != 1 {
				return nil, false
			}
			ve = ve.Causes[0]
		default:
			return nil, false
		}
	}
}

// printer renders messages of kinds this file does not know (custom
// vocabularies).
var printer = message.NewPrinter(language.English)

// describe returns the message for one failed keyword.
func describe(k sjs.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return "got " + k.Got + ", want " + strings.Join(k.Want, " or ")
	case *kind.Enum:
		return enumMessage(k.Want)
	case *kind.Const:
		if !isPrimitive(k.Want) {
			return "value must equal the schema's constant"
		}
		return "value must be " + display(k.Want)
	case *kind.Format:
		msg := display(k.Got) + " is not a valid " + k.Want
		// The library's own reasons are short ("missing @"); errors it
		// passes on from Go packages (strconv, time, net/url) are not fit
		// for a client.
		if le, ok := k.Err.(interface{ LocalizedError(*message.Printer) string }); ok {
			msg += ": " + le.LocalizedError(printer)
		}
		return msg
	case *kind.Required:
		return requiredMessage(k.Missing)
	case *kind.DependentRequired:
		return "property " + quote(k.Prop) + " requires " + plural(len(k.Missing), "property ", "properties ") + quoteList(k.Missing)
	case *kind.Dependency:
		return "property " + quote(k.Prop) + " requires " + plural(len(k.Missing), "property ", "properties ") + quoteList(k.Missing)
	case *kind.AdditionalProperties:
		names := slices.Sorted(slices.Values(k.Properties))
		return plural(len(names), "property ", "properties ") + quoteList(names) + plural(len(names), " is", " are") + " not allowed"
	case *kind.PropertyNames:
		return "property name " + quote(k.Property) + " is not allowed"
	case *kind.MinProperties:
		return fmt.Sprintf("must have at least %d %s, got %d", k.Want, plural(k.Want, "property", "properties"), k.Got)
	case *kind.MaxProperties:
		return fmt.Sprintf("must have at most %d %s, got %d", k.Want, plural(k.Want, "property", "properties"), k.Got)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d %s, got %d", k.Want, plural(k.Want, "item", "items"), k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d %s, got %d", k.Want, plural(k.Want, "item", "items"), k.Got)
	case *kind.AdditionalItems:
		return fmt.Sprintf("too many items: %d more than allowed", k.Count)
	case *kind.UniqueItems:
		return fmt.Sprintf("items %d and %d are equal, items must be unique", k.Duplicates[0], k.Duplicates[1])
	case *kind.Contains:
		return `no item matches the "contains" schema`
	case *kind.MinContains:
		return fmt.Sprintf(`at least %d %s must match the "contains" schema, got %d`, k.Want, plural(k.Want, "item", "items"), len(k.Got))
	case *kind.MaxContains:
		return fmt.Sprintf(`at most %d %s may match the "contains" schema, got %d`, k.Want, plural(k.Want, "item", "items"), len(k.Got))
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d %s long, got %d", k.Want, plural(k.Want, "character", "characters"), k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d %s long, got %d", k.Want, plural(k.Want, "character", "characters"), k.Got)
	case *kind.Pattern:
		return display(k.Got) + " does not match pattern " + quote(k.Want)
	case *kind.Minimum:
		return "must be at least " + ratString(k.Want) + ", got " + ratString(k.Got)
	case *kind.Maximum:
		return "must be at most " + ratString(k.Want) + ", got " + ratString(k.Got)
	case *kind.ExclusiveMinimum:
		return "must be greater than " + ratString(k.Want) + ", got " + ratString(k.Got)
	case *kind.ExclusiveMaximum:
		return "must be less than " + ratString(k.Want) + ", got " + ratString(k.Got)
	case *kind.MultipleOf:
		return "must be a multiple of " + ratString(k.Want) + ", got " + ratString(k.Got)
	case *kind.Not:
		return `value must not match the "not" schema`
	case *kind.FalseSchema:
		return "value is not allowed"
	case *kind.ContentEncoding:
		return "value is not valid " + k.Want
	case *kind.ContentMediaType:
		return "value is not valid " + k.Want
	case *kind.ContentSchema:
		return `decoded content does not match the "contentSchema"`
	case *kind.InvalidJsonValue:
		return "value is not a JSON value"
	case *kind.RefCycle:
		return "schema has a reference cycle"
	}
	return stripURL(k.LocalizedString(printer))
}

func requiredMessage(missing []string) string {
	return plural(len(missing), "missing property ", "missing properties ") + quoteList(missing)
}

// maxEnum is the most allowed values an enum message lists.
const maxEnum = 12

func enumMessage(want []any) string {
	for _, w := range want {
		if !isPrimitive(w) {
			return "value must be one of the allowed values"
		}
	}
	if len(want) == 1 {
		return "value must be " + display(want[0])
	}
	var b strings.Builder
	b.WriteString("value must be one of ")
	for i, w := range want {
		if i == maxEnum {
			fmt.Fprintf(&b, ", ... (%d values)", len(want))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(display(w))
	}
	return b.String()
}

func isPrimitive(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return false
	}
	return true
}

// maxDisplay is the most characters of a string value a message repeats.
const maxDisplay = 64

// display renders a JSON value as in JSON, strings quoted and shortened.
func display(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return quote(v)
	case json.Number:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	s := fmt.Sprint(v)
	if len(s) > maxDisplay {
		return "value"
	}
	return s
}

// quote returns s in double quotes, shortened to maxDisplay characters.
func quote(s string) string {
	if utf8.RuneCountInString(s) > maxDisplay {
		n := 0
		for i := range s {
			if n == maxDisplay {
				s = s[:i] + "…"
				break
			}
			n++
		}
	}
	return strconv.Quote(s)
}

func quoteList(ss []string) string {
	var b strings.Builder
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(s))
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ratString renders a number exactly when it is short, else as a float.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		if s := r.Num().String(); len(s) <= 21 {
			return s
		}
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// pointer returns the JSON Pointer of tokens.
func pointer(tokens []string) string {
	switch len(tokens) {
	case 0:
		return ""
	case 1:
		return "/" + escapeToken(tokens[0])
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

func escapeToken(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// comparePointers orders JSON Pointers token by token, array indexes
// numerically, so "/a/2" comes before "/a/10" and a parent before its
// children.
func comparePointers(a, b string) int {
	for {
		if a == b {
			return 0
		}
		if a == "" {
			return -1
		}
		if b == "" {
			return 1
		}
		ta, ra := nextToken(a)
		tb, rb := nextToken(b)
		if c := compareTokens(ta, tb); c != 0 {
			return c
		}
		a, b = ra, rb
	}
}

// nextToken splits "/x/rest" into "x" and "/rest".
func nextToken(p string) (tok, rest string) {
	p = p[1:]
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

func compareTokens(a, b string) int {
	if isIndex(a) && isIndex(b) {
		if c := len(a) - len(b); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
