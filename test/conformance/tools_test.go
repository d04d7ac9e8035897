package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// These tests check the conformance server's tools through the engine, over
// an in-memory pipe, so that `go test ./...` catches a tool the suite would
// reject before anyone runs run.sh.

type rpcClient struct {
	t    *testing.T
	ctx  context.Context
	pipe ports.Conn
	id   int
}

func newClient(t *testing.T) *rpcClient {
	t.Helper()
	e, err := newEngine(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	client, server := memory.NewPipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.ServeConn(ctx, server)
	}()
	t.Cleanup(func() {
		_ = client.Close()
		cancel()
		<-done
		_ = e.Close()
	})
	return &rpcClient{t: t, ctx: ctx, pipe: client}
}

// message is a JSON-RPC message as the tests read it.
type message = testtools.Message

// call sends a request and returns its response and the notifications that
// came before it. A request of the server's own fails the test.
func (c *rpcClient) call(method string, params any) (message, []message) {
	c.t.Helper()
	return c.callAnswering(method, params, nil)
}

// answerFunc answers a request of the server (elicitation/create,
// sampling/createMessage, roots/list) with a result.
type answerFunc func(method string, params json.RawMessage) any

// callAnswering is call, with answer answering the server's requests that
// come before the response (handshake era).
func (c *rpcClient) callAnswering(method string, params any, answer answerFunc) (message, []message) {
	c.t.Helper()
	c.id++
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.pipe.WriteMessage(c.ctx, req); err != nil {
		c.t.Fatal(err)
	}
	want := strconv.Itoa(c.id)
	var notes []message
	for {
		raw, err := c.pipe.ReadMessage(c.ctx)
		if err != nil {
			c.t.Fatalf("%s: %v", method, err)
		}
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			c.t.Fatalf("%s: %v in %s", method, err, raw)
		}
		switch {
		case m.ID == nil:
			notes = append(notes, m)
		case m.Method != "":
			if answer == nil {
				c.t.Fatalf("%s: unexpected request of the server: %s", method, raw)
			}
			resp, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": answer(m.Method, m.Params)})
			if err != nil {
				c.t.Fatal(err)
			}
			if err := c.pipe.WriteMessage(c.ctx, resp); err != nil {
				c.t.Fatal(err)
			}
		case string(m.ID) != want:
			c.t.Fatalf("%s: response to id %s, want %s", method, m.ID, want)
		default:
			return m, notes
		}
	}
}

// initialize opens a 2025-11-25 session declaring the sampling capability.
func (c *rpcClient) initialize() {
	c.t.Helper()
	c.initializeWith(map[string]any{"sampling": map[string]any{}})
}

// initializeWith opens a 2025-11-25 session declaring caps.
func (c *rpcClient) initializeWith(caps map[string]any) {
	c.t.Helper()
	resp, _ := c.call("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "tools_test", "version": "0"},
	})
	if resp.Error != nil {
		c.t.Fatalf("initialize: error %d", resp.Error.Code)
	}
	if err := c.pipe.WriteMessage(c.ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		c.t.Fatal(err)
	}
}

type content struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	Resource *struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
	} `json:"resource"`
}

type toolResult struct {
	Content []content `json:"content"`
	IsError bool      `json:"isError"`
}

// mediaContent calls the tool name without arguments; its result must be
// one block of type typ and MIME type mime, whose decoded data it returns.
func (c *rpcClient) mediaContent(name, typ, mime string) []byte {
	c.t.Helper()
	r, _ := c.callTool(name, map[string]any{})
	if len(r.Content) != 1 || r.Content[0].Type != typ || r.Content[0].MimeType != mime {
		c.t.Fatalf("%s: %+v", name, r)
	}
	data, err := base64.StdEncoding.DecodeString(r.Content[0].Data)
	if err != nil {
		c.t.Fatal(err)
	}
	return data
}

func (c *rpcClient) callTool(name string, args any) (toolResult, []message) {
	c.t.Helper()
	resp, notes := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	if resp.Error != nil {
		c.t.Fatalf("%s: JSON-RPC error %d", name, resp.Error.Code)
	}
	var r toolResult
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		c.t.Fatal(err)
	}
	return r, notes
}

func TestToolsListIsTheSuitesSet(t *testing.T) {
	c := newClient(t)
	c.initialize()
	resp, _ := c.call("tools/list", map[string]any{})
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(resp.Result, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" { // tools-list requires one
			t.Errorf("%s has no description", tool.Name)
		}
	}
	want := []string{
		"confirm_delete", "failing_job", "greet", "json_schema_2020_12_tool", "multi_input", "protocol_error_job", "slow_compute", "test_audio_content", "test_custom_header", "test_elicitation",
		"test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums", "test_embedded_resource",
		"test_error_handling", "test_image_content",
		"test_input_required_result_capabilities", "test_input_required_result_elicitation",
		"test_input_required_result_list_roots", "test_input_required_result_multi_round",
		"test_input_required_result_multiple_inputs", "test_input_required_result_request_state",
		"test_input_required_result_sampling", "test_input_required_result_tampered_state",
		"test_logging_tool", "test_missing_capability",
		"test_multiple_content_types", "test_sampling", "test_simple_text", "test_streaming_elicitation",
		"test_tool_with_logging", "test_tool_with_progress", "test_tool_with_task", "test_trigger_prompt_change", "test_trigger_tool_change",
	}
	if !slices.Equal(names, want) {
		t.Errorf("tools/list names\n got %v\nwant %v", names, want)
	}
	// json-schema-2020-12 wants these keywords back verbatim.
	for _, tool := range list.Tools {
		if tool.Name != "json_schema_2020_12_tool" {
			continue
		}
		var got, wantSchema any
		_ = json.Unmarshal(tool.InputSchema, &got)
		_ = json.Unmarshal([]byte(jsonSchema202012), &wantSchema)
		if fmt.Sprint(got) != fmt.Sprint(wantSchema) {
			t.Errorf("json_schema_2020_12_tool schema changed on the way:\n%s", tool.InputSchema)
		}
	}
}

func TestContentTools(t *testing.T) {
	c := newClient(t)
	c.initialize()

	r, _ := c.callTool("test_simple_text", map[string]any{})
	if len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text == "" {
		t.Errorf("test_simple_text: %+v", r)
	}

	img := c.mediaContent("test_image_content", "image", "image/png")
	if cfg, err := png.DecodeConfig(bytes.NewReader(img)); err != nil || cfg.Width != 1 || cfg.Height != 1 {
		t.Errorf("test_image_content: not a 1x1 PNG: %v %+v", err, cfg)
	}

	wav := c.mediaContent("test_audio_content", "audio", "audio/wav")
	if len(wav) < 44 || string(wav[0:4]) != "RIFF" || string(wav[8:16]) != "WAVEfmt " || string(wav[36:40]) != "data" {
		t.Errorf("test_audio_content: not a WAV file: % x", wav[:min(len(wav), 44)])
	}

	r, _ = c.callTool("test_embedded_resource", map[string]any{})
	if len(r.Content) != 1 || r.Content[0].Resource == nil || r.Content[0].Resource.URI == "" ||
		r.Content[0].Resource.MimeType == "" || r.Content[0].Resource.Text == "" {
		t.Errorf("test_embedded_resource: %+v", r)
	}

	r, _ = c.callTool("test_multiple_content_types", map[string]any{})
	var types []string
	for _, b := range r.Content {
		types = append(types, b.Type)
	}
	if !slices.Equal(types, []string{"text", "image", "resource"}) {
		t.Errorf("test_multiple_content_types: %v", types)
	}

	r, _ = c.callTool("test_error_handling", map[string]any{})
	if !r.IsError || len(r.Content) == 0 || r.Content[0].Text == "" {
		t.Errorf("test_error_handling: %+v", r)
	}

	r, _ = c.callTool("test_custom_header", map[string]any{"region": "us-west1"})
	if r.IsError {
		t.Errorf("test_custom_header: %+v", r)
	}
}

func TestProgressIncreases(t *testing.T) {
	c := newClient(t)
	c.initialize()
	resp, notes := c.call("tools/call", map[string]any{
		"name": "test_tool_with_progress", "arguments": map[string]any{},
		"_meta": map[string]any{"progressToken": "p-1"},
	})
	if resp.Error != nil {
		t.Fatalf("error %d", resp.Error.Code)
	}
	var got []float64
	for _, n := range notes {
		if n.Method != "notifications/progress" {
			continue
		}
		var p struct {
			Token    string  `json:"progressToken"`
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
		}
		if err := json.Unmarshal(n.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Token != "p-1" || p.Total != 100 {
			t.Errorf("progress notification %s", n.Params)
		}
		got = append(got, p.Progress)
	}
	if !slices.Equal(got, []float64{0, 50, 100}) {
		t.Errorf("progress values %v, want [0 50 100]", got)
	}
}

func TestMissingCapabilityIsMinus32021(t *testing.T) {
	c := newClient(t)
	resp, _ := c.call("tools/call", map[string]any{
		"name": "test_missing_capability", "arguments": map[string]any{},
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		},
	})
	if resp.Error == nil || resp.Error.Code != -32021 {
		t.Fatalf("want error -32021, got %+v", resp)
	}
	var data struct {
		Required map[string]map[string]any `json:"requiredCapabilities"`
	}
	if err := json.Unmarshal(resp.Error.Data, &data); err != nil || data.Required["sampling"] == nil {
		t.Errorf("error data %s: want requiredCapabilities.sampling", resp.Error.Data)
	}
}

func TestTriggerToolChangeTogglesATool(t *testing.T) {
	c := newClient(t)
	c.initialize()
	count := func() int {
		resp, _ := c.call("tools/list", map[string]any{})
		var list struct{ Tools []json.RawMessage }
		_ = json.Unmarshal(resp.Result, &list)
		return len(list.Tools)
	}
	before := count()
	_, notes := c.callTool("test_trigger_tool_change", map[string]any{})
	if count() != before+1 {
		t.Errorf("the first call should add a tool")
	}
	if !slices.ContainsFunc(notes, func(m message) bool { return m.Method == "notifications/tools/list_changed" }) {
		t.Errorf("no notifications/tools/list_changed before the result")
	}
	c.callTool("test_trigger_tool_change", map[string]any{})
	if count() != before {
		t.Errorf("the second call should remove it")
	}
}

// TestResourcesOfTheSuite reads every resource the resources-* scenarios
// read, in both eras.
func TestResourcesOfTheSuite(t *testing.T) {
	c := newClient(t)
	c.initialize()
	type contents struct {
		Contents []struct {
			URI, MimeType, Text, Blob string
		}
	}
	for uri, want := range map[string]string{
		"test://static-text":       "text/plain",
		"test://static-binary":     "image/png",
		"test://template/123/data": "application/json",
		"test://watched-resource":  "text/plain",
	} {
		resp, _ := c.call("resources/read", map[string]any{"uri": uri})
		if resp.Error != nil {
			t.Fatalf("%s: error %d", uri, resp.Error.Code)
		}
		var r contents
		if err := json.Unmarshal(resp.Result, &r); err != nil || len(r.Contents) != 1 {
			t.Fatalf("%s: %s", uri, resp.Result)
		}
		got := r.Contents[0]
		if got.URI != uri || got.MimeType != want || got.Text == "" && got.Blob == "" {
			t.Fatalf("%s: %+v", uri, got)
		}
		if uri == "test://template/123/data" && !strings.Contains(got.Text, "123") {
			t.Fatalf("template not substituted: %s", got.Text)
		}
	}
	resp, _ := c.call("resources/subscribe", map[string]any{"uri": "test://watched-resource"})
	if resp.Error != nil || string(resp.Result) != "{}" {
		t.Fatalf("subscribe: %+v", resp)
	}
	resp, _ = c.call("resources/read", map[string]any{"uri": "test://nonexistent-resource-for-conformance-testing",
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}})
	if resp.Error == nil || resp.Error.Code != -32602 || !strings.Contains(string(resp.Error.Data), "nonexistent") {
		t.Fatalf("not found (2026-07-28): %+v", resp.Error)
	}
}

// elicitRequest is the params of an elicitation/create request.
type elicitRequest struct {
	Message         string `json:"message"`
	RequestedSchema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	} `json:"requestedSchema"`
}

func decodeParams[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	return v
}

func textOf(t *testing.T, resp message) string {
	t.Helper()
	if resp.Error != nil {
		t.Fatalf("JSON-RPC error %d: %s", resp.Error.Code, resp.Error.Data)
	}
	var r toolResult
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		t.Fatal(err)
	}
	if r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("want one text block: %s", resp.Result)
	}
	return r.Content[0].Text
}

// TestAskingTheClientHandshake runs the tools of tools-call-sampling,
// tools-call-elicitation, elicitation-sep1034-defaults and
// elicitation-sep1330-enums in a 2025-11-25 session: the engine sends the
// client real requests, and the tools report the answers.
func TestAskingTheClientHandshake(t *testing.T) {
	c := newClient(t)
	c.initializeWith(map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{}})

	var asked []string
	resp, _ := c.callAnswering("tools/call", map[string]any{"name": "test_elicitation", "arguments": map[string]any{"message": "Please provide your information"}},
		func(method string, params json.RawMessage) any {
			asked = append(asked, method)
			p := decodeParams[elicitRequest](t, params)
			if p.Message != "Please provide your information" || p.RequestedSchema.Type != "object" ||
				p.RequestedSchema.Properties["username"] == nil || p.RequestedSchema.Properties["email"] == nil ||
				!slices.Equal(p.RequestedSchema.Required, []string{"username", "email"}) {
				t.Errorf("elicitation/create params: %s", params)
			}
			// The content reaches the tool as the client wrote it.
			return json.RawMessage(`{"action":"accept","content":{"username":"testuser","email":"test@example.com"}}`)
		})
	if got, want := textOf(t, resp), `User response: action=accept, content={"username":"testuser","email":"test@example.com"}`; got != want {
		t.Errorf("test_elicitation: %q, want %q", got, want)
	}
	if !slices.Equal(asked, []string{"elicitation/create"}) {
		t.Errorf("server requests %v, want one elicitation/create", asked)
	}

	// A declined form: the tool reports it.
	resp, _ = c.callAnswering("tools/call", map[string]any{"name": "test_elicitation", "arguments": map[string]any{"message": "m"}},
		func(string, json.RawMessage) any { return map[string]any{"action": "decline"} })
	if got, want := textOf(t, resp), "User response: action=decline, content={}"; got != want {
		t.Errorf("declined: %q, want %q", got, want)
	}

	resp, _ = c.callAnswering("tools/call", map[string]any{"name": "test_sampling", "arguments": map[string]any{"prompt": "Test prompt for sampling"}},
		func(method string, params json.RawMessage) any {
			p := decodeParams[struct {
				Messages []struct {
					Role    string  `json:"role"`
					Content content `json:"content"`
				} `json:"messages"`
				MaxTokens int `json:"maxTokens"`
			}](t, params)
			if method != "sampling/createMessage" || p.MaxTokens != 100 || len(p.Messages) != 1 ||
				p.Messages[0].Role != "user" || p.Messages[0].Content.Text != "Test prompt for sampling" {
				t.Errorf("%s params: %s", method, params)
			}
			return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "This is a test response"}, "model": "test-model", "stopReason": "endTurn"}
		})
	if got, want := textOf(t, resp), "LLM response: This is a test response"; got != want {
		t.Errorf("test_sampling: %q, want %q", got, want)
	}

	// SEP-1034: a default for every primitive type.
	resp, _ = c.callAnswering("tools/call", map[string]any{"name": "test_elicitation_sep1034_defaults", "arguments": map[string]any{}},
		func(_ string, params json.RawMessage) any {
			props := decodeParams[elicitRequest](t, params).RequestedSchema.Properties
			for name, want := range map[string]string{
				"name":     `{"type":"string","default":"John Doe"}`,
				"age":      `{"type":"integer","default":30}`,
				"score":    `{"type":"number","default":95.5}`,
				"status":   `{"type":"string","enum":["active","inactive","pending"],"default":"active"}`,
				"verified": `{"type":"boolean","default":true}`,
			} {
				var got map[string]any
				_ = json.Unmarshal(props[name], &got)
				delete(got, "description")
				var w map[string]any
				_ = json.Unmarshal([]byte(want), &w)
				if fmt.Sprint(got) != fmt.Sprint(w) {
					t.Errorf("SEP-1034 %s: %s, want %s", name, props[name], want)
				}
			}
			return map[string]any{"action": "accept", "content": map[string]any{"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": false}}
		})
	if got := textOf(t, resp); !strings.HasPrefix(got, "Elicitation completed: action=accept, content={") || !strings.Contains(got, `"name":"Jane Smith"`) {
		t.Errorf("test_elicitation_sep1034_defaults: %q", got)
	}

	// SEP-1330: the five enum variants; the suite's answer matches them.
	resp, _ = c.callAnswering("tools/call", map[string]any{"name": "test_elicitation_sep1330_enums", "arguments": map[string]any{}},
		func(_ string, params json.RawMessage) any {
			props := decodeParams[elicitRequest](t, params).RequestedSchema.Properties
			type enumSchema struct {
				Type      string   `json:"type"`
				Enum      []string `json:"enum"`
				EnumNames []string `json:"enumNames"`
				OneOf     []struct{ Const, Title string }
				Items     *struct {
					Type  string   `json:"type"`
					Enum  []string `json:"enum"`
					AnyOf []struct{ Const, Title string }
				} `json:"items"`
			}
			get := func(name string) enumSchema { return decodeParams[enumSchema](t, props[name]) }
			if s := get("untitledSingle"); s.Type != "string" || len(s.Enum) != 3 || s.OneOf != nil || s.EnumNames != nil {
				t.Errorf("untitledSingle: %s", props["untitledSingle"])
			}
			if s := get("titledSingle"); s.Type != "string" || len(s.OneOf) != 3 || s.OneOf[0].Title == "" || s.Enum != nil {
				t.Errorf("titledSingle: %s", props["titledSingle"])
			}
			if s := get("legacyEnum"); s.Type != "string" || len(s.Enum) != 3 || len(s.EnumNames) != len(s.Enum) {
				t.Errorf("legacyEnum: %s", props["legacyEnum"])
			}
			if s := get("untitledMulti"); s.Type != "array" || s.Items == nil || s.Items.Type != "string" || len(s.Items.Enum) != 3 || s.Items.AnyOf != nil {
				t.Errorf("untitledMulti: %s", props["untitledMulti"])
			}
			if s := get("titledMulti"); s.Type != "array" || s.Items == nil || len(s.Items.AnyOf) != 3 || s.Items.AnyOf[0].Title == "" || s.Items.Enum != nil {
				t.Errorf("titledMulti: %s", props["titledMulti"])
			}
			return map[string]any{"action": "accept", "content": map[string]any{
				"untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
				"untitledMulti": []string{"option1", "option2"}, "titledMulti": []string{"value1", "value2"},
			}}
		})
	if got := textOf(t, resp); !strings.HasPrefix(got, "Elicitation completed: action=accept, content={") {
		t.Errorf("test_elicitation_sep1330_enums: %q", got)
	}

	// A session that did not declare the capability: -32021, no request.
	c2 := newClient(t)
	c2.initializeWith(map[string]any{})
	resp, _ = c2.call("tools/call", map[string]any{"name": "test_elicitation", "arguments": map[string]any{"message": "m"}})
	if resp.Error == nil || resp.Error.Code != -32021 || !strings.Contains(string(resp.Error.Data), `"elicitation":{}`) {
		t.Errorf("without elicitation: %+v", resp)
	}
}

// inputRequired is a stateless-era result: complete or input_required.
type inputRequired struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState string    `json:"requestState"`
	Content      []content `json:"content"`
	Messages     []struct {
		Content content `json:"content"`
	} `json:"messages"`
}

var allCaps = map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}

// stateless sends a 2026-07-28 request declaring caps; params holds the
// rest (name, arguments, inputResponses, requestState).
func (c *rpcClient) stateless(method string, caps map[string]any, params map[string]any) (inputRequired, message) {
	c.t.Helper()
	p := maps.Clone(params)
	p["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	resp, _ := c.call(method, p)
	var r inputRequired
	if resp.Error == nil {
		if err := json.Unmarshal(resp.Result, &r); err != nil {
			c.t.Fatal(err)
		}
	}
	return r, resp
}

func accept(content map[string]any) map[string]any {
	return map[string]any{"action": "accept", "content": content}
}

// TestInputRequiredResults runs the input-required-result-* tools and
// prompt in the stateless era, round after round, as the suite does.
func TestInputRequiredResults(t *testing.T) {
	c := newClient(t)
	call := func(tool string, caps map[string]any, more map[string]any) (inputRequired, message) {
		t.Helper()
		p := map[string]any{"name": tool, "arguments": map[string]any{}}
		maps.Copy(p, more)
		return c.stateless("tools/call", caps, p)
	}

	// Basic elicitation, two rounds.
	r1, resp := call("test_input_required_result_elicitation", allCaps, nil)
	q, ok := r1.InputRequests["user_name"]
	if r1.ResultType != "input_required" || r1.RequestState == "" || len(r1.InputRequests) != 1 || !ok || q.Method != "elicitation/create" {
		t.Fatalf("round 1: %s", resp.Result)
	}
	if p := decodeParams[elicitRequest](t, q.Params); p.Message != "What is your name?" || p.RequestedSchema.Properties["name"] == nil {
		t.Errorf("round 1 question: %s", q.Params)
	}
	r2, resp := call("test_input_required_result_elicitation", allCaps, map[string]any{
		"inputResponses": map[string]any{"user_name": accept(map[string]any{"name": "Alice"}), "unknown_extra_key": accept(map[string]any{"foo": "bar"})},
		"requestState":   r1.RequestState,
	})
	if r2.ResultType != "complete" || len(r2.Content) != 1 || r2.Content[0].Text != "Hello, Alice!" {
		t.Fatalf("round 2: %s", resp.Result)
	}
	// A wrong key is asked again, not an error.
	r, resp := call("test_input_required_result_elicitation", allCaps, map[string]any{
		"inputResponses": map[string]any{"wrong_key": accept(map[string]any{"data": "wrong"})},
	})
	if r.ResultType != "input_required" || r.InputRequests["user_name"].Method == "" {
		t.Errorf("wrong key: %+v %s", resp.Error, resp.Result)
	}

	// Multi-round: a second question once the first is answered, with a
	// new requestState carrying the first answer.
	m1, resp := call("test_input_required_result_multi_round", allCaps, nil)
	if m1.ResultType != "input_required" || m1.InputRequests["step1"].Method != "elicitation/create" {
		t.Fatalf("multi-round 1: %s", resp.Result)
	}
	m2, resp := call("test_input_required_result_multi_round", allCaps, map[string]any{
		"inputResponses": map[string]any{"step1": accept(map[string]any{"name": "Alice"})}, "requestState": m1.RequestState,
	})
	if m2.ResultType != "input_required" || m2.InputRequests["step2"].Method != "elicitation/create" || len(m2.InputRequests) != 1 ||
		m2.RequestState == "" || m2.RequestState == m1.RequestState {
		t.Fatalf("multi-round 2: %s", resp.Result)
	}
	m3, resp := call("test_input_required_result_multi_round", allCaps, map[string]any{
		"inputResponses": map[string]any{"step2": accept(map[string]any{"color": "blue"})}, "requestState": m2.RequestState,
	})
	if m3.ResultType != "complete" || len(m3.Content) != 1 || m3.Content[0].Text != "Hello, Alice! Your favorite color is blue." {
		t.Fatalf("multi-round 3: %s", resp.Result)
	}

	// Three questions of three kinds at once.
	a1, resp := call("test_input_required_result_multiple_inputs", allCaps, nil)
	methods := map[string]string{}
	for k, q := range a1.InputRequests {
		methods[k] = q.Method
	}
	if fmt.Sprint(methods) != fmt.Sprint(map[string]string{"client_roots": "roots/list", "greeting": "sampling/createMessage", "user_name": "elicitation/create"}) {
		t.Fatalf("multiple inputs: %s", resp.Result)
	}
	a2, resp := call("test_input_required_result_multiple_inputs", allCaps, map[string]any{
		"inputResponses": map[string]any{
			"user_name":    accept(map[string]any{"name": "Alice"}),
			"greeting":     map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Hello there!"}, "model": "m"},
			"client_roots": map[string]any{"roots": []any{map[string]any{"uri": "file:///test/root", "name": "Test Root"}}},
		},
		"requestState": a1.RequestState,
	})
	if a2.ResultType != "complete" || len(a2.Content) != 1 || a2.Content[0].Text != "name=Alice; greeting=Hello there!; roots=file:///test/root (Test Root)" {
		t.Fatalf("multiple inputs answered: %s", resp.Result)
	}

	// The request-state tool says state-ok; a tampered state is -32602.
	s1, _ := call("test_input_required_result_request_state", allCaps, nil)
	s2, resp := call("test_input_required_result_request_state", allCaps, map[string]any{
		"inputResponses": map[string]any{"confirm": accept(map[string]any{"ok": true})}, "requestState": s1.RequestState,
	})
	if s2.ResultType != "complete" || len(s2.Content) != 1 || !strings.Contains(s2.Content[0].Text, "state-ok") {
		t.Fatalf("request state: %s", resp.Result)
	}
	t1, _ := call("test_input_required_result_tampered_state", allCaps, nil)
	_, resp = call("test_input_required_result_tampered_state", allCaps, map[string]any{
		"inputResponses": map[string]any{"confirm": accept(map[string]any{"ok": true})}, "requestState": t1.RequestState + "-TAMPERED",
	})
	if resp.Error == nil || resp.Error.Code != -32602 {
		t.Fatalf("tampered state accepted: %s", resp.Result)
	}

	// Only what the client declared is asked.
	k, resp := call("test_input_required_result_capabilities", map[string]any{"sampling": map[string]any{}}, nil)
	if k.ResultType != "input_required" || len(k.InputRequests) != 1 || k.InputRequests["greeting"].Method != "sampling/createMessage" {
		t.Fatalf("sampling only: %s", resp.Result)
	}
	k, resp = call("test_input_required_result_capabilities", map[string]any{}, nil)
	if k.ResultType != "complete" {
		t.Fatalf("nothing declared: %+v %s", resp.Error, resp.Result)
	}

	// Sampling and roots, two rounds each.
	l1, _ := call("test_input_required_result_sampling", allCaps, nil)
	l2, resp := call("test_input_required_result_sampling", allCaps, map[string]any{
		"inputResponses": map[string]any{"capital_question": map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris."}, "model": "m"}},
		"requestState":   l1.RequestState,
	})
	if l1.InputRequests["capital_question"].Method != "sampling/createMessage" || l2.ResultType != "complete" || l2.Content[0].Text != "LLM response: Paris." {
		t.Fatalf("sampling: %s", resp.Result)
	}
	o1, _ := call("test_input_required_result_list_roots", allCaps, nil)
	o2, resp := call("test_input_required_result_list_roots", allCaps, map[string]any{
		"inputResponses": map[string]any{"client_roots": map[string]any{"roots": []any{map[string]any{"uri": "file:///test/root"}}}},
		"requestState":   o1.RequestState,
	})
	if o1.InputRequests["client_roots"].Method != "roots/list" || o2.ResultType != "complete" || !strings.Contains(o2.Content[0].Text, "file:///test/root") {
		t.Fatalf("roots: %s", resp.Result)
	}

	// test_streaming_elicitation answers input_required (call fails the
	// test on a request of the server's own).
	e1, resp := call("test_streaming_elicitation", map[string]any{"elicitation": map[string]any{}}, nil)
	if e1.ResultType != "input_required" || e1.InputRequests["confirm"].Method != "elicitation/create" {
		t.Fatalf("test_streaming_elicitation: %+v %s", resp.Error, resp.Result)
	}

	// The prompt of input-required-result-non-tool-request.
	p1, resp := c.stateless("prompts/get", allCaps, map[string]any{"name": "test_input_required_result_prompt"})
	if p1.ResultType != "input_required" || p1.InputRequests["user_context"].Method != "elicitation/create" {
		t.Fatalf("prompt round 1: %+v %s", resp.Error, resp.Result)
	}
	p2, resp := c.stateless("prompts/get", allCaps, map[string]any{
		"name":           "test_input_required_result_prompt",
		"inputResponses": map[string]any{"user_context": accept(map[string]any{"context": "test context"})},
		"requestState":   p1.RequestState,
	})
	if p2.ResultType != "complete" || len(p2.Messages) != 1 || !strings.Contains(p2.Messages[0].Content.Text, "test context") {
		t.Fatalf("prompt round 2: %+v %s", resp.Error, resp.Result)
	}
}
