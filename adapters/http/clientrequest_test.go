package mcphttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// Requests of the server to the client (elicitation/create) over
// Streamable HTTP: on the POST's own stream or the session's GET stream in
// the handshake era, as input_required results in the stateless era.

const crNameSchema = testtools.NameSchema

// newCREnv is newEnv with the eliciting tool and the given engine options.
func newCREnv(t *testing.T, opts app.Options) *env {
	t.Helper()
	opts.Info = domain.Implementation{Name: "test", Version: "1.0.0"}
	opts.ToolRegistry = memory.NewRegistry()
	opts.Validator = jsonschema.New()
	e, err := app.NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddTools(testtools.AskName()); err != nil {
		t.Fatal(err)
	}
	return envFor(t, e, mcphttp.Options{})
}

// initializeCaps opens a session whose client declares caps.
func (ev *env) initializeCaps(rev, caps string) string {
	ev.t.Helper()
	return initSession(ev.t, ev.post, rev, caps, nil)
}

// nextMessage returns the next event that carries a message (priming
// events, which carry none, are skipped).
func (s *sse) nextMessage(t *testing.T) sseEvent {
	t.Helper()
	for {
		if ev := s.nextEvent(t); ev.data != "" {
			return ev
		}
	}
}

// endsWithin checks that the stream ends (EOF) without another message.
func (s *sse) endsWithin(t *testing.T, d time.Duration) {
	t.Helper()
	ch := make(chan error, 1)
	go func() {
		for {
			ev, err := s.next()
			if err != nil {
				ch <- err
				return
			}
			if ev.data != "" {
				ch <- fmt.Errorf("unexpected event %q", ev.data)
				return
			}
		}
	}()
	select {
	case err := <-ch:
		if err != io.EOF {
			t.Fatalf("the stream did not end cleanly: %v", err)
		}
	case <-time.After(d):
		t.Fatalf("the stream did not end within %v", d)
	}
}

type crMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  map[string]any  `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

func decodeMsg(t *testing.T, raw string) crMessage {
	t.Helper()
	var m crMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("not JSON: %q: %v", raw, err)
	}
	if m.JSONRPC != "2.0" {
		t.Fatalf("not JSON-RPC 2.0: %s", raw)
	}
	return m
}

// elicitRequest checks that raw is the elicitation/create request of
// crAskName and returns its id.
func elicitRequest(t *testing.T, raw string) string {
	t.Helper()
	m := decodeMsg(t, raw)
	if m.Method != "elicitation/create" || len(m.ID) == 0 || string(m.ID) == "null" || m.Result != nil || m.Error != nil {
		t.Fatalf("not an elicitation/create request: %s", raw)
	}
	if m.Params["message"] != "What is your name?" {
		t.Fatalf("message: %s", raw)
	}
	schema, _ := json.Marshal(m.Params["requestedSchema"])
	sameJSON(t, string(schema), crNameSchema)
	return string(m.ID)
}

func sameJSON(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got is not JSON: %q", got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %q", want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

const helloAda2 = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}`

func acceptAda(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"accept","content":{"name":"Ada"}}}`
}

// The elicitation request travels on the POST's own stream, which the
// response then completes.
func TestElicitationOnPostStream(t *testing.T) {
	const rev = "2025-11-25"
	ev := newCREnv(t, app.Options{Validator: jsonschema.New()})
	sid := ev.initializeCaps(rev, `{"elicitation":{}}`)
	resp := ev.post(callBody(2, "ask_name", `{}`), mergeHdr(sessHdr(sid, rev), hdr{"Accept": "application/json, text/event-stream"}))
	defer resp.Body.Close()
	s := newSSE(t, resp)
	req := s.nextMessage(t)
	id := elicitRequest(t, req.data)
	if req.id == "" {
		t.Fatalf("the request's event has no id (the stream is resumable in %s): %+v", rev, req)
	}

	// The client answers on the session with a POST of its own: 202.
	ans := ev.post(acceptAda(id), sessHdr(sid, rev))
	if body := expect(t, ans, http.StatusAccepted); body != "" {
		t.Fatalf("202 with a body: %q", body)
	}

	res := s.nextMessage(t)
	sameJSON(t, res.data, helloAda2)
	s.endsWithin(t, 10*time.Second)

	// The answer was consumed: a second copy answers nothing (still 202).
	expect(t, ev.post(acceptAda(id), sessHdr(sid, rev)), http.StatusAccepted)
}

// A client whose POST accepts only JSON gets the request on the session's
// GET stream, and the tool's result as the POST's JSON response.
func TestElicitationOnGetStreamForJSONOnlyPost(t *testing.T) {
	const rev = "2025-11-25"
	ev := newCREnv(t, app.Options{Validator: jsonschema.New()})
	sid := ev.initializeCaps(rev, `{"elicitation":{}}`)
	get, gs := ev.openGet(sid, rev, nil)
	defer get.Body.Close()
	if p := gs.nextEvent(t); p.data != "" {
		t.Fatalf("priming event %+v", p)
	}

	type answer struct {
		status int
		ct     string
		body   string
	}
	done := make(chan answer, 1)
	go func() {
		r := mustDo(http.MethodPost, ev.url, callBody(2, "ask_name", `{}`), mergeHdr(sessHdr(sid, rev), hdr{"Accept": "application/json"}))
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		done <- answer{r.StatusCode, r.Header.Get("Content-Type"), string(b)}
	}()

	id := elicitRequest(t, gs.nextMessage(t).data)
	select {
	case a := <-done:
		t.Fatalf("the POST was answered before the elicitation: %+v", a)
	default:
	}
	expect(t, ev.post(acceptAda(id), sessHdr(sid, rev)), http.StatusAccepted)

	select {
	case a := <-done:
		if a.status != http.StatusOK || a.ct != "application/json" {
			t.Fatalf("POST answered %d %q: %s", a.status, a.ct, a.body)
		}
		sameJSON(t, a.body, helloAda2)
	case <-time.After(10 * time.Second):
		t.Fatal("the POST was not answered")
	}
}

// Without any stream to carry it (a JSON-only POST, no GET stream), the
// request cannot reach the client: the call fails with an internal error,
// at the latest when the engine stops waiting (ClientRequestTimeout), and
// the POST gets it as JSON.
func TestElicitationWithNoStream(t *testing.T) {
	const rev = "2025-11-25"
	ev := newCREnv(t, app.Options{Validator: jsonschema.New(), ClientRequestTimeout: 300 * time.Millisecond})
	sid := ev.initializeCaps(rev, `{"elicitation":{}}`)
	resp := ev.post(callBody(2, "ask_name", `{}`), mergeHdr(sessHdr(sid, rev), hdr{"Accept": "application/json"}))
	body := expect(t, resp, http.StatusOK)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	if code, id := rpcError(t, body); code != -32603 || id != "2" {
		t.Fatalf("body %s", body)
	}
}

// The client cancels its call while the elicitation is pending: the server
// cancels its own request on the call's stream and sends no result.
func TestElicitationCancelledByClient(t *testing.T) {
	const rev = "2025-11-25"
	ev := newCREnv(t, app.Options{Validator: jsonschema.New()})
	sid := ev.initializeCaps(rev, `{"elicitation":{}}`)
	resp := ev.post(callBody(3, "ask_name", `{}`), sessHdr(sid, rev))
	defer resp.Body.Close()
	s := newSSE(t, resp)
	id := elicitRequest(t, s.nextMessage(t).data)

	expect(t, ev.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user aborted"}}`, sessHdr(sid, rev)), http.StatusAccepted)

	c := decodeMsg(t, s.nextMessage(t).data)
	if c.Method != "notifications/cancelled" || c.ID != nil {
		t.Fatalf("not notifications/cancelled: %+v", c)
	}
	if got, _ := json.Marshal(c.Params["requestId"]); string(got) != id {
		t.Fatalf("cancelled requestId %s, want the elicitation's %s", got, id)
	}
	if reason, _ := c.Params["reason"].(string); reason == "" {
		t.Fatalf("no reason: %+v", c.Params)
	}
	// No result for the cancelled call: the stream just ends.
	s.endsWithin(t, 10*time.Second)

	// A late answer answers nothing.
	expect(t, ev.post(acceptAda(id), sessHdr(sid, rev)), http.StatusAccepted)
}

// statelessAsk is a 2026-07-28 tools/call of ask_name whose client declares
// caps, with extra params.
func statelessAsk(caps, extra string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask_name","arguments":{},` + extra +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
}

type crResult struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
	Content       []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func statelessResult(t *testing.T, resp *http.Response) crResult {
	t.Helper()
	body := expect(t, resp, http.StatusOK)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q: %s", ct, body)
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result *crResult       `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Result == nil || string(m.ID) != "7" {
		t.Fatalf("not a result for id 7: %s", body)
	}
	return *m.Result
}

// Multi round-trip requests over HTTP: input_required, then the retry with
// the answers.
func TestInputRequiredOverHTTP(t *testing.T) {
	ev := newCREnv(t, app.Options{Validator: jsonschema.New()})
	h := statelessHdr("tools/call", "ask_name")
	r1 := statelessResult(t, ev.post(statelessAsk(`{"elicitation":{}}`, ""), h))
	if r1.ResultType != "input_required" || r1.RequestState == "" || len(r1.InputRequests) != 1 || len(r1.Content) != 0 {
		t.Fatalf("round 1: %+v", r1)
	}
	sameJSON(t, string(r1.InputRequests["user_name"]), `{"method":"elicitation/create","params":{"message":"What is your name?","requestedSchema":`+crNameSchema+`}}`)

	answers := `"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}},`
	r2 := statelessResult(t, ev.post(statelessAsk(`{"elicitation":{}}`, answers+`"requestState":"`+r1.RequestState+`",`), h))
	if r2.ResultType != "complete" || len(r2.Content) != 1 || r2.Content[0].Text != "Hello, Ada!" {
		t.Fatalf("round 2: %+v", r2)
	}

	// A tampered requestState is invalid params; -32602 that is not a
	// missing _meta field is an answer: 200.
	body := expect(t, ev.post(statelessAsk(`{"elicitation":{}}`, answers+`"requestState":"`+r1.RequestState+`x",`), h), http.StatusOK, "requestState")
	if code, id := rpcError(t, body); code != -32602 || id != "7" {
		t.Fatalf("tampered state: %s", body)
	}
}

// A stateless client without the capability: -32021 naming it, 400.
func TestInputRequiredMissingCapabilityOverHTTP(t *testing.T) {
	ev := newCREnv(t, app.Options{Validator: jsonschema.New()})
	resp := ev.post(statelessAsk(`{"sampling":{}}`, ""), statelessHdr("tools/call", "ask_name"))
	body := expect(t, resp, http.StatusBadRequest)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code int `json:"code"`
			Data struct {
				RequiredCapabilities json.RawMessage `json:"requiredCapabilities"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error.Code != -32021 || string(m.ID) != "7" {
		t.Fatalf("body %s", body)
	}
	sameJSON(t, string(m.Error.Data.RequiredCapabilities), `{"elicitation":{}}`)
	if strings.Contains(body, "input_required") {
		t.Fatalf("asked anyway: %s", body)
	}
}

// A POST stream cut while the elicitation is pending does not cancel the
// call: the client answers, resumes the stream with GET and Last-Event-ID
// and gets the result there.
func TestElicitationStreamResumed(t *testing.T) {
	const rev = "2025-11-25"
	for _, answerFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("answer first %t", answerFirst), func(t *testing.T) {
			ev := newCREnv(t, app.Options{Validator: jsonschema.New()})
			sid := ev.initializeCaps(rev, `{"elicitation":{}}`)
			resp := ev.post(callBody(2, "ask_name", `{}`), sessHdr(sid, rev))
			s := newSSE(t, resp)
			req := s.nextMessage(t)
			id := elicitRequest(t, req.data)
			if req.id == "" {
				t.Fatalf("no event id to resume from: %+v", req)
			}
			resp.Body.Close() // the connection drops
			if answerFirst {
				expect(t, ev.post(acceptAda(id), sessHdr(sid, rev)), http.StatusAccepted)
			}
			resp = request(t, context.Background(), http.MethodGet, ev.url, "", mergeHdr(sessHdr(sid, rev), hdr{"Last-Event-ID": req.id}))
			defer resp.Body.Close()
			s = newSSE(t, resp)
			if !answerFirst {
				expect(t, ev.post(acceptAda(id), sessHdr(sid, rev)), http.StatusAccepted)
			}
			res := s.nextMessage(t)
			sameJSON(t, res.data, helloAda2)
			if res.id == "" || res.id == req.id {
				t.Fatalf("result event id %q (request's %q)", res.id, req.id)
			}
			s.endsWithin(t, 10*time.Second)
		})
	}
}
