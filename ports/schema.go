package ports

import (
	"encoding/json"
	"errors"
)

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

// JSONSchema is a [Schema] that also checks a value as encoded, so that
// the caller need not decode it first. The engine validates tool arguments
// (and structured results) so when the compiled schema offers it, and
// decodes them only into the tool's input type; other schemas get the
// decoded value.
type JSONSchema interface {
	Schema
	// ValidateJSON checks data, one JSON value as encoded, which the caller
	// has already read as well-formed JSON (valid UTF-8, no duplicate member
	// names: the engine's strict decoder has read it; on other data the
	// answer is unspecified, but never a panic). It answers as Validate
	// does for the value data decodes to, its numbers as float64 (what a
	// decoder yields into an any): nil, or the same error. Data that does
	// not decode so, such as a number beyond float64's range, is an error
	// wrapping [ErrUndecodable].
	ValidateJSON(data []byte) error
}

// ErrUndecodable is wrapped by the error of [JSONSchema.ValidateJSON] for
// data that cannot be decoded into a value to validate.
var ErrUndecodable = errors.New("the value cannot be decoded")
