package hexmcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/hexmcptest"
)

type AddInput struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func add(_ context.Context, in AddInput) (float64, error) { return in.A + in.B, nil }

// A tool called under every revision the server supports. In a test,
// hexmcptest.ForEachRevision does the loop, with a subtest per revision.
func Example() {
	srv, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(add)}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()
	for _, rev := range hexmcptest.Revisions(srv) {
		c, err := hexmcptest.NewClient(ctx, srv, hexmcptest.ClientOptions{Revision: rev})
		if err != nil {
			panic(err)
		}
		res, err := c.CallTool(ctx, "add", AddInput{A: 2, B: 3})
		fmt.Println(rev, res.Text(), err)
		c.Close()
	}
	// Output:
	// 2024-11-05 5 <nil>
	// 2025-03-26 5 <nil>
	// 2025-06-18 5 <nil>
	// 2025-11-25 5 <nil>
	// 2026-07-28 5 <nil>
}

// One handler answers the user's part of a tool that elicits, in both
// eras and over both transports: a request to the client in a 2025-11-25
// session, an input_required result and a retry at 2026-07-28.
func ExampleClientOptions_elicitation() {
	greet := hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
		res, err := rc.Elicit(ctx, "name", hexmcp.ElicitForm("Your name?",
			json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)))
		if err != nil {
			return "", err
		}
		var in struct{ Name string }
		if err := res.Decode(&in); err != nil {
			return "Hello, stranger.", nil
		}
		return "Hello, " + in.Name + ".", nil
	}, hexmcp.WithName("greet"))
	srv, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{greet}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	ctx := context.Background()
	for _, transport := range []hexmcptest.Transport{hexmcptest.InMemory, hexmcptest.StreamableHTTP} {
		for _, rev := range []domain.Revision{domain.Revision20251125, domain.Revision20260728} {
			c, err := hexmcptest.NewClient(ctx, srv, hexmcptest.ClientOptions{
				Revision:  rev,
				Transport: transport,
				Elicitation: func(ctx context.Context, p domain.ElicitParams) (*domain.ElicitResult, error) {
					return client.Accept(map[string]string{"name": "Ada"})
				},
			})
			if err != nil {
				panic(err)
			}
			res, err := c.CallTool(ctx, "greet", nil)
			fmt.Println(transport, rev, res.Text(), err)
			c.Close()
		}
	}
	// Output:
	// memory 2025-11-25 Hello, Ada. <nil>
	// memory 2026-07-28 Hello, Ada. <nil>
	// http 2025-11-25 Hello, Ada. <nil>
	// http 2026-07-28 Hello, Ada. <nil>
}

// A request the server refuses is a *client.RPCError: here an unknown tool.
func Example_rpcError() {
	srv, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(add)}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := hexmcptest.NewClient(ctx, srv, hexmcptest.ClientOptions{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	_, err = c.CallTool(ctx, "subtract", AddInput{A: 2, B: 3})
	var rpcErr *client.RPCError
	if errors.As(err, &rpcErr) {
		fmt.Println(rpcErr.Code, rpcErr.Message)
	}
	// Output:
	// -32602 Unknown tool: subtract
}
