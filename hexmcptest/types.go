package hexmcptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hexmcp/hexmcp/domain"
)

// Tool is a tool as the client reads it in tools/list.
type Tool struct {
	Name         string                  `json:"name"`
	Title        string                  `json:"title,omitempty"`
	Description  string                  `json:"description,omitempty"`
	InputSchema  json.RawMessage         `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage         `json:"outputSchema,omitempty"`
	Annotations  *domain.ToolAnnotations `json:"annotations,omitempty"`
	Icons        []domain.Icon           `json:"icons,omitempty"`
	Meta         map[string]any          `json:"_meta,omitempty"`
}

// ToolResult is the result of a tools/call as the client reads it: the
// last one, when the server asked the client for input on the way.
type ToolResult struct {
	// Content holds the content blocks, in order.
	Content []Content `json:"content"`
	// StructuredContent is the structured result as sent (nil when absent).
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError marks a tool error (a domain.ToolError, or arguments the
	// tool refused), reported to the model rather than as a JSON-RPC error.
	IsError bool `json:"isError,omitempty"`
	// Meta is the result's _meta.
	Meta map[string]any `json:"_meta,omitempty"`
	// Raw is the result as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Text returns the text of the result's text blocks, joined by newlines:
// for most tools, what the model reads.
func (r *ToolResult) Text() string {
	if r == nil {
		return ""
	}
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// DecodeStructured decodes StructuredContent into v; it is an error when
// the result has none.
func (r *ToolResult) DecodeStructured(v any) error {
	if r == nil || len(r.StructuredContent) == 0 {
		return errors.New("hexmcptest: the result has no structuredContent")
	}
	if err := json.Unmarshal(r.StructuredContent, v); err != nil {
		return fmt.Errorf("hexmcptest: decoding structuredContent: %w", err)
	}
	return nil
}

// Content is one content block as the client reads it: Type says which
// fields are set ("text": Text; "image" and "audio": Data and MimeType;
// "resource_link": URI, Name and the rest; "resource": Resource).
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

// Prompt is a prompt as the client reads it in prompts/list.
type Prompt struct {
	Name        string                  `json:"name"`
	Title       string                  `json:"title,omitempty"`
	Description string                  `json:"description,omitempty"`
	Arguments   []domain.PromptArgument `json:"arguments,omitempty"`
	Icons       []domain.Icon           `json:"icons,omitempty"`
	Meta        map[string]any          `json:"_meta,omitempty"`
}

// PromptResult is the result of a prompts/get.
type PromptResult struct {
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

// Resource is a resource as the client reads it in resources/list.
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

// ResourceTemplate is a resource template as the client reads it in
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

// Notification is a notification the server sent the client (progress,
// log messages, list changes, cancellations of its own requests).
type Notification struct {
	Method string
	Params json.RawMessage
}

// RPCError is the JSON-RPC error a request was answered with: the error of
// every Client method whose request failed at the protocol level (find it
// with errors.As). A handler of the server's questions may return one to
// answer with that error in the handshake era.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// HTTPStatus is the status of the HTTP response that carried the
	// error over Streamable HTTP (0 in memory).
	HTTPStatus int `json:"-"`
}

// Error returns "JSON-RPC error CODE: MESSAGE", with the data when there is
// some.
func (e *RPCError) Error() string {
	s := fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message)
	if len(e.Data) > 0 {
		s += " (data: " + string(e.Data) + ")"
	}
	return s
}

// Accept returns the answer of a user who filled in an elicitation's form
// with content (a value that encodes as a JSON object), for an
// [ClientOptions.Elicitation] handler to return.
func Accept(content any) (*domain.ElicitResult, error) {
	b, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("hexmcptest: encoding the form's content: %w", err)
	}
	return &domain.ElicitResult{Action: domain.ElicitAccept, Content: b}, nil
}

// Reply returns the answer of a client's LLM that replies text (model
// "hexmcptest", stop reason "endTurn"), for a [ClientOptions.Sampling]
// handler to return.
func Reply(text string) (*domain.CreateMessageResult, error) {
	b, err := json.Marshal(map[string]string{"type": "text", "text": text})
	if err != nil {
		return nil, fmt.Errorf("hexmcptest: encoding the reply: %w", err)
	}
	return &domain.CreateMessageResult{Role: domain.RoleAssistant, Content: b, Model: "hexmcptest", StopReason: "endTurn"}, nil
}
