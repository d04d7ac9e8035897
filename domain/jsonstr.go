package domain

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, and U+2028
// and U+2029 escaped so the text is also safe inside JavaScript. Unlike
// encoding/json it does not escape <, > and &: MCP messages are not HTML.
//
// The space for s is reserved first; the bytes that need nothing are
// found eight at a time (see nextSpecial) and copied in runs.
func appendJSONString(b []byte, s string) []byte {
	b = slices.Grow(b, len(s)+2)
	b = append(b, '"')
	start := 0
	for i := nextSpecial(s, 0); i < len(s); i = nextSpecial(s, i) {
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Masks of special: a byte repeated in each of the eight bytes.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// nextSpecial returns the index of the first byte of s from i on that is
// not ASCII JSON takes as it is (a control character, a quote, a
// backslash, or a byte of a multi-byte character), len(s) if none is. It
// reads eight bytes at a time.
func nextSpecial(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if m := special(x); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// special returns the high bits of the bytes of x that need attention
// (see nextSpecial); its lowest set bit is exact (the borrows of the
// subtractions may set higher ones too). (x - ones) & ^x & highs is
// non-zero exactly when some byte of x is zero, and (x - n*ones) & ^x &
// highs when some byte is below n (n up to 0x80).
func special(x uint64) uint64 {
	quote, backslash := x^('"'*ones), x^('\\'*ones)
	return ((x-0x20*ones)&^x | (quote-ones)&^quote | (backslash-ones)&^backslash | x) & highs
}

// AppendJSONString is appendJSONString for other packages of the SDK.
func AppendJSONString(b []byte, s string) []byte { return appendJSONString(b, s) }

// formatFloat formats f the way encoding/json does, so that a number a tool
// returns reads the same in a text block as in JSON: 3, 0.5, 1e+21.
// NaN and infinities, which JSON cannot carry, come out as "NaN", "+Inf" and
// "-Inf".
func formatFloat(f float64, bits int) string {
	return string(appendFloat(nil, f, bits))
}

func appendFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.AppendFloat(b, f, 'g', -1, bits)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
