package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hexmcp/hexmcp/domain"
)

// Tool is a tool as the server lists it in tools/list.
type Tool struct {
	Name         string                  `json:"name"`
	Title        string                  `json:"title,omitempty"`
	Description  string                  `json:"description,omitempty"`
	InputSchema  json.RawMessage         `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage         `json:"outputSchema,omitempty"`
	Annotations  *domain.ToolAnnotations `json:"annotations,omitempty"`
	Icons        []domain.Icon           `json:"icons,omitempty"`
	// Execution is the tool's execution object as sent (2025-11-25:
	// taskSupport), nil when absent.
	Execution json.RawMessage `json:"execution,omitempty"`
	Meta      map[string]any  `json:"_meta,omitempty"`
}

// CallToolResult is the result of a tools/call: the last one, when the
// server asked the client for input on the way. A tool that failed is a
// result whose IsError is set, not an error of [Session.CallTool].
type CallToolResult struct {
	// Content holds the content blocks, in order.
	Content []Content `json:"content"`
	// StructuredContent is the structured result as sent (nil when absent;
	// 2025-06-18 on).
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError marks a tool error, reported to the model rather than as a
	// JSON-RPC error.
	IsError bool `json:"isError,omitempty"`
	// Meta is the result's _meta.
	Meta map[string]any `json:"_meta,omitempty"`
	// Raw is the result as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Text returns the text of the result's text blocks, joined by newlines:
// for most tools, what the model reads.
func (r *CallToolResult) Text() string {
	if r == nil {
		return ""
	}
	return joinText(r.Content)
}

func joinText(cs []Content) string {
	var parts []string
	for _, c := range cs {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ErrNoStructuredContent is the error of [CallToolResult.DecodeStructured]
// and [CallToolAs] when the result has no structuredContent (and, for
// CallToolAs, its text is not the JSON of one either).
var ErrNoStructuredContent = errors.New("hexmcp: the result has no structuredContent")

// DecodeStructured decodes StructuredContent into v. It is
// [ErrNoStructuredContent] when the result has none.
func (r *CallToolResult) DecodeStructured(v any) error {
	if r == nil || len(r.StructuredContent) == 0 {
		return ErrNoStructuredContent
	}
	if err := json.Unmarshal(r.StructuredContent, v); err != nil {
		return fmt.Errorf("hexmcp: decoding structuredContent: %w", err)
	}
	return nil
}

// Content is one content block: Type says which fields are set ("text":
// Text; "image" and "audio": Data and MimeType; "resource_link": URI, Name
// and the rest; "resource": Resource).
type Content struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// Data is the base64 data of an image or audio block.
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	// URI, Name, Title, Description, Size and Icons describe a resource
	// link.
	URI         string        `json:"uri,omitempty"`
	Name        string        `json:"name,omitempty"`
	Title       string        `json:"title,omitempty"`
	Description string        `json:"description,omitempty"`
	Size        *int64        `json:"size,omitempty"`
	Icons       []domain.Icon `json:"icons,omitempty"`
	// Resource is the contents of an embedded resource.
	Resource    *ResourceContents   `json:"resource,omitempty"`
	Annotations *domain.Annotations `json:"annotations,omitempty"`
	Meta        map[string]any      `json:"_meta,omitempty"`
}

// ResourceContents are the contents of a resource: Text, or Blob (base64).
type ResourceContents struct {
	URI      string         `json:"uri"`
	MimeType string         `json:"mimeType,omitempty"`
	Text     string         `json:"text,omitempty"`
	Blob     string         `json:"blob,omitempty"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

// Prompt is a prompt as the server lists it in prompts/list.
type Prompt struct {
	Name        string                  `json:"name"`
	Title       string                  `json:"title,omitempty"`
	Description string                  `json:"description,omitempty"`
	Arguments   []domain.PromptArgument `json:"arguments,omitempty"`
	Icons       []domain.Icon           `json:"icons,omitempty"`
	Meta        map[string]any          `json:"_meta,omitempty"`
}

// GetPromptResult is the result of a prompts/get.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        map[string]any  `json:"_meta,omitempty"`
	// Raw is the result as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	Role    domain.Role `json:"role"`
	Content Content     `json:"content"`
}

// Resource is a resource as the server lists it in resources/list.
type Resource struct {
	URI         string              `json:"uri"`
	Name        string              `json:"name"`
	Title       string              `json:"title,omitempty"`
	Description string              `json:"description,omitempty"`
	MimeType    string              `json:"mimeType,omitempty"`
	Size        *int64              `json:"size,omitempty"`
	Icons       []domain.Icon       `json:"icons,omitempty"`
	Annotations *domain.Annotations `json:"annotations,omitempty"`
	Meta        map[string]any      `json:"_meta,omitempty"`
}

// ResourceTemplate is a resource template as the server lists it in
// resources/templates/list.
type ResourceTemplate struct {
	URITemplate string              `json:"uriTemplate"`
	Name        string              `json:"name"`
	Title       string              `json:"title,omitempty"`
	Description string              `json:"description,omitempty"`
	MimeType    string              `json:"mimeType,omitempty"`
	Icons       []domain.Icon       `json:"icons,omitempty"`
	Annotations *domain.Annotations `json:"annotations,omitempty"`
	Meta        map[string]any      `json:"_meta,omitempty"`
}

// ReadResourceResult is the result of a resources/read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	Meta     map[string]any     `json:"_meta,omitempty"`
	// Raw is the result as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// CompleteResult is the result of a completion/complete.
type CompleteResult struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// Progress is a notifications/progress the server sent about a request
// made with a context of [WithProgress].
type Progress struct {
	Progress float64 `json:"progress"`
	// Total is 0 when the server did not say.
	Total   float64 `json:"total,omitempty"`
	Message string  `json:"message,omitempty"`
}

// LogMessage is a notifications/message: a log record of the server.
type LogMessage struct {
	Level  domain.LogLevel `json:"level"`
	Logger string          `json:"logger,omitempty"`
	// Data is the record as sent: a string or any JSON value.
	Data json.RawMessage `json:"data"`
}

// Notification is a notification the server sent, as it came.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Accept returns the answer of a user who filled in an elicitation's form
// with content (a value that encodes as a JSON object), for an
// [Options.Elicitation] handler to return.
func Accept(content any) (*domain.ElicitResult, error) {
	b, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("hexmcp: encoding the form's content: %w", err)
	}
	return &domain.ElicitResult{Action: domain.ElicitAccept, Content: b}, nil
}

// Reply returns the answer of an LLM that replies text (stop reason
// "endTurn"), for an [Options.Sampling] handler to return.
func Reply(model, text string) *domain.CreateMessageResult {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": text}) // strings always encode
	return &domain.CreateMessageResult{Role: domain.RoleAssistant, Content: b, Model: model, StopReason: "endTurn"}
}
