package jsonschema_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/internal/jsontest"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

func TestContract(t *testing.T) {
	porttest.TestSchemaValidator(t, jsonschema.New())
}

// TestDraft7Default checks WithDefaultDraft, and that $schema still wins.
func TestDraft7Default(t *testing.T) {
	v := jsonschema.New(jsonschema.WithDefaultDraft(jsonschema.Draft7))
	s := jsontest.MustCompile(t, v, `{"type": "array", "items": [{"type": "string"}], "additionalItems": false}`)
	if err := s.Validate(jsontest.DecodeJSON(t, `["a", "b"]`)); err == nil {
		t.Error("draft-07 tuple items not applied")
	}
	s = jsontest.MustCompile(t, v, `{"$schema": "https://json-schema.org/draft/2020-12/schema", "prefixItems": [{"type": "string"}], "items": false}`)
	if err := s.Validate(jsontest.DecodeJSON(t, `["a", "b"]`)); err == nil {
		t.Error("$schema 2020-12 not honoured under a draft-07 default")
	}
}

func compile(t *testing.T, schema string, opts ...jsonschema.Option) ports.Schema {
	t.Helper()
	return jsontest.MustCompile(t, jsonschema.New(opts...), schema)
}

// check validates each value (JSON text) and compares the error message
// with want ("" for valid).
func check(t *testing.T, s ports.Schema, cases map[string]string) {
	t.Helper()
	for value, want := range cases {
		for _, decode := range []func(testing.TB, string) any{jsontest.DecodeJSON, jsontest.DecodeJSONUseNumber} {
			err := s.Validate(decode(t, value))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != want {
				t.Errorf("Validate(%s):\n got %q\nwant %q", value, got, want)
			}
		}
	}
}

func TestCalculator(t *testing.T) {
	s := compile(t, jsonschema.CalcSchema)
	check(t, s, map[string]string{
		`{"a": 1, "b": 2, "operation": "add"}`:          ``,
		`{"a": 1.5, "b": -2e10, "operation": "divide"}`: ``,
		`{"a": 1, "operation": "add"}`:                  `missing property "b"`,
		`{"operation": "add"}`:                          `missing properties "a", "b"`,
		`{"a": "1", "b": 2, "operation": "add"}`:        `/a: got string, want number`,
		`{"a": 1, "b": 2, "operation": "modulo"}`:       `/operation: value must be one of "add", "subtract", "multiply", "divide"`,
		`{"a": true, "b": null, "operation": 3}`:        `/a: got boolean, want number; /b: got null, want number; /operation: got number, want string`,
		`{"a": "x", "operation": "mod"}`:                `missing property "b"; /a: got string, want number; /operation: value must be one of "add", "subtract", "multiply", "divide"`,
		`[1, 2]`:                                        `got array, want object`,
	})
}

func TestKeywords(t *testing.T) {
	for _, c := range []struct {
		name   string
		schema string
		cases  map[string]string
	}{
		{"type", `{"type": "integer"}`, map[string]string{
			`1`: ``, `1.0`: ``, `1.5`: `got number, want integer`, `"1"`: `got string, want integer`, `null`: `got null, want integer`,
		}},
		{"type list", `{"type": ["string", "null"]}`, map[string]string{
			`"a"`: ``, `null`: ``, `1`: `got number, want null or string`,
		}},
		{"enum", `{"enum": ["red", 1, null, true]}`, map[string]string{
			`"red"`: ``, `1`: ``, `1.0`: ``, `null`: ``, `true`: ``,
			`"blue"`: `value must be one of "red", 1, null, true`,
			`{}`:     `value must be one of "red", 1, null, true`,
		}},
		{"enum of one", `{"enum": ["only"]}`, map[string]string{`"x"`: `value must be "only"`}},
		{"const", `{"const": 3}`, map[string]string{`3`: ``, `3.0`: ``, `4`: `value must be 3`}},
		{"required", `{"required": ["a", "b"]}`, map[string]string{
			`{"a": 1, "b": 2}`: ``, `{"a": 1}`: `missing property "b"`, `{}`: `missing properties "a", "b"`, `"not an object"`: ``,
		}},
		{"minimum maximum", `{"minimum": 1, "maximum": 10}`, map[string]string{
			`1`: ``, `10`: ``, `0.5`: `must be at least 1, got 0.5`, `11`: `must be at most 10, got 11`,
		}},
		{"exclusive", `{"exclusiveMinimum": 0, "exclusiveMaximum": 1}`, map[string]string{
			`0.5`: ``, `0`: `must be greater than 0, got 0`, `1`: `must be less than 1, got 1`,
		}},
		{"multipleOf", `{"multipleOf": 0.5}`, map[string]string{
			`1.5`: ``, `1.2`: `must be a multiple of 0.5, got 1.2`,
		}},
		{"strings", `{"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-z]+$"}`, map[string]string{
			`"ab"`: ``, `"é€"`: `"é€" does not match pattern "^[a-z]+$"`,
			`"a"`: `must be at least 2 characters long, got 1`, `"abcd"`: `must be at most 3 characters long, got 4`,
		}},
		{"format email", `{"type": "string", "format": "email"}`, map[string]string{
			`"ann@example.com"`: ``, `"ann"`: `"ann" is not a valid email: missing @`,
		}},
		{"format date-time", `{"format": "date-time"}`, map[string]string{
			`"2025-06-18T10:00:00Z"`: ``, `"yesterday"`: `"yesterday" is not a valid date-time: less than 20 characters long`, `12`: ``,
		}},
		{"unknown format", `{"format": "x-custom"}`, map[string]string{`"anything"`: ``}},
		{"additionalProperties false", `{"properties": {"a": {}}, "additionalProperties": false}`, map[string]string{
			`{"a": 1}`: ``, `{"a": 1, "b": 2}`: `property "b" is not allowed`, `{"z": 1, "b": 2}`: `properties "b", "z" are not allowed`,
		}},
		{"additionalProperties schema", `{"additionalProperties": {"type": "string"}}`, map[string]string{
			`{"a": "x"}`: ``, `{"a": 1}`: `/a: got number, want string`,
		}},
		{"nested", `{
			"type": "object",
			"properties": {
				"matrix": {"type": "array", "items": {"type": "array", "items": {"type": "number"}, "maxItems": 2}},
				"user": {"type": "object", "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}, "required": ["name"]}
			}
		}`, map[string]string{
			`{"matrix": [[1, 2], [3]], "user": {"name": "n", "tags": ["a", "b"]}}`: ``,
			`{"matrix": [[1, 2], [3, "4"]]}`:                                       `/matrix/1/1: got string, want number`,
			`{"matrix": [[1, 2, 3]]}`:                                              `/matrix/0: must have at most 2 items, got 3`,
			`{"user": {"tags": ["a", "a"]}}`:                                       `/user: missing property "name"; /user/tags: items 0 and 1 are equal, items must be unique`,
		}},
		{"array order", `{"items": {"type": "string"}}`, map[string]string{
			`[1, "a", "b", "c", "d", "e", "f", "g", "h", "i", 2]`: `/0: got number, want string; /10: got number, want string`,
		}},
		{"$defs and $ref", `{
			"type": "object",
			"properties": {"from": {"$ref": "#/$defs/point"}, "to": {"$ref": "#/$defs/point"}},
			"$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]}}
		}`, map[string]string{
			`{"from": {"x": 1, "y": 2}, "to": {"x": 3, "y": 4}}`: ``,
			`{"from": {"x": 1}, "to": {"x": 3, "y": "4"}}`:       `/from: missing property "y"; /to/y: got string, want number`,
		}},
		{"recursive $ref", `{"$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}, "v": {"type": "integer"}}}}, "$ref": "#/$defs/node"}`, map[string]string{
			`{"v": 1, "children": [{"v": 2, "children": [{"v": 3}]}]}`:   ``,
			`{"v": 1, "children": [{"v": 2, "children": [{"v": "3"}]}]}`: `/children/0/children/0/v: got string, want integer`,
		}},
		{"anyOf types", `{"anyOf": [{"type": "string"}, {"type": "integer"}]}`, map[string]string{
			`"a"`: ``, `1`: ``, `true`: `got boolean, want string or integer`,
		}},
		{"anyOf one candidate", `{"anyOf": [{"type": "string"}, {"type": "object", "required": ["id"]}]}`, map[string]string{
			`{"id": 1}`: ``, `{}`: `missing property "id"`,
		}},
		{"oneOf", `{"oneOf": [{"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"]}, {"type": "object", "properties": {"kind": {"const": "b"}}, "required": ["kind"]}]}`, map[string]string{
			`{"kind": "a"}`: ``, `{"kind": "c"}`: `value does not match any "oneOf" alternative`,
		}},
		{"oneOf several", `{"oneOf": [{"type": "number"}, {"type": "integer"}]}`, map[string]string{
			`1.5`: ``, `1`: `value matches more than one "oneOf" alternative (0 and 1)`,
		}},
		{"not", `{"not": {"type": "null"}}`, map[string]string{`1`: ``, `null`: `value must not match the "not" schema`}},
		{"if then else", `{"if": {"properties": {"kind": {"const": "circle"}}}, "then": {"required": ["radius"]}, "else": {"required": ["side"]}}`, map[string]string{
			`{"kind": "circle", "radius": 1}`: ``, `{"kind": "circle"}`: `missing property "radius"`, `{"kind": "square"}`: `missing property "side"`,
		}},
		{"allOf required merged", `{"allOf": [{"required": ["a"]}, {"required": ["b"]}]}`, map[string]string{
			`{"a": 1, "b": 1}`: ``, `{}`: `missing properties "a", "b"`,
		}},
		{"false property", `{"properties": {"secret": false}}`, map[string]string{
			`{}`: ``, `{"secret": 1}`: `/secret: value is not allowed`,
		}},
		{"pointer escaping", `{"properties": {"a/b": {"type": "string"}, "c~d": {"type": "string"}}}`, map[string]string{
			`{"a/b": 1, "c~d": 2}`: `/a~1b: got number, want string; /c~0d: got number, want string`,
		}},
		{"min max properties and items", `{"minProperties": 1, "maxProperties": 1, "properties": {"l": {"minItems": 1, "maxItems": 2}}}`, map[string]string{
			`{}`: `must have at least 1 property, got 0`, `{"a": 1, "b": 2}`: `must have at most 1 property, got 2`,
			`{"l": []}`: `/l: must have at least 1 item, got 0`, `{"l": [1, 2, 3]}`: `/l: must have at most 2 items, got 3`,
		}},
		{"contains", `{"contains": {"type": "string"}, "minContains": 2}`, map[string]string{
			`["a", 1, "b"]`: ``, `["a", 1]`: `at least 2 items must match the "contains" schema, got 1`,
		}},
		{"propertyNames", `{"propertyNames": {"pattern": "^[a-z]+$"}}`, map[string]string{
			`{"ok": 1}`: ``, `{"Bad": 1}`: `property name "Bad" is not allowed`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			check(t, compile(t, c.schema), c.cases)
		})
	}
}

func TestDraft2020Features(t *testing.T) {
	t.Run("prefixItems", func(t *testing.T) {
		check(t, compile(t, `{"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false}`), map[string]string{
			`["a", 1]`: ``, `["a"]`: ``, `[1, 1]`: `/0: got number, want string`, `["a", 1, 2]`: `/2: value is not allowed`,
		})
	})
	t.Run("dependentRequired", func(t *testing.T) {
		check(t, compile(t, `{"dependentRequired": {"card": ["cvc", "expiry"]}}`), map[string]string{
			`{}`: ``, `{"card": 1, "cvc": 1, "expiry": 1}`: ``, `{"card": 1, "cvc": 1}`: `property "card" requires property "expiry"`,
		})
	})
	t.Run("dependentSchemas", func(t *testing.T) {
		check(t, compile(t, `{"dependentSchemas": {"card": {"properties": {"cvc": {"type": "string"}}}}}`), map[string]string{
			`{"cvc": 1}`: ``, `{"card": 1, "cvc": 1}`: `/cvc: got number, want string`,
		})
	})
	t.Run("$defs", func(t *testing.T) {
		check(t, compile(t, `{"$defs": {"n": {"type": "number"}}, "items": {"$ref": "#/$defs/n"}}`), map[string]string{
			`[1]`: ``, `["x"]`: `/0: got string, want number`,
		})
	})
	t.Run("unevaluatedProperties", func(t *testing.T) {
		check(t, compile(t, `{"allOf": [{"properties": {"a": true}}], "unevaluatedProperties": false}`), map[string]string{
			`{"a": 1}`: ``, `{"a": 1, "b": 2}`: `/b: value is not allowed`,
		})
	})
	t.Run("draft-07 default keeps items as tuple", func(t *testing.T) {
		check(t, compile(t, `{"items": [{"type": "string"}]}`, jsonschema.WithDefaultDraft(jsonschema.Draft7)), map[string]string{
			`["a", 1]`: ``, `[1]`: `/0: got number, want string`,
		})
	})
}

func TestFormatAssertions(t *testing.T) {
	const schema = `{"format": "email"}`
	check(t, compile(t, schema), map[string]string{`"nope"`: `"nope" is not a valid email: missing @`})
	// Off: 2020-12 treats format as an annotation...
	check(t, compile(t, schema, jsonschema.WithFormatAssertions(false)), map[string]string{`"nope"`: ``})
	// ...while draft-07 asserts it.
	check(t, compile(t, `{"$schema": "http://json-schema.org/draft-07/schema#", "format": "email"}`, jsonschema.WithFormatAssertions(false)),
		map[string]string{`"nope"`: `"nope" is not a valid email: missing @`})
}

func TestValidationErrorType(t *testing.T) {
	s := compile(t, jsonschema.CalcSchema)
	err := s.Validate(map[string]any{"a": "x", "operation": "mod"})
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %T is not a *ValidationError", err)
	}
	want := []jsonschema.Problem{
		{Path: "", Message: `missing property "b"`},
		{Path: "/a", Message: "got string, want number"},
		{Path: "/operation", Message: `value must be one of "add", "subtract", "multiply", "divide"`},
	}
	if fmt.Sprint(ve.Problems) != fmt.Sprint(want) {
		t.Errorf("Problems = %q, want %q", ve.Problems, want)
	}
	if got := ve.Problems[1].String(); got != "/a: got string, want number" {
		t.Errorf("Problem.String() = %q", got)
	}
}

func TestManyProblems(t *testing.T) {
	s := compile(t, `{"items": {"type": "string"}}`)
	arr := make([]any, 20)
	for i := range arr {
		arr[i] = float64(i)
	}
	err := s.Validate(arr)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 20 {
		t.Fatalf("got %v", err)
	}
	msg := err.Error()
	if !strings.HasSuffix(msg, "/7: got number, want string; and 12 more") || strings.Count(msg, ";") != 8 {
		t.Errorf("message %q", msg)
	}
}

func TestLongValuesShortened(t *testing.T) {
	s := compile(t, `{"pattern": "^[0-9]+$"}`)
	err := s.Validate(strings.Repeat("x", 1000))
	if err == nil || len(err.Error()) > 120 || !strings.Contains(err.Error(), "…") {
		t.Errorf("message %q", err)
	}
	s = compile(t, `{"enum": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]}`)
	if err := s.Validate(20.0); err == nil || !strings.HasSuffix(err.Error(), "11, ... (20 values)") {
		t.Errorf("message %q", err)
	}
}

func TestGoValues(t *testing.T) {
	s := compile(t, `{"type": "object", "properties": {"n": {"type": "integer", "maximum": 10}, "tags": {"type": "array", "items": {"type": "string"}}, "m": {"type": "object", "additionalProperties": {"type": "number"}}}}`)
	for _, c := range []struct {
		value any
		want  string
	}{
		{map[string]any{"n": 3}, ""},
		{map[string]any{"n": int64(3)}, ""},
		{map[string]any{"n": int32(3)}, ""},
		{map[string]any{"n": uint8(3)}, ""},
		{map[string]any{"n": 11}, "/n: must be at most 10, got 11"},
		{map[string]any{"n": int64(1) << 60}, "/n: must be at most 10, got 1152921504606846976"},
		{map[string]any{"tags": []string{"a", "b"}}, ""},
		{map[string]any{"tags": []int{1}}, "/tags/0: got number, want string"},
		{map[string]any{"m": map[string]int{"a": 1}}, ""},
		{map[string]any{"m": map[string]string{"a": "1"}}, "/m/a: got string, want number"},
		{struct {
			N int `json:"n"`
		}{N: 20}, "/n: must be at most 10, got 20"},
		{map[string]any{"n": make(chan int)}, "value is not representable as JSON"},
	} {
		err := s.Validate(c.value)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("Validate(%#v) = %q, want %q", c.value, got, c.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	v := jsonschema.New()
	for schema, want := range map[string]string{
		`{`:                        `schema is not valid JSON: unexpected EOF`,
		``:                         `schema is not valid JSON: empty`,
		`{} {}`:                    `schema is not valid JSON: data after the top-level value`,
		`{"type": "numbr"}`:        `schema is not valid: /type: value must be one of "array", "boolean", "integer", "null", "number", "object", "string"`,
		`{"required": "a"}`:        `schema is not valid: /required: got string, want array`,
		`{"pattern": "(("}`:        `schema is not valid: /pattern: "((" is not a valid regex`,
		`{"$ref": "#/$defs/nope"}`: `cannot resolve "#/$defs/nope": no such location in the schema`,
		`{"properties": {"a": {"type": "object", "properties": {"b": {"minimum": "3"}}}}}`: `schema is not valid: /properties/a/properties/b/minimum: got string, want number`,
		`{"$ref": "https://example.com/schemas/point.json"}`:                               `cannot resolve "https://example.com/schemas/point.json": only references inside the schema are allowed`,
		`{"$ref": "point.json"}`:                                 `cannot resolve "point.json": only references inside the schema are allowed`,
		`{"$schema": "http://json-schema.org/draft-03/schema#"}`: `unsupported JSON Schema dialect "http://json-schema.org/draft-03/schema" (supported: draft-04, -06, -07, 2019-09, 2020-12)`,
		`{"$schema": "https://example.com/my-metaschema"}`:       `cannot resolve "https://example.com/my-metaschema": only references inside the schema are allowed`,
	} {
		_, err := v.Compile(json.RawMessage(schema))
		if err == nil {
			t.Errorf("Compile(%s) = nil error, want %q", schema, want)
			continue
		}
		if err.Error() != want {
			t.Errorf("Compile(%s):\n got %q\nwant %q", schema, err, want)
		}
		var ce *jsonschema.CompileError
		if !errors.As(err, &ce) || errors.Unwrap(err) == nil {
			t.Errorf("Compile(%s): error %T does not wrap its cause", schema, err)
		}
	}

	// The library's own error types are reachable through the chain.
	_, err := v.Compile(json.RawMessage(`{"type": 1}`))
	var sve *sjs.SchemaValidationError
	if !errors.As(err, &sve) {
		t.Errorf("errors.As(%v, *SchemaValidationError) = false", err)
	}
	var ce *jsonschema.CompileError
	if errors.As(err, &ce) && (len(ce.Problems) != 1 || ce.Problems[0].Path != "/type") {
		t.Errorf("Problems = %+v", ce.Problems)
	}
}

// TestNoNetwork checks that a remote $ref is refused rather than fetched.
func TestNoNetwork(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		fmt.Fprint(w, `{"type": "string"}`)
	}))
	defer srv.Close()
	for _, schema := range []string{
		`{"$ref": "` + srv.URL + `/s.json"}`,
		`{"properties": {"a": {"$ref": "` + srv.URL + `/s.json#/x"}}}`,
		`{"$schema": "` + srv.URL + `/meta.json"}`,
		`{"$id": "` + srv.URL + `/root.json", "$ref": "other.json"}`,
	} {
		if _, err := jsonschema.New().Compile(json.RawMessage(schema)); err == nil {
			t.Errorf("Compile(%s): no error", schema)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("server got %d requests, want 0", n)
	}
	// Nor the file system.
	if _, err := jsonschema.New().Compile(json.RawMessage(`{"$ref": "file:///etc/hostname"}`)); err == nil {
		t.Error("file $ref: no error")
	}
}

func TestEmbeddedID(t *testing.T) {
	// An $id inside the schema is a resource of the same document and is
	// resolved locally.
	s := compile(t, `{
		"$id": "https://example.com/root.json",
		"properties": {"p": {"$ref": "point.json"}},
		"$defs": {"point": {"$id": "point.json", "type": "object", "required": ["x"]}}
	}`)
	check(t, s, map[string]string{`{"p": {"x": 1}}`: ``, `{"p": {}}`: `/p: missing property "x"`})
}

func TestIndependentCompiles(t *testing.T) {
	v := jsonschema.New()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			typ := []string{"string", "number"}[i%2]
			s, err := v.Compile(json.RawMessage(`{"$id": "https://example.com/x", "$defs": {"t": {"type": "` + typ + `"}}, "$ref": "#/$defs/t"}`))
			if err != nil {
				t.Error(err)
				return
			}
			var good, bad any = "s", 1.0
			if i%2 == 1 {
				good, bad = bad, good
			}
			if s.Validate(good) != nil || s.Validate(bad) == nil {
				t.Errorf("compile %d (%s) mixed up with another", i, typ)
			}
		})
	}
	wg.Wait()
}

func TestConcurrentValidate(t *testing.T) {
	// Both the fast path and the library's path (errors, unevaluated*).
	for _, schema := range []string{jsonschema.CalcSchema, `{"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a", "b", "operation"], "unevaluatedProperties": {"type": ["number", "string"]}}`} {
		s := compile(t, schema)
		good := jsontest.DecodeJSON(t, `{"a": 1, "b": 2, "operation": "add"}`)
		bad := jsontest.DecodeJSON(t, `{"a": "x", "c": [], "operation": "mod"}`)
		var wg sync.WaitGroup
		for g := range 32 {
			wg.Go(func() {
				for i := range 300 {
					if (g+i)%3 == 0 {
						if err := s.Validate(good); err != nil {
							t.Errorf("valid value rejected: %v", err)
							return
						}
					} else if err := s.Validate(bad); err == nil || !strings.Contains(err.Error(), `missing property "b"`) {
						t.Errorf("invalid value: %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

func TestDraftString(t *testing.T) {
	if got := jsonschema.Draft202012.String(); got != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("Draft202012 = %q", got)
	}
	if got := jsonschema.Draft7.String(); !strings.Contains(got, "draft-07") {
		t.Errorf("Draft7 = %q", got)
	}
}

// TestValidationErrorIsDeterministic: problems that one keyword reports
// at one path in the order of a map (propertyNames, one per name) read the
// same every time.
func TestValidationErrorIsDeterministic(t *testing.T) {
	s, err := jsonschema.New().Compile(json.RawMessage(`{"propertyNames": {"maxLength": 2}, "dependentRequired": {"a": ["x"], "b": ["y"], "c": ["z"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal([]byte(`{"abc": 1, "bcd": 2, "cde": 3, "def": 4, "a": 1, "b": 2, "c": 3}`), &v); err != nil {
		t.Fatal(err)
	}
	first := s.Validate(v)
	if first == nil {
		t.Fatal("want an error")
	}
	for range 50 {
		if err := s.Validate(v); err == nil || err.Error() != first.Error() {
			t.Fatalf("Validate = %v, then %v", first, err)
		}
	}
}
