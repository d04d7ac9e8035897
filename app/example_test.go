package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// GetString is a plain function: its tool name is derived from its Go name
// (getString).
func GetString() string { return "Hello" }

func ExampleEngine_ServeConn() {
	engine, _ := app.NewEngine(app.Options{
		Info:         domain.Implementation{Name: "example", Version: "1.0.0"},
		ToolRegistry: memory.NewRegistry(),
		Validator:    jsonschema.New(),
	})
	_ = engine.AddTool(hexmcp.NewTool(GetString))

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

// Booking is what the booking tool asks the user for: the struct's tags
// become the elicitation form.
type Booking struct {
	Name   string `json:"name" title:"Name"`
	Guests int    `json:"guests" title:"Guests" default:"2"`
	Seat   string `json:"seat" enum:"inside,terrace" default:"inside"`
}

func ExampleRequestContext_Elicit() {
	form, _ := domain.ElicitSchemaFor(reflect.TypeFor[Booking]())
	book := hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		// The same code serves both eras; return Elicit's error unchanged.
		res, err := rc.Elicit(ctx, "booking", hexmcp.ElicitForm("Who is the table for?", form))
		if err != nil {
			return "", err
		}
		var b Booking
		if err := res.Decode(&b); err != nil {
			return "No booking made.", nil
		}
		return fmt.Sprintf("Table for %d booked for %s (%s).", b.Guests, b.Name, b.Seat), nil
	}, hexmcp.WithName("book_table"))

	engine, _ := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	_ = engine.AddTool(book)
	ctx := context.Background()

	// Stateless era (2026-07-28): the first call answers input_required ...
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	first := engine.HandleMessage(ctx, nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_table",`+meta+`}}`), nil)
	var r struct {
		Result struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		} `json:"result"`
	}
	_ = json.Unmarshal(first, &r)
	fmt.Println(r.Result.ResultType)
	fmt.Println(string(r.Result.InputRequests["booking"]))

	// ... and the client's retry carries the answer and the state back.
	retry := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"book_table",` + meta + `,` +
		`"inputResponses":{"booking":{"action":"accept","content":{"name":"Ada","guests":4,"seat":"terrace"}}},` +
		`"requestState":"` + r.Result.RequestState + `"}}`
	var done struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	_ = json.Unmarshal(engine.HandleMessage(ctx, nil, []byte(retry), nil), &done)
	fmt.Println(done.Result.Content[0].Text)
	// Output:
	// input_required
	// {"method":"elicitation/create","params":{"message":"Who is the table for?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","title":"Name"},"guests":{"type":"integer","title":"Guests","default":2},"seat":{"type":"string","enum":["inside","terrace"],"default":"inside"}},"required":["name","guests","seat"]}}}
	// Table for 4 booked for Ada (terrace).
}
