// Package domain is the pure model of an MCP server: values and functions
// with no I/O, no goroutines and no logging. It imports only the standard
// library, so every other layer (the app engine, the transports, the fx
// wiring) can depend on it without pulling anything else in.
//
// It holds:
//
//   - Tools, prompts and resources as the client sees them: [Tool] with its
//     [ToolAnnotations] and [Icon] list, [Prompt] and [PromptArgument],
//     [Resource] and [ResourceTemplate], each with a Validate method that
//     reports a *[DefinitionError].
//   - Content blocks ([Content]: [TextContent], [ImageContent],
//     [AudioContent], [ResourceLink], [EmbeddedResource]) and results
//     ([CallToolResult], [GetPromptResult]), each encoded for the wire by its
//     own MarshalJSON or AppendJSON.
//   - The constructors that make these values for a handler (Text, Code,
//     Image, UserMessage, NewToolError, ElicitForm, ...) are the front
//     door's (package hexmcp), the one name a server's author writes.
//   - Errors: a *[ToolError] returned by a handler becomes a result with
//     isError set (the model reads the message and may correct itself), a
//     *[ProtocolError] becomes that JSON-RPC error, and any other error is
//     a generic -32603 whose text stays in the server log.
//   - Revisions and the [RevisionPolicy]: the single place that knows what
//     each protocol [Revision] allows (negotiation, [Era], [Features], which
//     methods exist, when structuredContent is written, how a result, tool or
//     prompt is shaped for a revision). No other code compares revision
//     strings.
//   - Schema inference: [InferSchema] and [InferInputSchema] derive a JSON
//     Schema (2020-12) from a Go type and its struct tags; [ElicitSchemaFor]
//     does the same for the flat schemas of elicitation requests.
//   - The values a server sends to and gets from a client mid-call
//     (elicitation, sampling, roots) and log levels.
//
// Most programs meet these types through the root package (hexmcp.NewTool,
// hexmcp.NewPrompt, hexmcp.NewResource), which build them from Go functions; the
// InferInputSchema example shows schema inference on its own.
package domain
