package bench

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// BenchmarkHexMCP is this SDK with input validation on (JSON Schema 2020-12,
// the enum included): the typed handler returns a float64, which becomes the
// text "3" (no structured output for a scalar at 2025-11-25, so there is
// nothing to validate on the way out, as with go-sdk's Out=any).
func BenchmarkHexMCP(b *testing.B) {
	runBench(b, startHexMCP(false))
}

// BenchmarkHexMCPStructured also declares an outputSchema {result:number}
// and returns text "3" plus structuredContent {"result":3}, which is
// validated against it: the same wire result as BenchmarkMcpGoValidated and
// BenchmarkGoSDKStructured.
func BenchmarkHexMCPStructured(b *testing.B) {
	runBench(b, startHexMCP(true))
}

// hexCalcInput is calculate's input; the enum tag puts the operations in
// the inferred input schema.
type hexCalcInput struct {
	A         float64 `json:"a" description:"First operand"`
	B         float64 `json:"b" description:"Second operand"`
	Operation string  `json:"operation" description:"The operation to perform" enum:"add,subtract,multiply,divide"`
}

func hexTool(structured bool) hexmcp.Tool {
	if !structured {
		return hexmcp.Func(func(_ context.Context, in hexCalcInput) (float64, error) {
			v, err := calculate(in.A, in.B, in.Operation)
			if err != nil {
				return 0, hexmcp.NewToolError(err.Error())
			}
			return v, nil
		}, hexmcp.WithName(calcToolName), hexmcp.WithDescription(calcDescription))
	}
	return hexmcp.Func(func(_ context.Context, in hexCalcInput) (*domain.CallToolResult, error) {
		v, err := calculate(in.A, in.B, in.Operation)
		if err != nil {
			return nil, hexmcp.NewToolError(err.Error())
		}
		sc, err := json.Marshal(calcOutput{Result: v})
		if err != nil {
			return nil, err
		}
		return &domain.CallToolResult{Content: []domain.Content{hexmcp.Text(formatResult(v))}, StructuredContent: sc}, nil
	}, hexmcp.WithName(calcToolName), hexmcp.WithDescription(calcDescription), hexmcp.WithOutputSchemaFrom(calcOutput{}))
}

func startHexMCP(structured bool) startFunc {
	return func(ctx context.Context, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
		return serveStdio(ctx, in, out, app.Options{}, hexTool(structured))
	}
}

// newEngine makes an engine with opts (its registry a memory one and its
// validator jsonschema's) and tools.
func newEngine(opts app.Options, tools ...hexmcp.Tool) (*app.Engine, error) {
	opts.ToolRegistry, opts.Validator = memory.NewRegistry(), jsonschema.New()
	e, err := app.NewEngine(opts)
	if err != nil {
		return nil, err
	}
	for _, t := range tools {
		if err := e.AddTool(t); err != nil {
			_ = e.Close()
			return nil, err
		}
	}
	return e, nil
}

// serveStdio starts an engine (see newEngine) and serves it over stdio on in and
// out until ctx ends; the channel closes once the engine is closed.
func serveStdio(ctx context.Context, in *io.PipeReader, out *io.PipeWriter, opts app.Options, tools ...hexmcp.Tool) <-chan struct{} {
	e, err := newEngine(opts, tools...)
	if err != nil {
		panic(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer in.Close()
		_ = stdio.New(stdio.Options{In: in, Out: out}).Serve(ctx, e)
		e.Close()
	}()
	return done
}
