package tools

import (
	"os/exec"
	"reflect"
	"testing"
)

// TestGeneratedCodeIsUpToDate fails when calculator_mcp.go no longer matches
// calculator.go: run go generate ./examples/showcase/... after changing a
// //mcp:tool method.
func TestGeneratedCodeIsUpToDate(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goBin, "run", "github.com/hexmcp/hexmcp/cmd/mcpgen", "-check").CombinedOutput()
	if err != nil {
		t.Fatalf("mcpgen -check: %v\n%s", err, out)
	}
}

// TestCalculatorTools checks the generated registration of the
// class-style tools: the names, descriptions and hints the seed declares.
func TestCalculatorTools(t *testing.T) {
	tools := (&Calculator{}).MCPTools()
	if len(tools) != 2 {
		t.Fatalf("%d tools, want 2", len(tools))
	}
	for _, tool := range tools {
		if err := tool.Err(); err != nil {
			t.Fatal(err)
		}
	}
	calc, div := tools[0].Definition(), tools[1].Definition()
	if calc.Name != "calculate" || calc.Title != "Calculator" || calc.Description != "Performs arithmetic operations with validation." {
		t.Errorf("calculate = %+v", calc)
	}
	if a := calc.Annotations; a == nil || a.Title != "Calculator" || !*a.ReadOnlyHint || !*a.IdempotentHint || *a.OpenWorldHint || a.DestructiveHint != nil {
		t.Errorf("calculate annotations = %+v", a)
	}
	if len(calc.Icons) != 1 || !reflect.DeepEqual(calc.Icons[0], calculatorIcon) || calc.Meta["example.com/category"] != "math" {
		t.Errorf("calculate icons/meta = %+v %+v", calc.Icons, calc.Meta)
	}
	if want := `{"type":"object","properties":{"a":{"type":"number","description":"First operand"},"b":{"type":"number","description":"Second operand"},"operation":{"type":"string","description":"The operation to apply","enum":["add","subtract","multiply","divide"]}},"required":["a","b","operation"],"additionalProperties":false}`; string(calc.InputSchema) != want {
		t.Errorf("calculate input schema:\n got %s\nwant %s", calc.InputSchema, want)
	}
	if div.Name != "divideNumbers" || div.Description != "Divides a by b." {
		t.Errorf("divideNumbers = %+v", div)
	}
}

// TestTableForm checks the form bookTable asks for: TableRequest's tags.
func TestTableForm(t *testing.T) {
	form, err := tableForm()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{` +
		`"name":{"type":"string","title":"Name","description":"Who the table is for"},` +
		`"seating":{"type":"string","title":"Seating","enum":["inside","terrace","bar"],"default":"inside"},` +
		`"quiet":{"type":"boolean","title":"Quiet corner","description":"A table away from the kitchen","default":false}},` +
		`"required":["name","seating"]}`
	if string(form) != want {
		t.Errorf("form:\n got %s\nwant %s", form, want)
	}
}
