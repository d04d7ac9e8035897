package domain_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
)

func TestElicitSchemaFor(t *testing.T) {
	type ok struct {
		Name    string   `json:"name" description:"Your name" default:"John Doe"`
		Age     int      `json:"age,omitempty" default:"30"`
		Score   float64  `json:"score,omitempty" default:"95.5"`
		Status  string   `json:"status,omitempty" enum:"active,inactive" default:"active"`
		OK      bool     `json:"ok,omitempty" default:"true"`
		Nothing struct{} `json:"-"`
	}
	got, err := domain.ElicitSchemaFor(reflect.TypeFor[ok]())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"name":{"type":"string","description":"Your name","default":"John Doe"},"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},"status":{"type":"string","enum":["active","inactive"],"default":"active"},"ok":{"type":"boolean","default":true}},"required":["name"]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct {
			Nested struct{ A int } `json:"nested"`
		}](),
		reflect.TypeFor[struct {
			List []string `json:"list"`
		}](),
		reflect.TypeFor[[]string](),
	} {
		var se *domain.SchemaError
		if _, err := domain.ElicitSchemaFor(typ); !errors.As(err, &se) {
			t.Errorf("%v: want a *SchemaError, got %v", typ, err)
		}
	}
}

func TestElicitParams(t *testing.T) {
	form := elicitForm("Name?", json.RawMessage(`{"type":"object","properties":{}}`))
	if err := form.Validate(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(form)
	if string(b) != `{"message":"Name?","requestedSchema":{"type":"object","properties":{}}}` {
		t.Fatalf("form: %s", b)
	}
	url := domain.ElicitParams{Mode: domain.ElicitModeURL, Message: "Open", URL: "https://example.com", ElicitationID: "e1"}
	b, _ = json.Marshal(url)
	if string(b) != `{"mode":"url","message":"Open","url":"https://example.com","elicitationId":"e1"}` {
		t.Fatalf("url: %s", b)
	}
	for name, p := range map[string]domain.ElicitParams{
		"no schema":     elicitForm("x", nil),
		"array schema":  elicitForm("x", json.RawMessage(`{"type":"array"}`)),
		"no message":    elicitForm("", json.RawMessage(`{"type":"object","properties":{}}`)),
		"url no id":     domain.ElicitParams{Mode: domain.ElicitModeURL, Message: "x", URL: "https://e"},
		"unknown mode":  {Mode: "voice", Message: "x"},
		"form with url": {Message: "x", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`), URL: "https://e"},
	} {
		if p.Validate() == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

func TestClientResults(t *testing.T) {
	r := &domain.CreateMessageResult{Role: domain.RoleAssistant, Content: json.RawMessage(`{"type":"text","text":"Paris"}`), Model: "m"}
	if r.Check() != nil || r.Text() != "Paris" {
		t.Fatalf("single block: %v %q", r.Check(), r.Text())
	}
	r.Content = json.RawMessage(`[{"type":"text","text":"a"},{"type":"image","data":"x","mimeType":"image/png"},{"type":"text","text":"b"}]`)
	if r.Text() != "a\nb" {
		t.Fatalf("blocks: %q", r.Text())
	}
	if (&domain.CreateMessageResult{Role: "system", Content: r.Content, Model: "m"}).Check() == nil {
		t.Fatal("bad role accepted")
	}
	if (&domain.ElicitResult{Action: "later"}).Check() == nil {
		t.Fatal("bad action accepted")
	}
	if err := (&domain.ElicitResult{Action: domain.ElicitDecline}).Decode(new(map[string]any)); err == nil || !strings.Contains(err.Error(), "decline") {
		t.Fatalf("decode of a declined elicitation: %v", err)
	}
	if (&domain.ListRootsResult{}).Check() == nil || (&domain.ListRootsResult{Roots: []domain.Root{{}}}).Check() == nil {
		t.Fatal("bad roots accepted")
	}
	if (&domain.CreateMessageParams{Messages: []domain.SamplingMessage{{Role: domain.RoleUser, Content: json.RawMessage(`{"type":"text","text":"x"}`)}}}).Validate() == nil {
		t.Fatal("maxTokens 0 accepted")
	}
	text := json.RawMessage(`{"type":"text","text":"x"}`)
	for _, role := range []domain.Role{domain.RoleUser, domain.RoleAssistant} {
		if err := (&domain.CreateMessageParams{MaxTokens: 1, Messages: []domain.SamplingMessage{{Role: role, Content: text}}}).Validate(); err != nil {
			t.Fatalf("a %s message refused: %v", role, err)
		}
	}
	if err := (&domain.CreateMessageParams{MaxTokens: 1, Messages: []domain.SamplingMessage{{Role: "system", Content: text}}}).Validate(); err == nil || !strings.Contains(err.Error(), "role must be user or assistant") {
		t.Fatalf("a system message: %v, want refused", err)
	}
	for content, ok := range map[string]bool{`{"a":1}`: true, `null`: true, ``: true, `[1]`: false, `"x"`: false} {
		err := (&domain.ElicitResult{Action: domain.ElicitAccept, Content: json.RawMessage(content)}).Check()
		if (err == nil) != ok {
			t.Errorf("accepted content %q: %v, want accepted %v", content, err, ok)
		}
	}
}

// elicitForm is a form elicitation (hexmcp.ElicitForm).
func elicitForm(message string, schema json.RawMessage) domain.ElicitParams {
	return domain.ElicitParams{Mode: domain.ElicitModeForm, Message: message, RequestedSchema: schema}
}
