package ports

import "encoding/json"

// SchemaValidator compiles JSON Schemas (draft 2020-12 by default, the MCP
// dialect; a schema may name another draft with $schema).
type SchemaValidator interface {
	// Compile checks schema and prepares it for validation. A schema that is
	// not valid is an error, reported when the tool is registered.
	Compile(schema json.RawMessage) (Schema, error)
}

// Schema is a compiled JSON Schema.
type Schema interface {
	// Validate checks a value decoded from JSON (nil, bool, float64 or
	// json.Number, string, []any, map[string]any). The error, if any, says
	// what is wrong in words fit to show a client (instance locations and
	// the failed keywords), without internal details.
	Validate(value any) error
}
