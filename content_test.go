package hexmcp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/hexmcp/hexmcp"
)

// TestContentConstructors holds the front door's constructors to the JSON
// a client receives for what they make.
func TestContentConstructors(t *testing.T) {
	for name, tc := range map[string]struct {
		v    any
		want string
	}{
		"text":               {hexmcp.Text("hi"), `{"type":"text","text":"hi"}`},
		"image":              {hexmcp.Image([]byte{1, 2}, "image/png"), `{"type":"image","data":"AQI=","mimeType":"image/png"}`},
		"audio":              {hexmcp.Audio([]byte{0xff}, "audio/wav"), `{"type":"audio","data":"/w==","mimeType":"audio/wav"}`},
		"embedded text":      {hexmcp.EmbeddedText("file:///a", "x"), `{"type":"resource","resource":{"uri":"file:///a","text":"x"}}`},
		"embedded text mime": {hexmcp.EmbeddedText("file:///a", "x", "text/plain"), `{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"x"}}`},
		"embedded blob":      {hexmcp.EmbeddedBlob("file:///b", []byte{1}, "application/octet-stream"), `{"type":"resource","resource":{"uri":"file:///b","mimeType":"application/octet-stream","blob":"AQ=="}}`},
		"user text":          {hexmcp.UserText(`say "hi"`), `{"role":"user","content":{"type":"text","text":"say \"hi\""}}`},
		"assistant text":     {hexmcp.AssistantText("ok"), `{"role":"assistant","content":{"type":"text","text":"ok"}}`},
	} {
		got, err := json.Marshal(tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s, %v; want %s", name, got, err, tc.want)
		}
	}
	if m := hexmcp.UserMessage(hexmcp.Text("q")); m.Role != "user" || m.Content.(*hexmcp.TextContent).Text != "q" {
		t.Errorf("UserMessage = %+v", m)
	}
	if m := hexmcp.AssistantMessage(hexmcp.Text("a")); m.Role != "assistant" {
		t.Errorf("AssistantMessage = %+v", m)
	}
	if b := hexmcp.Bool(true); b == nil || !*b || hexmcp.Bool(true) == b {
		t.Error("Bool must return a fresh pointer to its value")
	}
}

// TestCode fences code with more backticks than it holds in a row.
func TestCode(t *testing.T) {
	if got := hexmcp.Code(`echo "hi";`, "php").Text; got != "```php\necho \"hi\";\n```" {
		t.Fatalf("%q", got)
	}
	if got := hexmcp.Code("a ``` b\n", "md").Text; got != "````md\na ``` b\n````" {
		t.Fatalf("fence not lengthened, or a second newline: %q", got)
	}
}

// TestToolErrors: ToolErrorf keeps a %w operand as the cause, and both
// constructors' errors are found with errors.As through wrapping.
func TestToolErrors(t *testing.T) {
	cause := errors.New("disk")
	te := hexmcp.ToolErrorf("cannot read %s: %w", "x", cause)
	if te.Message != "cannot read x: disk" || !errors.Is(te, cause) {
		t.Fatalf("ToolErrorf = %+v", te)
	}
	if hexmcp.ToolErrorf("no cause %d", 1).Unwrap() != nil {
		t.Fatal("a ToolErrorf without %w has no cause")
	}
	var got *hexmcp.ToolError
	if !errors.As(fmt.Errorf("wrapped: %w", hexmcp.NewToolError("File not found")), &got) || got.Message != "File not found" {
		t.Fatalf("NewToolError through wrapping = %+v", got)
	}
}

// TestElicitConstructors: the two modes of a question, each valid as made.
func TestElicitConstructors(t *testing.T) {
	form := hexmcp.ElicitForm("Name?", json.RawMessage(`{"type":"object","properties":{}}`))
	if form.Mode != "form" || form.Message != "Name?" || form.Validate() != nil {
		t.Errorf("ElicitForm = %+v (%v)", form, form.Validate())
	}
	url := hexmcp.ElicitURL("Open", "https://example.com/consent", "e1")
	if url.Mode != "url" || url.URL != "https://example.com/consent" || url.ElicitationID != "e1" || url.Validate() != nil {
		t.Errorf("ElicitURL = %+v (%v)", url, url.Validate())
	}
}

// TestSamplingVocabulary: a sampling request's model preferences are
// written with the front door's names alone.
func TestSamplingVocabulary(t *testing.T) {
	speed := 0.8
	p := hexmcp.CreateMessageParams{
		Messages:         []hexmcp.SamplingMessage{hexmcp.UserText("hi"), hexmcp.AssistantText("hello")},
		ModelPreferences: &hexmcp.ModelPreferences{Hints: []hexmcp.ModelHint{{Name: "sonnet"}}, SpeedPriority: &speed},
		MaxTokens:        10,
	}
	got, err := json.Marshal(p)
	want := `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}},{"role":"assistant","content":{"type":"text","text":"hello"}}],` +
		`"modelPreferences":{"hints":[{"name":"sonnet"}],"speedPriority":0.8},"maxTokens":10}`
	if err != nil || string(got) != want {
		t.Fatalf("%s, %v; want %s", got, err, want)
	}
}

// TestEraNames: the front door's era names are the engine's.
func TestEraNames(t *testing.T) {
	if hexmcp.EraHandshake == hexmcp.EraStateless || hexmcp.EraStateless.String() != "stateless" {
		t.Fatalf("EraHandshake %v, EraStateless %v", hexmcp.EraHandshake, hexmcp.EraStateless)
	}
}
