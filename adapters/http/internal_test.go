package mcphttp

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hexmcp/hexmcp/app"
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
	cases := []struct {
		ans       app.Answer
		stateless bool
		want      int
	}{
		{app.Answer{}, true, 200},
		{app.Answer{IsError: true, Code: -32601}, true, 404},
		{app.Answer{IsError: true, Code: -32601}, false, 200},
		{app.Answer{IsError: true, Code: -32022}, false, 400},
		{app.Answer{IsError: true, Code: -32021}, true, 400},
		{app.Answer{IsError: true, Code: -32021}, false, 200},
		{app.Answer{IsError: true, Code: -32020}, true, 400},
		// -32602 is a 400 when a required per-request _meta field is
		// missing (the engine says so), and an answer (200) otherwise
		// (an unknown tool).
		{app.Answer{IsError: true, Code: -32602}, true, 200},
		{app.Answer{IsError: true, Code: -32602, Malformed: true}, true, 400},
		{app.Answer{IsError: true, Code: -32602}, false, 200},
		{app.Answer{IsError: true, Code: -32603}, true, 200},
	}
	for _, c := range cases {
		if got := statusFor(c.stateless, c.ans); got != c.want {
			t.Errorf("statusFor(%t, %+v) = %d, want %d", c.stateless, c.ans, got, c.want)
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
