package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
)

func bookingEngine(t *testing.T) *app.Engine {
	t.Helper()
	engine, err := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range All() {
		if tool.Definition().Name == "bookTable" {
			if err := engine.AddTool(tool); err != nil {
				t.Fatal(err)
			}
			return engine
		}
	}
	t.Fatal("bookTable is not among All()")
	return nil
}

// toolResult is the part of a tools/call answer the tests look at.
type toolResult struct {
	Result struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
		IsError       bool                       `json:"isError"`
		Content       []struct{ Text string }    `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r toolResult) text() string {
	if len(r.Result.Content) != 1 {
		return ""
	}
	return r.Result.Content[0].Text
}

func decodeResult(t *testing.T, raw []byte) toolResult {
	t.Helper()
	var r toolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if r.Error != nil {
		t.Fatalf("JSON-RPC error: %s", raw)
	}
	return r
}

// TestBookTableStateless drives bookTable at 2026-07-28: input_required,
// then the client's retry with each possible answer.
func TestBookTableStateless(t *testing.T) {
	engine := bookingEngine(t)
	ctx := context.Background()
	call := func(caps, extra string) toolResult {
		t.Helper()
		msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bookTable","arguments":{"time":"19:30"},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}` + extra + `}}`
		return decodeResult(t, engine.HandleMessage(ctx, nil, []byte(msg), nil))
	}

	if r := call(`{}`, ""); !r.Result.IsError || !strings.Contains(r.text(), "cannot ask the user") {
		t.Errorf("without the elicitation capability: %+v, want a tool error", r.Result)
	}

	first := call(`{"elicitation":{}}`, "")
	if first.Result.ResultType != "input_required" || first.Result.RequestState == "" {
		t.Fatalf("first round: %+v, want input_required with a requestState", first.Result)
	}
	var q struct {
		Method string `json:"method"`
		Params struct {
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		} `json:"params"`
	}
	if err := json.Unmarshal(first.Result.InputRequests["table"], &q); err != nil || q.Method != "elicitation/create" || q.Params.Message != "Who is the table at 19:30 for?" {
		t.Fatalf("inputRequests = %v (%v)", first.Result.InputRequests, err)
	}
	form, _ := tableForm()
	if string(q.Params.RequestedSchema) != string(form) {
		t.Errorf("requestedSchema = %s, want %s", q.Params.RequestedSchema, form)
	}

	for _, tc := range []struct{ answer, want string }{
		{`{"action":"accept","content":{"name":"Ada","seating":"terrace","quiet":true}}`, "Booked a table for Ada at 19:30, on the terrace, in a quiet corner."},
		{`{"action":"accept","content":{"name":"Bob","seating":"bar"}}`, "Booked a table for Bob at 19:30, at the bar."},
		{`{"action":"decline"}`, "No table was booked: you declined. Ask again any time."},
		{`{"action":"cancel"}`, "No table was booked: the request was cancelled."},
	} {
		r := call(`{"elicitation":{}}`, `,"inputResponses":{"table":`+tc.answer+`},"requestState":"`+first.Result.RequestState+`"`)
		if r.Result.ResultType != "complete" || r.Result.IsError || r.text() != tc.want {
			t.Errorf("answer %s: %+v, want text %q", tc.answer, r.Result, tc.want)
		}
	}
}

// TestBookTableHandshake drives bookTable at 2025-11-25: the server sends
// elicitation/create on the session and waits for the answer.
func TestBookTableHandshake(t *testing.T) {
	engine := bookingEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, server := memory.NewPipe()
	go engine.ServeConn(ctx, server)
	defer client.Close()
	send := func(msg string) {
		t.Helper()
		if err := client.WriteMessage(ctx, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	read := func() []byte {
		t.Helper()
		b, err := client.ReadMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`)
	read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bookTable"}}`)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	if raw := read(); json.Unmarshal(raw, &req) != nil || req.Method != "elicitation/create" || req.Params.Message != "Who is the table at 20:00 for?" {
		t.Fatalf("want elicitation/create, got %s", raw)
	}
	send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"accept","content":{"name":"Ada","seating":"inside"}}}`)
	if r := decodeResult(t, read()); r.Result.IsError || r.text() != "Booked a table for Ada at 20:00, inside." {
		t.Errorf("result = %+v", r.Result)
	}
}
