package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
)

// exampleServer serves a hexmcp server with the tools add and weather over
// Streamable HTTP on an httptest server, and returns its URL and how to
// stop it.
func exampleServer(tools ...hexmcp.Tool) (string, func()) {
	srv, err := hexmcp.New(hexmcp.Options{Logger: slog.New(slog.DiscardHandler), Tools: tools})
	if err != nil {
		panic(err)
	}
	h := srv.HTTPHandler(mcphttp.Options{})
	ts := httptest.NewServer(h)
	return ts.URL + "/mcp", func() {
		h.Abort()
		ts.Close()
		srv.Close()
	}
}

// A client of a Streamable HTTP server: list the tools, call one.
func Example() {
	url, stop := exampleServer(hexmcp.Func(add, hexmcp.WithDescription("Adds two numbers.")))
	defer stop()
	ctx := context.Background()

	c := client.New(client.Options{ClientInfo: domain.Implementation{Name: "example", Version: "1.0.0"}})
	s, err := c.Connect(ctx, client.HTTPTransport(url, client.HTTPOptions{}))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	fmt.Println("revision:", s.Revision())
	for tool, err := range s.ListTools(ctx) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("tool %s: %s\n", tool.Name, tool.Description)
	}
	res, err := s.CallTool(ctx, "add", map[string]any{"a": 2, "b": 3})
	if err != nil {
		panic(err)
	}
	fmt.Println("add:", res.Text())
	// Output:
	// revision: 2026-07-28
	// tool add: Adds two numbers.
	// add: 5
}

// A structured result decoded into a Go value.
func ExampleCallToolAs() {
	url, stop := exampleServer(hexmcp.Func(func(_ context.Context, in CityInput) (Weather, error) {
		return Weather{Temperature: 21.5, Conditions: "sunny in " + in.City}, nil
	}, hexmcp.WithName("weather")))
	defer stop()
	ctx := context.Background()
	s, err := client.New(client.Options{}).Connect(ctx, client.HTTPTransport(url, client.HTTPOptions{}))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	w, err := client.CallToolAs[Weather](ctx, s, "weather", CityInput{City: "Lyon"})
	fmt.Printf("%+v %v\n", w, err)
	// Output:
	// {Temperature:21.5 Conditions:sunny in Lyon} <nil>
}

// One handler answers the server's question in both eras: a request to
// the client in a 2025-11-25 session, an input_required result and a
// retry at 2026-07-28.
func ExampleOptions_elicitation() {
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
	url, stop := exampleServer(greet)
	defer stop()
	ctx := context.Background()
	for _, rev := range []domain.Revision{domain.Revision20251125, domain.Revision20260728} {
		c := client.New(client.Options{
			Revision: rev,
			Elicitation: func(ctx context.Context, p domain.ElicitParams) (*domain.ElicitResult, error) {
				return client.Accept(map[string]string{"name": "Ada"}) // the user's answer to p.Message
			},
		})
		s, err := c.Connect(ctx, client.HTTPTransport(url, client.HTTPOptions{}))
		if err != nil {
			panic(err)
		}
		res, err := s.CallTool(ctx, "greet", nil)
		fmt.Println(rev, res.Text(), err)
		s.Close()
	}
	// Output:
	// 2025-11-25 Hello, Ada. <nil>
	// 2026-07-28 Hello, Ada. <nil>
}

// A server on a pair of streams, as on stdio: here in memory; for a
// server program, client.CommandTransport(exec.Command("server")).
func ExampleIOTransport() {
	srv, err := hexmcp.New(hexmcp.Options{Logger: slog.New(slog.DiscardHandler), Tools: []hexmcp.Tool{hexmcp.Func(add)}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- srv.Serve(context.Background(), stdio.New(stdio.Options{In: toServer, Out: fromServer}))
		fromServer.Close()
	}()

	ctx := context.Background()
	s, err := client.New(client.Options{Revision: domain.Revision20250618}).Connect(ctx, client.IOTransport(toClient, fromClient))
	if err != nil {
		panic(err)
	}
	res, err := s.CallTool(ctx, "add", AddInput{A: 1, B: 2})
	fmt.Println(s.Revision(), res.Text(), err)
	fmt.Println(s.Close(), <-served)
	// Output:
	// 2025-06-18 3 <nil>
	// <nil> <nil>
}

// Progress notifications of one call.
func ExampleWithProgress() {
	count := hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
		for i := 1; i <= 3; i++ {
			if err := rc.ReportProgress(ctx, float64(i), 3, ""); err != nil {
				return "", err
			}
		}
		return "done", nil
	}, hexmcp.WithName("count"))
	url, stop := exampleServer(count)
	defer stop()
	ctx := context.Background()
	s, err := client.New(client.Options{}).Connect(ctx, client.HTTPTransport(url, client.HTTPOptions{}))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	pctx := client.WithProgress(ctx, func(p client.Progress) { fmt.Printf("%g of %g\n", p.Progress, p.Total) })
	res, err := s.CallTool(pctx, "count", nil)
	fmt.Println(res.Text(), err)
	// Output:
	// 1 of 3
	// 2 of 3
	// 3 of 3
	// done <nil>
}

// Middleware around every request the client sends: here, a log of the
// methods.
func ExampleMiddleware() {
	url, stop := exampleServer(hexmcp.Func(add))
	defer stop()
	ctx := context.Background()

	logMethods := func(next client.MethodHandler) client.MethodHandler {
		return func(ctx context.Context, req *client.Request) (json.RawMessage, error) {
			res, err := next(ctx, req)
			fmt.Printf("%s (%s): error %v\n", req.Method, req.Era, err)
			return res, err
		}
	}
	c := client.New(client.Options{Revision: domain.Revision20251125, Middleware: []client.Middleware{logMethods}})
	s, err := c.Connect(ctx, client.HTTPTransport(url, client.HTTPOptions{}))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if _, err := s.CallTool(ctx, "add", map[string]any{"a": 2, "b": 3}); err != nil {
		panic(err)
	}
	// Output:
	// initialize (handshake): error <nil>
	// tools/call (handshake): error <nil>
}
