package hexmcptest

import (
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
)

// The types the client reads are those of package client
// ([github.com/hexmcp/hexmcp/client]).
type (
	// Tool is a tool as the client reads it in tools/list.
	Tool = client.Tool
	// ToolResult is the result of a tools/call as the client reads it: the
	// last one, when the server asked the client for input on the way.
	ToolResult = client.CallToolResult
	// Content is one content block as the client reads it.
	Content = client.Content
	// ResourceContents are the contents of a resource: Text, or Blob
	// (base64).
	ResourceContents = client.ResourceContents
	// Prompt is a prompt as the client reads it in prompts/list.
	Prompt = client.Prompt
	// PromptResult is the result of a prompts/get.
	PromptResult = client.GetPromptResult
	// PromptMessage is one message of a rendered prompt.
	PromptMessage = client.PromptMessage
	// Resource is a resource as the client reads it in resources/list.
	Resource = client.Resource
	// ResourceTemplate is a resource template as the client reads it in
	// resources/templates/list.
	ResourceTemplate = client.ResourceTemplate
	// Notification is a notification the server sent the client
	// (progress, log messages, list changes).
	Notification = client.Notification
	// RPCError is the JSON-RPC error a request was answered with: the
	// error of every Client method whose request failed at the protocol
	// level (find it with errors.As). A handler of the server's questions
	// may return one to answer with that error in the handshake era.
	RPCError = client.RPCError
)

// Accept returns the answer of a user who filled in an elicitation's form
// with content (a value that encodes as a JSON object), for an
// [ClientOptions.Elicitation] handler to return.
func Accept(content any) (*domain.ElicitResult, error) { return client.Accept(content) }

// Reply returns the answer of a client's LLM that replies text (model
// "hexmcptest", stop reason "endTurn"), for a [ClientOptions.Sampling]
// handler to return.
func Reply(text string) (*domain.CreateMessageResult, error) {
	return client.Reply("hexmcptest", text), nil
}
