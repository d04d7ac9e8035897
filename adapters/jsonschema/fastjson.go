package jsonschema

import (
	"bytes"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The fast path over encoded JSON.
//
// checkJSON is check for a value as encoded, without decoding it into Go
// values: it walks the text, looking only at the parts the schema has
// keywords for (a string of a schema without string keywords is skipped,
// never copied), and allocates nothing in the common case (strings with
// escapes that a keyword reads are unescaped into a pooled buffer; a
// format check needs a Go string). Its answers are those of check on the
// value the text decodes to with numbers as float64, function by function:
// valid, invalid or unknown, of which only valid is trusted (see fast.go).
// Where it cannot mirror check cheaply it says unknown: a number it cannot
// read as a finite float64, a format the library does not define on a
// value that is not a string.
//
// The text must be well-formed JSON (the engine's strict decoder has read
// it: valid UTF-8, no duplicate member names). The scanner below relies on
// that to skip values quickly; on malformed text it says unknown where it
// notices, and never panics.

// rawMember is one member of an object being checked.
type rawMember struct {
	quoted []byte // the name as encoded, quotes included
	key    []byte // the name, unescaped
	val    []byte // the value as encoded
}

// rawState is the scratch of one checkJSON: the members and items of the
// objects and arrays being checked (a stack that nested checks grow and
// give back) and the unescaped strings.
type rawState struct {
	members []rawMember
	items   [][]byte
	buf     []byte
	// root is the value checked; rootRead is set once its members or
	// items have all been delimited (and their numbers read, see
	// scalarEnd), which then need not be done again
	root     []byte
	rootRead bool
}

var rawStates = sync.Pool{New: func() any { return new(rawState) }}

// maxPooled bounds the scratch kept in the pool between checks.
const maxPooled = 1 << 16

// checkJSON checks data, one JSON value as encoded.
func (n *fnode) checkJSON(data []byte) verdict {
	v := trimSpace(data)
	if len(v) == 0 {
		return unknown
	}
	st := rawStates.Get().(*rawState)
	st.root, st.rootRead = v, false
	r := st.check(n, v, 0)
	if r == valid && !st.rootRead {
		// the schema did not read the whole value: make sure of its end
		// and of its numbers, as decoding it would
		if end, ok := skipValue(v, 0); !ok || end != len(v) {
			r = unknown
		}
	}
	st.root = nil
	if cap(st.members) <= maxPooled && cap(st.items) <= maxPooled && cap(st.buf) <= maxPooled {
		clear(st.members[:cap(st.members)]) // no references into data
		clear(st.items[:cap(st.items)])
		st.members, st.items, st.buf = st.members[:0], st.items[:0], st.buf[:0]
		rawStates.Put(st)
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
func (st *rawState) content(v []byte) ([]byte, bool) {
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

func (st *rawState) check(n *fnode, v []byte, depth int) verdict {
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
	t := rawType(v)
	if t == 0 {
		return unknown
	}
	var num numValue
	if t == tNumber {
		var ok bool
		if num, ok = rawNum(v); !ok {
			return unknown
		}
	}
	res := valid

	// type
	if n.types != 0 && n.types&t == 0 {
		if t == tNumber && n.types&tInteger != 0 {
			if num.isInt != valid {
				return num.isInt
			}
		} else {
			return invalid
		}
	}
	// enum and const
	if n.hasEnum {
		if r := st.matchEnum(n.enum, v, t, num); r != valid {
			return r
		}
	}
	if n.constItem != nil {
		if r := st.matchEnum(n.constItem, v, t, num); r != valid {
			return r
		}
	}
	// format: the formats take a Go value; only strings are made one
	if n.format != nil {
		switch {
		case t == tString:
			s, ok := st.content(v)
			if !ok {
				return unknown
			}
			if n.format(string(s)) != nil {
				return invalid
			}
		case !n.formatStrings:
			return unknown
		}
	}
	// $ref
	if n.ref != nil {
		r := st.check(n.ref, v, depth+1)
		if n.draft < 2019 {
			return r
		}
		if res = and(res, r); res == invalid {
			return invalid
		}
	}

	switch t {
	case tObject:
		res = and(res, st.checkObject(n, v, depth))
	case tArray:
		res = and(res, st.checkArray(n, v, depth))
	case tString:
		res = and(res, st.checkString(n, v))
	case tNumber:
		res = and(res, n.checkNumber(num))
	}
	if res == invalid {
		return invalid
	}
	return and(res, st.checkCond(n, v, depth))
}

func (st *rawState) matchEnum(items []enumItem, v []byte, t uint8, num numValue) verdict {
	res := invalid
	var s []byte
	if t == tString {
		var ok bool
		if s, ok = st.content(v); !ok {
			return unknown
		}
	}
	for i := range items {
		it := &items[i]
		switch t {
		case tString:
			if it.kind == tString && it.s == string(s) {
				return valid
			}
		case tBoolean:
			if it.kind == tBoolean && it.b == (v[0] == 't') {
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

// members appends the members of the encoded object v to st.members.
func (st *rawState) readMembers(v []byte) bool {
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
		st.members = append(st.members, rawMember{quoted: quoted, key: key, val: v[i:ve]})
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
func (st *rawState) readItems(v []byte) bool {
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
func (st *rawState) noteRoot(v []byte) {
	if len(v) == len(st.root) && &v[0] == &st.root[0] {
		st.rootRead = true
	}
}

func hasMember(obj []rawMember, key string) bool {
	for i := range obj {
		if string(obj[i].key) == key {
			return true
		}
	}
	return false
}

func hasAll(obj []rawMember, keys []string) bool {
	for _, k := range keys {
		if !hasMember(obj, k) {
			return false
		}
	}
	return true
}

func (st *rawState) checkObject(n *fnode, v []byte, depth int) verdict {
	base := len(st.members)
	if !st.readMembers(v) {
		st.members = st.members[:base]
		return unknown
	}
	st.noteRoot(v)
	obj := st.members[base:len(st.members):len(st.members)]
	r := st.checkMembers(n, v, obj, depth)
	st.members = st.members[:base]
	return r
}

func (st *rawState) checkMembers(n *fnode, v []byte, obj []rawMember, depth int) verdict {
	if n.minProps >= 0 && len(obj) < n.minProps {
		return invalid
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		return invalid
	}
	if !hasAll(obj, n.required) {
		return invalid
	}
	res := valid
	for i := range n.deps {
		d := &n.deps[i]
		if !hasMember(obj, d.prop) {
			continue
		}
		if d.sch != nil {
			if res = and(res, st.check(d.sch, v, depth+1)); res == invalid {
				return invalid
			}
		} else if !hasAll(obj, d.req) {
			return invalid
		}
	}
	if n.props != nil || n.patProps != nil || n.addlSet {
		for i := range obj {
			m := &obj[i]
			evaluated := false
			if s, ok := n.props[string(m.key)]; ok {
				evaluated = true
				if res = and(res, st.check(s, m.val, depth+1)); res == invalid {
					return invalid
				}
			}
			for j := range n.patProps {
				if n.patProps[j].match(m.key) {
					evaluated = true
					if res = and(res, st.check(n.patProps[j].sch, m.val, depth+1)); res == invalid {
						return invalid
					}
				}
			}
			if !evaluated && n.addlSet {
				if n.addl == nil {
					if !n.addlBool {
						return invalid
					}
				} else if res = and(res, st.check(n.addl, m.val, depth+1)); res == invalid {
					return invalid
				}
			}
		}
	}
	if n.draft == 4 {
		return res
	}
	if n.propNames != nil {
		for i := range obj {
			if res = and(res, st.check(n.propNames, obj[i].quoted, depth+1)); res == invalid {
				return invalid
			}
		}
	}
	if n.draft == 6 {
		return res
	}
	for i := range n.depSchemas {
		d := &n.depSchemas[i]
		if hasMember(obj, d.prop) {
			if res = and(res, st.check(d.sch, v, depth+1)); res == invalid {
				return invalid
			}
		}
	}
	for i := range n.depRequired {
		d := &n.depRequired[i]
		if hasMember(obj, d.prop) && !hasAll(obj, d.req) {
			return invalid
		}
	}
	return res
}

// uniqueJSON is uniqueItems for encoded items.
func (st *rawState) uniqueJSON(arr [][]byte) verdict {
	if len(arr) > maxUnique {
		return unknown
	}
	for i := 1; i < len(arr); i++ {
		for j := 0; j < i; j++ {
			a, b := arr[i], arr[j]
			ta, tb := rawType(a), rawType(b)
			switch ta {
			case tString:
				if tb == tString {
					sa, ok1 := st.content(a)
					sb, ok2 := st.content(b)
					if !ok1 || !ok2 {
						return unknown
					}
					if bytes.Equal(sa, sb) {
						return invalid
					}
				}
			case tBoolean:
				if tb == tBoolean && a[0] == b[0] {
					return invalid
				}
			case tNull:
				if tb == tNull {
					return invalid
				}
			case tNumber:
				switch tb {
				case tNumber:
					na, ok1 := rawNum(a)
					nb, ok2 := rawNum(b)
					if !ok1 || !ok2 {
						return unknown
					}
					if na.f == nb.f {
						return invalid
					}
				case tString, tBoolean, tNull, tObject, tArray:
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

func (st *rawState) checkArray(n *fnode, v []byte, depth int) verdict {
	base := len(st.items)
	if !st.readItems(v) {
		st.items = st.items[:base]
		return unknown
	}
	st.noteRoot(v)
	arr := st.items[base:len(st.items):len(st.items)]
	r := st.checkItems(n, arr, depth)
	st.items = st.items[:base]
	return r
}

func (st *rawState) checkItems(n *fnode, arr [][]byte, depth int) verdict {
	if n.minItems >= 0 && len(arr) < n.minItems {
		return invalid
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		return invalid
	}
	res := valid
	if n.unique && len(arr) > 1 {
		if res = st.uniqueJSON(arr); res == invalid {
			return invalid
		}
	}
	evaluated := min(len(n.tuple), len(arr))
	for i := range evaluated {
		if res = and(res, st.check(n.tuple[i], arr[i], depth+1)); res == invalid {
			return invalid
		}
	}
	if n.draft < 2020 {
		if n.items != nil {
			for _, it := range arr {
				if res = and(res, st.check(n.items, it, depth+1)); res == invalid {
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
					if res = and(res, st.check(n.addlItems, it, depth+1)); res == invalid {
						return invalid
					}
				}
			}
		}
	} else if n.items2020 != nil {
		for _, it := range arr[evaluated:] {
			if res = and(res, st.check(n.items2020, it, depth+1)); res == invalid {
				return invalid
			}
		}
	}
	if n.contains != nil {
		matched, unsure := 0, 0
		for _, it := range arr {
			switch st.check(n.contains, it, depth+1) {
			case valid:
				matched++
			case unknown:
				unsure++
			}
		}
		lo, hi := matched, matched+unsure
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

func (st *rawState) checkString(n *fnode, v []byte) verdict {
	if n.minLen < 0 && n.maxLen < 0 && n.pattern == nil {
		return valid // the characters are not read: no copy, no unescaping
	}
	s, ok := st.content(v)
	if !ok {
		return unknown
	}
	if n.minLen >= 0 || n.maxLen >= 0 {
		l := utf8.RuneCount(s)
		if n.minLen >= 0 && l < n.minLen {
			return invalid
		}
		if n.maxLen >= 0 && l > n.maxLen {
			return invalid
		}
	}
	if n.pattern != nil && !n.matchPattern(s) {
		return invalid
	}
	return valid
}

func (st *rawState) checkCond(n *fnode, v []byte, depth int) verdict {
	res := valid
	if n.not != nil {
		switch st.check(n.not, v, depth+1) {
		case valid:
			return invalid
		case unknown:
			res = unknown
		}
	}
	for _, s := range n.allOf {
		if res = and(res, st.check(s, v, depth+1)); res == invalid {
			return invalid
		}
	}
	if len(n.anyOf) > 0 {
		some := invalid
		for _, s := range n.anyOf {
			r := st.check(s, v, depth+1)
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
			switch st.check(s, v, depth+1) {
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
		switch st.check(n.ifS, v, depth+1) {
		case valid:
			res = and(res, st.check(n.thenS, v, depth+1))
		case invalid:
			res = and(res, st.check(n.elseS, v, depth+1))
		default:
			return unknown
		}
	}
	return res
}
