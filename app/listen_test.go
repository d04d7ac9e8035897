package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

func listenReq(id, notifications string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{` + meta2026 + `,"notifications":` + notifications + `}}`
}

func TestListenToolsListChanged(t *testing.T) {
	e := newEngine(t, app.Options{}, addTool())
	c := serve(t, e)
	// unknown kinds are ignored; prompts are not served here, so not acknowledged
	c.send(listenReq("7", `{"toolsListChanged":true,"promptsListChanged":true,"futureThing":true}`))
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"notifications":{"toolsListChanged":true}}}`)

	// the stream does not block the connection
	if resp := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta2026 + `}}`); !strings.Contains(resp, `"tools":{"listChanged":true}`) {
		t.Fatal(resp)
	}

	if err := e.AddTool(app.NewTool(func() string { return "x" }, app.WithName("late"))); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`)

	// cancelled: the stream ends without a response, and gets nothing more
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	c.expectNothing()
	e.RemoveTool("late")
	c.expectNothing()
	// the id is free again
	c.send(listenReq("7", `{"toolsListChanged":true}`))
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"notifications":{"toolsListChanged":true}}}`)
}

func TestListenHonorsFilter(t *testing.T) {
	e := promptEngine(t, app.Options{})
	c := serve(t, e)
	c.send(listenReq(`"p"`, `{"promptsListChanged":true}`))
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"p"},"notifications":{"promptsListChanged":true}}}`)
	if err := e.AddTool(addTool()); err != nil {
		t.Fatal(err)
	}
	if err := e.AddResource(app.TextResource("test://a", "a", "A")); err != nil {
		t.Fatal(err)
	}
	c.expectNothing()
	if err := e.AddPrompt(app.NewPrompt("p1", func(context.Context, map[string]string) (*domain.GetPromptResult, error) { return nil, nil })); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"p"}}}`)
	if resp := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta2026 + `}}`); !strings.Contains(resp, `"prompts":{"listChanged":true}`) || !strings.Contains(resp, `"resources":{"listChanged":true}`) {
		t.Fatal(resp)
	}
}

func TestListenResources(t *testing.T) {
	e := resourceEngine(t, app.Options{}, sampleResources()...)
	c := serve(t, e)
	c.send(listenReq("3", `{"resourcesListChanged":true,"resourceSubscriptions":["test://static-text"]}`))
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":3},"notifications":{"resourcesListChanged":true,"resourceSubscriptions":["test://static-text"]}}}`)
	if n := e.NotifyResourceUpdated("test://other"); n != 0 {
		t.Fatalf("NotifyResourceUpdated(other) = %d", n)
	}
	if n := e.NotifyResourceUpdated("test://static-text"); n != 1 {
		t.Fatalf("NotifyResourceUpdated = %d", n)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://static-text","_meta":{"io.modelcontextprotocol/subscriptionId":3}}}`)
	if err := e.AddResource(app.TextResource("test://b", "b", "B")); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":3}}}`)
}

func TestListenInvalid(t *testing.T) {
	e := newEngine(t, app.Options{}, addTool())
	c := serve(t, e)
	for _, tc := range []struct{ params, msg string }{
		{`{` + meta2026 + `}`, "notifications is required"},
		{`{` + meta2026 + `,"notifications":[]}`, "notifications is required"},
		{`{` + meta2026 + `,"notifications":{"toolsListChanged":"yes"}}`, "notifications"},
		{`{` + meta2026 + `,"notifications":{"resourceSubscriptions":"x"}}`, "notifications"},
	} {
		resp := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":` + tc.params + `}`)
		if !strings.Contains(resp, `"code":-32602`) || !strings.Contains(resp, tc.msg) {
			t.Fatalf("%s: %s", tc.params, resp)
		}
	}
	// not in the handshake era
	c.initialize("2025-11-25")
	if resp := c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{}}}`); !strings.Contains(resp, `"code":-32601`) {
		t.Fatal(resp)
	}
}

func TestListenEndsWithConnection(t *testing.T) {
	e := newEngine(t, app.Options{}, addTool())
	c := serve(t, e)
	c.send(listenReq("1", `{"toolsListChanged":true}`))
	c.recv()
	// serve's cleanup closes the pipe and fails unless ServeConn returns,
	// which needs the listen request to end with the connection.
}

func TestListenViaHandleMessage(t *testing.T) {
	e := newEngine(t, app.Options{}, addTool())
	w := &recorder{got: make(chan string, 8)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []byte, 1)
	go func() { done <- e.HandleMessage(ctx, nil, []byte(listenReq("9", `{"toolsListChanged":true}`)), w) }()
	equalJSON(t, <-w.got, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":9},"notifications":{"toolsListChanged":true}}}`)
	e.RemoveTool("add")
	equalJSON(t, <-w.got, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":9}}}`)
	cancel()
	if resp := <-done; resp != nil {
		t.Fatalf("response after cancellation: %s", resp)
	}
}

type recorder struct{ got chan string }

func (r *recorder) WriteMessage(_ context.Context, msg []byte) error {
	r.got <- string(msg)
	return nil
}
