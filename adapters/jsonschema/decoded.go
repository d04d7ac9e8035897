package jsonschema

import (
	"encoding/json"
	"math"
	"strings"
	"sync"
	"unsafe"
)

// The reader of decoded values: Validate's instance, a Go value as a JSON
// decoder makes it (see kind for the numbers it reads). An
// object's members are listed in a pooled stack, so that the rules read
// them as they read those of an encoded object; strings are read in place.

// goValues is the scratch of one check over a decoded value.
type goValues struct {
	members []member[any]
	used    int // the most members held at once: what check clears
}

var goValuesPool = sync.Pool{New: func() any { return new(goValues) }}

// check checks v, a decoded JSON value.
func (n *fnode) check(v any, depth int) verdict {
	g := goValuesPool.Get().(*goValues)
	res := check(g, n, v, depth)
	if cap(g.members) <= maxPooled {
		clear(g.members[:g.used]) // no references into v
		g.members, g.used = g.members[:0], 0
		goValuesPool.Put(g)
	}
	return res
}

// maxExact is 2^53: integers up to it are exact float64s.
const maxExact = 1 << 53

// kind returns the type bit of v, 0 for a value that is not JSON (NaN, a
// struct, ...), and its value if it is a number: a float64, a
// json.Number (not read: its exact value is the library's), or a Go
// integer.
func (*goValues) kind(v any) (uint8, numValue) {
	var i int64
	switch v := v.(type) {
	case nil:
		return tNull, numValue{}
	case bool:
		return tBoolean, numValue{}
	case string:
		return tString, numValue{}
	case map[string]any:
		return tObject, numValue{}
	case []any:
		return tArray, numValue{}
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, numValue{}
		}
		is := invalid
		if v == math.Trunc(v) {
			is = valid
		}
		return tNumber, numValue{ok: true, f: v, isInt: is}
	case json.Number:
		is := unknown
		if isIntLiteral(string(v)) {
			is = valid
		}
		return tNumber, numValue{isInt: is}
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
	case uint, uint64, uint32, uint16, uint8:
		return tNumber, numValue{isInt: unknown}
	default:
		return 0, numValue{}
	}
	if i > maxExact || i < -maxExact {
		return tNumber, numValue{isInt: valid}
	}
	return tNumber, numValue{ok: true, f: float64(i), isInt: valid}
}

// isIntLiteral reports whether s is an optional minus and decimal digits.
func isIntLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return isIndex(s)
}

// text returns the bytes of the string v itself, not a copy: the rules
// only read them.
func (*goValues) text(v any) ([]byte, bool) {
	s, ok := v.(string)
	return bytesOf(s), ok
}

func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func (*goValues) truth(v any) bool {
	b, _ := v.(bool)
	return b
}

func (*goValues) format(n *fnode, v any, _ uint8) verdict {
	if n.format(v) != nil {
		return invalid
	}
	return valid
}

func (*goValues) arrayItems(v any) ([]any, bool) {
	arr, ok := v.([]any)
	return arr, ok
}

func (*goValues) dropItems([]any) {}

func (g *goValues) objectMembers(v any) ([]member[any], bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	base := len(g.members)
	for k, val := range obj {
		g.members = append(g.members, member[any]{key: bytesOf(k), val: val})
	}
	g.used = max(g.used, len(g.members))
	return g.members[base:len(g.members):len(g.members)], true
}

func (g *goValues) dropMembers(obj []member[any]) {
	g.members = g.members[:len(g.members)-len(obj)]
}

// name returns the name of m, the map key whose bytes m.key are.
func (*goValues) name(m *member[any]) any {
	return unsafe.String(unsafe.SliceData(m.key), len(m.key))
}
