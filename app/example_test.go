package app_test

import (
	"context"
	"fmt"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// WeatherInput is the input of the weather tool: its fields and tags become
// the tool's input schema.
type WeatherInput struct {
	City  string `json:"city" description:"City name" minLength:"1"`
	Units string `json:"units,omitempty" enum:"metric,imperial" default:"metric"`
}

// Weather is the tool's output; a struct output declares its outputSchema.
type Weather struct {
	Temperature float64 `json:"temperature"`
	Conditions  string  `json:"conditions"`
}

func ExampleFunc() {
	tool := app.Func(func(ctx context.Context, in WeatherInput) (Weather, error) {
		if in.City == "Atlantis" {
			return Weather{}, domain.NewToolError("unknown city: " + in.City) // the model sees this
		}
		return Weather{Temperature: 22.5, Conditions: "sunny"}, nil
	}, app.WithName("get_weather"), app.WithDescription("Current weather of a city."))

	def := tool.Definition()
	fmt.Println(def.Name)
	fmt.Println(string(def.InputSchema))
	fmt.Println(string(def.OutputSchema))
	// Output:
	// get_weather
	// {"type":"object","properties":{"city":{"type":"string","description":"City name","minLength":1},"units":{"type":"string","enum":["metric","imperial"],"default":"metric"}},"required":["city"],"additionalProperties":false}
	// {"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string"}},"required":["temperature","conditions"],"additionalProperties":false}
}

// GetString is a plain function: its tool name is derived from its Go name.
func GetString() string { return "Hello" }

func ExampleNewTool() {
	tool := app.NewTool(GetString)
	fmt.Println(tool.Definition().Name, tool.Err())
	// Output: getString <nil>
}

func ExampleEngine_ServeConn() {
	engine, _ := app.NewEngine(app.Options{
		Info:      domain.Implementation{Name: "example", Version: "1.0.0"},
		Registry:  memory.NewRegistry(),
		Validator: jsonschema.New(),
	})
	_ = engine.AddTool(app.NewTool(GetString))

	client, server := memory.NewPipe()
	go engine.ServeConn(context.Background(), server)
	defer client.Close()

	ctx := context.Background()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"getString"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"getString","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	} {
		_ = client.WriteMessage(ctx, []byte(msg))
		resp, _ := client.ReadMessage(ctx)
		fmt.Println(string(resp))
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"example","version":"1.0.0"}}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello"}]}}
	// {"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"Hello"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","version":"1.0.0"}}}}
}
