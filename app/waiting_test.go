package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// askTool is "ask": it asks the client for a name and answers with the
// action; its pad argument makes a call as large as a test needs.
func askTool() hexmcp.Tool {
	return hexmcp.Func(func(ctx context.Context, in struct {
		Pad string `json:"pad"`
	}) (string, error) {
		res, err := app.RequestFrom(ctx).Elicit(ctx, "user_name", hexmcp.ElicitForm("What is your name?", json.RawMessage(testtools.NameSchema)))
		if err != nil {
			return "", err
		}
		return "answered " + string(res.Action), nil
	}, hexmcp.WithName("ask"))
}

func askCall(id, pad int) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"ask","arguments":{"pad":"` + strings.Repeat("p", pad) + `"}}}`
}

// waitLimit reads the answer to a call refused for the bounds of the calls
// waiting for the client and returns its id and data.limit.
func waitLimit(t *testing.T, raw string) (id int, limit string) {
	t.Helper()
	var m struct {
		ID    int `json:"id"`
		Error *struct {
			Code int `json:"code"`
			Data struct {
				Limit string `json:"limit"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m.Error == nil || m.Error.Code != domain.CodeInternalError {
		t.Fatalf("want a -32603 error naming the limit, got %s", raw)
	}
	return m.ID, m.Error.Data.Limit
}

// askEach sends call i (of pad bytes) on c and checks that it asks; it
// returns the server request's id.
func askEach(t *testing.T, c *client, i, pad int) string {
	t.Helper()
	c.send(askCall(i, pad))
	id, method, _ := serverRequest(t, c.recv())
	if method != "elicitation/create" {
		t.Fatalf("call %d: server request %s", i, method)
	}
	return id
}

// The calls of one client waiting for its answers are bounded in bytes,
// across its connections: past MaxWaitingBytesPerClient a call does not ask
// (it is answered with -32603 naming the limit), the connection goes on,
// another client is not touched, and once a waiting call is answered
// another may wait.
func TestWaitingCallsBoundedPerClient(t *testing.T) {
	e := newEngine(t, app.Options{MaxWaitingBytesPerClient: 300 << 10, Validator: jsonschema.New()}, askTool())
	one := hexmcp.TransportInfo{RemoteAddr: "192.0.2.1:1000"}
	a, b := serveAs(t, e, one), serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "192.0.2.1:1001"})
	other := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "192.0.2.9:1000"})
	for _, c := range []*client{a, b, other} {
		initializeWith(c, "2025-11-25", `{"elicitation":{}}`)
	}
	first := askEach(t, a, 1, 100<<10)
	askEach(t, b, 2, 100<<10)
	// 200 KiB of the client's calls wait: a third of 128 KiB does not fit
	// in 300 KiB, on either of its connections.
	a.send(askCall(3, 128<<10))
	if id, limit := waitLimit(t, a.recv()); id != 3 || limit != "maxWaitingBytesPerClient" {
		t.Fatalf("call %d refused for %q, want call 3 for maxWaitingBytesPerClient", id, limit)
	}
	equalJSON(t, a.roundTrip(ping), pingResp)
	// Another client's calls wait.
	askEach(t, other, 4, 128<<10)
	askEach(t, other, 5, 128<<10)
	// An answer gives its call's bytes back: the next call may wait.
	a.send(`{"jsonrpc":"2.0","id":` + first + `,"result":{"action":"decline"}}`)
	equalJSON(t, a.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"answered decline"}]}}`)
	askEach(t, b, 6, 128<<10)
}

// Each waiting call counts at least MinWaitingCallBytes: small calls are
// bounded in number.
func TestWaitingCallsCountAtLeastTheMinimum(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{MaxWaitingBytesPerClient: 3 * app.MinWaitingCallBytes, Validator: jsonschema.New()}, askTool()))
	initializeWith(c, "2025-11-25", `{"elicitation":{}}`)
	for i := 1; i <= 3; i++ {
		askEach(t, c, i, 0)
	}
	c.send(askCall(4, 0))
	if id, limit := waitLimit(t, c.recv()); id != 4 || limit != "maxWaitingBytesPerClient" {
		t.Fatalf("call %d refused for %q, want call 4 for maxWaitingBytesPerClient", id, limit)
	}
}

// MaxWaitingBytes bounds every client's waiting calls together.
func TestWaitingCallsBoundedInTotal(t *testing.T) {
	e := newEngine(t, app.Options{MaxWaitingBytes: 2 * app.MinWaitingCallBytes, Validator: jsonschema.New()}, askTool())
	var cs []*client
	for i := range 3 {
		c := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "192.0.2." + strconv.Itoa(i+1) + ":1000"})
		initializeWith(c, "2025-11-25", `{"elicitation":{}}`)
		cs = append(cs, c)
	}
	askEach(t, cs[0], 1, 0)
	askEach(t, cs[1], 2, 0)
	cs[2].send(askCall(3, 0))
	if id, limit := waitLimit(t, cs[2].recv()); id != 3 || limit != "maxWaitingBytes" {
		t.Fatalf("call %d refused for %q, want call 3 for maxWaitingBytes", id, limit)
	}
}

// With the bounds off by name, the calls waiting may take any bytes.
func TestWaitingCallsUnlimited(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{MaxWaitingBytesPerClient: hexmcp.Unlimited, MaxWaitingBytes: hexmcp.Unlimited, MaxInFlightBytesPerConn: hexmcp.Unlimited, Validator: jsonschema.New()}, askTool()))
	initializeWith(c, "2025-11-25", `{"elicitation":{}}`)
	for i := 1; i <= 5; i++ {
		askEach(t, c, i, 4<<20)
	}
}

// A call waiting for the answer of a client that goes away ends at once
// with ErrClientGone (not at ClientRequestTimeout), and ServeConn returns.
func TestWaitingCallEndsWhenTheClientGoes(t *testing.T) {
	got := make(chan error, 1)
	tool := hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		_, err := rc.Elicit(ctx, "user_name", hexmcp.ElicitForm("What is your name?", json.RawMessage(testtools.NameSchema)))
		got <- err
		return "", err
	}, hexmcp.WithName("ask_once"))
	e := newEngine(t, app.Options{ClientRequestTimeout: time.Hour, Validator: jsonschema.New()}, tool)
	c, s := memory.NewPipe()
	done := make(chan error, 1)
	go func() { done <- e.ServeConn(context.Background(), s) }()
	cl := &client{t: t, pipe: c, done: done}
	initializeWith(cl, "2025-11-25", `{"elicitation":{}}`)
	cl.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_once","arguments":{}}}`)
	if _, method, _ := serverRequest(t, cl.recv()); method != "elicitation/create" {
		t.Fatalf("server request %s", method)
	}
	c.Close()
	if err := testtools.Recv(t, got, 10*time.Second, "the waiting call did not end when its client went away"); !errors.Is(err, hexmcp.ErrClientGone) {
		t.Fatalf("the waiting call got %v, want ErrClientGone", err)
	}
	testtools.Recv(t, done, 10*time.Second, "ServeConn did not return")
}
