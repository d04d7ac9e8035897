package jsonschema

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// fastCase is a schema and values to try on it.
type fastCase struct {
	schema string
	draft  Draft
	values []any
}

func decodeAll(t *testing.T, texts ...string) []any {
	t.Helper()
	var out []any
	for _, text := range texts {
		var f any
		if err := json.Unmarshal([]byte(text), &f); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		n, err := decodeJSON([]byte(text))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		out = append(out, f, n)
	}
	return out
}

// TestFastPathAgreesWithLibrary checks the fast path against the library:
// it must never say valid where the library finds an error, and it should
// say valid (not unknown) for common valid values of the schemas it
// handles. TestFastPathAgainstSuite (suite_test.go) runs the same check on
// the official JSON-Schema-Test-Suite.
func TestFastPathAgreesWithLibrary(t *testing.T) {
	deep := strings.Repeat(`{"c":`, 100) + `1` + strings.Repeat(`}`, 100)
	cases := []fastCase{
		{schema: `{"type": "integer", "minimum": 0.1, "maximum": 9007199254740993}`, values: append(decodeAll(t,
			`0.1`, `0.2`, `1`, `1.0`, `1e300`, `9007199254740992`, `9007199254740993`, `9007199254740994`, `-0.0`, `"x"`),
			0, 1, int64(math.MaxInt64), int64(math.MinInt64), int64(1)<<53, int64(1)<<53+1, uint64(7), uint8(1), float32(1.5), json.Number("1.0"), json.Number("x"), json.Number("-0"), json.Number(""))},
		{schema: `{"minimum": 1, "maximum": 10}`, values: append(decodeAll(t, `0`, `1`, `10`, `11`, `10.5`, `0.999`), 0, 11, int64(5))},
		{schema: `{"exclusiveMinimum": 0, "exclusiveMaximum": 0.5, "multipleOf": 0.1}`, values: append(decodeAll(t,
			`0`, `0.1`, `0.3`, `0.5`, `0.25`, `"x"`), 0, int64(1))},
		{schema: `{"enum": [0.1, 1, 1e400, "a", null, false, [1], {"a": 1}]}`, values: append(decodeAll(t,
			`0.1`, `1`, `1.0`, `2`, `"a"`, `"b"`, `null`, `false`, `true`, `[1]`, `[1.0]`, `[2]`, `{"a": 1}`, `{"a": 2}`, `{}`, `1e308`),
			1, int64(2), uint(1), []string{"x"})},
		{schema: `{"const": {"a": [1, 2]}}`, values: decodeAll(t, `{"a": [1, 2]}`, `{"a": [1]}`, `1`, `null`)},
		// Integers past 2^53 are no exact float64s: compared as float64s, 2^53+1
		// would pass a maximum of 2^53 (and -(2^53+1) a minimum of -2^53).
		{schema: `{"maximum": 9007199254740992, "minimum": -9007199254740992}`, values: []any{
			int64(1) << 53, int64(1)<<53 + 1, -(int64(1) << 53), -(int64(1)<<53 + 1), uint64(1)<<53 + 1}},
		{schema: `{"const": 9007199254740993}`, values: append(decodeAll(t, `9007199254740993`, `9007199254740992`), int64(9007199254740993))},
		{schema: `{"uniqueItems": true}`, values: append(decodeAll(t,
			`[]`, `[1]`, `[1, 1]`, `[1, 1.0]`, `[0, -0.0]`, `["a", "a"]`, `["a", "b", 1, true, null]`, `[null, null]`, `[true, false, true]`,
			`[{}, {}]`, `[[1], [1]]`, `[1, "1"]`, `[`+strings.Repeat(`1,`, 40)+`2]`), []any{1, 1.0}, []any{int64(1), 1}, []any{1.0, "a", []string{}})},
		{schema: `{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}`, values: decodeAll(t, `1`, `{}`)},
		{schema: `{"$defs": {"n": {"type": "object", "properties": {"c": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}`, values: decodeAll(t, deep, `{"c": {"c": 1}}`, `{"c": {"c": {}}}`)},
		{schema: `{"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}, "operation": {"type": "string", "enum": ["add", "subtract"]}}, "required": ["a", "b", "operation"], "additionalProperties": false}`, values: append(decodeAll(t,
			`{"a": 1, "b": 2, "operation": "add"}`, `{"a": 1, "b": 2, "operation": "mul"}`, `{"a": 1, "b": 2}`, `{"a": 1, "b": 2, "operation": "add", "c": 1}`),
			map[string]any{"a": 1, "b": int64(2), "operation": "add"}, map[string]any{"a": []int{1}, "b": 2, "operation": "add"}, map[string]any{"a": 1, "b": 2, "operation": "add", "c": []int{}})},
		{schema: `{"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": {"type": "number"}, "propertyNames": {"maxLength": 4}, "minProperties": 1, "maxProperties": 3}`, values: decodeAll(t,
			`{"x-a": "s"}`, `{"x-a": 1}`, `{"abc": 1}`, `{"abc": "s"}`, `{"abcde": 1}`, `{}`, `{"a": 1, "b": 2, "c": 3, "d": 4}`)},
		{schema: `{"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}}`, values: decodeAll(t, `{"a": 1}`, `{"a": 1, "b": 1}`, `{"c": 1}`, `{"c": 1, "d": 1}`, `[]`,
			`{"a": 1, "x": 1, "y": 1, "z": 1}`, `{"a": 1, "b": 1, "c": 1, "x": 1}`, `{"a": 1, "b": 1, "c": 1, "d": 1, "x": 1}`)},
		{schema: `{"required": ["a", "b", "c", "d", "e", "f", "g", "h", "i"], "properties": {"a": {"type": "number"}}, "minProperties": 10, "maxProperties": 11}`, values: decodeAll(t,
			`{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "i": 1, "j": 1}`, `{"a": "1", "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "i": 1, "j": 1}`,
			`{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "j": 1, "k": 1}`, `{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "i": 1}`,
			`{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "i": 1, "j": 1, "k": 1, "l": 1}`)},
		{schema: `{"prefixItems": [{"type": "string"}], "items": {"type": "number"}, "minItems": 1, "maxItems": 3, "contains": {"type": "number"}, "minContains": 1, "maxContains": 2}`, values: decodeAll(t,
			`["a", 1]`, `["a"]`, `[1]`, `["a", 1, 2]`, `["a", 1, 2, 3]`, `["a", "b"]`, `[]`)},
		{schema: `{"anyOf": [{"type": "string"}, {"multipleOf": 2}], "oneOf": [{"minimum": 0}, {"maximum": 10}], "not": {"const": 5}, "if": {"type": "number"}, "then": {"minimum": -5}, "else": {"maxLength": 3}}`, values: append(decodeAll(t,
			`"ab"`, `"abcd"`, `4`, `5`, `-4`, `20`, `3`, `-6`, `null`), 4, json.Number("4"))},
		{schema: `{"allOf": [{"required": ["a"]}, {"properties": {"a": {"format": "email"}}}]}`, values: decodeAll(t, `{"a": "x@y.z"}`, `{"a": "x"}`, `{"a": 1}`, `{}`)},
		{schema: `{"properties": {"a": true, "b": false}, "additionalProperties": false}`, values: decodeAll(t, `{"a": 1}`, `{"b": 1}`, `{"c": 1}`, `{}`)},
		{schema: `{"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-zé]+$"}`, values: decodeAll(t, `"éé"`, `"é"`, `"abcd"`, `"AB"`)},
		{schema: `{"$ref": "#/definitions/s", "type": "number", "definitions": {"s": {"type": "string"}}}`, draft: Draft7, values: decodeAll(t, `"s"`, `1`)},
		{schema: `{"$ref": "#/$defs/s", "type": "number", "$defs": {"s": {"type": "string"}}}`, values: decodeAll(t, `"s"`, `1`)},
		{schema: `{"items": [{"type": "string"}], "additionalItems": {"type": "number"}, "dependencies": {"a": ["b"], "c": {"required": ["d"]}}}`, draft: Draft7, values: decodeAll(t,
			`["a", 1]`, `["a", "b"]`, `[1]`, `{"a": 1}`, `{"a": 1, "b": 1}`, `{"c": 1}`)},
		{schema: `{"type": "number", "minimum": 1, "exclusiveMinimum": true, "properties": {"a": {"type": "integer"}}}`, draft: Draft4, values: decodeAll(t, `1`, `1.5`, `0`)},
		{schema: `{"additionalProperties": {"type": "string"}}`, values: []any{map[string]any{"a": math.NaN()}, map[string]any{"a": math.Inf(1)}, map[string]any{"a": struct{}{}}}},
	}
	for _, c := range cases {
		s, err := newValidator(WithDefaultDraft(c.draft)).compile(json.RawMessage(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		if s.fast == nil {
			t.Errorf("%s: no fast path", c.schema)
			continue
		}
		for _, v := range c.values {
			lib := s.s.Validate(v) == nil
			switch s.fast.check(v, 0) {
			case valid:
				if !lib {
					t.Errorf("%s: %#v: fast path valid, library invalid", c.schema, v)
				}
			case invalid:
				if lib {
					t.Errorf("%s: %#v: fast path invalid, library valid", c.schema, v)
				}
			}
		}
	}
}

func TestFastPathUsed(t *testing.T) {
	for schema, want := range map[string]bool{
		`{"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}`: true,
		`true`: true,
		`{"$defs": {"n": {"type": "number"}}, "items": {"$ref": "#/$defs/n"}}`:              true,
		`{"unevaluatedProperties": false}`:                                                  false,
		`{"properties": {"a": {"unevaluatedItems": false}}}`:                                false,
		`{"$dynamicAnchor": "x", "items": {"$dynamicRef": "#x"}}`:                           false,
		`{"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveRef": "#"}`: false,
	} {
		s, err := newValidator().compile(json.RawMessage(schema))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.fast != nil; got != want {
			t.Errorf("%s: fast path %v, want %v", schema, got, want)
		}
	}
	// A valid value takes the fast path and allocates nothing.
	s, err := newValidator().compile(json.RawMessage(`{"type": "object", "properties": {"a": {"type": "number"}, "op": {"enum": ["add", "sub"]}}, "required": ["a", "op"]}`))
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{"a": 1.0, "op": "add"}
	if n := testing.AllocsPerRun(100, func() { _ = s.Validate(v) }); n != 0 {
		t.Errorf("Validate of a valid value: %v allocations, want 0", n)
	}
}

func TestComparePointers(t *testing.T) {
	ordered := []string{"", "/0", "/2", "/10", "/10/a", "/a", "/a/0", "/a/b", "/b"}
	for i := range ordered {
		for j := range ordered {
			got := comparePointers(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if (got < 0) != (want < 0) || (got > 0) != (want > 0) {
				t.Errorf("comparePointers(%q, %q) = %d", ordered[i], ordered[j], got)
			}
		}
	}
}

// CalcSchema is the input schema of the calculator tool of the benchmarks
// in test/bench, for the benchmarks of this package (bench_test.go too).
const CalcSchema = `{
	"type": "object",
	"properties": {
		"a": {"type": "number"},
		"b": {"type": "number"},
		"operation": {"type": "string", "enum": ["add", "subtract", "multiply", "divide"]}
	},
	"required": ["a", "b", "operation"]
}`

// BenchmarkValidateWithoutFastPath is BenchmarkValidate/valid on the
// library alone, to show what the fast path saves.
func BenchmarkValidateWithoutFastPath(b *testing.B) {
	s, err := newValidator().compile(json.RawMessage(CalcSchema))
	if err != nil {
		b.Fatal(err)
	}
	s.fast = nil
	v := map[string]any{"a": 1.5, "b": 2.0, "operation": "multiply"}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}
