package tools

import (
	"context"

	"github.com/hexmcp/hexmcp"
)

//go:generate go run github.com/hexmcp/hexmcp/cmd/mcpgen

// Operation is an arithmetic operation of the calculator. Its constants are
// the enum of the calculate tool's operation parameter.
type Operation string

// The operations of the calculator.
const (
	Add      Operation = "add"
	Subtract Operation = "subtract"
	Multiply Operation = "multiply"
	Divide   Operation = "divide"
)

// Calculator performs arithmetic: the seed's class-style tools. Its
// //mcp:tool methods are registered by calculator_mcp.go, which go generate
// writes: calc.MCPTools().
type Calculator struct{}

// calculatorIcon is the calculate tool's icon: a small SVG as a data: URI.
var calculatorIcon = hexmcp.Icon{
	Src:      "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxNiAxNiI+PHJlY3Qgd2lkdGg9IjE2IiBoZWlnaHQ9IjE2IiByeD0iMiIvPjwvc3ZnPg==",
	MimeType: "image/svg+xml",
	Sizes:    []string{"any"},
	Theme:    "light",
}

// PerformCalculation performs arithmetic operations with validation.
//
// Parameters:
//   - a: First operand
//   - b: Second operand
//   - operation: The operation to apply
//
//mcp:tool name=calculate title="Calculator" readOnly idempotent openWorld=false
//mcp:tool icon=calculatorIcon meta.example.com/category=math
func (c *Calculator) PerformCalculation(ctx context.Context, a, b float64, operation Operation) (float64, error) {
	switch operation {
	case Add:
		return a + b, nil
	case Subtract:
		return a - b, nil
	case Multiply:
		return a * b, nil
	case Divide:
		if b == 0 {
			return 0, hexmcp.NewToolError("Division by zero")
		}
		return a / b, nil
	}
	return 0, hexmcp.NewToolError("Invalid operation")
}

// DivideNumbers divides a by b.
//
//mcp:tool
func (c *Calculator) DivideNumbers(a, b float64) (float64, error) {
	if b == 0 {
		return 0, hexmcp.NewToolError("Division by zero is not allowed")
	}
	return a / b, nil
}
