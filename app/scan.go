package app

import (
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
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

// scanLimits: beyond them scanMessage gives up.
const (
	scanMaxDepth   = 64 // nesting
	scanMaxMembers = 32 // members of one object (duplicates are found pairwise)
)

// scanner reads one message into w.
type scanner struct {
	b     []byte
	depth int
	w     *wireMessage
}

// Levels of an object: what scanner.object does with its members.
const (
	levelOther  = iota // members read and skipped
	levelTop           // the message: wireMessage's members
	levelParams        // params: wireParams's members
	levelMeta          // params._meta: requestMeta's members
)

// scanMessage fills w (w.raw is the message) or reports that it could not.
func scanMessage(w *wireMessage) bool {
	s := scanner{b: w.raw, w: w}
	i := s.space(0)
	if i >= len(s.b) || s.b[i] != '{' {
		return false
	}
	i, ok := s.object(i, levelTop)
	if !ok {
		return false
	}
	return s.space(i) == len(s.b)
}

// object reads the object at b[i] ('{') and the members of its level,
// and checks that no name appears twice. (Names with escapes make it give
// up: they would have to be compared unescaped.)
func (s *scanner) object(i int, level int) (int, bool) {
	if s.depth++; s.depth > scanMaxDepth {
		return 0, false
	}
	end, ok := s.members(i, level)
	s.depth--
	return end, ok
}

func (s *scanner) members(i int, level int) (int, bool) {
	var names [scanMaxMembers][]byte
	n := 0
	i = s.space(i + 1)
	if i < len(s.b) && s.b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(s.b) || s.b[i] != '"' {
			return 0, false
		}
		end, plain, ok := s.str(i)
		if !ok || !plain || n == scanMaxMembers {
			return 0, false
		}
		name := s.b[i+1 : end-1]
		for _, prev := range names[:n] {
			if string(prev) == string(name) {
				return 0, false
			}
		}
		names[n] = name
		n++
		i = s.space(end)
		if i >= len(s.b) || s.b[i] != ':' {
			return 0, false
		}
		i = s.space(i + 1)
		switch level {
		case levelTop:
			i, ok = s.topMember(name, i)
		case levelParams:
			i, ok = s.paramsMember(name, i)
		case levelMeta:
			i, ok = s.memberInto(s.w.Params.p.Meta.member(name), i)
		default:
			i, ok = s.value(i)
		}
		if !ok {
			return 0, false
		}
		i = s.space(i)
		if i >= len(s.b) {
			return 0, false
		}
		switch s.b[i] {
		case ',':
			i = s.space(i + 1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// array reads the array at b[i] ('[').
func (s *scanner) array(i int) (int, bool) {
	if s.depth++; s.depth > scanMaxDepth {
		return 0, false
	}
	end, ok := s.items(i)
	s.depth--
	return end, ok
}

func (s *scanner) items(i int) (int, bool) {
	i = s.space(i + 1)
	if i < len(s.b) && s.b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = s.value(i); !ok {
			return 0, false
		}
		i = s.space(i)
		if i >= len(s.b) {
			return 0, false
		}
		switch s.b[i] {
		case ',':
			i = s.space(i + 1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
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
		return s.object(i, levelOther)
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
			if j+1 >= len(s.b) {
				return 0, false, false
			}
			switch s.b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(s.b) || !isHex(s.b[j+2]) || !isHex(s.b[j+3]) || !isHex(s.b[j+4]) || !isHex(s.b[j+5]) {
					return 0, false, false
				}
				if c := s.b[j+2]; (c == 'd' || c == 'D') && s.b[j+3] >= '8' {
					return 0, false, false // a surrogate: left to the decoder
				}
				j += 6
			default:
				return 0, false, false
			}
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
func (s *scanner) topMember(name []byte, i int) (int, bool) {
	w := s.w
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
			w.Params.p = new(wireParams)
			end, ok := s.object(i, levelParams)
			if !ok {
				return 0, false
			}
			w.Params.raw = s.part(i, end)
			return end, true
		}
		return s.memberInto(&w.Params.raw, i)
	}
	return s.value(i)
}

// paramsMember reads a member of params (see readParams).
func (s *scanner) paramsMember(name []byte, i int) (int, bool) {
	p := s.w.Params.p
	if string(name) != "_meta" {
		return s.memberInto(p.member(name), i)
	}
	if i >= len(s.b) {
		return 0, false
	}
	switch c := s.b[i]; c {
	case '{':
		p.Meta = new(requestMeta)
		return s.object(i, levelMeta)
	case 'n':
		p.Meta = nil
	default:
		if s.w.Params.err == "" {
			s.w.Params.err = "unexpected " + kindName(byteKind(c)) + " at /_meta"
		}
	}
	return s.value(i)
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
