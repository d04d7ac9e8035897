package bench

import (
	"errors"
	"fmt"
	"strconv"
)

// The "calculate" tool shared by every implementation under test.
//
// Input:  {a: number, b: number, operation: "add"|"subtract"|"multiply"|"divide"},
// all required. Output: the number a <op> b. Division by zero is a tool error
// (a result with isError: true), not a protocol error.

const (
	calcToolName    = "calculate"
	calcDescription = "Performs arithmetic operations with validation."
)

// calcOperations is the enum of the "operation" property, in schema order.
var calcOperations = []string{"add", "subtract", "multiply", "divide"}

// calcOutput is the structured output of the variants that return
// structuredContent (MCP requires it to be an object, so the number is
// wrapped): {"result": 3}. The text content stays "3" everywhere.
type calcOutput struct {
	Result float64 `json:"result"`
}

var errDivisionByZero = errors.New("division by zero")

// calculate is the business logic of the tool; every implementation calls it.
func calculate(a, b float64, operation string) (float64, error) {
	switch operation {
	case "add":
		return a + b, nil
	case "subtract":
		return a - b, nil
	case "multiply":
		return a * b, nil
	case "divide":
		if b == 0 {
			return 0, errDivisionByZero
		}
		return a / b, nil
	default:
		return 0, fmt.Errorf("unknown operation %q", operation)
	}
}

// formatResult renders the numeric result as the text content of the tool
// result: 3 -> "3", 0.5 -> "0.5".
func formatResult(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}
