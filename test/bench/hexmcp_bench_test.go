package bench

import (
	"context"
	"encoding/json"
	"io"
	"testing"

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

func hexTool(structured bool) app.Tool {
	if !structured {
		return app.Func(func(_ context.Context, in hexCalcInput) (float64, error) {
			v, err := calculate(in.A, in.B, in.Operation)
			if err != nil {
				return 0, domain.NewToolError(err.Error())
			}
			return v, nil
		}, app.WithName(calcToolName), app.WithDescription(calcDescription))
	}
	return app.Func(func(_ context.Context, in hexCalcInput) (*domain.CallToolResult, error) {
		v, err := calculate(in.A, in.B, in.Operation)
		if err != nil {
			return nil, domain.NewToolError(err.Error())
		}
		sc, err := json.Marshal(calcOutput{Result: v})
		if err != nil {
			return nil, err
		}
		return &domain.CallToolResult{Content: []domain.Content{domain.Text(formatResult(v))}, StructuredContent: sc}, nil
	}, app.WithName(calcToolName), app.WithDescription(calcDescription), app.WithOutputSchemaFrom(calcOutput{}))
}

func startHexMCP(structured bool) startFunc {
	return func(ctx context.Context, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
		e, err := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
		if err != nil {
			panic(err)
		}
		if err := e.AddTool(hexTool(structured)); err != nil {
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
}
