package jsonschema_test

import (
	"encoding/json"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
)

func benchValue(b *testing.B, useNumber bool, raw string) any {
	b.Helper()
	var v any
	if useNumber {
		v = mustDecodeNumber(b, raw)
	} else if err := json.Unmarshal([]byte(raw), &v); err != nil {
		b.Fatal(err)
	}
	return v
}

func mustDecodeNumber(tb testing.TB, raw string) any {
	tb.Helper()
	var v any
	d := json.NewDecoder(stringsReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}

// BenchmarkValidate measures Validate of the calculator arguments, the
// hot path of every tools/call.
func BenchmarkValidate(b *testing.B) {
	s, err := jsonschema.New().Compile(json.RawMessage(jsonschema.CalcSchema))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		useNumber bool
		raw       string
	}{
		{"valid/float64", false, `{"a": 1.5, "b": 2, "operation": "multiply"}`},
		{"valid/json.Number", true, `{"a": 1.5, "b": 2, "operation": "multiply"}`},
		{"invalid", false, `{"a": "x", "operation": "modulo"}`},
	} {
		v := benchValue(b, c.useNumber, c.raw)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Validate(v)
			}
		})
	}
}

// BenchmarkCompile measures compiling the calculator schema, done once per
// tool registration.
func BenchmarkCompile(b *testing.B) {
	v := jsonschema.New()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Compile(json.RawMessage(jsonschema.CalcSchema)); err != nil {
			b.Fatal(err)
		}
	}
}
