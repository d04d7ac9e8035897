package handlerapi

import (
	"context"
	stdjson "encoding/json"

	"github.com/hexmcp/hexmcp/domain"
)

// ToolCall is one call of a tool, as tool middleware sees it.
type ToolCall struct {
	// Tool is the tool's definition.
	Tool *domain.Tool
	// Arguments are the call's arguments, already validated against the
	// tool's input schema.
	Arguments stdjson.RawMessage
}

// ToolHandler runs a tool call: the handler's return value (turned into
// the result afterwards, as for any handler) or its error (a
// *[domain.ToolError] is the model's to read: an isError result).
type ToolHandler func(ctx context.Context, call *ToolCall) (any, error)

// ToolMiddleware wraps every call of every tool, inside method middleware:
// it sees the tool, the validated arguments and the handler's return
// value or error, and may answer itself (a value, or a [domain.ToolError]
// the model reads, as hexmcp.NewToolError makes). hexmcp.RequestFrom(ctx)
// gives the request.
type ToolMiddleware func(next ToolHandler) ToolHandler
