package jsonschema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/ports"
)

// encodedSchemas exercise every keyword of the fast path, with the texts
// of encodedTexts: checkJSON must answer as check does on the decoded
// value, and ValidateJSON as Validate (TestFastPathAgainstSuite does the
// same on the official suite).
var encodedSchemas = []struct {
	schema string
	draft  Draft
}{
	{schema: `{"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}, "operation": {"type": "string", "enum": ["add", "subtract", "a\"b", "é"]}}, "required": ["a", "b", "operation"], "additionalProperties": false}`},
	{schema: `{"type": "integer", "minimum": 0.1, "maximum": 9007199254740993}`},
	{schema: `{"exclusiveMinimum": 0, "exclusiveMaximum": 0.5, "multipleOf": 0.1}`},
	{schema: `{"enum": [0.1, 1, 1e400, "a", "\n", null, false, [1], {"a": 1}]}`},
	{schema: `{"const": "a\tb"}`},
	{schema: `{"uniqueItems": true}`},
	{schema: `{"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": {"type": "number"}, "propertyNames": {"maxLength": 4}, "minProperties": 1, "maxProperties": 3}`},
	{schema: `{"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}}`},
	{schema: `{"prefixItems": [{"type": "string"}], "items": {"type": "number"}, "minItems": 1, "maxItems": 3, "contains": {"type": "number"}, "minContains": 1, "maxContains": 2}`},
	{schema: `{"anyOf": [{"type": "string"}, {"multipleOf": 2}], "oneOf": [{"minimum": 0}, {"maximum": 10}], "not": {"const": 5}, "if": {"type": "number"}, "then": {"minimum": -5}, "else": {"maxLength": 3}}`},
	{schema: `{"allOf": [{"required": ["a"]}, {"properties": {"a": {"format": "email"}}}]}`},
	{schema: `{"format": "date"}`},
	{schema: `{"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-zé\n]+$"}`},
	{schema: `{"$defs": {"n": {"type": "object", "properties": {"c": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}`},
	{schema: `{"items": [{"type": "string"}], "additionalItems": {"type": "number"}, "dependencies": {"a": ["b"], "c": {"required": ["d"]}}}`, draft: Draft7},
	{schema: `{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}`},
	{schema: `{"type": "object"}`},
	{schema: `{"required": ["a", "b", "c", "d", "e", "f", "g", "h", "i"], "properties": {"a": {"type": "number"}}, "minProperties": 10}`},
	{schema: `true`},
}

var encodedTexts = []string{
	`{"a": 1, "b": 2, "operation": "add"}`,
	` { "a" : 1 , "b" : 2.5e0 , "operation" : "add" } `,
	`{"\u0061": 1, "b": 2, "op\u0065ration": "\u0061dd"}`,
	`{"a": 1, "b": 2, "operation": "a\"b"}`,
	`{"a": 1, "b": 2, "operation": "\u00e9"}`,
	`{"a": 1, "b": 2, "operation": "mul"}`,
	`{"a": 1, "b": 2}`,
	`{"a": "1", "b": 2, "operation": "add"}`,
	`{"a": 1, "b": 2, "operation": "add", "c": 1e400}`,
	`{"a": 1, "b": 2, "operation": "add", "c": [1, {"d": -1E+999}]}`,
	`{"a": 1e-400, "b": 2, "operation": "add"}`,
	`{"x-a": "s", "abc": 1}`, `{"x-a": 1}`, `{"abcde": 1}`, `{"x\u002da": "s"}`,
	`{"a": 1}`, `{"a": 1, "b": 1}`, `{"c": 1}`, `{"c": 1, "d": 1}`, `{"a": "x@y.z"}`, `{"a": "x"}`, `{}`,
	`{"c": {"c": {"c": 1}}}`, `{"c": {"c": {}}}`,
	`{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "i": 1, "j": 1}`, `{"a": "1", "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "i": 1, "j": 1}`,
	`{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "j": 1, "k": 1}`, `{"a": 1, "x": 1, "y": 1, "z": 1}`,
	`{"text": "` + strings.Repeat(`lorem \"ipsum\"\n`, 100) + `"}`, `{"text": 1}`, `{"txt": ""}`,
	`["a", 1]`, `["a"]`, `[1]`, `["a", 1, 2]`, `["a", 1, 2, 3]`, `["a", "b"]`, `[]`, `[ "a" , 1 ]`,
	`[1, 1]`, `[1, 1.0]`, `[0, -0.0]`, `["a", "\u0061"]`, `["a", "b", 1, true, null]`, `[null, null]`, `[true, false, true]`,
	`[{}, {}]`, `[[1], [1]]`, `[1, "1"]`, `[` + strings.Repeat(`1,`, 40) + `2]`,
	`"ab"`, `"abcd"`, `"éé"`, `"\u00e9\u00e9"`, `"a\nb"`, `"AB"`, `"2024-01-31"`, `"2024-13-31"`, `"a\tb"`, `"\n"`,
	`4`, `5`, `-4`, `20`, `3`, `-6`, `0.1`, `0.3`, `1`, `1.0`, `1e300`, `9007199254740993`, `-0.0`, `1e400`, `0.25`,
	`null`, `true`, `false`, `[1.0]`, `{"a": 1.0}`,
}

func compileEncoded(t testing.TB, schema string, d Draft) *compiledSchema {
	t.Helper()
	s, err := newValidator(WithDefaultDraft(d)).compile(json.RawMessage(schema))
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	return s
}

// encodedDiff checks checkJSON and ValidateJSON on text against check and
// Validate on the decoded value; "" when they agree.
func encodedDiff(s *compiledSchema, text []byte) string {
	jerr := s.ValidateJSON(text)
	var val any
	if err := jsonv2.Unmarshal(text, &val); err != nil {
		if !errors.Is(jerr, ports.ErrUndecodable) {
			return "undecodable, ValidateJSON says " + errString(jerr)
		}
		if s.fast != nil && s.fast.checkJSON(text) == valid {
			return "undecodable, checkJSON says valid"
		}
		return ""
	}
	verr := s.Validate(val)
	if (jerr == nil) != (verr == nil) || jerr != nil && jerr.Error() != verr.Error() {
		return "ValidateJSON " + errString(jerr) + ", Validate " + errString(verr)
	}
	if s.fast != nil {
		if got, want := s.fast.checkJSON(text), s.fast.check(val, 0); got != want {
			return "checkJSON " + verdictName(got) + ", check " + verdictName(want)
		}
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

func verdictName(v verdict) string {
	return [...]string{"unknown", "valid", "invalid"}[v]
}

func TestCheckJSONAgreesWithCheck(t *testing.T) {
	for _, sc := range encodedSchemas {
		s := compileEncoded(t, sc.schema, sc.draft)
		if s.fast == nil {
			t.Fatalf("%s: no fast path", sc.schema)
		}
		for _, text := range encodedTexts {
			if diff := encodedDiff(s, []byte(text)); diff != "" {
				t.Errorf("schema %s, value %s: %s", sc.schema, text, diff)
			}
		}
	}
}

// TestValidateJSONUndecodable checks that a number beyond float64 is an
// error wrapping ports.ErrUndecodable wherever it is, even where the
// schema does not look, as decoding the value would fail.
func TestValidateJSONUndecodable(t *testing.T) {
	s := compileEncoded(t, `{"type": "object"}`, Draft202012)
	for _, text := range []string{`{"a": 1e400}`, `{"a": [{"b": -2e308}]}`, `{"a": 1` + strings.Repeat("0", 400) + `}`} {
		err := s.ValidateJSON([]byte(text))
		if !errors.Is(err, ports.ErrUndecodable) {
			t.Errorf("%s: %v, want an error wrapping ErrUndecodable", text, err)
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Error() == "" {
			t.Errorf("%s: %T %v, want a *ValidationError with a message", text, err, err)
		}
	}
	if err := s.ValidateJSON([]byte(`{"a": 1e-400, "b": 1e308}`)); err != nil {
		t.Errorf("underflow and large finite numbers: %v", err)
	}
}

// TestCheckJSONMalformed feeds text that is not JSON: never a panic, and,
// for a schema that reads the members, never valid (truncated text, bad
// separators). A schema that reads nothing (true) only delimits the text.
func TestCheckJSONMalformed(t *testing.T) {
	s := compileEncoded(t, encodedSchemas[0].schema, Draft202012)
	any := compileEncoded(t, `true`, Draft202012)
	for _, text := range []string{
		``, ` `, `{`, `{"a": 1, "b": 2, "operation": "add"`, `{"a" 1}`, `{"a": 1 "b": 2}`, `{"a": 1,}`, `{,}`,
		`[1,`, `[1 2]`, `"abc`, `"abc\"`, `{"a": 1}}`, `{"a": 1} x`, `-`, `{"a":}`, `{"a`, `{"a":"`,
		// A member the schema does not read, its value cut off: skipped to
		// the end of the text.
		`{"x":`, `{"x": `, `{"a": 1, "x":`,
	} {
		if s.fast.checkJSON([]byte(text)) == valid {
			t.Errorf("checkJSON(%q) = valid", text)
		}
		_ = s.ValidateJSON([]byte(text))
		_ = any.ValidateJSON([]byte(text))
	}
}

func FuzzCheckJSON(f *testing.F) {
	for _, text := range encodedTexts {
		f.Add([]byte(text))
	}
	var schemas []*compiledSchema
	for _, sc := range encodedSchemas {
		schemas = append(schemas, compileEncoded(f, sc.schema, sc.draft))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		wellFormed := jsontext.Value(text).IsValid()
		for i, s := range schemas {
			if !wellFormed {
				_ = s.fast.checkJSON(text) // unspecified, but no panic
				continue
			}
			if diff := encodedDiff(s, text); diff != "" {
				t.Fatalf("schema %s, value %q: %s", encodedSchemas[i].schema, text, diff)
			}
		}
	})
}

// TestValidateJSONAllocations: valid arguments, large ones included, are
// checked without allocating.
func TestValidateJSONAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; make unit runs this without it too")
	}
	calc := compileEncoded(t, encodedSchemas[0].schema, Draft202012)
	args := []byte(`{"a": 1, "b": 2, "operation": "add"}`)
	text := compileEncoded(t, `{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}`, Draft202012)
	big := []byte(`{"text": "` + strings.Repeat(`lorem ipsum \"dolor\"\n`, 50000) + `"}`)
	for _, c := range []struct {
		s    *compiledSchema
		data []byte
	}{{calc, args}, {text, big}} {
		if err := c.s.ValidateJSON(c.data); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(20, func() { _ = c.s.ValidateJSON(c.data) }); n != 0 {
			t.Errorf("ValidateJSON of %.40s...: %v allocations, want 0", c.data, n)
		}
	}
}

func BenchmarkValidateJSON(b *testing.B) {
	s := compileEncoded(b, encodedSchemas[0].schema, Draft202012)
	args := []byte(`{"a": 1, "b": 2, "operation": "add"}`)
	b.Run("encoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.ValidateJSON(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := jsonv2.Unmarshal(args, &v); err != nil {
				b.Fatal(err)
			}
			if err := s.Validate(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
