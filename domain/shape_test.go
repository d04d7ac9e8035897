package domain

import (
	"encoding/json"
	"testing"
)

func fullTool() *Tool {
	yes := true
	return &Tool{
		Name:         "calculate",
		Title:        "Calculator",
		Description:  "Performs arithmetic.",
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"r":{"type":"number"}}}`),
		Annotations:  &ToolAnnotations{Title: "Calc", ReadOnlyHint: &yes},
		Icons:        []Icon{{Src: "https://example.com/i.png", MimeType: "image/png", Sizes: []string{"48x48"}}},
		Meta:         map[string]any{"k": "v"},
	}
}

func TestShapeToolPerRevision(t *testing.T) {
	var p RevisionPolicy
	want := map[Revision]string{
		Revision20241105: `{"name":"calculate","description":"Performs arithmetic.","inputSchema":{"type":"object"}}`,
		Revision20250326: `{"name":"calculate","description":"Performs arithmetic.","inputSchema":{"type":"object"},"annotations":{"title":"Calc","readOnlyHint":true}}`,
		Revision20250618: `{"name":"calculate","title":"Calculator","description":"Performs arithmetic.","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"r":{"type":"number"}}},"annotations":{"title":"Calc","readOnlyHint":true},"_meta":{"k":"v"}}`,
		Revision20251125: `{"name":"calculate","title":"Calculator","description":"Performs arithmetic.","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"r":{"type":"number"}}},"annotations":{"title":"Calc","readOnlyHint":true},"icons":[{"src":"https://example.com/i.png","mimeType":"image/png","sizes":["48x48"]}],"_meta":{"k":"v"}}`,
		Revision20260728: `{"name":"calculate","title":"Calculator","description":"Performs arithmetic.","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"r":{"type":"number"}}},"annotations":{"title":"Calc","readOnlyHint":true},"icons":[{"src":"https://example.com/i.png","mimeType":"image/png","sizes":["48x48"]}],"_meta":{"k":"v"}}`,
	}
	for rev, w := range want {
		tool := fullTool()
		b, err := p.ShapeTool(tool, rev).AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != w {
			t.Errorf("%s:\n got: %s\nwant: %s", rev, b, w)
		}
		if tool.Title != "Calculator" {
			t.Fatal("ShapeTool modified its argument")
		}
	}
}

func TestShapeToolNonObjectOutputSchema(t *testing.T) {
	var p RevisionPolicy
	tool := &Tool{Name: "flat", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"array"}`)}
	if s := p.ShapeTool(tool, Revision20251125).OutputSchema; s != nil {
		t.Errorf("2025-11-25 must not see an array outputSchema, got %s", s)
	}
	if s := p.ShapeTool(tool, Revision20260728).OutputSchema; string(s) != `{"type":"array"}` {
		t.Errorf("2026-07-28 must see the array outputSchema, got %s", s)
	}
}

func TestShapeContentDowngrades(t *testing.T) {
	var p RevisionPolicy
	audio := &AudioContent{Data: "AA==", MimeType: "audio/wav"}
	if got := p.shapeContent(audio, Revision20241105); got.ContentType() != "text" {
		t.Fatalf("audio in 2024-11-05 should become text, got %s", got.ContentType())
	} else if txt := got.(*TextContent).Text; txt != "[audio omitted (audio/wav): the client's protocol revision has no audio content]" {
		t.Fatalf("audio text = %q", txt)
	}
	if got := p.shapeContent(audio, Revision20250326); got != Content(audio) {
		t.Fatal("audio in 2025-03-26 must be kept as is")
	}
	link := &ResourceLink{URI: "file://data.json", Name: "data.json", Description: "The data", Icons: []Icon{{Src: "https://x/y.png"}}, Meta: map[string]any{"a": 1}}
	if got := p.shapeContent(link, Revision20250326); got.ContentType() != "text" || got.(*TextContent).Text != "Resource: data.json <file://data.json>\nThe data" {
		t.Fatalf("resource link in 2025-03-26 = %#v", got)
	}
	got := p.shapeContent(link, Revision20250618).(*ResourceLink)
	if got.Icons != nil || got.Meta == nil {
		t.Fatalf("2025-06-18 link must drop icons and keep _meta: %+v", got)
	}
	if link.Icons == nil {
		t.Fatal("ShapeContent modified its argument")
	}
	txt := &TextContent{Text: "x", Annotations: &Annotations{Audience: []string{"user"}, LastModified: "2025-01-01T00:00:00Z"}, Meta: map[string]any{"m": 1}}
	b, _ := json.Marshal(p.shapeContent(txt, Revision20250326))
	if string(b) != `{"type":"text","text":"x","annotations":{"audience":["user"]}}` {
		t.Fatalf("text in 2025-03-26 = %s", b)
	}
	b, _ = json.Marshal(p.shapeContent(txt, Revision20251125))
	if string(b) != `{"type":"text","text":"x","annotations":{"audience":["user"],"lastModified":"2025-01-01T00:00:00Z"},"_meta":{"m":1}}` {
		t.Fatalf("text in 2025-11-25 = %s", b)
	}
}

func TestShapeResultLeavesUnchangedResultAlone(t *testing.T) {
	var p RevisionPolicy
	r := &CallToolResult{Content: []Content{&TextContent{Text: "a"}}}
	if p.shapeResult(r, Revision20241105) != r {
		t.Fatal("a result with nothing to strip must be returned as is")
	}
	r2 := &CallToolResult{Content: []Content{&TextContent{Text: "a"}}, StructuredContent: json.RawMessage(`[1]`)}
	if got := p.shapeResult(r2, Revision20251125); got.StructuredContent != nil {
		t.Fatal("a list structuredContent must be dropped before 2026-07-28")
	}
	if got := p.shapeResult(r2, Revision20260728); string(got.StructuredContent) != `[1]` {
		t.Fatal("a list structuredContent must be kept from 2026-07-28")
	}
}

func TestNegotiate(t *testing.T) {
	var p RevisionPolicy
	for req, want := range map[string]Revision{
		"2024-11-05": Revision20241105, "2025-03-26": Revision20250326, "2025-06-18": Revision20250618,
		"2025-11-25": Revision20251125, "2026-07-28": Revision20251125, "1999-01-01": Revision20251125, "": Revision20251125,
	} {
		if got, ok := p.Negotiate(req); !ok || got != want {
			t.Errorf("Negotiate(%q) = %s, %v; want %s", req, got, ok, want)
		}
	}
	if !p.AcceptsStateless("2026-07-28") || p.AcceptsStateless("2025-11-25") || p.AcceptsStateless("2099-01-01") {
		t.Error("AcceptsStateless wrong")
	}
	d := RevisionPolicy{Disabled: []Revision{Revision20251125, Revision20250618}}
	if got, _ := d.Negotiate("2025-11-25"); got != Revision20250326 {
		t.Errorf("with 2025-11-25 disabled, Negotiate = %s", got)
	}
	only := RevisionPolicy{Disabled: []Revision{Revision20251125, Revision20250618, Revision20250326, Revision20241105}}
	if _, ok := only.Negotiate("2025-11-25"); ok {
		t.Error("a stateless-only policy cannot negotiate a handshake")
	}
}

func TestValidateToolName(t *testing.T) {
	good := []string{"a", "get_weather", "ns.tool-1", string(make([]byte, 0)) + "x"}
	long := make([]byte, 128)
	for i := range long {
		long[i] = 'a'
	}
	good = append(good, string(long))
	for _, n := range good {
		if err := ValidateToolName(n); err != nil {
			t.Errorf("%q: %v", n, err)
		}
	}
	for _, n := range []string{"", "has space", "emoji😀", "slash/x", string(long) + "a", "comma,"} {
		if err := ValidateToolName(n); err == nil {
			t.Errorf("%q accepted", n)
		}
	}
}

func TestIconValidate(t *testing.T) {
	good := []Icon{{Src: "https://x.org/i.png"}, {Src: "data:image/png;base64,AAAA", Sizes: []string{"48x48", "any"}, Theme: "dark"}}
	for _, i := range good {
		if err := i.Validate(); err != nil {
			t.Errorf("%+v: %v", i, err)
		}
	}
	bad := []Icon{{}, {Src: "ftp://x/i.png"}, {Src: "javascript:alert(1)"}, {Src: "https://x/i.png", Sizes: []string{"big"}}, {Src: "https://x/i.png", Sizes: []string{"4ax48"}}, {Src: "https://x/i.png", Sizes: []string{"48x"}}, {Src: "https://x/i.png", Theme: "blue"}, {Src: "https:///nohost"}, {Src: "data:nocomma"}}
	for _, i := range bad {
		if err := i.Validate(); err == nil {
			t.Errorf("%+v accepted", i)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":       `"plain"`,
		"q\"b\\":      `"q\"b\\"`,
		"nl\n\r\t":    `"nl\n\r\t"`,
		"\x01":        `"\u0001"`,
		"<&>":         `"<&>"`,
		"\u2028":      `"\u2028"`,
		"bad\xffutf8": `"bad\ufffdutf8"`,
		"ünïcödé":     `"ünïcödé"`,
	} {
		got := string(appendJSONString(nil, in))
		if got != want {
			t.Errorf("%q: got %s want %s", in, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%q: invalid JSON %s", in, got)
		}
	}
}

func TestFormatFloat(t *testing.T) {
	for f, want := range map[float64]string{3: "3", 0.5: "0.5", 1e21: "1e+21", 1e-7: "1e-7", -2.25: "-2.25", 123456789: "123456789"} {
		if got := formatFloat(f, 64); got != want {
			t.Errorf("%v: %s want %s", f, got, want)
		}
		b, _ := json.Marshal(f)
		if string(b) != formatFloat(f, 64) {
			t.Errorf("%v differs from encoding/json: %s vs %s", f, b, formatFloat(f, 64))
		}
	}
	// float32 values, at and around the edges of the plain form, as
	// encoding/json writes them.
	for _, f := range []float32{1e21, 9.99e20, 1e-6, 9.99e-7, 0.1, -3.5, 16777216} {
		b, _ := json.Marshal(f)
		if got := formatFloat(float64(f), 32); got != string(b) {
			t.Errorf("float32 %v: %s, encoding/json %s", f, got, b)
		}
	}
}

func TestLogLevels(t *testing.T) {
	if !LogError.AtLeast(LogInfo) || LogDebug.AtLeast(LogInfo) || !LogInfo.AtLeast(LogInfo) || LogEmergency.AtLeast("") || LogLevel("x").Valid() {
		t.Fatal("log level ordering wrong")
	}
}
