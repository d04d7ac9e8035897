package bench

import (
	"context"
	"io"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// github.com/modelcontextprotocol/go-sdk v1.8.0 (official Go SDK) over
// mcp.IOTransport (newline-delimited JSON on an io.ReadCloser/io.WriteCloser),
// served by Server.Run.
//
// What we did and why:
//   - The tool is registered with the typed mcp.AddTool[calcInput, any].
//     go-sdk always validates the arguments against the input schema (there
//     is no switch to turn it off), so this benchmark is comparable to the
//     validated mcp-go variant on the input side.
//   - The input schema is inferred from calcInput by jsonschema.For (which
//     makes a, b and operation required and sets additionalProperties:false)
//     and then the enum of "operation" is added by hand, since inference
//     from struct tags does not produce enums. The schema is passed in
//     Tool.InputSchema, so validation really checks the enum.
//   - Output: with Out = any go-sdk derives no output schema and produces
//     no structuredContent (a typed Out would have to marshal to the
//     structured result, which per MCP should be an object, not a bare
//     number). The handler returns &mcp.CallToolResult{Content: text "3"}
//     and a nil Out, so the response matches the floor and plain mcp-go:
//     {"content":[{"type":"text","text":"3"}]}. Hence no output validation.
//   - A non-nil error returned by the handler becomes a result with
//     isError:true (division by zero).
//   - Extra variant BenchmarkGoSDKStructured uses a typed Out = calcOutput:
//     go-sdk then infers an output schema, marshals Out into
//     structuredContent {"result":3} and validates it against that schema
//     (also always on). The handler still sets Content to the text "3" (when
//     Content is set and Out is an object, go-sdk leaves Content alone), so
//     its response is byte-for-byte the one of BenchmarkMcpGoValidated. This
//     is the apples-to-apples peer of BenchmarkMcpGoValidated.
//   - go-sdk decodes JSON with github.com/segmentio/encoding and creates a
//     new decoder (with a ~32 KiB buffer) for every Unmarshal; a tools/call
//     goes through several of them, hence ~230 KB allocated per call.

// BenchmarkGoSDK: official SDK, typed handler, input validation (always on),
// text-only result (Out = any).
func BenchmarkGoSDK(b *testing.B) {
	runBench(b, startGoSDK)
}

// BenchmarkGoSDKStructured: as BenchmarkGoSDK but with a typed structured
// output (Out = calcOutput) validated against its inferred output schema.
func BenchmarkGoSDKStructured(b *testing.B) {
	runBench(b, startGoSDKStructured)
}

// calcInput is the typed input of the go-sdk handler.
type calcInput struct {
	A         float64 `json:"a" jsonschema:"First operand"`
	B         float64 `json:"b" jsonschema:"Second operand"`
	Operation string  `json:"operation" jsonschema:"The operation to perform"`
}

func calcInputSchema() *jsonschema.Schema {
	s, err := jsonschema.For[calcInput](nil)
	if err != nil {
		panic(err)
	}
	op := s.Properties["operation"]
	for _, v := range calcOperations {
		op.Enum = append(op.Enum, v)
	}
	return s
}

func newGoSDKServer(structured bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-go-sdk", Version: "1"}, nil)
	tool := &mcp.Tool{
		Name:        calcToolName,
		Description: calcDescription,
		InputSchema: calcInputSchema(),
	}
	if !structured {
		mcp.AddTool(s, tool, func(_ context.Context, _ *mcp.CallToolRequest, in calcInput) (*mcp.CallToolResult, any, error) {
			v, err := calculate(in.A, in.B, in.Operation)
			if err != nil {
				return nil, nil, err // reported as a tool error (isError: true)
			}
			return &mcp.CallToolResult{
				Content: []mcp.Content{&mcp.TextContent{Text: formatResult(v)}},
			}, nil, nil
		})
		return s
	}
	mcp.AddTool(s, tool, func(_ context.Context, _ *mcp.CallToolRequest, in calcInput) (*mcp.CallToolResult, calcOutput, error) {
		v, err := calculate(in.A, in.B, in.Operation)
		if err != nil {
			return nil, calcOutput{}, err // reported as a tool error (isError: true)
		}
		return &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: formatResult(v)}},
		}, calcOutput{Result: v}, nil
	})
	return s
}

func startGoSDK(ctx context.Context, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
	return runGoSDK(ctx, newGoSDKServer(false), in, out)
}

func startGoSDKStructured(ctx context.Context, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
	return runGoSDK(ctx, newGoSDKServer(true), in, out)
}

func runGoSDK(ctx context.Context, s *mcp.Server, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Run returns when the client closes its end (EOF) or ctx is done;
		// the IOTransport connection closes both in and out.
		_ = s.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
	}()
	return done
}
