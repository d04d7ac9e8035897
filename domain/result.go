package domain

import (
	"encoding/json"
	"fmt"
	"slices"
)

// CallToolResult is the complete result of a tools/call. A handler that
// returns one (or a pointer to one) has it sent as it is, apart from the
// fields the client's revision does not know.
type CallToolResult struct {
	// Content is what the model reads.
	Content []Content
	// StructuredContent is a JSON value for programs (2025-06-18 on; before
	// 2026-07-28 only an object is sent). Nil means absent.
	StructuredContent json.RawMessage
	// IsError marks a failure the model should see.
	IsError bool
	// Meta is sent as _meta.
	Meta map[string]any
}

// MarshalJSON encodes the result without resultType; the protocol engine
// adds the envelope fields a revision asks for.
func (r *CallToolResult) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, 64), "")
}

// AppendJSON appends the result's wire form to b. A non-empty resultType is
// written as the first member. It first makes room in b for about the
// whole result (and a little more, for what the caller closes it with), so
// that a large text is copied once.
func (r *CallToolResult) AppendJSON(b []byte, resultType string) ([]byte, error) {
	size := len(r.StructuredContent) + 64
	for _, c := range r.Content {
		if c != nil {
			size += contentSize(c)
		}
	}
	b = slices.Grow(b, size)
	b = append(b, '{')
	if resultType != "" {
		b = append(b, `"resultType":`...)
		b = appendJSONString(b, resultType)
		b = append(b, ',')
	}
	b = append(b, `"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		if c == nil {
			return nil, fmt.Errorf("content block %d is nil", i)
		}
		var err error
		if b, err = appendContent(b, c); err != nil {
			return nil, fmt.Errorf("content block %d (%s): %w", i, c.ContentType(), err)
		}
	}
	b = append(b, ']')
	if r.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		b = append(b, r.StructuredContent...)
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if len(r.Meta) > 0 {
		var err error
		if b, err = appendMember(b, "_meta", r.Meta); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// ErrorResult returns the result for a [ToolError]: its content (a text block
// of its message unless it carries content of its own) and isError.
func ErrorResult(e *ToolError) *CallToolResult {
	if len(e.Content) > 0 {
		return &CallToolResult{Content: e.Content, IsError: true}
	}
	return &CallToolResult{Content: []Content{&TextContent{Text: e.Message}}, IsError: true}
}

// Implementation names a client or server program.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
	// Description and WebsiteURL (2025-11-25 on) are optional.
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}
