package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

type weather struct {
	Temperature float64 `json:"temperature"`
	Conditions  string  `json:"conditions"`
}

type opName string

func encode(t *testing.T, r *CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWrapValueTable checks the seed's table of return values, for each
// revision.
func TestWrapValueTable(t *testing.T) {
	var p RevisionPolicy
	plain := &Tool{Name: "t"}
	withSchema := &Tool{Name: "t", OutputSchema: json.RawMessage(`{"type":"object"}`)}
	scalarSchema := &Tool{Name: "t", OutputSchema: json.RawMessage(`{"type":"number"}`)}
	var nilStr *string
	cases := []struct {
		name  string
		tool  *Tool
		value any
		rev   Revision
		want  string
	}{
		{"string", plain, "Hello", Revision20251125, `{"content":[{"type":"text","text":"Hello"}]}`},
		{"int", plain, 42, Revision20251125, `{"content":[{"type":"text","text":"42"}]}`},
		{"int64", plain, int64(-7), Revision20251125, `{"content":[{"type":"text","text":"-7"}]}`},
		{"float", plain, 2.5, Revision20251125, `{"content":[{"type":"text","text":"2.5"}]}`},
		{"whole float", plain, 8.0, Revision20251125, `{"content":[{"type":"text","text":"8"}]}`},
		{"float32", plain, float32(0.1), Revision20251125, `{"content":[{"type":"text","text":"0.1"}]}`},
		{"true", plain, true, Revision20251125, `{"content":[{"type":"text","text":"true"}]}`},
		{"false", plain, false, Revision20251125, `{"content":[{"type":"text","text":"false"}]}`},
		{"named string", plain, opName("add"), Revision20251125, `{"content":[{"type":"text","text":"add"}]}`},
		{"nil", plain, nil, Revision20251125, `{"content":[{"type":"text","text":"(null)"}]}`},
		{"nil pointer", plain, nilStr, Revision20251125, `{"content":[{"type":"text","text":"(null)"}]}`},
		{"map 2025-11-25", plain, map[string]any{"key": "value"}, Revision20251125,
			`{"content":[{"type":"text","text":"{\"key\":\"value\"}"}],"structuredContent":{"key":"value"}}`},
		{"map 2025-06-18", plain, map[string]any{"key": "value"}, Revision20250618,
			`{"content":[{"type":"text","text":"{\"key\":\"value\"}"}],"structuredContent":{"key":"value"}}`},
		{"map 2025-03-26", plain, map[string]any{"key": "value"}, Revision20250326,
			`{"content":[{"type":"text","text":"{\"key\":\"value\"}"}]}`},
		{"struct", plain, weather{22.5, "sunny"}, Revision20251125,
			`{"content":[{"type":"text","text":"{\"temperature\":22.5,\"conditions\":\"sunny\"}"}],"structuredContent":{"temperature":22.5,"conditions":"sunny"}}`},
		{"struct pointer", plain, &weather{1, "x"}, Revision20260728,
			`{"content":[{"type":"text","text":"{\"temperature\":1,\"conditions\":\"x\"}"}],"structuredContent":{"temperature":1,"conditions":"x"}}`},
		{"raw object", plain, json.RawMessage(`{"a":1}`), Revision20251125,
			`{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`},
		{"list 2025-11-25", plain, []int{1, 2}, Revision20251125, `{"content":[{"type":"text","text":"[1,2]"}]}`},
		{"list 2026-07-28", plain, []int{1, 2}, Revision20260728, `{"content":[{"type":"text","text":"[1,2]"}],"structuredContent":[1,2]}`},
		{"scalar without schema 2026", plain, 3.0, Revision20260728, `{"content":[{"type":"text","text":"3"}]}`},
		{"scalar with schema 2026", scalarSchema, 3.0, Revision20260728, `{"content":[{"type":"text","text":"3"}],"structuredContent":3}`},
		{"scalar with schema 2025", scalarSchema, 3.0, Revision20251125, `{"content":[{"type":"text","text":"3"}]}`},
		{"string with schema 2026", scalarSchema, "x", Revision20260728, `{"content":[{"type":"text","text":"x"}],"structuredContent":"x"}`},
		{"content", withSchema, &TextContent{Text: "hi"}, Revision20260728, `{"content":[{"type":"text","text":"hi"}]}`},
		{"content slice", plain, []Content{&TextContent{Text: "a"}, &TextContent{Text: "b"}}, Revision20260728, `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`},
		{"any slice of content", plain, []any{&TextContent{Text: "a"}, &ImageContent{Data: "AQ==", MimeType: "image/png"}}, Revision20251125,
			`{"content":[{"type":"text","text":"a"},{"type":"image","data":"AQ==","mimeType":"image/png"}]}`},
		{"text slice is content", plain, []*TextContent{&TextContent{Text: "a"}}, Revision20251125, `{"content":[{"type":"text","text":"a"}]}`},
		{"complete result", withSchema, &CallToolResult{Content: []Content{&TextContent{Text: "x"}}, StructuredContent: json.RawMessage(`{"k":1}`), IsError: true}, Revision20251125,
			`{"content":[{"type":"text","text":"x"}],"structuredContent":{"k":1},"isError":true}`},
		{"complete result value", plain, CallToolResult{Content: []Content{&TextContent{Text: "x"}}}, Revision20251125, `{"content":[{"type":"text","text":"x"}]}`},
		{"complete result stripped for 2025-03-26", plain, &CallToolResult{Content: []Content{&TextContent{Text: "x"}}, StructuredContent: json.RawMessage(`{"k":1}`)}, Revision20250326,
			`{"content":[{"type":"text","text":"x"}]}`},
		{"empty list", plain, []string{}, Revision20260728, `{"content":[{"type":"text","text":"[]"}],"structuredContent":[]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := p.wrapValue(c.tool, c.value, c.rev)
			if err != nil {
				t.Fatal(err)
			}
			got := encode(t, out.Result)
			if got != c.want {
				t.Fatalf("\n got: %s\nwant: %s", got, c.want)
			}
		})
	}
}

func TestWrapValueWarnings(t *testing.T) {
	var p RevisionPolicy
	objSchema := &Tool{Name: "listUsers", OutputSchema: json.RawMessage(`{"type":"object"}`)}
	anySchema := &Tool{Name: "flat", OutputSchema: json.RawMessage(`{"type":"array"}`)}
	cases := []struct {
		tool  *Tool
		value any
		rev   Revision
		warn  bool
	}{
		{objSchema, []int{1}, Revision20251125, true},                // list cannot be structured before 2026
		{objSchema, []int{1}, Revision20260728, false},               // it can from 2026
		{objSchema, "text", Revision20251125, true},                  // scalar
		{objSchema, nil, Revision20251125, true},                     // null
		{objSchema, &TextContent{Text: "x"}, Revision20251125, true}, // content
		{objSchema, map[string]int{"a": 1}, Revision20251125, false},
		{objSchema, []int{1}, Revision20250326, false},            // no structuredContent in that revision: nothing promised
		{anySchema, []int{1}, Revision20251125, false},            // array schema is not advertised before 2026
		{&Tool{Name: "plain"}, []int{1}, Revision20251125, false}, // no schema, no promise
	}
	for i, c := range cases {
		out, err := p.wrapValue(c.tool, c.value, c.rev)
		if err != nil {
			t.Fatal(err)
		}
		if (out.Warning != nil) != c.warn {
			t.Errorf("case %d: warning = %v, want %v", i, out.Warning, c.warn)
		}
		if out.Warning != nil {
			msg := out.Warning.String()
			if out.Warning.Tool != c.tool.Name || out.Warning.GoType != fmt.Sprintf("%T", c.value) && c.value != nil {
				t.Errorf("case %d: warning %+v does not name tool and type", i, out.Warning)
			}
			if msg == "" {
				t.Errorf("case %d: empty message", i)
			}
		}
		// the value always reaches the client as content
		if len(out.Result.Content) == 0 {
			t.Errorf("case %d: no content", i)
		}
	}
}

func TestWrapValueUnencodable(t *testing.T) {
	var p RevisionPolicy
	_, err := p.wrapValue(&Tool{Name: "t"}, map[string]any{"f": func() {}}, Revision20251125)
	if err == nil {
		t.Fatal("want an error for a value JSON cannot encode")
	}
}

func TestToolError(t *testing.T) {
	base := &ToolError{Message: "File not found: x"}
	wrapped := fmt.Errorf("reading: %w", base)
	var te *ToolError
	if !errors.As(wrapped, &te) || te.Message != "File not found: x" {
		t.Fatalf("errors.As(wrapped) = %v", te)
	}
	cause := errors.New("disk")
	if te2 := (&ToolError{Message: "cannot read: disk", Err: cause}); !errors.Is(te2, cause) {
		t.Fatalf("errors.Is(%+v, cause) is false", te2)
	}
	if got := encode(t, ErrorResult(te)); got != `{"content":[{"type":"text","text":"File not found: x"}],"isError":true}` {
		t.Fatal(got)
	}
	if errors.As(errors.New("plain"), &te) {
		t.Fatal("a plain error is not a ToolError")
	}
}
