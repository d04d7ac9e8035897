package app

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decodeCases are messages on which the one-pass decoder must answer
// exactly as the reference decoder (decode_ref_test.go) does: the message,
// the error and its data, the decoded params or their error.
var decodeCases = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1,"b":2,"operation":"add"}}}`,
	` { "jsonrpc" : "2.0" , "id" : 1 , "method" : "tools/call" , "params" : { "name" : "x" , "arguments" : { "a" : 1 } } } `,
	"{\n\t\"jsonrpc\":\"2.0\",\r\n\"id\":\"a\\\"b\",\"method\":\"ping\",\"params\":\n{}\n}",
	`{"jsonrpc":"2.0","id":1,"meth\u006fd":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","par\u0061ms":{"n\u0061me":"x","\u005fmeta":{"progress\u0054oken":7}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","PARAMS":{"name":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"x","Arguments":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","name":"y"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1,"a":2}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1,"progressToken":2}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"extra":{"a":[1,{"b":2,"b":3}]}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"arguments\":{\"\xfe\":1}}}",
	``, `{`, `}`, `{"a":}`, `{} x`, `{}{}`, `[]`, `[1,`, `"x"`, `"x`, `1`, `-`, `null`, `true`, `{}`, `nul`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":1}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":[1]}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":true}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"},"io.modelcontextprotocol/logLevel":"info","traceparent":"00-x","tracestate":"a=b","baggage":"k=v","other":[1,2]},"cursor":"YWZ0ZXI6YQ"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"uri":"u","ref":{},"argument":{},"context":{},"protocolVersion":"v","capabilities":{},"clientInfo":{},"level":"debug","inputResponses":{},"requestState":"s","notifications":{},"requestId":3,"reason":"r","unknown":null}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":[],"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1e999,"method":"ping"}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":1}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}`,
	`{"a":{"a":{"a":{"a":[[[[[[[[[[]]]]]]]]]]}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"a":{"b":{"c":[{"d":1}]}}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{},"_meta":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":1,"name":"\u00e9\ud83d\ude00"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"name":"x"`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"progressToken":}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":1,"name":}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"_meta\":\"\xff\"}}",
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"\u005f\u006d\u0065\u0074\u0061\u005f\u006d\u0065\u0074\u0061\u005f\u006d\u0065\u0074\u0061\u005f\u006d\u0065\u0074\u0061":1}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","x":"\ud83d\ude00","y":"\ud83d","z":"\ude00"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","x":"\u00","y":"\x"}`,
	`{"jsonrpc":"2.0","id":01,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":-,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1.,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1e,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":-0.5E+7,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":tru,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping",}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping" "x":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","x":[1,2,]}`,
	`{"params":{{"progressToken":0,"progressToken"`,
	`{"jsonrpc":"2.0",{"a":1,"a":2}}`,
	`{"jsonrpc":"2.0","params":{"_meta":{{"a":1,"a":2}}}}`,
	`{"jsonrpc":"2.0","params":{"_meta":{"a":1,[1,2]}}}`,
	`{"jsonrpc":"2.0",1:2}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","x":{"a":1,"b":{"a":1,"a":2}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","x":{"a":1,"\u0061":2}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"a\tb\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xed\xa0\x80\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xc3\"}",
	"\ufeff{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\x00",
	`{"jsonrpc":"2.0","id":1,"method":"ping","x":` + strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","x":{` + strings.Repeat(`"k":1,`, 0) + manyMembers(40) + `}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","x":{` + manyMembers(40) + `,"k3":2}}`,
}

// manyMembers returns n members "k0":0,"k1":1,...
func manyMembers(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	return b.String()
}

// TestDecodeParity checks the one-pass decoder against the reference on
// decodeCases.
func TestDecodeParity(t *testing.T) {
	for _, c := range decodeCases {
		if diff := decodeDiff([]byte(c)); diff != "" {
			t.Errorf("%q: %s", c, diff)
		}
	}
}

// FuzzDecodeParity does the same on arbitrary input.
func FuzzDecodeParity(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if diff := decodeDiff(raw); diff != "" {
			t.Fatalf("%q: %s", raw, diff)
		}
	})
}

// TestScanTakesCommonMessages checks that the scanner, not the decoder,
// reads the messages clients send most (a scanner that always gave up
// would pass the parity tests).
func TestScanTakesCommonMessages(t *testing.T) {
	for _, c := range []string{
		decodeCases[0], decodeCases[1], decodeCases[2],
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"}},"cursor":"YWZ0ZXI6YQ"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"bench","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"caf\u00e9 \"q\"\n"}],"n":[1.5e3,-0,0.25,true,false,null]}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"é\",\"arguments\":{\"t\":\"\u2028 ✓ 😀\"}}}",
	} {
		w := wireMessage{raw: []byte(c)}
		if !scanMessage(&w) {
			t.Errorf("the scanner gave up on %s", c)
		}
	}
}

// FuzzScanMatchesDecoder checks that wherever the scanner reads a message,
// the decoder accepts it and reads the same members.
func FuzzScanMatchesDecoder(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := wireMessage{raw: raw}
		if !scanMessage(&got) {
			return
		}
		want := wireMessage{raw: raw}
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%q: scanned, but the decoder says %v", raw, err)
		}
		if s := structDiff(reflect.ValueOf(wireFields(&got)), reflect.ValueOf(wireFields(&want))); s != "" {
			t.Fatalf("%q: %s", raw, s)
		}
		if got.Params.err != want.Params.err || (got.Params.p == nil) != (want.Params.p == nil) {
			t.Fatalf("%q: params error %q (decoded %v), want %q (%v)", raw, got.Params.err, got.Params.p != nil, want.Params.err, want.Params.p != nil)
		}
		if got.Params.p != nil {
			if s := structDiff(reflect.ValueOf(got.Params.p).Elem(), reflect.ValueOf(want.Params.p).Elem()); s != "" {
				t.Fatalf("%q: params: %s", raw, s)
			}
		}
	})
}

// wireFields are the members of a wireMessage as a struct of values.
func wireFields(w *wireMessage) struct{ JSONRPC, ID, Method, Params, Result, Error jsontext.Value } {
	return struct{ JSONRPC, ID, Method, Params, Result, Error jsontext.Value }{w.JSONRPC, w.ID, w.Method, w.Params.raw, w.Result, w.Error}
}

// TestDecodeKeepsNoRoom checks that the parts of a message that the
// engine hands on cannot be grown over the rest of the message.
func TestDecodeKeepsNoRoom(t *testing.T) {
	raw := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1},"_meta":{"progressToken":2}}}`)
	orig := bytes.Clone(raw)
	m, rerr := decodeMessage(raw)
	if rerr != nil {
		t.Fatal(rerr.err)
	}
	p, perr := decodeParams(m.params, m.id)
	if perr != nil {
		t.Fatal(perr.err)
	}
	for _, v := range []jsontext.Value{m.id, m.params.raw, p.Name, p.Arguments, p.Meta.ProgressToken} {
		if cap(v) != len(v) {
			t.Errorf("%s: cap %d, len %d", v, cap(v), len(v))
		}
		_ = append(v, "xxxxxxxx"...)
	}
	if !bytes.Equal(raw, orig) {
		t.Errorf("the message changed: %s", raw)
	}
	if string(p.Arguments) != `{"a":1}` || string(m.params.raw) != `{"name":"x","arguments":{"a":1},"_meta":{"progressToken":2}}` {
		t.Errorf("arguments %s, params %s", p.Arguments, m.params.raw)
	}
}

// decodeDiff describes how decodeMessage and decodeParams differ from the
// reference on raw ("" when they agree).
func decodeDiff(raw []byte) string {
	m, rerr := decodeMessage(raw)
	rm, rrerr := refDecodeMessage(raw)
	var d []string
	if s := rpcErrorDiff(rerr, rrerr); s != "" {
		d = append(d, "error: "+s)
	}
	for _, f := range []struct {
		name      string
		got, want []byte
	}{{"id", m.id, rm.id}, {"params", m.params.raw, rm.params}, {"payload", m.payload, rm.payload}} {
		if !sameValue(f.got, f.want) {
			d = append(d, fmt.Sprintf("%s %q, want %q", f.name, f.got, f.want))
		}
	}
	if m.method != rm.method || m.isResponse != rm.isResponse || m.isError != rm.isError {
		d = append(d, fmt.Sprintf("method %q response %v error %v, want %q %v %v", m.method, m.isResponse, m.isError, rm.method, rm.isResponse, rm.isError))
	}
	if rerr == nil && rrerr == nil {
		p, perr := decodeParams(m.params, m.id)
		rp, rperr := refDecodeParams(rm.params, rm.id)
		if s := rpcErrorDiff(perr, rperr); s != "" {
			d = append(d, "params error: "+s)
		}
		if perr == nil && rperr == nil {
			if s := structDiff(reflect.ValueOf(p).Elem(), reflect.ValueOf(rp).Elem()); s != "" {
				d = append(d, "params: "+s)
			}
		}
	}
	return strings.Join(d, "; ")
}

func sameValue(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func rpcErrorDiff(got, want *rpcError) string {
	switch {
	case got == nil && want == nil:
		return ""
	case got == nil || want == nil:
		return fmt.Sprintf("%v, want %v", got, want)
	case !sameValue(got.id, want.id) || got.err.Code != want.err.Code || got.err.Message != want.err.Message ||
		!reflect.DeepEqual(got.err.Data, want.err.Data):
		return fmt.Sprintf("%s %d %q %v, want %s %d %q %v", got.id, got.err.Code, got.err.Message, got.err.Data,
			want.id, want.err.Code, want.err.Message, want.err.Data)
	}
	return ""
}

// structDiff compares two wireParams (or requestMeta) field by field.
func structDiff(got, want reflect.Value) string {
	var d []string
	for i := range got.NumField() {
		name := got.Type().Field(i).Name
		g, w := got.Field(i), want.Field(i)
		switch g.Kind() {
		case reflect.Pointer:
			switch {
			case g.IsNil() != w.IsNil():
				d = append(d, fmt.Sprintf("%s nil %v, want nil %v", name, g.IsNil(), w.IsNil()))
			case !g.IsNil():
				if s := structDiff(g.Elem(), w.Elem()); s != "" {
					d = append(d, name+"."+s)
				}
			}
		default:
			gb, wb := g.Interface().(jsontext.Value), w.Interface().(jsontext.Value)
			if !sameValue(gb, wb) {
				d = append(d, fmt.Sprintf("%s %q, want %q", name, gb, wb))
			}
		}
	}
	return strings.Join(d, ", ")
}

// BenchmarkDecodeMessage decodes a tools/call of the calculator: the
// one-pass decoder and, for comparison, the reference (message, then
// params).
func BenchmarkDecodeMessage(b *testing.B) {
	raw := []byte(`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1,"b":2,"operation":"add"}}}`)
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, rerr := decodeMessage(raw)
			if rerr != nil {
				b.Fatal(rerr.err)
			}
			if _, perr := decodeParams(m.params, m.id); perr != nil {
				b.Fatal(perr.err)
			}
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, rerr := refDecodeMessage(raw)
			if rerr != nil {
				b.Fatal(rerr.err)
			}
			if _, perr := refDecodeParams(m.params, m.id); perr != nil {
				b.Fatal(perr.err)
			}
		}
	})
}
