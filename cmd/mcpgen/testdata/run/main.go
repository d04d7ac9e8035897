// Command run serves the tools that mcpgen generates for this package over
// the in-memory transport and prints every response: the compile-and-run
// test of the generator (see TestGeneratedCodeRuns).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
)

// Operation is an arithmetic operation.
type Operation string

// The operations.
const (
	Add    Operation = "add"
	Divide Operation = "divide"
)

// Calculator performs arithmetic.
type Calculator struct{ calls int }

// PerformCalculation performs arithmetic operations with validation.
//
// Parameters:
//   - a: First operand
//   - b: Second operand
//   - operation: The operation to apply
//
//mcp:tool name=calculate title="Calculator" readOnly idempotent default.operation=add
func (c *Calculator) PerformCalculation(ctx context.Context, a, b float64, operation Operation) (float64, error) {
	c.calls++
	switch operation {
	case Add:
		return a + b, nil
	case Divide:
		if b == 0 {
			return 0, hexmcp.NewToolError("Division by zero")
		}
		return a / b, nil
	}
	return 0, hexmcp.NewToolError("Invalid operation")
}

// Calls counts the calculations so far and reports the tool's name.
//
//mcp:tool
func (c *Calculator) Calls(rc *hexmcp.RequestContext) string {
	return fmt.Sprintf("%s: %d calls", rc.ToolName(), c.calls)
}

// Summary is the result of summarize.
type Summary struct {
	Count int      `json:"count"`
	Words []string `json:"words"`
}

// Summarize counts words.
//
// Parameters:
//   - words: The words to count
//   - limit: Count at most this many
//
//mcp:tool
func Summarize(words []string, limit *int) Summary {
	if limit != nil && len(words) > *limit {
		words = words[:*limit]
	}
	return Summary{Count: len(words), Words: words}
}

// Fail always fails.
//
//mcp:tool
func Fail(ctx context.Context) error { return hexmcp.NewToolError("failed on purpose") }

func main() {
	srv, err := hexmcp.New(hexmcp.Options{Info: hexmcp.Implementation{Name: "run", Version: "1.0.0"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	calc := &Calculator{}
	if err := srv.AddTools(append(calc.MCPTools(), MCPTools()...)...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	client, server := memory.NewPipe()
	go srv.Engine().ServeConn(context.Background(), server)
	defer client.Close()

	ctx := context.Background()
	call := func(id int, name, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
	}
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		call(3, "calculate", `{"a":6,"b":3,"operation":"divide"}`),
		call(4, "calculate", `{"a":6,"b":3}`),
		call(5, "calculate", `{"a":1,"b":0,"operation":"divide"}`),
		call(6, "calculate", `{"a":1,"b":2,"operation":"modulo"}`),
		call(7, "calls", `{}`),
		call(8, "summarize", `{"words":["a","b","c"],"limit":2}`),
		call(9, "summarize", `{"words":["a"]}`),
		call(10, "fail", `{}`),
	} {
		if err := client.WriteMessage(ctx, []byte(msg)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if msg == `{"jsonrpc":"2.0","method":"notifications/initialized"}` {
			continue
		}
		resp, err := client.ReadMessage(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(string(resp))
	}
}
