package wiring_test

import (
	"context"
	"fmt"

	"go.uber.org/fx"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/wiring"
)

// A complete stdio server is wiring.Core, wiring.Stdio and the tools:
//
//	fx.New(wiring.Core, wiring.Stdio, wiring.Tools(tools...)).Run()
//
// This example leaves out wiring.Stdio so that it does not take over the
// test's standard input, and looks at the assembled engine instead.
func Example() {
	type GreetInput struct {
		Name string `json:"name" description:"Who to greet"`
	}
	greet := hexmcp.Func(func(ctx context.Context, in GreetInput) (string, error) {
		return "Hello, " + in.Name, nil
	}, hexmcp.WithName("greet"), hexmcp.WithDescription("Greets someone."))

	var engine *app.Engine
	fxApp := fx.New(
		fx.Supply(&wiring.Config{Info: domain.Implementation{Name: "greeter", Version: "1.0.0"}}),
		wiring.Core,
		wiring.Tools(greet),
		fx.Populate(&engine),
		fx.NopLogger,
	)
	fmt.Println(fxApp.Err(), engine != nil)
	// Output: <nil> true
}
