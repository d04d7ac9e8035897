package bench

import (
	"context"
	"io"
	"log"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// github.com/mark3labs/mcp-go v1.2.1 over server.StdioServer.Listen.
//
// Notes on the library (v1.2.1):
//   - Validation is opt-in: server.WithInputSchemaValidation() validates
//     tools/call arguments against the tool's inputSchema and
//     server.WithOutputSchemaValidation() validates the result's
//     StructuredContent against the tool's outputSchema (both compiled once
//     and cached, santhosh-tekuri/jsonschema). Output validation is skipped
//     when the tool has no outputSchema or the result has no
//     StructuredContent, so the validated variant declares an output schema
//     {result: number} and returns structured content {"result":3} next to
//     the text "3": an MCP structured result must be an object, a bare
//     number is not allowed.
//   - StdioServer keeps its session in a package-level variable
//     (stdioSessionInstance), so only one StdioServer may Listen at a time
//     in a process; the harness runs benchmarks sequentially and waits for
//     Listen to return before the next one starts.
//   - The stdio loop reads every line on a fresh goroutine (readNextLine)
//     and hands tools/call to a worker pool (5 workers by default) through
//     a channel; both costs are part of the library and are measured.

// BenchmarkMcpGo: default server, no validation; the tool returns the
// result as text content only.
func BenchmarkMcpGo(b *testing.B) {
	runBench(b, startMcpGoDefault)
}

// BenchmarkMcpGoValidated: input and output schema validation on.
func BenchmarkMcpGoValidated(b *testing.B) {
	runBench(b, startMcpGoValidated)
}

func startMcpGoDefault(ctx context.Context, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
	return startMcpGo(ctx, newMcpGoServer(false), in, out)
}

func startMcpGoValidated(ctx context.Context, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
	return startMcpGo(ctx, newMcpGoServer(true), in, out)
}

func newMcpGoServer(validated bool) *server.MCPServer {
	opts := []server.ServerOption{server.WithToolCapabilities(false)}
	toolOpts := []mcp.ToolOption{
		mcp.WithDescription(calcDescription),
		mcp.WithNumber("a", mcp.Required(), mcp.Description("First operand")),
		mcp.WithNumber("b", mcp.Required(), mcp.Description("Second operand")),
		mcp.WithString("operation", mcp.Required(),
			mcp.Description("The operation to perform"),
			mcp.Enum(calcOperations...)),
	}
	if validated {
		opts = append(opts, server.WithInputSchemaValidation(), server.WithOutputSchemaValidation())
		toolOpts = append(toolOpts, mcp.WithOutputSchema[calcOutput]())
	}

	s := server.NewMCPServer("bench-mcp-go", "1", opts...)
	s.AddTool(mcp.NewTool(calcToolName, toolOpts...),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := req.RequireFloat("a")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			b, err := req.RequireFloat("b")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			op, err := req.RequireString("operation")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			v, err := calculate(a, b, op)
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			if validated {
				return mcp.NewToolResultStructured(calcOutput{Result: v}, formatResult(v)), nil
			}
			return mcp.NewToolResultText(formatResult(v)), nil
		})
	return s
}

func startMcpGo(ctx context.Context, s *server.MCPServer, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(log.New(io.Discard, "", 0)) // default logs to os.Stderr
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer in.Close()
		// Listen returns nil on EOF of in, after its workers have stopped.
		_ = stdio.Listen(ctx, in, out)
	}()
	return done
}
