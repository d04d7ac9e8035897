package hexmcp

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/hexmcp/hexmcp/domain"
)

// What handlers return: content blocks, complete results, and the errors
// the model or the client reads. The types are the domain package's (the
// model) under their canonical names; the constructors live here only.

// Content is one block of a tool result or a prompt message: a
// [*TextContent], [*ImageContent], [*AudioContent], [*ResourceLink] or
// [*EmbeddedResource] (the set is closed). A handler that returns one, or
// a slice of them, sends those blocks; each takes optional Annotations and
// Meta. Its ContentType method is the wire "type".
type Content = domain.Content

// TextContent is a text block ([Text], [Code]).
type TextContent = domain.TextContent

// ImageContent is an image block ([Image]).
type ImageContent = domain.ImageContent

// AudioContent is an audio block ([Audio]); clients before 2025-03-26 get
// a text saying it was left out.
type AudioContent = domain.AudioContent

// ResourceLink is a block pointing at a resource (URI, Name, Title,
// Description, MimeType, Size, Icons) without its contents; clients before
// 2025-06-18 get it as the text "Resource: NAME <URI>".
type ResourceLink = domain.ResourceLink

// EmbeddedResource is a block carrying a resource's contents
// ([EmbeddedText], [EmbeddedBlob]).
type EmbeddedResource = domain.EmbeddedResource

// Text returns a text block.
func Text(s string) *TextContent { return &TextContent{Text: s} }

// Code returns a text block holding code as a fenced Markdown block in the
// given language.
func Code(code, language string) *TextContent {
	fence := "```"
	for strings.Contains(code, fence) {
		fence += "`"
	}
	var b strings.Builder
	b.Grow(len(code) + len(language) + 2*len(fence) + 2)
	b.WriteString(fence)
	b.WriteString(language)
	b.WriteByte('\n')
	b.WriteString(code)
	if !strings.HasSuffix(code, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(fence)
	return &TextContent{Text: b.String()}
}

// Image returns an image block of the raw bytes (sent in base64).
func Image(data []byte, mimeType string) *ImageContent {
	return &ImageContent{Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// Audio returns an audio block of the raw bytes (sent in base64).
func Audio(data []byte, mimeType string) *AudioContent {
	return &AudioContent{Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// EmbeddedText returns an embedded resource of text contents; mimeType is
// optional.
func EmbeddedText(uri, text string, mimeType ...string) *EmbeddedResource {
	r := &EmbeddedResource{Resource: ResourceContents{URI: uri, Text: text}}
	if len(mimeType) > 0 {
		r.Resource.MimeType = mimeType[0]
	}
	return r
}

// EmbeddedBlob returns an embedded resource of binary contents.
func EmbeddedBlob(uri string, data []byte, mimeType string) *EmbeddedResource {
	return &EmbeddedResource{Resource: ResourceContents{URI: uri, MimeType: mimeType, Blob: base64.StdEncoding.EncodeToString(data)}}
}

// CallToolResult is the complete result of a tools/call: Content (what the
// model reads), StructuredContent (JSON for programs), IsError, Meta. A
// handler that returns one has it sent as it is, apart from what the
// client's revision does not know.
type CallToolResult = domain.CallToolResult

// ResourceContents are the contents a [ResourceHandler] returns: URI,
// MimeType, and Text or Blob (base64).
type ResourceContents = domain.ResourceContents

// GetPromptResult is what a [PromptHandler] returns: an optional
// Description and the Messages ([UserMessage], [AssistantMessage]).
type GetPromptResult = domain.GetPromptResult

// PromptMessage is one message of a rendered prompt: a Role and a
// [Content].
type PromptMessage = domain.PromptMessage

// UserMessage is a [PromptMessage] of the user.
func UserMessage(c Content) PromptMessage { return PromptMessage{Role: domain.RoleUser, Content: c} }

// AssistantMessage is a [PromptMessage] of the assistant.
func AssistantMessage(c Content) PromptMessage {
	return PromptMessage{Role: domain.RoleAssistant, Content: c}
}

// ToolError is an error a tool reports to the model: the call is answered
// with a normal result whose isError is true and whose text is Message (or
// Content, when set), so that the model can read it and correct itself.
// Return it from a handler, wrapped or not (it is found with errors.As).
// Any other error a handler returns is a server failure, answered with a
// generic JSON-RPC error (-32603) and logged with its details.
type ToolError = domain.ToolError

// NewToolError returns a [ToolError] with the given message.
func NewToolError(message string) *ToolError { return &ToolError{Message: message} }

// ToolErrorf returns a [ToolError] with a formatted message. A %w verb
// wraps its operand as the cause, as with fmt.Errorf; the cause's text is
// part of the message and so reaches the model.
func ToolErrorf(format string, args ...any) *ToolError {
	err := fmt.Errorf(format, args...)
	return &ToolError{Message: err.Error(), Err: errors.Unwrap(err)}
}

// ProtocolError is a JSON-RPC error sent to the client as it is (Code,
// Message, Data), for the rare handler or middleware that must answer with
// a specific one instead of a result. Its Message and Data reach the
// client: no internal details there.
type ProtocolError = domain.ProtocolError

// NewProtocolError returns a [ProtocolError].
func NewProtocolError(code int, message string, data any) *ProtocolError {
	return domain.NewProtocolError(code, message, data)
}

// ErrResourceNotFound is what a [ResourceHandler] returns (possibly
// wrapped) when the URI names nothing: the client gets the revision's
// resource-not-found error.
var ErrResourceNotFound = domain.ErrResourceNotFound

// DefinitionError is what New, AddTool, AddPrompt, AddResource and
// AddResourceTemplate return (wrapped) for a definition that cannot be
// registered: Kind "tool", "prompt" or "resource", Name (the name, URI or
// URI template, when known), Reason and the cause Err, if any. Find it with
// errors.As.
type DefinitionError = domain.DefinitionError
