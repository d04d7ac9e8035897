package jsonschema

import (
	"bytes"
	"math"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// The fast path over encoded JSON.
//
// checkJSON is check for a value as encoded, without decoding it into Go
// values: the same rules (rules.go) over a reader of the text, which walks
// it looking only at the parts the schema has keywords for (a string of a
// schema without string keywords is skipped, never copied), and allocates
// nothing in the common case (strings with escapes that a keyword reads
// are unescaped into a pooled buffer; a format check needs a Go string).
// Its answers are those of check on the value the text decodes to with
// numbers as float64: valid, invalid or unknown, of which only valid is
// trusted (see fast.go). Where the reader cannot answer as the one of
// decoded values does, cheaply, it says unknown: a number it cannot read
// as a finite float64, a format the library does not define on a value
// that is not a string.
//
// The text must be well-formed JSON (the engine's strict decoder has read
// it: valid UTF-8, no duplicate member names). The scanner below relies on
// that to skip values quickly; on malformed text it says unknown where it
// notices, and never panics.

// textReader is the reader of the text of one checkJSON, with its
// scratch: the members and items of the objects and arrays being checked
// (a stack that nested checks grow and give back) and the unescaped
// strings.
type textReader struct {
	members []member[[]byte]
	items   [][]byte
	buf     []byte
	// root is the value checked; rootRead is set once its members or
	// items have all been delimited (and their numbers read, see
	// scalarEnd), which then need not be done again
	root     []byte
	rootRead bool
	// the most members and items held at once: what checkJSON clears
	usedMembers, usedItems int
}

// textReaders keep the scratch between checks.
var textReaders = sync.Pool{New: func() any { return new(textReader) }}

// maxPooled bounds the scratch kept in the pool between checks.
const maxPooled = 1 << 16

// checkJSON checks data, one JSON value as encoded.
func (n *fnode) checkJSON(data []byte) verdict {
	v := trimSpace(data)
	if len(v) == 0 {
		return unknown
	}
	st := textReaders.Get().(*textReader)
	st.root, st.rootRead = v, false
	r := check(st, n, v, 0)
	if r == valid && !st.rootRead {
		// the schema did not read the whole value: make sure of its end
		// and of its numbers, as decoding it would
		if end, ok := skipValue(v, 0); !ok || end != len(v) {
			r = unknown
		}
	}
	st.root = nil
	if cap(st.members) <= maxPooled && cap(st.items) <= maxPooled && cap(st.buf) <= maxPooled {
		clear(st.members[:st.usedMembers]) // no references into data
		clear(st.items[:st.usedItems])
		st.members, st.items, st.buf = st.members[:0], st.items[:0], st.buf[:0]
		st.usedMembers, st.usedItems = 0, 0
		textReaders.Put(st)
	}
	return r
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at b[i] (a
// quote). plain reports that the string certainly has no escapes (its
// first bytes are read one by one; a long string is read from quote to
// quote, and is not plain).
func stringEnd(b []byte, i int) (end int, plain, ok bool) {
	j, plain := i+1, true
	for n := min(len(b), j+32); j < n; j++ {
		switch b[j] {
		case '"':
			return j + 1, plain, true
		case '\\':
			plain = false
			j++
		}
	}
	for j < len(b) {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		escapes := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			escapes++
		}
		if escapes%2 == 0 {
			return q + 1, false, true
		}
		j = q + 1
	}
	return 0, false, false
}

// hasBackslash reports whether b holds a backslash.
func hasBackslash(b []byte) bool {
	if len(b) > 32 {
		return bytes.IndexByte(b, '\\') >= 0
	}
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// skipValue returns the index after the value that starts at b[i]. It is
// not ok when the value is not well-formed as far as it can tell, or holds
// a number that float64 cannot hold (see scalarEnd).
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; c {
	case '"':
		e, _, ok := stringEnd(b, i)
		return e, ok
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch c := b[i]; {
			case c == '"':
				e, _, ok := stringEnd(b, i)
				if !ok {
					return 0, false
				}
				i = e
				continue
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			case c == '-' || c >= '0' && c <= '9':
				e, ok := scalarEnd(b, i)
				if !ok {
					return 0, false
				}
				i = e
				continue
			}
			i++
		}
		return 0, false
	default:
		return scalarEnd(b, i)
	}
}

// scalarEnd returns the index after the number or literal at b[i]. A
// number beyond float64's range is not ok, wherever it is: the value would
// not decode (see ports.JSONSchema), so checkJSON must not call it valid
// even where the schema does not look.
func scalarEnd(b []byte, i int) (int, bool) {
	j, exp := i, false
scan:
	for ; j < len(b); j++ {
		switch c := b[j]; {
		case c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.':
		case c == 'e' || c == 'E':
			exp = true
		case c >= 'a' && c <= 'z': // true, false, null
		default:
			break scan
		}
	}
	if j == i {
		return 0, false
	}
	// Only an exponent or more than 308 digits can go beyond the range.
	if c := b[i]; (exp || j-i > 308) && (c == '-' || c >= '0' && c <= '9') {
		if _, err := strconv.ParseFloat(string(b[i:j]), 64); err != nil {
			return 0, false
		}
	}
	return j, true
}

// rawType returns the type bit of an encoded value (0 if it is none).
func rawType(v []byte) uint8 {
	if len(v) == 0 {
		return 0
	}
	switch c := v[0]; {
	case c == '"':
		return tString
	case c == '{':
		return tObject
	case c == '[':
		return tArray
	case c == 't' || c == 'f':
		return tBoolean
	case c == 'n':
		return tNull
	case c == '-' || c >= '0' && c <= '9':
		return tNumber
	}
	return 0
}

// rawNum reads an encoded number as check sees a float64.
func rawNum(v []byte) (numValue, bool) {
	if f, ok := smallInt(v); ok {
		return numValue{ok: true, f: f, isInt: valid}, true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return numValue{}, false
	}
	is := invalid
	if f == math.Trunc(f) {
		is = valid
	}
	return numValue{ok: true, f: f, isInt: is}, true
}

// smallInt reads an integer of at most 15 digits (exact as a float64,
// the value ParseFloat gives), the common case, without ParseFloat.
func smallInt(v []byte) (float64, bool) {
	neg := len(v) > 0 && v[0] == '-'
	digits := v
	if neg {
		digits = v[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	switch {
	case neg && n == 0:
		return math.Copysign(0, -1), true
	case neg:
		return -float64(n), true
	}
	return float64(n), true
}

// content returns the characters of an encoded string, unescaped into the
// scratch buffer when it has escapes.
func (st *textReader) content(v []byte) ([]byte, bool) {
	if len(v) < 2 {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	if !hasBackslash(inner) {
		return inner, true
	}
	start := len(st.buf)
	buf, err := jsontext.AppendUnquote(st.buf, v)
	if err != nil {
		return nil, false
	}
	st.buf = buf
	return buf[start:len(buf):len(buf)], true
}

// readMembers appends the members of the encoded object v to st.members.
func (st *textReader) readMembers(v []byte) bool {
	i := skipSpace(v, 1)
	if i < len(v) && v[i] == '}' {
		return i == len(v)-1
	}
	for i < len(v) {
		if v[i] != '"' {
			return false
		}
		ke, plain, ok := stringEnd(v, i)
		if !ok {
			return false
		}
		quoted := v[i:ke]
		key := quoted[1 : len(quoted)-1]
		if !plain {
			if key, ok = st.content(quoted); !ok {
				return false
			}
		}
		i = skipSpace(v, ke)
		if i >= len(v) || v[i] != ':' {
			return false
		}
		i = skipSpace(v, i+1)
		ve, ok := skipValue(v, i)
		if !ok {
			return false
		}
		st.members = append(st.members, member[[]byte]{key: key, name: quoted, val: v[i:ve]})
		i = skipSpace(v, ve)
		if i >= len(v) {
			return false
		}
		switch v[i] {
		case ',':
			i = skipSpace(v, i+1)
		case '}':
			return i == len(v)-1
		default:
			return false
		}
	}
	return false
}

// readItems appends the items of the encoded array v to st.items.
func (st *textReader) readItems(v []byte) bool {
	i := skipSpace(v, 1)
	if i < len(v) && v[i] == ']' {
		return i == len(v)-1
	}
	for i < len(v) {
		e, ok := skipValue(v, i)
		if !ok {
			return false
		}
		st.items = append(st.items, v[i:e])
		i = skipSpace(v, e)
		if i >= len(v) {
			return false
		}
		switch v[i] {
		case ',':
			i = skipSpace(v, i+1)
		case ']':
			return i == len(v)-1
		default:
			return false
		}
	}
	return false
}

// noteRoot records that v, just delimited member by member (or item by
// item), is the root.
func (st *textReader) noteRoot(v []byte) {
	if len(v) == len(st.root) && &v[0] == &st.root[0] {
		st.rootRead = true
	}
}

// kind returns the type bit of v, and its value if it is a number; 0 for
// a number that is not a finite float64 (see rawNum).
func (*textReader) kind(v []byte) (uint8, numValue) {
	t := rawType(v)
	if t != tNumber {
		return t, numValue{}
	}
	num, ok := rawNum(v)
	if !ok {
		return 0, numValue{}
	}
	return tNumber, num
}

func (st *textReader) text(v []byte) ([]byte, bool) { return st.content(v) }

func (*textReader) truth(v []byte) bool { return v[0] == 't' }

// format: the formats take a Go value; only strings are made one (which
// allocates), and other values are known to pass only the library's own
// formats.
func (st *textReader) format(n *fnode, v []byte, t uint8) verdict {
	if t != tString {
		if n.formatStrings {
			return valid
		}
		return unknown
	}
	s, ok := st.content(v)
	if !ok {
		return unknown
	}
	if n.format(string(s)) != nil {
		return invalid
	}
	return valid
}

func (st *textReader) array(n *fnode, v []byte, depth int) verdict {
	base := len(st.items)
	ok := st.readItems(v)
	st.usedItems = max(st.usedItems, len(st.items))
	res := unknown
	if ok {
		st.noteRoot(v)
		res = checkItems(st, n, st.items[base:len(st.items):len(st.items)], depth)
	}
	st.items = st.items[:base]
	return res
}

// object names each member, for propertyNames, as encoded (quotes
// included).
func (st *textReader) object(n *fnode, v []byte, depth int) verdict {
	base := len(st.members)
	ok := st.readMembers(v)
	st.usedMembers = max(st.usedMembers, len(st.members))
	res := unknown
	if ok {
		st.noteRoot(v)
		obj := st.members[base:len(st.members):len(st.members)]
		res = checkMembers(st, n, v, obj, len(obj), depth)
	}
	st.members = st.members[:base]
	return res
}
