package app_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// statelessMeta makes a request self-contained (2026-07-28): no initialize
// round trip is needed before it.
const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// Example assembles a server without fx: an engine with the in-memory
// registry and the JSON Schema validator, served over an in-process pipe,
// answering one tools/call.
func Example() {
	engine, err := app.NewEngine(app.Options{
		Info:         domain.Implementation{Name: "hello", Version: "1.0.0"},
		ToolRegistry: memory.NewRegistry(),
		Validator:    jsonschema.New(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	type GreetInput struct {
		Name string `json:"name" minLength:"1"`
	}
	if err := engine.AddTool(hexmcp.Func(func(_ context.Context, in GreetInput) (string, error) {
		return "Hello, " + in.Name + "!", nil
	}, hexmcp.WithName("greet"))); err != nil {
		fmt.Println(err)
		return
	}
	defer engine.Close()

	// Any ports.Conn works here: a stdio, WebSocket or memory connection.
	client, server := memory.NewPipe()
	defer client.Close()
	go engine.ServeConn(context.Background(), server)

	ctx := context.Background()
	_ = client.WriteMessage(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},`+statelessMeta+`}}`))
	resp, _ := client.ReadMessage(ctx)
	fmt.Println(string(resp))
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"Hello, Ada!"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"hello","version":"1.0.0"}}}}
}

func ExampleEngine_AddPrompt() {
	review := hexmcp.NewPrompt("code_review",
		func(_ context.Context, args map[string]string) (*domain.GetPromptResult, error) {
			return &domain.GetPromptResult{
				Description: "Review in " + args["language"],
				Messages: []domain.PromptMessage{
					hexmcp.UserMessage(hexmcp.Text("Please review this " + args["language"] + " code.")),
				},
			}, nil
		},
		hexmcp.WithDescription("Asks for a code review."),
		hexmcp.WithArguments(domain.PromptArgument{Name: "language", Required: true}),
	)

	engine, _ := app.NewEngine(app.Options{
		ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New(), PromptRegistry: memory.NewPromptRegistry(),
	})
	if err := engine.AddPrompt(review); err != nil {
		fmt.Println(err)
		return
	}
	resp := engine.HandleMessage(context.Background(), nil, []byte(
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"code_review","arguments":{"language":"Go"},`+statelessMeta+`}}`), nil)
	var r struct {
		Result struct {
			Description string `json:"description"`
			Messages    []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		} `json:"result"`
	}
	_ = json.Unmarshal(resp, &r)
	fmt.Println(r.Result.Description)
	fmt.Println(r.Result.Messages[0].Role, string(r.Result.Messages[0].Content))
	// Output:
	// Review in Go
	// user {"type":"text","text":"Please review this Go code."}
}

func ExampleEngine_AddResources() {
	readme := hexmcp.NewResource("file:///docs/readme.md", "readme",
		func(_ context.Context, uri string, _ map[string]string) ([]domain.ResourceContents, error) {
			return []domain.ResourceContents{{URI: uri, MimeType: "text/markdown", Text: "# Read me"}}, nil
		},
		hexmcp.WithMimeType("text/markdown"))
	// TextResource is the short form for fixed text.
	motd := hexmcp.TextResource("memo://motd", "motd", "Have a nice day.")

	engine, _ := app.NewEngine(app.Options{
		ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New(), ResourceRegistry: memory.NewResourceRegistry(),
	})
	if err := engine.AddResources(readme, motd); err != nil {
		fmt.Println(err)
		return
	}
	for _, uri := range []string{"file:///docs/readme.md", "memo://motd"} {
		resp := engine.HandleMessage(context.Background(), nil, []byte(
			`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"`+uri+`",`+statelessMeta+`}}`), nil)
		var r struct {
			Result struct {
				Contents []struct {
					URI      string `json:"uri"`
					MimeType string `json:"mimeType"`
					Text     string `json:"text"`
				} `json:"contents"`
			} `json:"result"`
		}
		_ = json.Unmarshal(resp, &r)
		c := r.Result.Contents[0]
		fmt.Println(c.URI, c.MimeType, c.Text)
	}
	// Output:
	// file:///docs/readme.md text/markdown # Read me
	// memo://motd text/plain Have a nice day.
}

func ExampleEngine_AddTool() {
	// A tool built at run time: its schema is plain JSON, and the handler
	// gets the arguments only after they passed that schema; arguments that
	// fail it are answered with an isError result the model can read.
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)
	add := hexmcp.NewRawTool("add", schema, func(_ context.Context, args json.RawMessage) (any, error) {
		var in struct{ A, B float64 }
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, hexmcp.NewToolError("bad arguments")
		}
		return in.A + in.B, nil
	}, hexmcp.WithDescription("Adds two numbers."))

	engine, _ := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	if err := engine.AddTool(add); err != nil {
		fmt.Println(err)
		return
	}
	for _, args := range []string{`{"a":2,"b":3}`, `{"a":2}`} {
		resp := engine.HandleMessage(context.Background(), nil, []byte(
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":`+args+`,`+statelessMeta+`}}`), nil)
		var r struct {
			Result struct {
				Content []struct{ Text string } `json:"content"`
				IsError bool                    `json:"isError"`
			} `json:"result"`
		}
		_ = json.Unmarshal(resp, &r)
		fmt.Println(r.Result.IsError, r.Result.Content[0].Text)
	}
	// Output:
	// false 5
	// true Invalid arguments for tool add: missing property "b"
}
