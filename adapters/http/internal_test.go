package mcphttp

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

func TestDecodeHeaderValue(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"us-west1", "us-west1", true},
		{"with space\tand tab", "with space\tand tab", true},
		{"=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界", true},
		{"=?base64?IHBhZGRlZCA=?=", " padded ", true},
		{"=?base64?bGluZTEKbGluZTI=?=", "line1\nline2", true},
		{"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "=?base64?literal?=", true},
		{"=?base64?SGk?=", "", false},     // unpadded (SEP-2243: invalid padding)
		{"=?base64?SGVsbG8?=", "", false}, // the suite's ServerRejectsInvalidBase64Padding
		{"=?base64?SGVsbG8=?=", "Hello", true},
		{"=?base64?SGl=?=", "", false},      // non-canonical: padding bits set
		{"=?base64?SGk==?=", "", false},     // too much padding
		{"=?base64?SGVs bG8=?=", "", false}, // a space inside
		{"=?base64?not base64!?=", "", false},
		{"=?base64?/w==?=", "", false}, // not UTF-8
		{"=?BASE64?SGk=?=", "=?BASE64?SGk=?=", true},
		{"caf\xc3\xa9", "", false},
		{"a\x00b", "", false},
	}
	for _, c := range cases {
		got, ok := decodeHeaderValue(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("decodeHeaderValue(%q) = %q, %t; want %q, %t", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestParseAccept(t *testing.T) {
	cases := map[string]accepts{
		"":                                    {true, true},
		"application/json, text/event-stream": {true, true},
		"application/json":                    {json: true},
		"text/event-stream":                   {sse: true},
		"*/*":                                 {true, true},
		"application/*;q=0.5":                 {json: true},
		"text/*":                              {sse: true},
		"text/html":                           {},
		"application/json;q=0, text/event-stream": {sse: true},
		"application/json;q=0.0":                  {},
		"garbage;;":                               {},
	}
	for in, want := range cases {
		var vs []string
		if in != "" {
			vs = []string{in}
		}
		if got := parseAccept(vs); got != want {
			t.Errorf("parseAccept(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestHeaderParams(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"b":{"type":"string","x-mcp-header":"B"},
		"a":{"type":"integer","x-mcp-header":"A"},
		"bad":{"type":"string","x-mcp-header":"has space"},
		"empty":{"type":"string","x-mcp-header":""},
		"obj":{"type":"object","properties":{"deep":{"type":"boolean","x-mcp-header":"Deep"}}},
		"arr":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"X"}}}},
		"alt":{"anyOf":[{"type":"string","x-mcp-header":"Alt"}]}}}`)
	got := headerParams(schema)
	want := []headerParam{{"A", []string{"a"}}, {"B", []string{"b"}}, {"Deep", []string{"obj", "deep"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if headerParams(json.RawMessage(`{"type":"object"}`)) != nil || headerParams(nil) != nil {
		t.Fatal("params from nothing")
	}
}

func TestSameValue(t *testing.T) {
	cases := []struct {
		h    string
		v    any
		want bool
	}{
		{"x", "x", true},
		{"x", "y", false},
		{"true", true, true},
		{"TRUE", true, false},
		{"false", false, true},
		{"42", json.Number("42"), true},
		{"42.0", json.Number("42"), false}, // the header must be canonical
		{"4.2e1", json.Number("42"), false},
		{"0x2a", json.Number("42"), false},
		{"42", json.Number("42.0"), true}, // the body is read as a number
		{"42", json.Number("4.2e1"), true},
		{"-7", json.Number("-7"), true},
		{"9007199254740993", json.Number("9007199254740992"), false}, // exact, not float
		{"42", "42", true},
		{"{}", map[string]any{}, false},
	}
	for _, c := range cases {
		if got := sameValue(c.h, c.v); got != c.want {
			t.Errorf("sameValue(%q, %#v) = %t", c.h, c.v, got)
		}
	}
}

func TestStatusFor(t *testing.T) {
	const (
		full     = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		noCaps   = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}}`
		capsNull = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}}}`
		noMeta   = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`
		invalid  = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}`
	)
	cases := []struct {
		resp      string
		stateless bool
		req       string
		want      int
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"error":{"code":-32601}}}`, true, full, 200},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}`, true, full, 404},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}`, false, "", 200},
		{`{"jsonrpc":"2.0","id":{"a":[1]},"error":{"code":-32022,"message":"m"}}`, false, "", 400},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"m"}}`, true, full, 400},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"m"}}`, true, full, 400},
		// -32602 is a 400 when a required per-request _meta field is
		// missing, and an answer (200) otherwise (an unknown tool).
		{invalid, true, full, 200},
		{invalid, true, noCaps, 400},
		{invalid, true, capsNull, 400},
		{invalid, true, noMeta, 400},
		{invalid, false, "", 200},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m"}}`, true, noCaps, 200},
		{`not json`, true, full, 200},
	}
	for _, c := range cases {
		if got := statusFor(c.stateless, []byte(c.resp), []byte(c.req)); got != c.want {
			t.Errorf("statusFor(%t, %s, %s) = %d, want %d", c.stateless, c.resp, c.req, got, c.want)
		}
	}
}

func TestAppendEvent(t *testing.T) {
	got := string(appendEvent(nil, event{id: "7", data: []byte("a\nb\r\nc")}))
	if want := "id: 7\nevent: message\ndata: a\ndata: b\ndata: c\n\n"; got != want {
		t.Fatalf("%q", got)
	}
	if got := string(appendEvent(nil, event{id: "8"})); got != "id: 8\ndata:\n\n" {
		t.Fatalf("priming %q", got)
	}
}

func TestBearerToken(t *testing.T) {
	for in, want := range map[string]string{"Bearer abc": "abc", "bearer abc": "abc", "Bearer  abc ": "abc", "Bearer": "", "Basic abc": "", "Bearer a b": ""} {
		got, ok := bearerToken([]string{in})
		if got != want || ok != (want != "") {
			t.Errorf("bearerToken(%q) = %q, %t", in, got, ok)
		}
	}
	if _, ok := bearerToken(http.Header{"Authorization": {"Bearer a", "Bearer b"}}.Values("Authorization")); ok {
		t.Error("two credentials accepted")
	}
}
