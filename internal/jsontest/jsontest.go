// Package jsontest holds the JSON helpers of the SDK's tests of schema
// validators: ports/porttest's suite and the jsonschema adapter's own tests.
package jsontest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/ports"
)

// DecodeJSON decodes JSON text as the engine does (numbers as float64), and
// fails the test if it is not valid JSON.
func DecodeJSON(t testing.TB, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("test data %s: %v", text, err)
	}
	return v
}

// DecodeJSONUseNumber decodes JSON text with numbers as json.Number.
func DecodeJSONUseNumber(t testing.TB, text string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("test data %s: %v", text, err)
	}
	return v
}

// MustCompile compiles schema with v and fails the test on an error.
func MustCompile(t testing.TB, v ports.SchemaValidator, schema string) ports.Schema {
	t.Helper()
	s, err := v.Compile(json.RawMessage(schema))
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	if s == nil {
		t.Fatalf("Compile(%s) returned a nil Schema and no error", schema)
	}
	return s
}

// Equal fails the test unless got and want are the same JSON, member order
// aside.
func Equal(t testing.TB, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}
