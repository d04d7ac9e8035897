package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
)

// deepCall is a tools/call whose message nests depth levels in all (the
// message is level 1, params 2, arguments 3...), with id first.
func deepCall(depth int) string {
	k := depth - 2
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":` + strings.Repeat("[", k) + strings.Repeat("]", k) + `}}`
}

func deep(levels int) string {
	return strings.Repeat(`{"x":`, levels) + "1" + strings.Repeat("}", levels)
}

// A message exactly MaxNestingDepth deep is read; one level more is
// refused with -32600 naming the limit, with its id.
func TestNestingDepthBoundary(t *testing.T) {
	if _, rerr := decodeMessage([]byte(deepCall(MaxNestingDepth))); rerr != nil {
		t.Fatalf("a message %d deep: %s", MaxNestingDepth, encodeError(rerr))
	}
	_, rerr := decodeMessage([]byte(deepCall(MaxNestingDepth + 1)))
	if rerr == nil {
		t.Fatalf("a message %d deep was read", MaxNestingDepth+1)
	}
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: the message nests objects and arrays deeper than 10000 levels, the most this server reads","data":{"limit":"maxNestingDepth","max":10000}}}`
	if got := string(encodeError(rerr)); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if mi := Inspect([]byte(deepCall(MaxNestingDepth + 1))); mi.Kind != KindInvalid || string(mi.ID) != "1" {
		t.Fatalf("Inspect: %v %s", mi.Kind, mi.ID)
	}
}

// Past the depth, the id is read wherever it is, as readID reads it; a
// message that is not well-formed, or whose id cannot be told, has none.
func TestNestingDepthID(t *testing.T) {
	d := deep(MaxNestingDepth + 5)
	for _, c := range []struct {
		name, msg, id string
		code          int
	}{
		{"id after", `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":` + d + `},"id":"late"}`, `"late"`, domain.CodeInvalidRequest},
		{"escaped name", `{"\u0069d":-2.5e3,"x":` + d + `}`, `-2.5e3`, domain.CodeInvalidRequest},
		{"id twice", `{"id":1,"x":` + d + `,"id":2}`, ``, domain.CodeInvalidRequest},
		{"id an object", `{"id":{"a":1},"x":` + d + `}`, ``, domain.CodeInvalidRequest},
		{"id null", `{"id":null,"x":` + d + `}`, ``, domain.CodeInvalidRequest},
		{"nested id", `{"x":{"id":3,"y":` + d + `}}`, ``, domain.CodeInvalidRequest},
		{"no id", `{"jsonrpc":"2.0","method":"notifications/progress","params":` + d + `}`, ``, domain.CodeInvalidRequest},
		{"invalid UTF-8 too", "{\"id\":4,\"s\":\"\xff\",\"x\":" + d + `}`, `4`, domain.CodeInvalidRequest},
		{"duplicate first", `{"id":5,"a":1,"a":2,"x":` + d + `}`, `5`, domain.CodeInvalidRequest},
		{"broken after", `{"id":6,"x":` + d + `,}`, ``, domain.CodeParseError},
		{"cut", `{"id":7,"x":` + d[:len(d)-1], ``, domain.CodeParseError},
		{"trailing", `{"id":8,"x":` + d + `} x`, ``, domain.CodeParseError},
		{"bad escape", `{"id":9,"s":"\q","x":` + d + `}`, ``, domain.CodeParseError},
		{"control character", "{\"id\":10,\"s\":\"a\tb\",\"x\":" + d + `}`, ``, domain.CodeParseError},
	} {
		m, rerr := decodeMessage([]byte(c.msg))
		if rerr == nil {
			t.Errorf("%s: read", c.name)
			continue
		}
		if string(rerr.id) != c.id || string(m.id) != c.id || rerr.err.Code != c.code {
			t.Errorf("%s: %s, want id %q code %d", c.name, encodeError(rerr), c.id, c.code)
		}
	}
}

// nesting agrees with readID on every message the decoder can read to
// its end (within the depth), and with the decoder on its depth.
func FuzzNestingMatchesReadID(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(`{"id":1,"x":[[[{"a":[]}]]],"y":{}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if bytes.Count(raw, []byte("{"))+bytes.Count(raw, []byte("[")) >= MaxNestingDepth {
			return
		}
		id, ok := readID(raw, true)
		nid, _, nok := nesting(raw)
		isObject := len(bytes.TrimLeft(raw, " \t\r\n")) > 0 && bytes.TrimLeft(raw, " \t\r\n")[0] == '{'
		if isObject && ok != nok || ok && !bytes.Equal(id, nid) {
			t.Fatalf("%q: readID %s %v, nesting %s %v", raw, id, ok, nid, nok)
		}
	})
}
