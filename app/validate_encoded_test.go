package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// decodedOnly hides ValidateJSON: the engine then decodes the value and
// calls Validate, as for any Schema that is not a ports.JSONSchema.
type decodedOnly struct{ v ports.SchemaValidator }

func (d decodedOnly) Compile(schema json.RawMessage) (ports.Schema, error) {
	s, err := d.v.Compile(schema)
	if err != nil {
		return nil, err
	}
	return struct{ ports.Schema }{s}, nil
}

// TestArgumentsValidatedAsEncoded checks that a schema validating the
// encoded arguments (jsonschema, a ports.JSONSchema) and one given the
// decoded value (decodedOnly) answer every call alike: valid calls, schema
// errors, a number beyond float64 (even where no keyword looks), a wrong
// structured result.
func TestArgumentsValidatedAsEncoded(t *testing.T) {
	type opIn struct {
		A  float64 `json:"a"`
		Op string  `json:"op" enum:"add,sub"`
	}
	type out struct {
		R float64 `json:"r"`
	}
	tools := func() []hexmcp.Tool {
		return []hexmcp.Tool{
			hexmcp.Func(func(_ context.Context, in opIn) (float64, error) { return in.A, nil }, hexmcp.WithName("op")),
			hexmcp.Func(func(_ context.Context, in opIn) (*domain.CallToolResult, error) {
				sc := json.RawMessage(`{"r":"not a number"}`)
				if in.Op == "add" {
					sc = json.RawMessage(`{"r":1}`)
				}
				return &domain.CallToolResult{Content: []domain.Content{hexmcp.Text("x")}, StructuredContent: sc}, nil
			}, hexmcp.WithName("structured"), hexmcp.WithOutputSchemaFrom(out{})),
		}
	}
	calls := []struct{ name, args, want string }{
		{"op", `{"a":1,"op":"add"}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"1"}]}}`},
		{"op", ` { "a" : 2 , "\u006fp" : "\u0073ub" } `, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"2"}]}}`},
		{"op", `{"a":1,"op":"mul"}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Invalid arguments for tool op: /op: value must be one of \"add\", \"sub\""}],"isError":true}}`},
		{"op", `{"a":"1","op":"add"}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Invalid arguments for tool op: /a: got string, want number"}],"isError":true}}`},
		{"op", `{"a":1e400,"op":"add"}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Invalid arguments for tool op: arguments are not valid JSON"}],"isError":true}}`},
		{"op", `{"a":1,"op":"add","x":[1e400]}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Invalid arguments for tool op: arguments are not valid JSON"}],"isError":true}}`},
		{"structured", `{"a":1,"op":"add"}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"r":1}}}`},
		{"structured", `{"a":1,"op":"sub"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`},
	}
	for _, v := range []struct {
		name string
		v    ports.SchemaValidator
	}{{"encoded", jsonschema.New()}, {"decoded", decodedOnly{jsonschema.New()}}} {
		t.Run(v.name, func(t *testing.T) {
			log := quietLogger(gomock.NewController(t))
			// the one log line: the structured result that breaks its schema
			log.EXPECT().LogAttrs(gomock.Any(), slog.LevelError, "hexmcp: tool result does not match its outputSchema (a bug in the tool)",
				slog.Any("tool", "structured"), gomock.Any()).Times(1)
			c := serve(t, newEngine(t, app.Options{Validator: v.v, Logger: log}, tools()...))
			c.initialize("2025-11-25")
			for _, call := range calls {
				got := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + call.name + `","arguments":` + call.args + `}}`)
				equalJSON(t, got, call.want)
			}
		})
	}
}
