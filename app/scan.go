package app

import (
	"bytes"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/hexmcp/hexmcp/internal/decl"
)

// The fast path of decodeMessage.
//
// scanMessage reads a message as wireMessage.UnmarshalJSONFrom does, and
// checks it as strictly (RFC 8259 grammar, valid UTF-8, no duplicate member
// names at any depth), in one pass of plain loops instead of the decoder's
// tokens. It answers only when it is sure the decoder would accept the
// message and read the same members: on anything else (an error, a member
// name with escapes, a \u escape of a surrogate, an object of many members,
// deep nesting, a message that is not an object) it gives up, and the
// decoder reads the message again, with its exact errors. The parity tests
// (decode_parity_test.go) hold it to that.

// Beyond these limits scanMessage gives up.
const (
	scanMaxDepth   = 64 // nesting
	scanMaxMembers = 32 // members of one object (duplicates are found pairwise)
)

// scanner reads one message. (The members it keeps are written by
// functions that are given the wireMessage and are not recursive, so that
// it stays on decodeMessage's stack.)
type scanner struct {
	b     []byte
	depth int
}

// scanMessage fills w (w.raw is the message) or reports that it could not.
func scanMessage(w *wireMessage) bool {
	s := scanner{b: w.raw}
	i := s.space(0)
	if i >= len(s.b) || s.b[i] != '{' {
		return false
	}
	var o objectReader
	i, done, ok := s.open(i)
	for ok && !done {
		var name []byte
		if name, i, ok = s.name(&o, i); !ok {
			break
		}
		if i, ok = s.topMember(w, name, i); !ok {
			break
		}
		i, done, ok = s.next(i, '}')
	}
	return ok && s.space(i) == len(s.b)
}

// objectReader checks that no name of an object appears twice. (Names
// with escapes make the scanner give up: they would have to be compared
// unescaped.)
type objectReader struct {
	names [scanMaxMembers][]byte
	n     int
}

// open reads the '{' or '[' at b[i]: it returns where the first member or
// item starts, or that the object or array is empty (done, i after it).
func (s *scanner) open(i int) (int, bool, bool) {
	closer := byte('}')
	if s.b[i] == '[' {
		closer = ']'
	}
	i = s.space(i + 1)
	if i < len(s.b) && s.b[i] == closer {
		return i + 1, true, true
	}
	return i, false, true
}

// name reads a member's name and its colon at b[i]: it returns the name
// and where the value starts.
func (s *scanner) name(o *objectReader, i int) ([]byte, int, bool) {
	if i >= len(s.b) || s.b[i] != '"' {
		return nil, 0, false
	}
	end, plain, ok := s.str(i)
	if !ok || !plain || o.n == scanMaxMembers {
		return nil, 0, false
	}
	name := s.b[i+1 : end-1]
	for _, prev := range o.names[:o.n] {
		if string(prev) == string(name) {
			return nil, 0, false
		}
	}
	o.names[o.n] = name
	o.n++
	i = s.space(end)
	if i >= len(s.b) || s.b[i] != ':' {
		return nil, 0, false
	}
	return name, s.space(i + 1), true
}

// next reads what follows a member or item at b[i]: a comma (it returns
// where the next one starts) or the closer (done, i after it).
func (s *scanner) next(i int, closer byte) (int, bool, bool) {
	i = s.space(i)
	if i >= len(s.b) {
		return 0, false, false
	}
	switch s.b[i] {
	case ',':
		return s.space(i + 1), false, true
	case closer:
		return i + 1, true, true
	}
	return 0, false, false
}

// object reads the object at b[i] ('{'), skipping its members.
func (s *scanner) object(i int) (int, bool) {
	if s.depth++; s.depth > scanMaxDepth {
		return 0, false
	}
	var o objectReader
	i, done, ok := s.open(i)
	for ok && !done {
		if _, i, ok = s.name(&o, i); !ok {
			break
		}
		if i, ok = s.value(i); !ok {
			break
		}
		i, done, ok = s.next(i, '}')
	}
	s.depth--
	return i, ok
}

// array reads the array at b[i] ('[').
func (s *scanner) array(i int) (int, bool) {
	if s.depth++; s.depth > scanMaxDepth {
		return 0, false
	}
	i, done, ok := s.open(i)
	for ok && !done {
		if i, ok = s.value(i); !ok {
			break
		}
		i, done, ok = s.next(i, ']')
	}
	s.depth--
	return i, ok
}

// value reads the value at b[i].
func (s *scanner) value(i int) (int, bool) {
	if i >= len(s.b) {
		return 0, false
	}
	switch c := s.b[i]; {
	case c == '"':
		end, _, ok := s.str(i)
		return end, ok
	case c == '{':
		return s.object(i)
	case c == '[':
		return s.array(i)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number(i)
	}
	return 0, false
}

func (s *scanner) literal(i int, lit string) (int, bool) {
	if len(s.b)-i < len(lit) || string(s.b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

func (s *scanner) digits(i int) int {
	for i < len(s.b) && s.b[i] >= '0' && s.b[i] <= '9' {
		i++
	}
	return i
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *scanner) number(i int) (int, bool) {
	if s.b[i] == '-' {
		i++
	}
	switch {
	case i < len(s.b) && s.b[i] == '0':
		i++
	case i < len(s.b) && s.b[i] >= '1' && s.b[i] <= '9':
		i = s.digits(i + 1)
	default:
		return 0, false
	}
	if i < len(s.b) && s.b[i] == '.' {
		j := s.digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(s.b) && (s.b[i] == 'e' || s.b[i] == 'E') {
		i++
		if i < len(s.b) && (s.b[i] == '+' || s.b[i] == '-') {
			i++
		}
		j := s.digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

// escapeLen returns the length of the escape at b[j] ('\\'): 2, or 6 for a
// \u escape of four hex digits; 0 when it is invalid or, unless
// surrogates, when it is a \u escape of a UTF-16 surrogate.
func escapeLen(b []byte, j int, surrogates bool) int {
	if j+1 >= len(b) {
		return 0
	}
	switch b[j+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if j+6 > len(b) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) || !isHex(b[j+5]) {
			return 0
		}
		if c := b[j+2]; !surrogates && (c == 'd' || c == 'D') && b[j+3] >= '8' {
			return 0
		}
		return 6
	}
	return 0
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// str reads the string at b[i] ('"'): no control characters, valid
// escapes (a \u escape of a surrogate makes it give up: the decoder judges
// pairs), valid UTF-8. plain reports that it has no escapes.
func (s *scanner) str(i int) (end int, plain, ok bool) {
	plain = true
	for j := i + 1; j < len(s.b); {
		switch c := s.b[j]; {
		case c == '"':
			return j + 1, plain, true
		case c == '\\':
			plain = false
			n := escapeLen(s.b, j, false) // a surrogate is left to the decoder
			if n == 0 {
				return 0, false, false
			}
			j += n
		case c < 0x20:
			return 0, false, false
		case c < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(s.b[j:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, false
			}
			j += size
		}
	}
	return 0, false, false
}

func (s *scanner) space(i int) int {
	for i < len(s.b) {
		switch s.b[i] {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		}
		break
	}
	return i
}

// part returns b[start:end] with no room to grow (see wireMessage.value).
func (s *scanner) part(start, end int) jsontext.Value {
	return jsontext.Value(s.b[start:end:end])
}

// memberInto reads the value at b[i] into dst (skips it when dst is nil).
func (s *scanner) memberInto(dst *jsontext.Value, i int) (int, bool) {
	end, ok := s.value(i)
	if ok && dst != nil {
		*dst = s.part(i, end)
	}
	return end, ok
}

// topMember reads a member of the message (see UnmarshalJSONFrom).
func (s *scanner) topMember(w *wireMessage, name []byte, i int) (int, bool) {
	switch string(name) {
	case "jsonrpc":
		return s.memberInto(&w.JSONRPC, i)
	case "id":
		return s.memberInto(&w.ID, i)
	case "method":
		return s.memberInto(&w.Method, i)
	case "result":
		return s.memberInto(&w.Result, i)
	case "error":
		return s.memberInto(&w.Error, i)
	case "params":
		if i < len(s.b) && s.b[i] == '{' {
			return s.params(w, i)
		}
		return s.memberInto(&w.Params.raw, i)
	}
	return s.value(i)
}

// params reads params, the object at b[i] (see readParams).
func (s *scanner) params(w *wireMessage, start int) (int, bool) {
	p := new(wireParams)
	var o objectReader
	s.depth++
	i, done, ok := s.open(start)
	for ok && !done {
		var name []byte
		if name, i, ok = s.name(&o, i); !ok {
			break
		}
		if string(name) == "_meta" {
			i, ok = s.meta(w, p, i)
		} else {
			i, ok = s.memberInto(p.member(name), i)
		}
		if !ok {
			break
		}
		i, done, ok = s.next(i, '}')
	}
	s.depth--
	if ok {
		w.Params.raw, w.Params.p = s.part(start, i), p.seal()
	}
	return i, ok
}

// meta reads params._meta at b[i] into p (see readParams).
func (s *scanner) meta(w *wireMessage, p *wireParams, start int) (int, bool) {
	if start >= len(s.b) {
		return 0, false
	}
	switch c := s.b[start]; c {
	case '{':
	case 'n':
		p.Meta = nil
		return s.value(start)
	default:
		if w.Params.err == "" {
			w.Params.err = "unexpected " + decl.KindName(byteKind(c)) + " at /_meta"
		}
		return s.value(start)
	}
	m := new(requestMeta)
	var o objectReader
	s.depth++
	i, done, ok := s.open(start)
	for ok && !done {
		var name []byte
		if name, i, ok = s.name(&o, i); !ok {
			break
		}
		if i, ok = s.memberInto(m.member(name), i); !ok {
			break
		}
		i, done, ok = s.next(i, '}')
	}
	s.depth--
	if ok {
		p.Meta = m
	}
	return i, ok
}

// byteKind is the kind of the value that starts with c.
func byteKind(c byte) jsontext.Kind {
	switch {
	case c == '-' || c >= '0' && c <= '9':
		return '0'
	case c == 'f':
		return 't'
	}
	return jsontext.Kind(c)
}

// nesting reads raw, a message the decoder refused, as readID does
// (duplicate member names and invalid UTF-8 are read past, nothing else),
// but with no bound on nesting, which the decoder has
// ([maxNestingDepth]). It returns the deepest nesting of objects and
// arrays (the message itself is 1), whether raw is one well-formed JSON
// value apart from duplicate names and invalid UTF-8 (ok), and, when raw
// is an object, its top-level "id" as readID returns it (a string or a
// number, named once). It keeps one bit per level: an error path may read
// a message nested as deep as it is long.
func nesting(raw []byte) (id jsontext.Value, depth int, ok bool) {
	s := scanner{b: raw}
	var objects []uint64 // bit l of the set: level l+1 is an object
	level := 0
	seen := false
	isObject := func() bool { return objects[(level-1)/64]&(1<<((level-1)%64)) != 0 }
	// member reads a member's name and colon at i; at the top level, an
	// "id" whose value is a string or a number is read with its value
	// (done: i is after the value).
	member := func(i int) (next int, done, ok bool) {
		if i >= len(raw) || raw[i] != '"' {
			return 0, false, false
		}
		end, escaped, ok := s.looseStr(i)
		if !ok {
			return 0, false, false
		}
		name := raw[i:end]
		isID := string(name) == `"id"`
		if escaped && level == 1 {
			unq, err := jsontext.AppendUnquote(nil, name)
			isID = err == nil && string(unq) == "id"
		}
		i = s.space(end)
		if i >= len(raw) || raw[i] != ':' {
			return 0, false, false
		}
		i = s.space(i + 1)
		if !isID || level != 1 {
			return i, false, true
		}
		if seen { // "id" twice: which one the client meant is unknown
			id = nil
			return i, false, true
		}
		seen = true
		if i >= len(raw) || raw[i] != '"' && raw[i] != '-' && (raw[i] < '0' || raw[i] > '9') {
			return i, false, true
		}
		var vend int
		if raw[i] == '"' {
			vend, _, ok = s.looseStr(i)
		} else {
			vend, ok = s.number(i)
		}
		if !ok {
			return 0, false, false
		}
		if v := raw[i:vend]; utf8.Valid(v) {
			id = jsontext.Value(v)
		}
		return vend, true, true
	}
	i := s.space(0)
	after := false // i is after a value, not at one
	for {
		if !after {
			if i >= len(raw) {
				return nil, 0, false
			}
			switch c := raw[i]; {
			case c == '{' || c == '[':
				if level%64 == 0 && level/64 == len(objects) {
					objects = append(objects, 0)
				}
				if c == '{' {
					objects[level/64] |= 1 << (level % 64)
				} else {
					objects[level/64] &^= 1 << (level % 64)
				}
				level++
				depth = max(depth, level)
				i = s.space(i + 1)
				if i < len(raw) && (c == '{' && raw[i] == '}' || c == '[' && raw[i] == ']') {
					level--
					i, after = i+1, true
				} else if c == '{' {
					if i, after, ok = member(i); !ok {
						return nil, 0, false
					}
				}
				continue
			case c == '"':
				i, _, ok = s.looseStr(i)
			case c == 't':
				i, ok = s.literal(i, "true")
			case c == 'f':
				i, ok = s.literal(i, "false")
			case c == 'n':
				i, ok = s.literal(i, "null")
			case c == '-' || c >= '0' && c <= '9':
				i, ok = s.number(i)
			default:
				ok = false
			}
			if !ok {
				return nil, 0, false
			}
			after = true
		}
		if level == 0 {
			if s.space(i) != len(raw) {
				return nil, 0, false
			}
			return bytes.Clone(id), depth, true
		}
		i = s.space(i)
		if i >= len(raw) {
			return nil, 0, false
		}
		obj := isObject()
		switch c := raw[i]; {
		case c == ',':
			i, after = s.space(i+1), false
			if obj {
				if i, after, ok = member(i); !ok {
					return nil, 0, false
				}
			}
		case obj && c == '}' || !obj && c == ']':
			level--
			i++
		default:
			return nil, 0, false
		}
	}
}

// looseStr reads the string at b[i] ('"') as a decoder that allows invalid
// UTF-8 does: no control characters and valid escapes, any other byte.
// escaped reports that it has escapes.
func (s *scanner) looseStr(i int) (end int, escaped, ok bool) {
	for j := i + 1; j < len(s.b); {
		switch c := s.b[j]; {
		case c == '"':
			return j + 1, escaped, true
		case c == '\\':
			escaped = true
			n := escapeLen(s.b, j, true)
			if n == 0 {
				return 0, false, false
			}
			j += n
		case c < 0x20:
			return 0, false, false
		default:
			j++
		}
	}
	return 0, false, false
}
