package hexmcp_test

import (
	"context"
	"fmt"

	"github.com/hexmcp/hexmcp"
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
	tool := hexmcp.Func(func(ctx context.Context, in WeatherInput) (Weather, error) {
		if in.City == "Atlantis" {
			return Weather{}, hexmcp.NewToolError("unknown city: " + in.City) // the model sees this
		}
		return Weather{Temperature: 22.5, Conditions: "sunny"}, nil
	}, hexmcp.WithName("get_weather"), hexmcp.WithDescription("Current weather of a city."))

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
	tool := hexmcp.NewTool(GetString)
	fmt.Println(tool.Definition().Name, tool.Err())
	// Output: getString <nil>
}
