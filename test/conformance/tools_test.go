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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/memory"
)

// These tests check the conformance server's tools through the engine, over
// an in-memory pipe, so that `go test ./...` catches a tool the suite would
// reject before anyone runs run.sh.

type rpcClient struct {
	t    *testing.T
	ctx  context.Context
	pipe *memory.Pipe
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

type message struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	} `json:"error"`
}

// call sends a request and returns its response and the notifications that
// came before it.
func (c *rpcClient) call(method string, params any) (message, []message) {
	c.t.Helper()
	c.id++
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.pipe.WriteMessage(c.ctx, req); err != nil {
		c.t.Fatal(err)
	}
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
		if m.ID == nil {
			notes = append(notes, m)
			continue
		}
		if *m.ID != c.id {
			c.t.Fatalf("%s: response to id %d, want %d", method, *m.ID, c.id)
		}
		return m, notes
	}
}

func (c *rpcClient) initialize() {
	c.t.Helper()
	resp, _ := c.call("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"sampling": map[string]any{}},
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
		"json_schema_2020_12_tool", "test_audio_content", "test_custom_header", "test_elicitation",
		"test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums", "test_embedded_resource",
		"test_error_handling", "test_image_content", "test_logging_tool", "test_missing_capability",
		"test_multiple_content_types", "test_sampling", "test_simple_text", "test_streaming_elicitation",
		"test_tool_with_logging", "test_tool_with_progress", "test_trigger_prompt_change", "test_trigger_tool_change",
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

	r, _ = c.callTool("test_image_content", map[string]any{})
	if len(r.Content) != 1 || r.Content[0].Type != "image" || r.Content[0].MimeType != "image/png" {
		t.Fatalf("test_image_content: %+v", r)
	}
	img, err := base64.StdEncoding.DecodeString(r.Content[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(img)); err != nil || cfg.Width != 1 || cfg.Height != 1 {
		t.Errorf("test_image_content: not a 1x1 PNG: %v %+v", err, cfg)
	}

	r, _ = c.callTool("test_audio_content", map[string]any{})
	if len(r.Content) != 1 || r.Content[0].Type != "audio" || r.Content[0].MimeType != "audio/wav" {
		t.Fatalf("test_audio_content: %+v", r)
	}
	wav, err := base64.StdEncoding.DecodeString(r.Content[0].Data)
	if err != nil {
		t.Fatal(err)
	}
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
