// Tests that make a change of behaviour visible where the package's own
// tests let one pass (issue 19: small faults planted one at a time lived
// through them). Each test says what it guards, over the wire where it can
// (an in-memory connection), through the exported API otherwise.
package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/serving"
	"github.com/hexmcp/hexmcp/ports"
)

// describeAnswer tells, as a tool's text, what a shortcut of Ask returned:
// the answer, or the client's error.
func describeAnswer[T any](v *T, err error, show func(*T) string) string {
	var ce *hexmcp.ClientError
	switch {
	case errors.As(err, &ce):
		return fmt.Sprintf("client error %d on %s", ce.Code, ce.Method)
	case err != nil:
		return "error: " + err.Error()
	case v == nil:
		return "no answer and no error"
	}
	return show(v)
}

// shortcutTools are tools that ask through the shortcuts of Ask
// (ListRoots, CreateMessage): each returns what it got.
func shortcutTools() []hexmcp.Tool {
	return []hexmcp.Tool{
		hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
			res, err := rc.ListRoots(ctx, "roots")
			return describeAnswer(res, err, func(r *domain.ListRootsResult) string {
				uris := make([]string, 0, len(r.Roots))
				for _, root := range r.Roots {
					uris = append(uris, root.URI)
				}
				return "roots: " + strings.Join(uris, " ")
			}), nil
		}, hexmcp.WithName("list_roots")),
		hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
			res, err := rc.CreateMessage(ctx, "completion", domain.CreateMessageParams{
				Messages: []domain.SamplingMessage{hexmcp.UserText("Say hi")}, MaxTokens: 10})
			return describeAnswer(res, err, func(r *domain.CreateMessageResult) string {
				return "sampled: " + r.Text()
			}), nil
		}, hexmcp.WithName("sample")),
	}
}

// The shortcuts of Ask hand the handler the client's answer, and the
// client's error as an error (never a nil answer without an error, nor an
// answer for an error).
func TestAskShortcutsReturnAnswerOrError(t *testing.T) {
	for _, tc := range []struct {
		tool, method, answer, want string
	}{
		{"list_roots", "roots/list", `"result":{"roots":[{"uri":"file:///a"},{"uri":"file:///b","name":"b"}]}`,
			"roots: file:///a file:///b"},
		{"list_roots", "roots/list", `"error":{"code":-1,"message":"no roots today"}`,
			"client error -1 on roots/list"},
		{"sample", "sampling/createMessage", `"result":{"role":"assistant","content":{"type":"text","text":"Hi"},"model":"m"}`,
			"sampled: Hi"},
		{"sample", "sampling/createMessage", `"error":{"code":-1,"message":"User rejected sampling request"}`,
			"client error -1 on sampling/createMessage"},
	} {
		t.Run(tc.tool+" "+strings.Split(tc.answer, `"`)[1], func(t *testing.T) {
			c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, shortcutTools()...))
			initializeWith(c, "2025-11-25", `{"roots":{},"sampling":{}}`)
			c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tc.tool + `","arguments":{}}}`)
			id, method, _ := serverRequest(t, c.recv())
			if method != tc.method {
				t.Fatalf("the server asked %s, want %s", method, tc.method)
			}
			c.send(`{"jsonrpc":"2.0","id":` + id + `,` + tc.answer + `}`)
			equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+tc.want+`"}]}}`)
		})
	}
}

// A shortcut of Ask whose question the client cannot answer (no roots
// capability) fails before asking, with the error Ask returns.
func TestAskShortcutMissingCapability(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, shortcutTools()...))
	initializeWith(c, "2025-11-25", `{"sampling":{}}`)
	got := toolText(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_roots","arguments":{}}}`))
	if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, "roots") {
		t.Fatalf("ListRoots without the roots capability: %q, want the missing capability error", got)
	}
}

// toolText is the text of a tool result's one content block.
func toolText(t *testing.T, resp string) string {
	t.Helper()
	var r struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(resp), &r); err != nil || len(r.Result.Content) != 1 {
		t.Fatalf("not a tool result of one block: %s", resp)
	}
	return r.Result.Content[0].Text
}

// staffPrompt is a prompt with a completable argument, named name.
func staffPrompt(name string) hexmcp.Prompt {
	return hexmcp.NewPrompt(name, func(_ context.Context, args map[string]string) (*domain.GetPromptResult, error) {
		return &domain.GetPromptResult{Messages: []domain.PromptMessage{hexmcp.UserMessage(hexmcp.Text("for " + args["team"]))}}, nil
	}, hexmcp.WithArgument(domain.PromptArgument{Name: "team"}, func(context.Context, string, map[string]string) ([]string, error) {
		return []string{"ops"}, nil
	}))
}

// initializeAs initializes c's session at 2025-11-25 as the client name.
func initializeAs(c *client, name string) {
	c.t.Helper()
	c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// A Visibility.Prompt filter hides a prompt from those it refuses: absent
// from prompts/list, unknown to prompts/get and completion/complete, and
// its arrival announces no list change to them; those it admits see it.
func TestPromptVisibilityFilter(t *testing.T) {
	e := newEngine(t, app.Options{
		Validator:      jsonschema.New(),
		PromptRegistry: memory.NewPromptRegistry(),
		Visibility: hexmcp.Visibility{Prompt: func(_ context.Context, v *hexmcp.Viewer, p *domain.Prompt) bool {
			return strings.HasPrefix(p.Name, "open") || v.Client.Name == "staff"
		}},
	})
	if err := e.AddPrompts(staffPrompt("open"), staffPrompt("staff_only")); err != nil {
		t.Fatal(err)
	}
	guest, staff := serve(t, e), serve(t, e)
	initializeAs(guest, "guest")
	initializeAs(staff, "staff")

	equalJSON(t, guest.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"open","arguments":[{"name":"team"}]}]}}`)
	equalJSON(t, staff.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"open","arguments":[{"name":"team"}]},{"name":"staff_only","arguments":[{"name":"team"}]}]}}`)

	get := `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"staff_only","arguments":{"team":"ops"}}}`
	equalJSON(t, guest.roundTrip(get),
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: unknown prompt \"staff_only\"","data":{"name":"staff_only"}}}`)
	equalJSON(t, staff.roundTrip(get),
		`{"jsonrpc":"2.0","id":2,"result":{"messages":[{"role":"user","content":{"type":"text","text":"for ops"}}]}}`)

	complete := `{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"staff_only"},"argument":{"name":"team","value":"o"}}}`
	equalJSON(t, guest.roundTrip(complete),
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: unknown prompt \"staff_only\"","data":{"name":"staff_only"}}}`)
	equalJSON(t, staff.roundTrip(complete),
		`{"jsonrpc":"2.0","id":3,"result":{"completion":{"values":["ops"]}}}`)
	// A prompt that does not exist is unknown to all, the filter unasked.
	equalJSON(t, staff.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"team","value":"o"}}}`),
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: unknown prompt \"nope\"","data":{"name":"nope"}}}`)

	// A prompt only staff sees: staff's list changed, the guest's did not.
	if err := e.AddPrompt(staffPrompt("staff_two")); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, staff.recv(), `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
	guest.expectNothing()
	// One both see: both hear of it.
	if err := e.AddPrompt(staffPrompt("open_two")); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, staff.recv(), `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
	equalJSON(t, guest.recv(), `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
}

// A Visibility.Resource filter decides per viewer: the resources and
// templates it hides from one client are unknown to that client's
// resources/read, and read as usual by a client it admits.
func TestResourceVisibilityByViewer(t *testing.T) {
	e := newEngine(t, app.Options{
		Validator:        jsonschema.New(),
		ResourceRegistry: memory.NewResourceRegistry(),
		Visibility: hexmcp.Visibility{Resource: func(_ context.Context, v *hexmcp.Viewer, uri string) bool {
			return !strings.HasPrefix(uri, "test://staff") || v != nil && v.Client.Name == "staff"
		}},
	})
	err := e.AddResources(
		hexmcp.TextResource("test://open", "open", "for all"),
		hexmcp.TextResource("test://staff", "staff", "for staff"),
		hexmcp.NewResourceTemplate("test://staff/{id}", "staff item", func(_ context.Context, uri string, vars map[string]string) ([]domain.ResourceContents, error) {
			return []domain.ResourceContents{{URI: uri, Text: "item " + vars["id"]}}, nil
		}, hexmcp.WithTemplateCompleter("id", func(context.Context, string, map[string]string) ([]string, error) { return []string{"42"}, nil })))
	if err != nil {
		t.Fatal(err)
	}
	guest, staff := serve(t, e), serve(t, e)
	initializeAs(guest, "guest")
	initializeAs(staff, "staff")
	read := func(id, uri string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"resources/read","params":{"uri":"` + uri + `"}}`
	}
	for _, c := range []*client{guest, staff} {
		equalJSON(t, c.roundTrip(read("1", "test://open")),
			`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"test://open","mimeType":"text/plain","text":"for all"}]}}`)
	}
	equalJSON(t, staff.roundTrip(read("2", "test://staff")),
		`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"test://staff","mimeType":"text/plain","text":"for staff"}]}}`)
	equalJSON(t, staff.roundTrip(read("3", "test://staff/42")),
		`{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"test://staff/42","text":"item 42"}]}}`)
	unknown := guest.roundTrip(read("4", "test://nothing"))
	for _, uri := range []string{"test://staff", "test://staff/42"} {
		got := guest.roundTrip(read("4", uri))
		if want := strings.ReplaceAll(unknown, "test://nothing", uri); got != want {
			t.Fatalf("guest reads %s:\n got %s\nwant %s (as an unknown URI)", uri, got, want)
		}
	}
	// completion/complete knows the hidden template only for those it admits.
	complete := `{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"test://staff/{id}"},"argument":{"name":"id","value":"4"}}}`
	equalJSON(t, guest.roundTrip(complete),
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params: unknown resource template \"test://staff/{id}\"","data":{"uri":"test://staff/{id}"}}}`)
	equalJSON(t, staff.roundTrip(complete), `{"jsonrpc":"2.0","id":5,"result":{"completion":{"values":["42"]}}}`)
}

// A tool or resource that declares scopes (WithScopes) is served to a
// principal granted all of them, and refused with -32052, naming those
// missing, to one that lacks any, and to a request with no principal.
func TestScopesRefuseWhatThePrincipalLacks(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), ResourceRegistry: memory.NewResourceRegistry()},
		hexmcp.NewTool(func(context.Context) (string, error) { return "written", nil },
			hexmcp.WithName("write"), hexmcp.WithScopes("files:read", "files:write")))
	if err := e.AddResource(hexmcp.TextResource("test://secret", "secret", "s3cr3t", hexmcp.WithScopes("files:read"))); err != nil {
		t.Fatal(err)
	}
	const (
		call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{}}}`
		read = `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://secret"}}`
	)
	for _, tc := range []struct {
		name            string
		principal       *ports.Principal
		wantCall, wantR string
	}{
		{"granted all", &ports.Principal{Subject: "u", Scopes: []string{"files:write", "files:read", "other"}},
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"written"}]}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"test://secret","mimeType":"text/plain","text":"s3cr3t"}]}}`},
		{"lacks one", &ports.Principal{Subject: "u", Scopes: []string{"files:read"}},
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32052,"message":"Insufficient scope: needs files:write","data":{"scopes":["files:read","files:write"],"missing":["files:write"]}}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"test://secret","mimeType":"text/plain","text":"s3cr3t"}]}}`},
		{"no principal", nil,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32052,"message":"Insufficient scope: needs files:read files:write","data":{"scopes":["files:read","files:write"],"missing":["files:read","files:write"]}}}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32052,"message":"Insufficient scope: needs files:read","data":{"scopes":["files:read"],"missing":["files:read"]}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := serveAs(t, e, hexmcp.TransportInfo{Principal: tc.principal})
			c.initialize("2025-11-25")
			equalJSON(t, c.roundTrip(call), tc.wantCall)
			equalJSON(t, c.roundTrip(read), tc.wantR)
		})
	}
}

// WithAnnotations gives a tool its domain.ToolAnnotations and a resource
// its domain.Annotations, listed as given; the other kind is refused when
// the definition is added.
func TestWithAnnotations(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), ResourceRegistry: memory.NewResourceRegistry()},
		hexmcp.NewTool(func(context.Context) (string, error) { return "", nil }, hexmcp.WithName("look"),
			hexmcp.WithAnnotations(domain.ToolAnnotations{Title: "Look", ReadOnlyHint: hexmcp.Bool(true)})))
	priority := 0.5
	if err := e.AddResource(hexmcp.TextResource("test://a", "a", "x",
		hexmcp.WithAnnotations(domain.Annotations{Audience: []string{"user"}, Priority: &priority}))); err != nil {
		t.Fatal(err)
	}
	c := serve(t, e)
	c.initialize("2025-11-25")
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"look","inputSchema":{"type":"object","properties":{}},"annotations":{"title":"Look","readOnlyHint":true}}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`),
		`{"jsonrpc":"2.0","id":2,"result":{"resources":[{"uri":"test://a","name":"a","mimeType":"text/plain","annotations":{"audience":["user"],"priority":0.5}}]}}`)

	err := e.AddTool(hexmcp.NewTool(func(context.Context) (string, error) { return "", nil }, hexmcp.WithName("wrong"),
		hexmcp.WithAnnotations(domain.Annotations{Audience: []string{"user"}})))
	if err == nil || !strings.Contains(err.Error(), "domain.ToolAnnotations") {
		t.Fatalf("a tool with domain.Annotations: %v, want an error naming domain.ToolAnnotations", err)
	}
	err = e.AddResource(hexmcp.TextResource("test://b", "b", "x", hexmcp.WithAnnotations(domain.ToolAnnotations{Title: "B"})))
	if err == nil || !strings.Contains(err.Error(), "domain.Annotations") {
		t.Fatalf("a resource with domain.ToolAnnotations: %v, want an error naming domain.Annotations", err)
	}
}

// sessionOnlyTools try what only a handshake-era session offers, and
// return what they got.
func sessionOnlyTools() []hexmcp.Tool {
	noop := func(context.Context, json.RawMessage) (any, error) { return "", nil }
	return []hexmcp.Tool{
		hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
			bad := rc.AddSessionTool(hexmcp.NewRawTool("bad name!", json.RawMessage(`{"type":"object"}`), noop))
			good := rc.AddSessionTool(hexmcp.NewRawTool("mine", json.RawMessage(`{"type":"object"}`), noop))
			return fmt.Sprintf("bad: %v | good: %v | no session: %t", bad, good, errors.Is(good, hexmcp.ErrNoSession)), nil
		}, hexmcp.WithName("add_own")),
		hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
			return fmt.Sprintf("removed: %t", rc.RemoveSessionTool("mine")), nil
		}, hexmcp.WithName("drop_own")),
		hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
			notify, err := rc.NotifyElicitationComplete()
			return fmt.Sprintf("notifier: %t | %v", notify != nil, err), nil
		}, hexmcp.WithName("notifier")),
	}
}

// AddSessionTool checks the definition it is given as AddTool does, and
// needs a handshake-era session; NotifyElicitationComplete needs a
// handshake-era session of a revision with URL-mode elicitation.
func TestSessionOnlyRequestContext(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, sessionOnlyTools()...)
	session := serve(t, e)
	session.initialize("2025-11-25")
	// The session's list changed (the notification comes before the
	// response).
	session.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_own","arguments":{}}}`)
	equalJSON(t, session.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	if got, want := toolText(t, session.recv()),
		`bad: hexmcp: invalid tool "bad name!": tool name has character ' ' at 3; only A-Z a-z 0-9 _ - . are allowed | good: <nil> | no session: false`; got != want {
		t.Fatalf("handshake era:\n got %s\nwant %s", got, want)
	}
	if got := toolText(t, session.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notifier","arguments":{}}}`)); got != "notifier: true | <nil>" {
		t.Fatalf("2025-11-25 session: %s", got)
	}
	// A stateless-era request on the session's connection has no session:
	// it removes nothing of the session's.
	if got := toolText(t, session.roundTrip(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"drop_own","arguments":{},`+metaCaps(`{}`)+`}}`)); got != "removed: false" {
		t.Fatalf("stateless era on the session's connection: %s", got)
	}
	session.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"drop_own","arguments":{}}}`)
	equalJSON(t, session.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	if got := toolText(t, session.recv()); got != "removed: true" {
		t.Fatalf("handshake era: %s", got)
	}

	old := serve(t, e)
	old.initialize("2025-06-18")
	if got := toolText(t, old.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notifier","arguments":{}}}`)); got != "notifier: false | hexmcp: protocol revision 2025-06-18 has no URL-mode elicitation" {
		t.Fatalf("2025-06-18 session: %s", got)
	}

	stateless := serve(t, e)
	if got := toolText(t, stateless.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add_own","arguments":{},`+metaCaps(`{}`)+`}}`)); got !=
		`bad: hexmcp: the request has no session | good: hexmcp: the request has no session | no session: true` {
		t.Fatalf("stateless era: %s", got)
	}
	if got := toolText(t, stateless.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"notifier","arguments":{},`+metaCaps(`{}`)+`}}`)); got !=
		"notifier: false | hexmcp: notifications/elicitation/complete needs a handshake-era session" {
		t.Fatalf("stateless era: %s", got)
	}
}

// A middleware that replaces what next answered is heard, even when its
// result is as long as the engine's; one that passes it on unchanged
// answers the engine's result.
func TestMiddlewareReplacesTheResult(t *testing.T) {
	rewrite := func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, req *app.Request) (json.RawMessage, error) {
			res, err := next(ctx, req)
			if err != nil || req.Method != "tools/call" || req.Name != "add" {
				return res, err
			}
			// The same length, another buffer: 3 becomes 7.
			return bytes.Replace(res, []byte(`"text":"3"`), []byte(`"text":"7"`), 1), nil
		}
	}
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{rewrite}}, addTool())
	c := serve(t, e)
	c.initialize("2025-11-25")
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"7"}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":2}}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"4"}]}}`)
	equalJSON(t, c.roundTrip(ping), pingResp)
}

// A middleware that passes the engine's answer on unchanged sends the
// engine's bytes as they are, in both eras: the stateless result's
// members keep the engine's order (no decoding and encoding again).
func TestMiddlewarePassesTheEnginesBytes(t *testing.T) {
	pass := func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, req *app.Request) (json.RawMessage, error) { return next(ctx, req) }
	}
	plain := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, addTool()))
	through := serve(t, newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{pass}}, addTool()))
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	want := plain.roundTrip(call)
	if got := through.roundTrip(call); got != want {
		t.Fatalf("through a pass-through middleware:\n got %s\nwant %s", got, want)
	}
	if strings.Index(want, `"content"`) > strings.Index(want, `"_meta"`) {
		t.Fatalf("the engine's own order has content after _meta, so this test sees no reordering: %s", want)
	}
	plain.initialize("2025-11-25")
	through.initialize("2025-11-25")
	call = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`
	if want, got := plain.roundTrip(call), through.roundTrip(call); got != want {
		t.Fatalf("handshake era, through a pass-through middleware:\n got %s\nwant %s", got, want)
	}
}

// Run serves until the transport ends and then returns; Run (or Start) of
// a server already started returns ErrAlreadyStarted at once.
func TestServerRunUntilTheTransportEnds(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
	tr, cl := memory.NewTransport()
	srv := serving.New(e, tr)
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(context.Background()) }()
	c := &client{t: t, pipe: cl}
	c.initialize("2025-11-25")
	equalJSON(t, c.roundTrip(ping), pingResp)
	select {
	case err := <-ran:
		t.Fatalf("Run returned %v while its transport was open", err)
	default:
	}

	again := make(chan error, 1)
	go func() { again <- srv.Run(context.Background()) }()
	if err := awaitErr(t, again, "a second Run"); !errors.Is(err, serving.ErrAlreadyStarted) {
		t.Fatalf("a second Run = %v, want ErrAlreadyStarted", err)
	}
	if err := srv.Start(context.Background()); !errors.Is(err, serving.ErrAlreadyStarted) {
		t.Fatalf("Start of a running server = %v, want ErrAlreadyStarted", err)
	}

	cl.Close()
	if err := awaitErr(t, ran, "Run after its transport ended"); err != nil {
		t.Fatalf("Run = %v after the client closed", err)
	}
	select {
	case <-srv.Done():
	default:
		t.Fatal("Done is not closed after Run returned")
	}
}

// awaitErr waits for what sends on ch (failing the test after 10 s: a
// bound on the wait, not a measure).
func awaitErr(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
	}
	return nil
}

// Two request ids that are the same number, however written (1234567 and
// 1.234567e6, 100 and 1e2), are one id: a second request with it while the
// first is in flight is refused, and a cancellation that names it in
// another form cancels the first.
func TestSameNumberIsSameID(t *testing.T) {
	for _, tc := range []struct{ first, second string }{
		{"1234567", "1.234567e6"}, {"1234567", "1234567.0"}, {"10000000", "1e7"},
		{"123456", "123456.0"}, {"100", "1e2"}, {"7", "7.0"}, {"-5", "-5e0"}, {"-0", "-0.0"},
	} {
		t.Run(tc.first+" "+tc.second, func(t *testing.T) {
			release := make(chan struct{})
			block := blockTool("block", "released", release)
			c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, block))
			c.initialize("2025-11-25")
			c.send(`{"jsonrpc":"2.0","id":` + tc.first + `,"method":"tools/call","params":{"name":"block"}}`)
			resp := c.roundTrip(`{"jsonrpc":"2.0","id":` + tc.second + `,"method":"tools/call","params":{"name":"block"}}`)
			if !strings.Contains(resp, "a request with this id is already in progress") {
				t.Fatalf("id %s while %s is in flight: %s", tc.second, tc.first, resp)
			}
			// Cancelled by the other form: no response comes for it.
			c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + tc.second + `}}`)
			equalJSON(t, c.roundTrip(ping), pingResp)
			close(release)
			c.expectNothing()
			// The id is free again.
			c.send(`{"jsonrpc":"2.0","id":` + tc.second + `,"method":"tools/call","params":{"name":"block"}}`)
			equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":`+tc.second+`,"result":{"content":[{"type":"text","text":"released"}]}}`)
		})
	}
}
