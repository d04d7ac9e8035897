package jsonschema_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
)

func ExampleNew() {
	v := jsonschema.New() // draft 2020-12, formats asserted
	schema, err := v.Compile(json.RawMessage(`{
		"type": "object",
		"properties": {
			"a": {"type": "number"},
			"b": {"type": "number"},
			"operation": {"enum": ["add", "subtract", "multiply", "divide"]},
			"email": {"type": "string", "format": "email"}
		},
		"required": ["a", "b", "operation"]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}

	var args any
	_ = json.Unmarshal([]byte(`{"a": 1, "b": 2, "operation": "add"}`), &args)
	fmt.Println(schema.Validate(args))

	_ = json.Unmarshal([]byte(`{"a": "1", "operation": "modulo", "email": "nobody"}`), &args)
	err = schema.Validate(args)
	fmt.Println(err)

	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Printf("%q: %s\n", p.Path, p.Message)
		}
	}

	_, err = v.Compile(json.RawMessage(`{"type": "object", "properties": {"a": {"type": "numbr"}}}`))
	fmt.Println(err)
	// Output:
	// <nil>
	// missing property "b"; /a: got string, want number; /email: "nobody" is not a valid email: missing @; /operation: value must be one of "add", "subtract", "multiply", "divide"
	// "": missing property "b"
	// "/a": got string, want number
	// "/email": "nobody" is not a valid email: missing @
	// "/operation": value must be one of "add", "subtract", "multiply", "divide"
	// schema is not valid: /properties/a/type: value must be one of "array", "boolean", "integer", "null", "number", "object", "string"
}
