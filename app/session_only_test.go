package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/app"
)

// sessionOnlyTools try what only a handshake-era session offers, and
// return what they got.
func sessionOnlyTools() []app.Tool {
	noop := func(context.Context, json.RawMessage) (any, error) { return "", nil }
	return []app.Tool{
		app.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
			bad := rc.AddSessionTool(app.NewRawTool("bad name!", json.RawMessage(`{"type":"object"}`), noop))
			good := rc.AddSessionTool(app.NewRawTool("mine", json.RawMessage(`{"type":"object"}`), noop))
			return fmt.Sprintf("bad: %v | good: %v | no session: %t", bad, good, errors.Is(good, app.ErrNoSession)), nil
		}, app.WithName("add_own")),
		app.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
			notify, err := rc.NotifyElicitationComplete()
			return fmt.Sprintf("notifier: %t | %v", notify != nil, err), nil
		}, app.WithName("notifier")),
	}
}

// AddSessionTool checks the definition it is given as AddTool does, and
// needs a handshake-era session; NotifyElicitationComplete needs a
// handshake-era session of a revision with URL-mode elicitation.
func TestSessionOnlyRequestContext(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, sessionOnlyTools()...)
	text := func(resp string) string {
		t.Helper()
		var r struct {
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(resp), &r); err != nil || len(r.Result.Content) != 1 {
			t.Fatalf("not a tool result: %s", resp)
		}
		return r.Result.Content[0].Text
	}
	session := serve(t, e)
	session.initialize("2025-11-25")
	// The session's list changed (the notification comes before the
	// response).
	session.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_own","arguments":{}}}`)
	equalJSON(t, session.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	if got, want := text(session.recv()),
		`bad: invalid tool "bad name!": tool name has character ' ' at 3; only A-Z a-z 0-9 _ - . are allowed | good: <nil> | no session: false`; got != want {
		t.Fatalf("handshake era:\n got %s\nwant %s", got, want)
	}
	if got := text(session.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notifier","arguments":{}}}`)); got != "notifier: true | <nil>" {
		t.Fatalf("2025-11-25 session: %s", got)
	}

	old := serve(t, e)
	old.initialize("2025-06-18")
	if got := text(old.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notifier","arguments":{}}}`)); got != "notifier: false | hexmcp: protocol revision 2025-06-18 has no URL-mode elicitation" {
		t.Fatalf("2025-06-18 session: %s", got)
	}

	stateless := serve(t, e)
	if got := text(stateless.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add_own","arguments":{},` + metaCaps(`{}`) + `}}`)); got !=
		`bad: hexmcp: the request has no session | good: hexmcp: the request has no session | no session: true` {
		t.Fatalf("stateless era: %s", got)
	}
	if got := text(stateless.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"notifier","arguments":{},` + metaCaps(`{}`) + `}}`)); got !=
		"notifier: false | hexmcp: notifications/elicitation/complete needs a handshake-era session" {
		t.Fatalf("stateless era: %s", got)
	}
}
