package jsonschema

import (
	"encoding/json"
	"math"
	"strings"
	"sync"
	"unsafe"
)

// The reader of decoded values: Validate's instance, a Go value as a JSON
// decoder makes it (see kind for the numbers it reads), read in place: an
// array is its slice, a string's characters are the string's own bytes,
// and an object's members are listed on the stack (or, past smallObject
// members, in a pooled list), so that a check allocates nothing.

// valueReader reads decoded values.
type valueReader struct{}

// check checks v, a decoded JSON value.
func (n *fnode) check(v any, depth int) verdict {
	return check(valueReader{}, n, v, depth)
}

// maxExact is 2^53: integers up to it are exact float64s.
const maxExact = 1 << 53

// kind returns the type bit of v, 0 for a value that is not JSON (NaN, a
// struct, ...), and its value if it is a number: a float64, a
// json.Number (not read: its exact value is the library's), or a Go
// integer.
func (valueReader) kind(v any) (uint8, numValue) {
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
func (valueReader) text(v any) ([]byte, bool) {
	s, ok := v.(string)
	return bytesOf(s), ok
}

func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func (valueReader) truth(v any) bool {
	b, _ := v.(bool)
	return b
}

func (valueReader) format(n *fnode, v any, _ uint8) verdict {
	if n.format(v) != nil {
		return invalid
	}
	return valid
}

func (valueReader) array(n *fnode, v any, depth int) verdict {
	arr, ok := v.([]any)
	if !ok {
		return unknown
	}
	return checkItems(valueReader{}, n, arr, depth)
}

// smallObject is the most members listed on the stack.
const smallObject = 8

// memberLists are the lists of the members of larger objects.
var memberLists = sync.Pool{New: func() any { return new([]member[any]) }}

// object lists the members of v on the stack when they are few, else in
// a pooled list. When n reads only the members it names and names no more
// than v has, they are looked up rather than all listed.
func (valueReader) object(n *fnode, v any, depth int) verdict {
	m, ok := v.(map[string]any)
	if !ok {
		return unknown
	}
	lookup := n.readsNamed && len(n.named) <= len(m)
	most := len(m)
	if lookup {
		most = len(n.named)
	}
	if most <= smallObject {
		var small [smallObject]member[any]
		return checkMembers(valueReader{}, n, v, listMembers(small[:0], n, m, lookup), len(m), depth)
	}
	list := memberLists.Get().(*[]member[any])
	obj := listMembers((*list)[:0], n, m, lookup)
	res := checkMembers(valueReader{}, n, v, obj, len(m), depth)
	if cap(obj) <= maxPooled {
		clear(obj) // no references into v
		*list = obj[:0]
		memberLists.Put(list)
	}
	return res
}

// listMembers appends the members of m to obj: those n names if lookup,
// else all, named as values if n has propertyNames.
func listMembers(obj []member[any], n *fnode, m map[string]any, lookup bool) []member[any] {
	if lookup {
		for _, k := range n.named {
			if val, ok := m[k]; ok {
				obj = append(obj, member[any]{})
				mb := &obj[len(obj)-1] // filled in place: no copy
				mb.key, mb.val = bytesOf(k), val
			}
		}
		return obj
	}
	names := n.propNames != nil
	for k, val := range m {
		obj = append(obj, member[any]{})
		mb := &obj[len(obj)-1] // filled in place: no copy
		mb.key, mb.val = bytesOf(k), val
		if names {
			mb.name = k // boxing k allocates: only for propertyNames
		}
	}
	return obj
}
