package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

const nameSchema = testtools.NameSchema

// askAll asks three questions at once.
func askAll() hexmcp.Tool {
	return hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		res, err := rc.Ask(ctx,
			hexmcp.ElicitInput("user_name", hexmcp.ElicitForm("Name?", json.RawMessage(nameSchema))),
			hexmcp.SamplingInput("greeting", domain.CreateMessageParams{Messages: []domain.SamplingMessage{hexmcp.UserText("Greet")}, MaxTokens: 50}),
			hexmcp.RootsInput("client_roots"))
		if err != nil {
			return "", err
		}
		e, _ := res.Elicitation("user_name")
		s, _ := res.Sampling("greeting")
		r, _ := res.Roots("client_roots")
		return fmt.Sprintf("%s|%s|%d roots", e.Content, s.Text(), len(r.Roots)), nil
	}, hexmcp.WithName("ask_all"))
}

// twoSteps asks one question, then another.
func twoSteps() hexmcp.Tool {
	return hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext, in struct {
		Topic string `json:"topic,omitempty"`
	}) (string, error) {
		first, err := rc.Elicit(ctx, "step1", hexmcp.ElicitForm("Step 1: name?", json.RawMessage(nameSchema)))
		if err != nil {
			return "", err
		}
		second, err := rc.Elicit(ctx, "step2", hexmcp.ElicitForm("Step 2: color?",
			json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)))
		if err != nil {
			return "", err
		}
		return string(first.Content) + " " + string(second.Content), nil
	}, hexmcp.WithName("two_steps"))
}

func inputEngine(t *testing.T, opts app.Options) *app.Engine {
	t.Helper()
	opts.Validator = jsonschema.New()
	e := newEngine(t, opts, testtools.AskName(), askAll(), twoSteps())
	return e
}

func initializeWith(c *client, rev, caps string) {
	c.t.Helper()
	c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + rev + `","capabilities":` + caps + `,"clientInfo":{"name":"test","version":"1"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// serverRequest reads a server request and returns its id, method and params.
func serverRequest(t *testing.T, raw string) (id, method string, params map[string]any) {
	t.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params map[string]any  `json:"params"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m.ID == nil || m.Method == "" {
		t.Fatalf("not a server request: %s", raw)
	}
	return string(m.ID), m.Method, m.Params
}

func TestElicitationHandshake(t *testing.T) {
	c := serve(t, inputEngine(t, app.Options{Validator: jsonschema.New()}))
	initializeWith(c, "2025-11-25", `{"elicitation":{}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}`)
	id, method, params := serverRequest(t, c.recv())
	if method != "elicitation/create" || params["message"] != "What is your name?" {
		t.Fatalf("request: %s %v", method, params)
	}
	if _, ok := params["mode"]; ok {
		t.Fatalf("form mode is the default and left out: %v", params)
	}
	b, _ := json.Marshal(params["requestedSchema"])
	equalJSON(t, string(b), nameSchema)
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}`)

	// Declined: the handler sees it.
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}`)
	id, _, _ = serverRequest(t, c.recv())
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"decline"}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"The user said decline."}]}}`)

	// An answer that does not match the requested schema is -32602.
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}`)
	id, _, _ = serverRequest(t, c.recv())
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"accept","content":{"name":5}}}`)
	if resp := c.recv(); !strings.Contains(resp, `"code":-32602`) || !strings.Contains(resp, `does not match the requested schema`) {
		t.Fatalf("invalid answer: %s", resp)
	}

	// A client error reaches the handler as *hexmcp.ClientError.
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}`)
	id, _, _ = serverRequest(t, c.recv())
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-1,"message":"User rejected"}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"client error -1 on elicitation/create: User rejected"}]}}`)

	// A response to nothing is dropped quietly.
	c.send(`{"jsonrpc":"2.0","id":999,"result":{}}`)
	c.expectNothing()
}

func TestAskSeveralHandshake(t *testing.T) {
	c := serve(t, inputEngine(t, app.Options{Validator: jsonschema.New()}))
	initializeWith(c, "2025-06-18", `{"elicitation":{},"sampling":{},"roots":{}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_all","arguments":{}}}`)
	answers := map[string]string{
		"elicitation/create":     `{"action":"accept","content":{"name":"Ada"}}`,
		"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"Hi"},"model":"m","stopReason":"endTurn"}`,
		"roots/list":             `{"roots":[{"uri":"file:///a"},{"uri":"file:///b","name":"b"}]}`,
	}
	ids := map[string]bool{}
	for range 3 {
		id, method, _ := serverRequest(t, c.recv())
		if ids[id] {
			t.Fatalf("id %s used twice", id)
		}
		ids[id] = true
		a, ok := answers[method]
		if !ok {
			t.Fatalf("unexpected method %s", method)
		}
		delete(answers, method)
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"result":` + a + `}`)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"name\":\"Ada\"}|Hi|2 roots"}]}}`)
}

func TestMissingClientCapability(t *testing.T) {
	e := inputEngine(t, app.Options{Validator: jsonschema.New()})
	c := serve(t, e)
	initializeWith(c, "2025-11-25", `{"sampling":{}}`)
	resp := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}`)
	equalJSON(t, resp, `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Missing required client capability: elicitation","data":{"requiredCapabilities":{"elicitation":{}}}}}`)

	// 2025-03-26 has no elicitation, whatever the client declares.
	c2 := serve(t, e)
	initializeWith(c2, "2025-03-26", `{"elicitation":{}}`)
	resp = c2.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}`)
	if !strings.Contains(resp, `"code":-32021`) || !strings.Contains(resp, "not available in protocol revision 2025-03-26") {
		t.Fatalf("2025-03-26: %s", resp)
	}

	// Stateless: the capabilities of the request's _meta count.
	resp = c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_all","arguments":{},` + metaCaps(`{"elicitation":{}}`) + `}}`)
	equalJSON(t, resp, `{"jsonrpc":"2.0","id":2,"error":{"code":-32021,"message":"Missing required client capability: roots, sampling","data":{"requiredCapabilities":{"roots":{},"sampling":{}}}}}`)

	// url mode needs elicitation.url.
	e.AddTool(hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		_, err := rc.Elicit(ctx, "consent", hexmcp.ElicitURL("Open this", "https://example.com/consent", "el-1"))
		return "", err
	}, hexmcp.WithName("ask_url")))
	c.recv() // notifications/tools/list_changed

	// CanAsk checks the same rules without asking; a capability that is not
	// an object is not declared.
	e.AddTool(hexmcp.NewTool(func(rc *app.RequestContext) string {
		form := hexmcp.ElicitInput("k", hexmcp.ElicitForm("x", json.RawMessage(nameSchema)))
		url := hexmcp.ElicitInput("k", hexmcp.ElicitURL("x", "https://example.com", "e"))
		return fmt.Sprint(rc.CanAsk(form), rc.CanAsk(url), rc.CanAsk(hexmcp.RootsInput("r")))
	}, hexmcp.WithName("can_ask")))
	c.recv() // notifications/tools/list_changed
	for caps, want := range map[string]string{
		`{"elicitation":{}}`:                      "true false false",
		`{"elicitation":{"url":{}}}`:              "false true false",
		`{"elicitation":{"form":{},"url":{}}}`:    "true true false",
		`{"elicitation":{"form":true},"roots":1}`: "false false false",
		`{"roots":{}}`:                            "false false true",
	} {
		resp := c.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"can_ask","arguments":{},` + metaCaps(caps) + `}}`)
		if !strings.Contains(resp, `"text":"`+want+`"`) {
			t.Errorf("caps %s: got %s, want %q", caps, resp, want)
		}
	}
	resp = c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask_name","arguments":{},` + metaCaps(`{"elicitation":true}`) + `}}`)
	if !strings.Contains(resp, `"code":-32021`) {
		t.Fatalf("a non-object capability counted as declared: %s", resp)
	}
	resp = c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask_url","arguments":{},` + metaCaps(`{"elicitation":{"form":{}}}`) + `}}`)
	equalJSON(t, resp, `{"jsonrpc":"2.0","id":3,"error":{"code":-32021,"message":"Missing required client capability: elicitation.url","data":{"requiredCapabilities":{"elicitation":{"url":{}}}}}}`)

	// CanAsk weighs the revision as Ask does: a 2025-03-26 session has no
	// elicitation, whatever its client declared.
	c2.recv() // notifications/tools/list_changed (ask_url)
	c2.recv() // notifications/tools/list_changed (can_ask)
	resp = c2.roundTrip(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"can_ask","arguments":{}}}`)
	if !strings.Contains(resp, `"text":"false false false"`) {
		t.Fatalf("CanAsk at 2025-03-26 with elicitation declared: %s", resp)
	}
}

func TestCancellationBothWays(t *testing.T) {
	c := serve(t, inputEngine(t, app.Options{Validator: jsonschema.New()}))
	initializeWith(c, "2025-11-25", `{"elicitation":{}}`)
	c.send(`{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"ask_name","arguments":{}}}`)
	id, _, _ := serverRequest(t, c.recv())
	// The client cancels its call: the server cancels its own request.
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1"}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"the server no longer needs the answer"}}`)
	c.expectNothing() // no response to a cancelled call
	// A late answer is dropped.
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"cancel"}}`)
	c.expectNothing()
}

func TestClientRequestTimeout(t *testing.T) {
	ctrl := gomock.NewController(t)
	log := quietLogger(ctrl)
	log.EXPECT().LogAttrs(gomock.Any(), slog.LevelError, "hexmcp: tool failed", gomock.Any()).Times(1)
	c := serve(t, inputEngine(t, app.Options{Validator: jsonschema.New(), ClientRequestTimeout: 50 * time.Millisecond, Logger: log}))
	initializeWith(c, "2025-11-25", `{"elicitation":{}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}`)
	id, _, _ := serverRequest(t, c.recv())
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"the server stopped waiting for the answer"}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`)
}

// At the bound of concurrent requests, calls that wait for the client must
// not stop the connection from reading the answers.
func TestWaitingCallsAtTheBound(t *testing.T) {
	c := serve(t, inputEngine(t, app.Options{Validator: jsonschema.New(), MaxConcurrentRequests: 1}))
	initializeWith(c, "2025-11-25", `{"elicitation":{}}`)
	const n = 4
	for i := range n {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}`, i+1))
	}
	var ids []string
	for range n {
		id, _, _ := serverRequest(t, c.recv())
		ids = append(ids, id)
	}
	for i, id := range ids {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"n%d"}}}`, id, i))
	}
	got := map[string]bool{}
	for range n {
		got[c.recv()] = true
	}
	if len(got) != n {
		t.Fatalf("got %d distinct responses", len(got))
	}
	// The connection still serves.
	equalJSON(t, c.roundTrip(ping), pingResp)
}

func metaCaps(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// mrtr sends a stateless tools/call and decodes its result.
type mrtrResult struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
	Content       []struct {
		Text string `json:"text"`
	} `json:"content"`
}

func mrtrCall(t *testing.T, e *app.Engine, ctx context.Context, tool, extra string) (mrtrResult, string) {
	t.Helper()
	raw := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `",` + extra + metaCaps(`{"elicitation":{},"sampling":{},"roots":{}}`) + `}}`
	resp := string(e.HandleMessage(ctx, nil, []byte(raw), nil))
	var m struct {
		Result *mrtrResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(resp), &m); err != nil || m.Result == nil {
		return mrtrResult{}, resp
	}
	return *m.Result, resp
}

func TestInputRequiredRoundTrip(t *testing.T) {
	e := inputEngine(t, app.Options{Validator: jsonschema.New()})
	ctx := context.Background()
	r1, resp := mrtrCall(t, e, ctx, "ask_name", `"arguments":{},`)
	if r1.ResultType != "input_required" || r1.RequestState == "" || len(r1.InputRequests) != 1 {
		t.Fatalf("round 1: %s", resp)
	}
	equalJSON(t, string(r1.InputRequests["user_name"]), `{"method":"elicitation/create","params":{"message":"What is your name?","requestedSchema":`+nameSchema+`}}`)
	if !strings.Contains(resp, `"_meta":{"io.modelcontextprotocol/serverInfo"`) {
		t.Fatalf("no serverInfo _meta: %s", resp)
	}
	answer := `"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}},"extra":{"x":1}},`
	r2, resp := mrtrCall(t, e, ctx, "ask_name", `"arguments":{},`+answer+`"requestState":"`+r1.RequestState+`",`)
	if r2.ResultType != "complete" || len(r2.Content) != 1 || r2.Content[0].Text != "Hello, Ada!" {
		t.Fatalf("round 2: %s", resp)
	}
	// Without requestState the answers alone suffice (the first question
	// needs no state).
	r2, resp = mrtrCall(t, e, ctx, "ask_name", `"arguments":{},`+answer)
	if r2.ResultType != "complete" {
		t.Fatalf("answers without state: %s", resp)
	}
	// Missing or wrongly keyed answers: asked again, not an error.
	r3, resp := mrtrCall(t, e, ctx, "ask_name", `"arguments":{},"inputResponses":{"wrong_key":{"action":"accept","content":{}}},`)
	if r3.ResultType != "input_required" || r3.InputRequests["user_name"] == nil {
		t.Fatalf("missing answer: %s", resp)
	}
}

func TestInputRequiredBadInput(t *testing.T) {
	e := inputEngine(t, app.Options{Validator: jsonschema.New()})
	ctx := context.Background()
	r1, _ := mrtrCall(t, e, ctx, "ask_name", `"arguments":{},`)
	answer := `"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}},`
	for name, tc := range map[string]struct{ extra, want string }{
		"tampered":         {`"arguments":{},` + answer + `"requestState":"` + r1.RequestState + `-TAMPERED",`, "requestState does not verify"},
		"flipped":          {`"arguments":{},` + answer + `"requestState":"` + flip(r1.RequestState) + `",`, "requestState does not verify"},
		"garbage":          {`"arguments":{},` + answer + `"requestState":"abc",`, "requestState does not verify"},
		"not a string":     {`"arguments":{},` + answer + `"requestState":7,`, `\"requestState\" must be a string`},
		"other tool":       {`"arguments":{},` + answer + `"requestState":"` + r1.RequestState + `",`, "belongs to another request"},
		"other arguments":  {`"arguments":{"topic":"x"},` + answer + `"requestState":"` + r1.RequestState + `",`, "belongs to another request"},
		"null responses":   {`"arguments":{},"inputResponses":null,`, `\"inputResponses\" must be an object`},
		"number response":  {`"arguments":{},"inputResponses":{"user_name":12345},`, `inputResponses[\"user_name\"] must be an object`},
		"bad action":       {`"arguments":{},"inputResponses":{"user_name":{"action":"maybe"}},`, `\"action\" must be`},
		"schema violation": {`"arguments":{},"inputResponses":{"user_name":{"action":"accept","content":{"name":false}}},`, "does not match the requested schema"},
	} {
		t.Run(name, func(t *testing.T) {
			tool := "ask_name"
			if name == "other tool" || name == "other arguments" {
				tool = "two_steps"
			}
			_, resp := mrtrCall(t, e, ctx, tool, tc.extra)
			if !strings.Contains(resp, `"code":-32602`) || !strings.Contains(resp, tc.want) {
				t.Fatalf("got %s, want -32602 with %q", resp, tc.want)
			}
		})
	}
}

// flip changes one character of the signed payload.
func flip(s string) string {
	b := []byte(s)
	if b[2] == 'A' {
		b[2] = 'B'
	} else {
		b[2] = 'A'
	}
	return string(b)
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestRequestStateBinding(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	keys, _ := memory.NewStateKeys([]byte(strings.Repeat("k", 32)))
	e := inputEngine(t, app.Options{Validator: jsonschema.New(), Clock: clock, RequestStateTTL: time.Minute, StateKeys: keys})
	alice := app.WithTransportInfo(context.Background(), hexmcp.TransportInfo{Principal: &ports.Principal{Subject: "alice"}})
	bob := app.WithTransportInfo(context.Background(), hexmcp.TransportInfo{Principal: &ports.Principal{Subject: "bob"}})

	r1, _ := mrtrCall(t, e, alice, "two_steps", `"arguments":{"topic":"t"},`)
	step1 := `"inputResponses":{"step1":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + r1.RequestState + `",`
	if _, resp := mrtrCall(t, e, bob, "two_steps", `"arguments":{"topic":"t"},`+step1); !strings.Contains(resp, "belongs to another request") {
		t.Fatalf("another principal: %s", resp)
	}
	// The arguments may be spelled differently (canonical JSON).
	r2, resp := mrtrCall(t, e, alice, "two_steps", `"arguments":{ "topic" : "t" },`+step1)
	if r2.ResultType != "input_required" || r2.InputRequests["step2"] == nil || r2.RequestState == r1.RequestState {
		t.Fatalf("round 2: %s", resp)
	}
	// Another instance sharing the keys serves round 3; step1's answer
	// comes from the state.
	e2 := inputEngine(t, app.Options{Validator: jsonschema.New(), Clock: clock, RequestStateTTL: time.Minute, StateKeys: keys})
	step2 := `"inputResponses":{"step2":{"action":"accept","content":{"color":"blue"}}},"requestState":"` + r2.RequestState + `",`
	r3, resp := mrtrCall(t, e2, alice, "two_steps", `"arguments":{"topic":"t"},`+step2)
	if r3.ResultType != "complete" || r3.Content[0].Text != `{"name":"Ada"} {"color":"blue"}` {
		t.Fatalf("round 3: %s", resp)
	}
	// An instance with other keys refuses it.
	e3 := inputEngine(t, app.Options{Validator: jsonschema.New(), Clock: clock})
	if _, resp := mrtrCall(t, e3, alice, "two_steps", `"arguments":{"topic":"t"},`+step2); !strings.Contains(resp, "does not verify") {
		t.Fatalf("other keys: %s", resp)
	}
	// Expired.
	clock.advance(time.Minute)
	if _, resp := mrtrCall(t, e, alice, "two_steps", `"arguments":{"topic":"t"},`+step2); !strings.Contains(resp, "requestState has expired") {
		t.Fatalf("expired: %s", resp)
	}
}

func TestInputRequiredSeveralAndPrompt(t *testing.T) {
	e := inputEngine(t, app.Options{Validator: jsonschema.New(), PromptRegistry: memory.NewPromptRegistry()})
	if err := e.AddPrompt(hexmcp.NewPrompt("ctx_prompt", func(ctx context.Context, args map[string]string) (*domain.GetPromptResult, error) {
		res, err := app.RequestFrom(ctx).Elicit(ctx, "user_context", hexmcp.ElicitForm("Context?",
			json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)))
		if err != nil {
			return nil, err
		}
		return &domain.GetPromptResult{Messages: []domain.PromptMessage{{Role: domain.RoleUser, Content: hexmcp.Text("ctx " + string(res.Content))}}}, nil
	})); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r1, resp := mrtrCall(t, e, ctx, "ask_all", `"arguments":{},`)
	if r1.ResultType != "input_required" || len(r1.InputRequests) != 3 {
		t.Fatalf("three questions at once: %s", resp)
	}
	// The order of the questions is the order asked.
	if i, j, k := strings.Index(resp, `"user_name"`), strings.Index(resp, `"greeting"`), strings.Index(resp, `"client_roots"`); !(i < j && j < k) {
		t.Fatalf("order: %s", resp)
	}
	r2, resp := mrtrCall(t, e, ctx, "ask_all", `"arguments":{},"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}},`+
		`"greeting":{"role":"assistant","content":{"type":"text","text":"Hi"},"model":"m"},"client_roots":{"roots":[]}},"requestState":"`+r1.RequestState+`",`)
	if r2.ResultType != "complete" || r2.Content[0].Text != `{"name":"Ada"}|Hi|0 roots` {
		t.Fatalf("answers: %s", resp)
	}

	get := func(extra string) string {
		raw := `{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"ctx_prompt",` + extra + metaCaps(`{"elicitation":{}}`) + `}}`
		return string(e.HandleMessage(ctx, nil, []byte(raw), nil))
	}
	resp = get("")
	var p struct {
		Result mrtrResult `json:"result"`
	}
	_ = json.Unmarshal([]byte(resp), &p)
	if p.Result.ResultType != "input_required" || p.Result.InputRequests["user_context"] == nil {
		t.Fatalf("prompt round 1: %s", resp)
	}
	resp = get(`"inputResponses":{"user_context":{"action":"accept","content":{"context":"c"}}},"requestState":"` + p.Result.RequestState + `",`)
	if !strings.Contains(resp, `"resultType":"complete"`) || !strings.Contains(resp, `ctx {\"context\":\"c\"}`) {
		t.Fatalf("prompt round 2: %s", resp)
	}
	// A tools/call state does not open a prompt.
	if resp = get(`"requestState":"` + r1.RequestState + `",`); !strings.Contains(resp, "belongs to another request") {
		t.Fatalf("cross-method state: %s", resp)
	}
	// Methods other than tools/call, prompts/get and resources/read never
	// answer input_required.
	resp = string(e.HandleMessage(ctx, nil, []byte(`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{`+metaCaps(`{}`)+`}}`), nil))
	if strings.Contains(resp, "input_required") {
		t.Fatalf("tools/list: %s", resp)
	}
}

func TestURLElicitation(t *testing.T) {
	var (
		mu     sync.Mutex
		notify func(context.Context, string) error
	)
	connect := hexmcp.NewTool(func(rc *app.RequestContext) (string, error) {
		if n, err := rc.NotifyElicitationComplete(); err == nil {
			mu.Lock()
			notify = n
			mu.Unlock()
		}
		return "", rc.RequireURLElicitation(hexmcp.ElicitURL("Authorize access", "https://example.com/auth", "el-1"))
	}, hexmcp.WithName("connect"))
	e := inputEngine(t, app.Options{Validator: jsonschema.New()})
	if err := e.AddTool(connect); err != nil {
		t.Fatal(err)
	}
	c := serve(t, e)
	initializeWith(c, "2025-11-25", `{"elicitation":{"form":{},"url":{}}}`)
	resp := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"connect","arguments":{}}}`)
	equalJSON(t, resp, `{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"URL elicitation required","data":{"elicitations":[{"mode":"url","message":"Authorize access","url":"https://example.com/auth","elicitationId":"el-1"}]}}}`)
	// Later, when the user is done, the server tells the client.
	mu.Lock()
	n := notify
	mu.Unlock()
	if n == nil {
		t.Fatal("no notifier in a 2025-11-25 session")
	}
	if err := n(context.Background(), "el-1"); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"el-1"}}`)

	// Without elicitation.url: -32021.
	c2 := serve(t, e)
	initializeWith(c2, "2025-11-25", `{"elicitation":{}}`)
	resp = c2.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"connect","arguments":{}}}`)
	if !strings.Contains(resp, `"code":-32021`) || !strings.Contains(resp, `"url":{}`) {
		t.Fatalf("no url capability: %s", resp)
	}

	// 2026-07-28: input_required with the elicitation under its id.
	raw := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"connect","arguments":{},` + metaCaps(`{"elicitation":{"url":{}}}`) + `}}`
	resp = string(e.HandleMessage(context.Background(), nil, []byte(raw), nil))
	if !strings.Contains(resp, `"resultType":"input_required"`) ||
		!strings.Contains(resp, `"el-1":{"method":"elicitation/create","params":{"mode":"url","message":"Authorize access","url":"https://example.com/auth","elicitationId":"el-1"}}`) {
		t.Fatalf("stateless: %s", resp)
	}
}

// RequireURLElicitation refuses what it cannot send, naming the first
// elicitation at fault in order: none at all, one that does not validate,
// one not in url mode.
func TestRequireURLElicitationArguments(t *testing.T) {
	form := hexmcp.ElicitForm("Name?", json.RawMessage(nameSchema))
	good := hexmcp.ElicitURL("Authorize access", "https://example.com/auth", "el-1")
	bad := hexmcp.ElicitURL("Authorize access", "", "el-2")
	for _, tc := range []struct {
		name string
		els  []domain.ElicitParams
		want string
	}{
		{"none", nil, "needs at least one elicitation"},
		{"invalid first", []domain.ElicitParams{bad, form}, "elicitation 0: "},
		{"form second", []domain.ElicitParams{good, form}, "elicitation 1 is not in url mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := hexmcp.NewTool(func(rc *app.RequestContext) string {
				return rc.RequireURLElicitation(tc.els...).Error()
			}, hexmcp.WithName("connect"))
			c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, tool))
			initializeWith(c, "2025-11-25", `{"elicitation":{"form":{},"url":{}}}`)
			if resp := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"connect","arguments":{}}}`); !strings.Contains(resp, tc.want) {
				t.Fatalf("%s, want %q", resp, tc.want)
			}
		})
	}
}
