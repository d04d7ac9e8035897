package websocket

import (
	"encoding/json"
	"reflect"
	"testing"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// Requests of the server to the client over a WebSocket (handshake era):
// they travel on the connection, and the client's responses come back on
// it.

const crNameSchema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`

func crEngine(t *testing.T) *app.Engine {
	t.Helper()
	e := testtools.NewEngine(t, app.Options{})
	hi := decl.NewTool(func() string { return "hi" }, decl.WithName("hi"))
	if err := e.AddTools(hi, testtools.AskName(), testtools.Summarize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// crInitialize opens a 2025-11-25 session whose client declares caps.
func crInitialize(t *testing.T, c *gws.Conn, caps string) {
	t.Helper()
	send(t, c, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"test","version":"1"}}}`)
	if m := recv(t, c); m.Result == nil || m.Result.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize: %+v", m)
	}
	send(t, c, initialized)
}

// serverRequest checks that m is a request of the server with the given
// method and returns its id and params.
func serverRequest(t *testing.T, m rpcMessage, method string) (string, map[string]any) {
	t.Helper()
	if m.Method != method || len(m.ID) == 0 || string(m.ID) == "null" || m.Result != nil || m.Error != nil {
		t.Fatalf("got %+v, want a %s request", m, method)
	}
	var p map[string]any
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("params %s: %v", m.Params, err)
	}
	return string(m.ID), p
}

func TestElicitationOverWebSocket(t *testing.T) {
	_, srv := serve(t, crEngine(t), Options{})
	c := dial(t, srv)
	crInitialize(t, c, `{"elicitation":{}}`)

	send(t, c, `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"ask_name","arguments":{}}}`)
	id, p := serverRequest(t, recv(t, c), "elicitation/create")
	if p["message"] != "What is your name?" {
		t.Fatalf("params %v", p)
	}
	var want any
	_ = json.Unmarshal([]byte(crNameSchema), &want)
	if !reflect.DeepEqual(p["requestedSchema"], want) {
		t.Fatalf("requestedSchema %v", p["requestedSchema"])
	}
	send(t, c, `{"jsonrpc":"2.0","id":`+id+`,"result":{"action":"accept","content":{"name":"Ada"}}}`)
	m := recv(t, c)
	if string(m.ID) != `"call-1"` || text(t, m) != "Hello, Ada!" {
		t.Fatalf("result %+v", m)
	}

	// The connection goes on serving.
	send(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hi","arguments":{}}}`)
	if m := recv(t, c); string(m.ID) != "2" || text(t, m) != "hi" {
		t.Fatalf("after the round trip: %+v", m)
	}
}

func TestSamplingClientErrorOverWebSocket(t *testing.T) {
	_, srv := serve(t, crEngine(t), Options{})
	c := dial(t, srv)
	crInitialize(t, c, `{"sampling":{}}`)

	send(t, c, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"summarize","arguments":{}}}`)
	id, p := serverRequest(t, recv(t, c), "sampling/createMessage")
	if p["maxTokens"] != float64(100) {
		t.Fatalf("params %v", p)
	}
	msgs, _ := p["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("messages %v", p["messages"])
	}
	send(t, c, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-1,"message":"User rejected sampling request"}}`)
	m := recv(t, c)
	if got := text(t, m); string(m.ID) != "5" || got != "client error -1 on sampling/createMessage: User rejected sampling request" {
		t.Fatalf("result %+v", m)
	}
}
