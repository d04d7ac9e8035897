package app_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

func listenReq(id, notifications string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{` + meta2026 + `,"notifications":` + notifications + `}}`
}

func TestListenToolsListChanged(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
	c := serve(t, e)
	// unknown kinds are ignored; prompts are not served here, so not acknowledged
	c.send(listenReq("7", `{"toolsListChanged":true,"promptsListChanged":true,"futureThing":true}`))
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"notifications":{"toolsListChanged":true}}}`)

	// the stream does not block the connection
	if resp := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta2026 + `}}`); !strings.Contains(resp, `"tools":{"listChanged":true}`) {
		t.Fatal(resp)
	}

	if err := e.AddTool(hexmcp.NewTool(func() string { return "x" }, hexmcp.WithName("late"))); err != nil {
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
	e := promptEngine(t, app.Options{Validator: jsonschema.New()})
	c := serve(t, e)
	c.send(listenReq(`"p"`, `{"promptsListChanged":true}`))
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"p"},"notifications":{"promptsListChanged":true}}}`)
	if err := e.AddTool(addTool()); err != nil {
		t.Fatal(err)
	}
	if err := e.AddResource(hexmcp.TextResource("test://a", "a", "A")); err != nil {
		t.Fatal(err)
	}
	c.expectNothing()
	if err := e.AddPrompt(hexmcp.NewPrompt("p1", func(context.Context, map[string]string) (*domain.GetPromptResult, error) { return nil, nil })); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"p"}}}`)
	if resp := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta2026 + `}}`); !strings.Contains(resp, `"prompts":{"listChanged":true}`) || !strings.Contains(resp, `"resources":{"listChanged":true}`) {
		t.Fatal(resp)
	}
}

func TestListenResources(t *testing.T) {
	e := resourceEngine(t, app.Options{Validator: jsonschema.New()}, sampleResources()...)
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
	if err := e.AddResource(hexmcp.TextResource("test://b", "b", "B")); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":3}}}`)
}

func TestListenInvalid(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
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
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
	c := serve(t, e)
	c.send(listenReq("1", `{"toolsListChanged":true}`))
	c.recv()
	// serve's cleanup closes the pipe and fails unless ServeConn returns,
	// which needs the listen request to end with the connection.
}

func TestListenViaHandleMessage(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
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

// listenDone is the completion result that answers a listen request the
// server ends (2026-07-28, "Graceful Closure"), for an engine with the
// default Info.
func listenDone(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":` + id +
		`,"io.modelcontextprotocol/serverInfo":{"name":"hexmcp-server","version":"0.0.0"}}}}`
}

// A listen request whose context the transport ends with
// app.ErrEndedByServer (the server stops) is answered with the completion
// result; any other end of its context (the client cancelled or went away)
// gets no response.
func TestListenCompletesWhenServerEnds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause error
		want  string
	}{
		{"server", app.ErrEndedByServer, listenDone(`"s-1"`)},
		{"server, wrapped", fmt.Errorf("shutting down: %w", app.ErrEndedByServer), listenDone(`"s-1"`)},
		{"client", nil, ""},
		{"other cause", errors.New("client went away"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
			w := &recorder{got: make(chan string, 8)}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			done := make(chan []byte, 1)
			go func() { done <- e.HandleMessage(ctx, nil, []byte(listenReq(`"s-1"`, `{"toolsListChanged":true}`)), w) }()
			<-w.got // the acknowledgement
			cancel(tc.cause)
			resp := <-done
			if tc.want == "" {
				if resp != nil {
					t.Fatalf("response: %s", resp)
				}
			} else {
				equalJSON(t, string(resp), tc.want)
			}
			// nothing follows the end of the stream
			e.RemoveTool("add")
			select {
			case m := <-w.got:
				t.Fatalf("after the end: %s", m)
			default:
			}
		})
	}
}

// pipeConn is a connection whose input the test ends with EOF (the peer
// went away) while what the server writes is still recorded.
type pipeConn struct {
	in  chan []byte // closed: EOF
	out chan string
}

func (c *pipeConn) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case m, ok := <-c.in:
		if !ok {
			return nil, io.EOF
		}
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *pipeConn) WriteMessage(_ context.Context, msg []byte) error {
	c.out <- string(msg)
	return nil
}

func (c *pipeConn) Close() error { return nil }

func (c *pipeConn) recv(t *testing.T) string {
	t.Helper()
	return testtools.Recv(t, c.out, 5*time.Second, "no message within 5 s")
}

// serveListening serves a connection to an engine with a tool and opens a
// listen stream ("4", tools/list_changed) on it, its acknowledgement
// checked; cancel stops serving gracefully (it is also called when t
// ends) and done gets what ServeConn returned.
func serveListening(t *testing.T) (c *pipeConn, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
	c = &pipeConn{in: make(chan []byte, 8), out: make(chan string, 8)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	served := make(chan error, 1)
	go func() { served <- e.ServeConn(ctx, c) }()
	c.in <- []byte(listenReq("4", `{"toolsListChanged":true}`))
	equalJSON(t, c.recv(t), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":4},"notifications":{"toolsListChanged":true}}}`)
	return c, cancel, served
}

// On a connection, a graceful stop (the serve context cancelled) is the
// server ending the subscription: it answers the listen request with the
// completion result, the last message, before ServeConn returns.
func TestListenCompletesOnGracefulStop(t *testing.T) {
	c, cancel, done := serveListening(t)
	cancel()
	equalJSON(t, c.recv(t), listenDone("4"))
	if err := testtools.Recv(t, done, 5*time.Second, "ServeConn did not return after a graceful stop"); err != nil {
		t.Fatalf("ServeConn: %v", err)
	}
	select {
	case m := <-c.out:
		t.Fatalf("after the completion result: %s", m)
	default:
	}
}

// The peer going away (EOF) ends the subscription without a response:
// that is a transport drop, not the server ending it.
func TestListenNoResponseWhenPeerGone(t *testing.T) {
	c, cancel, done := serveListening(t)
	close(c.in)
	if err := testtools.Recv(t, done, 5*time.Second, "ServeConn did not return after EOF"); err != nil {
		t.Fatalf("ServeConn: %v", err)
	}
	cancel() // a stop after the peer went away changes nothing
	select {
	case m := <-c.out:
		t.Fatalf("after EOF: %s", m)
	default:
	}
}

// A listen stream gets tools/list_changed only when the list its own
// client sees changed (Options.Visibility).
func TestListenListChangedPerVisibleList(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Visibility: hexmcp.Visibility{
		Tool: func(_ context.Context, v *hexmcp.Viewer, tl *domain.Tool) bool {
			return !strings.HasPrefix(tl.Name, "admin") || v.Client.Name == "admin"
		},
	}}, addTool())
	meta := func(client string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"` + client + `","version":"1"}}`
	}
	user, admin := serve(t, e), serve(t, e)
	for name, c := range map[string]*client{"user": user, "admin": admin} {
		c.send(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + meta(name) + `,"notifications":{"toolsListChanged":true}}}`)
		c.recv() // acknowledged
	}
	if err := e.AddTool(hexmcp.NewTool(func() string { return "x" }, hexmcp.WithName("admin_only"))); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, admin.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`)
	user.expectNothing()
	if err := e.AddTool(hexmcp.NewTool(func() string { return "y" }, hexmcp.WithName("everyone"))); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, user.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`)
	equalJSON(t, admin.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`)
}
