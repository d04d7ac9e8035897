package porttest

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/internal/jsontest"
	"github.com/hexmcp/hexmcp/ports"
)

// calculatorSchema is the input schema the suite uses most: two numbers and
// an operation.
const calculatorSchema = `{
	"type": "object",
	"properties": {
		"a": {"type": "number"},
		"b": {"type": "number"},
		"operation": {"type": "string", "enum": ["add", "subtract", "multiply", "divide"]}
	},
	"required": ["a", "b", "operation"],
	"additionalProperties": false
}`

// calculatorInvalid are values [calculatorSchema] refuses.
var calculatorInvalid = []string{
	`{"a": 1, "b": 2}`,
	`{"a": "1", "b": 2, "operation": "add"}`,
	`{"a": 1, "b": 2, "operation": "modulo"}`,
	`{"a": 1, "b": 2, "operation": "add", "c": 3}`,
	`[1, 2]`,
	`null`,
}

// TestSchemaValidator runs the contract of [ports.SchemaValidator] and
// [ports.Schema] against v:
//
//   - Compile accepts valid schemas and rejects, with an error, text that is
//     not JSON, schemas that break the metaschema, and references it cannot
//     resolve inside the schema (without fetching them);
//   - Compile calls are independent: two schemas with the same $id do not
//     clash;
//   - draft 2020-12 is the default; $schema selects draft-07;
//   - Validate accepts valid values and rejects invalid ones, whatever the
//     number representation (float64, json.Number, int, int64);
//   - a Validate error names the failed instance location as a JSON Pointer
//     ("/point/x") and the missing or offending property, and shows no
//     schema URL;
//   - a compiled Schema is safe for concurrent use;
//   - when compiled schemas implement [ports.JSONSchema], ValidateJSON on
//     the encoded value answers as Validate on the value decoded with
//     float64 numbers (nil, or the same message), whitespace and escapes
//     included, and a number beyond float64's range, even one no keyword
//     constrains, is an error wrapping [ports.ErrUndecodable].
func TestSchemaValidator(t *testing.T, v ports.SchemaValidator) {
	t.Helper()
	runSuite(t, schemaSuite{v: v})
}

// schemaSuite holds the subtests of [TestSchemaValidator], one method each.
type schemaSuite struct {
	v ports.SchemaValidator
}

func (suite schemaSuite) CompileValid(t *testing.T) {
	for _, schema := range []string{
		`{}`,
		`true`,
		`{"type": "object"}`,
		calculatorSchema,
		`{"type": "object", "properties": {"p": {"$ref": "#/$defs/point"}}, "$defs": {"point": {"type": "object"}}}`,
		` {"type": "string"} `,
	} {
		jsontest.MustCompile(t, suite.v, schema)
	}
}

func (suite schemaSuite) CompileInvalid(t *testing.T) {
	for _, schema := range []string{
		``,
		`{`,
		`{"type": "object"} x`,
		`{"type": 12}`,
		`{"type": "numbr"}`,
		`{"properties": []}`,
		`{"required": "a"}`,
		`{"minimum": "3"}`,
		`{"$ref": "#/$defs/missing"}`,
		`{"$ref": "https://example.invalid/schema.json"}`,
		`{"properties": {"a": {"$ref": "other.json#/a"}}}`,
	} {
		s, err := suite.v.Compile(json.RawMessage(schema))
		if err == nil {
			t.Errorf("Compile(%s) = %v, nil; want an error", schema, s)
			continue
		}
		if err.Error() == "" {
			t.Errorf("Compile(%s): error with an empty message", schema)
		}
	}
}

func (suite schemaSuite) Independent(t *testing.T) {
	a := jsontest.MustCompile(t, suite.v, `{"$id": "https://example.com/same", "type": "string"}`)
	b := jsontest.MustCompile(t, suite.v, `{"$id": "https://example.com/same", "type": "number"}`)
	wantValid(t, a, `"x"`)
	wantInvalid(t, a, `1`)
	wantValid(t, b, `1`)
	wantInvalid(t, b, `"x"`)
}

func wantValid(t *testing.T, s ports.Schema, value string) {
	t.Helper()
	if err := s.Validate(jsontest.DecodeJSON(t, value)); err != nil {
		t.Errorf("Validate(%s) = %v, want nil", value, err)
	}
}

func wantInvalid(t *testing.T, s ports.Schema, value string) error {
	t.Helper()
	err := s.Validate(jsontest.DecodeJSON(t, value))
	if err == nil {
		t.Errorf("Validate(%s) = nil, want an error", value)
	}
	return err
}

type schemaCase struct {
	schema string
	values []string
}

func (suite schemaSuite) Valid(t *testing.T) {
	for _, c := range []schemaCase{
		{`{}`, []string{`null`, `true`, `1`, `"s"`, `[]`, `{}`}},
		{`true`, []string{`null`, `{"a": 1}`}},
		{calculatorSchema, []string{`{"a": 1, "b": 2.5, "operation": "add"}`, `{"a": -1e3, "b": 0, "operation": "divide"}`}},
		{`{"type": "integer", "minimum": 1, "maximum": 10}`, []string{`1`, `10`, `5.0`}},
		{`{"type": "string", "pattern": "^[a-z]+$", "minLength": 2}`, []string{`"ab"`, `"xyz"`}},
		{`{"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}`, []string{`[]`, `[{"x": 1}, {"x": 2, "y": "z"}]`}},
		{`{"anyOf": [{"type": "string"}, {"type": "null"}]}`, []string{`"s"`, `null`}},
		{`{"type": ["string", "null"]}`, []string{`"s"`, `null`}},
		{`{"const": "fixed"}`, []string{`"fixed"`}},
	} {
		s := jsontest.MustCompile(t, suite.v, c.schema)
		for _, value := range c.values {
			if err := s.Validate(jsontest.DecodeJSON(t, value)); err != nil {
				t.Errorf("schema %s: Validate(%s) = %v, want nil", c.schema, value, err)
			}
		}
	}
}

func (suite schemaSuite) Invalid(t *testing.T) {
	for _, c := range []schemaCase{
		{`false`, []string{`null`, `{}`}},
		{calculatorSchema, calculatorInvalid},
		{`{"type": "integer", "minimum": 1, "maximum": 10}`, []string{`0`, `11`, `1.5`, `"5"`}},
		{`{"type": "string", "pattern": "^[a-z]+$", "minLength": 2}`, []string{`"a"`, `"AB"`, `12`}},
		{`{"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}`, []string{`[{}]`, `[{"x": 1}, {"x": "2"}]`, `{}`}},
		{`{"anyOf": [{"type": "string"}, {"type": "null"}]}`, []string{`1`, `{}`}},
		{`{"const": "fixed"}`, []string{`"other"`, `null`}},
	} {
		s := jsontest.MustCompile(t, suite.v, c.schema)
		for _, value := range c.values {
			if err := s.Validate(jsontest.DecodeJSON(t, value)); err == nil {
				t.Errorf("schema %s: Validate(%s) = nil, want an error", c.schema, value)
			}
		}
	}
}

func (suite schemaSuite) Numbers(t *testing.T) {
	s := jsontest.MustCompile(t, suite.v, `{"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 100}, "x": {"type": "number", "exclusiveMaximum": 1}}}`)
	okValues := []any{
		map[string]any{"n": 5.0, "x": 0.5},
		map[string]any{"n": json.Number("5"), "x": json.Number("0.5")},
		map[string]any{"n": 5, "x": 0},
		map[string]any{"n": int64(100), "x": int64(-3)},
		jsontest.DecodeJSONUseNumber(t, `{"n": 0, "x": 0.999}`),
	}
	for _, val := range okValues {
		if err := s.Validate(val); err != nil {
			t.Errorf("Validate(%#v) = %v, want nil", val, err)
		}
	}
	badValues := []any{
		map[string]any{"n": 5.5},
		map[string]any{"n": json.Number("5.5")},
		map[string]any{"n": -1},
		map[string]any{"n": int64(101)},
		map[string]any{"n": json.Number("101")},
		map[string]any{"x": 1.0},
		map[string]any{"x": json.Number("1")},
		map[string]any{"x": 1},
	}
	for _, val := range badValues {
		if err := s.Validate(val); err == nil {
			t.Errorf("Validate(%#v) = nil, want an error", val)
		}
	}
}

func (suite schemaSuite) Drafts(t *testing.T) {
	// Draft 2020-12 by default.
	s := jsontest.MustCompile(t, suite.v, `{"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "items": false}`)
	wantValid(t, s, `["a", 1]`)
	wantInvalid(t, s, `[1, "a"]`)
	wantInvalid(t, s, `["a", 1, true]`)
	s = jsontest.MustCompile(t, suite.v, `{"type": "object", "dependentRequired": {"a": ["b"]}}`)
	wantValid(t, s, `{"b": 1}`)
	wantInvalid(t, s, `{"a": 1}`)

	// Draft-07 when the schema says so.
	s = jsontest.MustCompile(t, suite.v, `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": [{"type": "string"}], "additionalItems": false}`)
	wantValid(t, s, `["a"]`)
	wantInvalid(t, s, `[1]`)
	wantInvalid(t, s, `["a", "b"]`)
}

func (suite schemaSuite) ErrorMessages(t *testing.T) {
	s := jsontest.MustCompile(t, suite.v, `{
		"type": "object",
		"properties": {
			"point": {"type": "object", "properties": {"x": {"type": "number"}}},
			"operation": {"enum": ["add", "subtract"]},
			"list": {"type": "array", "items": {"type": "integer"}}
		},
		"required": ["point"]
	}`)
	for _, c := range []struct {
		value string
		want  []string // substrings of the message
	}{
		{`{"point": {"x": "1"}}`, []string{"/point/x"}},
		{`{"point": {}, "operation": "mod"}`, []string{"/operation"}},
		{`{"point": {}, "list": [1, 2, "3"]}`, []string{"/list/2"}},
		{`{}`, []string{`point`}},
	} {
		err := wantInvalid(t, s, c.value)
		if err == nil {
			continue
		}
		msg := err.Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("Validate(%s) error %q does not mention %q", c.value, msg, w)
			}
		}
		for _, bad := range []string{"file://", "mem://", "#/properties", "%!"} {
			if strings.Contains(msg, bad) {
				t.Errorf("Validate(%s) error %q shows %q", c.value, msg, bad)
			}
		}
	}
}

func (suite schemaSuite) Concurrent(t *testing.T) {
	s := jsontest.MustCompile(t, suite.v, calculatorSchema)
	good := jsontest.DecodeJSON(t, `{"a": 1, "b": 2, "operation": "add"}`)
	bad := jsontest.DecodeJSON(t, `{"a": "x", "operation": "mod"}`)
	validateConcurrently(t, 16, s.Validate, good, bad)
}

// encodedCases are the schemas and values (valid and invalid) on which
// ValidateJSON must agree with Validate.
var encodedCases = []schemaCase{
	{`true`, []string{`null`, `{"a": [1, {"b": "c"}]}`}},
	{`false`, []string{`null`, `{}`}},
	{calculatorSchema, append([]string{
		`{"a": 1, "b": 2.5, "operation": "add"}`,
		` { "a" : -1e3 , "b" : 0 , "operation" : "divide" } `,
		`{"\u0061": 1, "b": 2, "oper\u0061tion": "\u0061dd"}`,
	}, calculatorInvalid...)},
	{`{"type": "integer", "minimum": 1, "maximum": 10}`, []string{`1`, `10`, `5.0`, `0`, `11`, `1.5`, `"5"`, `1e1`}},
	{`{"type": "string", "pattern": "^[a-z]+$", "minLength": 2}`, []string{`"ab"`, `"xyz"`, `"a"`, `"AB"`, `12`, `"a\u0062"`, `"a\nb"`}},
	{`{"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}`, []string{`[]`, `[{"x": 1}, {"x": 2, "y": "z"}]`, `[{}]`, `[{"x": 1}, {"x": "2"}]`, `{}`}},
	{`{"anyOf": [{"type": "string"}, {"type": "null"}]}`, []string{`"s"`, `null`, `1`, `{}`}},
	{`{"const": "fi\"xed"}`, []string{`"fi\"xed"`, `"fi\u0022xed"`, `"other"`, `null`}},
	{`{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}`, []string{
		`{"text": "` + strings.Repeat(`long \"text\"\n`, 2000) + `"}`, `{"text": 1}`, `{}`}},
	{`{"type": "object", "properties": {"point": {"type": "object", "properties": {"x": {"type": "number"}}}, "list": {"type": "array", "items": {"type": "integer"}}}, "required": ["point"]}`, []string{
		`{"point": {"x": "1"}}`, `{"point": {}, "list": [1, 2, "3"]}`, `{}`, `{"point": {"x": 1}, "list": [1]}`}},
}

func (suite schemaSuite) Encoded(t *testing.T) {
	if _, ok := jsontest.MustCompile(t, suite.v, `{}`).(ports.JSONSchema); !ok {
		t.Skip("the compiled schemas do not implement ports.JSONSchema")
	}
	for _, c := range encodedCases {
		s := jsontest.MustCompile(t, suite.v, c.schema).(ports.JSONSchema)
		for _, value := range c.values {
			want := s.Validate(jsontest.DecodeJSON(t, value))
			got := s.ValidateJSON([]byte(value))
			if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
				t.Errorf("schema %s: ValidateJSON(%.60s) = %v, Validate = %v", c.schema, value, got, want)
			}
		}
	}
	s := jsontest.MustCompile(t, suite.v, `{"type": "object", "properties": {"a": {"type": "number"}}}`).(ports.JSONSchema)
	for _, value := range []string{`{"a": 1e400}`, `{"b": [1, -1e999]}`} {
		if err := s.ValidateJSON([]byte(value)); !errors.Is(err, ports.ErrUndecodable) {
			t.Errorf("ValidateJSON(%s) = %v, want an error wrapping ports.ErrUndecodable", value, err)
		}
	}
	good, bad := []byte(`{"a": 1, "b": 2, "operation": "add"}`), []byte(`{"a": "x", "operation": "mod"}`)
	calc := jsontest.MustCompile(t, suite.v, calculatorSchema).(ports.JSONSchema)
	validateConcurrently(t, 8, calc.ValidateJSON, good, bad)
}

// validateConcurrently validates good and bad, in turn, from n goroutines at
// once, and fails t if good is refused or bad accepted.
func validateConcurrently[V any](t *testing.T, n int, validate func(V) error, good, bad V) {
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for g := range n {
		wg.Go(func() {
			for i := range 200 {
				if (g+i)%2 == 0 {
					if err := validate(good); err != nil {
						errs <- "valid value rejected: " + err.Error()
						return
					}
				} else if validate(bad) == nil {
					errs <- "invalid value accepted"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
