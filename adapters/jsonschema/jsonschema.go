// Package jsonschema implements [ports.SchemaValidator] with
// github.com/santhosh-tekuri/jsonschema/v6.
//
// Schemas are JSON Schema draft 2020-12 unless they name another draft with
// $schema (or [WithDefaultDraft] says otherwise). Every Compile of the
// validator [New] returns is independent of the others: two tools may use
// the same $id without clashing. References are resolved only inside the schema being compiled
// ("#/$defs/x", "#anchor", embedded $id resources) and the standard
// metaschemas, which are built in; a $ref to anything else is a compile error
// and never a network or file-system access.
//
// A compiled schema (the [ports.Schema] Compile returns, a
// [ports.JSONSchema] too) is safe for concurrent use. Its Validate and
// ValidateJSON return nil or a [*ValidationError] whose message is
// short, names each problem's instance location as a JSON Pointer and is
// fit to show a client, for example:
//
//	/operation: value must be one of "add", "subtract", "multiply", "divide"
//	missing property "b"
//	/a: got string, want number
package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/hexmcp/hexmcp/ports"
)

// Draft is a JSON Schema dialect, used for schemas without $schema.
type Draft int

// Drafts. The zero value is draft 2020-12, MCP's default dialect.
const (
	Draft202012 Draft = iota // https://json-schema.org/draft/2020-12/schema
	Draft201909              // https://json-schema.org/draft/2019-09/schema
	Draft7                   // http://json-schema.org/draft-07/schema#
	Draft6                   // http://json-schema.org/draft-06/schema#
	Draft4                   // http://json-schema.org/draft-04/schema#
)

// String returns the draft's metaschema URL.
func (d Draft) String() string { return d.draft().String() }

func (d Draft) draft() *sjs.Draft {
	switch d {
	case Draft201909:
		return sjs.Draft2019
	case Draft7:
		return sjs.Draft7
	case Draft6:
		return sjs.Draft6
	case Draft4:
		return sjs.Draft4
	}
	return sjs.Draft2020
}

// Option configures the validator [New] returns.
type Option func(*validator)

// WithDefaultDraft sets the dialect of schemas that have no $schema keyword.
// The default is [Draft202012]. An unknown value means [Draft202012].
func WithDefaultDraft(d Draft) Option {
	return func(v *validator) { v.draft = d }
}

// WithFormatAssertions turns checking of the "format" keyword on or off.
//
// It is on by default: a value that is not a valid "email", "date-time",
// "uri", "uuid", "ipv4", ... is rejected, which is what a tool author who
// wrote the format expects (draft 2020-12 by itself treats format as an
// annotation only). Unknown format names are always ignored. With false, the
// drafts' own rules apply: formats are asserted for draft-07 and earlier,
// and only annotations for 2019-09 and 2020-12.
func WithFormatAssertions(on bool) Option {
	return func(v *validator) { v.formats = on }
}

// validator is the [ports.SchemaValidator] of [New].
type validator struct {
	draft   Draft
	formats bool
}

var _ ports.SchemaValidator = (*validator)(nil)

// New returns a [ports.SchemaValidator], safe for concurrent use: draft
// 2020-12 by default, format assertions on. The error of its Compile, a
// [*CompileError], says what is wrong with a schema; the Validate and
// ValidateJSON of a compiled schema return a [*ValidationError].
func New(opts ...Option) ports.SchemaValidator { return newValidator(opts...) }

// newValidator is [New]'s validator.
func newValidator(opts ...Option) *validator {
	v := &validator{draft: Draft202012, formats: true}
	for _, o := range opts {
		o(v)
	}
	return v
}

// schemaURL is the location each schema is compiled at. Every Compile uses
// a fresh compiler, so the same URL never clashes; it is removed from the
// messages of compile errors.
const schemaURL = "mem:///schema.json"

// Compile parses and compiles schema. The error, a [*CompileError], says
// what is wrong with the schema. The schema's Validate and ValidateJSON
// return a [*ValidationError].
func (v *validator) Compile(schema json.RawMessage) (ports.Schema, error) {
	s, err := v.compile(schema)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (v *validator) compile(schema json.RawMessage) (*compiledSchema, error) {
	doc, err := decodeJSON(schema)
	if err != nil {
		return nil, &CompileError{msg: "schema is not valid JSON: " + err.Error(), err: err}
	}
	c := sjs.NewCompiler()
	c.DefaultDraft(v.draft.draft())
	if v.formats {
		c.AssertFormat()
	}
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, compileError(err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, compileError(err)
	}
	return &compiledSchema{s: s, fast: buildFast(s)}, nil
}

// decodeJSON decodes one JSON value, keeping numbers exact.
func decodeJSON(data []byte) (any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty")
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after the top-level value")
	}
	return doc, nil
}

// errNotLocal is what noLoader answers for every URL.
var errNotLocal = errors.New("only references inside the schema can be resolved")

// noLoader refuses to load anything: no network, no files. Standard
// metaschemas are built into the library and never reach the loader.
type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, errNotLocal }

// CompileError reports a schema that does not compile. It wraps the
// underlying error (errors.Unwrap, errors.As).
type CompileError struct {
	// Problems lists where the schema breaks its metaschema's rules, with
	// paths into the schema, when that is what is wrong; nil otherwise.
	Problems []Problem

	msg string
	err error
}

// Error returns a one-line description of what is wrong with the schema.
func (e *CompileError) Error() string { return e.msg }

// Unwrap returns the underlying error.
func (e *CompileError) Unwrap() error { return e.err }

func compileError(err error) *CompileError {
	var sve *sjs.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *sjs.ValidationError
		if errors.As(sve.Err, &ve) {
			ps := problems(ve)
			return &CompileError{
				Problems: ps,
				msg:      "schema is not valid: " + joinProblems(ps),
				err:      err,
			}
		}
	}
	var pe *sjs.JSONPointerNotFoundError
	if errors.As(err, &pe) {
		return &CompileError{
			msg: fmt.Sprintf("cannot resolve %s: no such location in the schema", quote(stripURL(pe.URL))),
			err: err,
		}
	}
	var ae *sjs.AnchorNotFoundError
	if errors.As(err, &ae) {
		return &CompileError{
			msg: fmt.Sprintf("cannot resolve %s: no such anchor in the schema", quote(stripURL(ae.Reference))),
			err: err,
		}
	}
	var le *sjs.LoadURLError
	if errors.As(err, &le) {
		if strings.Contains(le.URL, "://json-schema.org/") {
			return &CompileError{
				msg: fmt.Sprintf("unsupported JSON Schema dialect %s (supported: draft-04, -06, -07, 2019-09, 2020-12)", quote(le.URL)),
				err: err,
			}
		}
		return &CompileError{
			msg: fmt.Sprintf("cannot resolve %s: only references inside the schema are allowed", quote(stripURL(le.URL))),
			err: err,
		}
	}
	return &CompileError{msg: "schema does not compile: " + stripURL(err.Error()), err: err}
}

// stripURL removes the internal location of the schema from s, so that
// "mem:///schema.json#/properties/a" reads "#/properties/a".
func stripURL(s string) string {
	s = strings.ReplaceAll(s, schemaURL, "")
	return strings.ReplaceAll(s, "mem:///", "")
}

// compiledSchema is a compiled JSON Schema. It implements [ports.Schema]
// and [ports.JSONSchema], and is safe for concurrent use.
type compiledSchema struct {
	s    *sjs.Schema
	fast *fnode // nil when the schema has keywords the fast path lacks
}

var (
	_ ports.Schema     = (*compiledSchema)(nil)
	_ ports.JSONSchema = (*compiledSchema)(nil)
)

// Validate checks value, a JSON value as a Go JSON decoder produces it: nil,
// bool, float64 or json.Number, string, []any, map[string]any. Go integer
// types are accepted as numbers too. Any other Go value (a struct, a
// []string, ...) is converted through encoding/json first.
//
// The error, if any, is a [*ValidationError].
func (s *compiledSchema) Validate(value any) error {
	if s.fast != nil && s.fast.check(value, 0) == valid {
		return nil
	}
	err := s.s.Validate(value)
	if err == nil {
		return nil
	}
	ve, ok := err.(*sjs.ValidationError)
	if !ok {
		return &ValidationError{Problems: []Problem{{Message: "value cannot be validated"}}}
	}
	if hasInvalidValue(ve) {
		// Rare: a Go value that is not a decoded JSON value. Convert it and
		// try again; only this path pays for the conversion.
		norm, nerr := normalize(value)
		if nerr != nil {
			return &ValidationError{Problems: []Problem{{Message: "value is not representable as JSON"}}}
		}
		err = s.s.Validate(norm)
		if err == nil {
			return nil
		}
		if ve, ok = err.(*sjs.ValidationError); !ok {
			return &ValidationError{Problems: []Problem{{Message: "value cannot be validated"}}}
		}
	}
	return &ValidationError{Problems: problems(ve)}
}

// ValidateJSON checks data, one JSON value as encoded that the caller has
// read as well-formed JSON (see [ports.JSONSchema]). It answers as
// Validate does for the value data decodes to with numbers as float64,
// without decoding it when the fast path can tell it is valid: then it
// reads the text once, skipping what the schema does not constrain, and
// allocates nothing. Otherwise it decodes data and validates the value.
// Data that does not decode (a number beyond float64's range, text that is
// not JSON) is a [*ValidationError] wrapping [ports.ErrUndecodable].
func (s *compiledSchema) ValidateJSON(data []byte) error {
	if s.fast != nil && s.fast.checkJSON(data) == valid {
		return nil
	}
	var v any
	if err := jsonv2.Unmarshal(data, &v); err != nil {
		return &ValidationError{
			Problems: []Problem{{Message: "value is not valid JSON or has a number out of range"}},
			err:      fmt.Errorf("%w: %w", ports.ErrUndecodable, err),
		}
	}
	return s.Validate(v)
}

func hasInvalidValue(ve *sjs.ValidationError) bool {
	if _, ok := ve.ErrorKind.(*kind.InvalidJsonValue); ok {
		return true
	}
	for _, c := range ve.Causes {
		if hasInvalidValue(c) {
			return true
		}
	}
	return false
}

// normalize turns any Go value into a decoded JSON value.
func normalize(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(data)
}
