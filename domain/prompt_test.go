package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
)

func TestPromptValidate(t *testing.T) {
	ok := domain.Prompt{Name: "review-code.v2", Arguments: []domain.PromptArgument{{Name: "a"}, {Name: "b", Required: true}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]domain.Prompt{
		"empty name": {},
		"bad char":   {Name: "a b"},
		"too long":   {Name: strings.Repeat("a", 129)},
		"arg empty":  {Name: "a", Arguments: []domain.PromptArgument{{}}},
		"arg twice":  {Name: "a", Arguments: []domain.PromptArgument{{Name: "x"}, {Name: "x"}}},
		"bad icon":   {Name: "a", Icons: []domain.Icon{{Src: "ftp://x"}}},
		"bad meta":   {Name: "a", Meta: map[string]any{"c": make(chan int)}},
	} {
		var pe *domain.DefinitionError
		if err := p.Validate(); !errors.As(err, &pe) || pe.Kind != "prompt" {
			t.Errorf("%s: Validate = %v", name, err)
		} else if strings.Contains(err.Error(), "tool") {
			t.Errorf("%s: message speaks of tools: %v", name, err)
		}
	}
	if m := ok.MissingArgument(map[string]string{"a": "1"}); m != "b" {
		t.Fatalf("MissingArgument = %q", m)
	}
	if m := ok.MissingArgument(map[string]string{"b": ""}); m != "" {
		t.Fatalf("MissingArgument = %q", m)
	}
}

func TestPromptShapeAndJSON(t *testing.T) {
	var pol domain.RevisionPolicy
	p := &domain.Prompt{Name: "p", Title: "P", Description: "d",
		Arguments: []domain.PromptArgument{{Name: "a", Title: "A", Required: true}},
		Icons:     []domain.Icon{{Src: "https://x/i.png"}}, Meta: map[string]any{"k": 1}}
	cases := map[domain.Revision]string{
		domain.Revision20241105: `{"name":"p","description":"d","arguments":[{"name":"a","required":true}]}`,
		domain.Revision20250618: `{"name":"p","title":"P","description":"d","arguments":[{"name":"a","title":"A","required":true}],"_meta":{"k":1}}`,
		domain.Revision20251125: `{"name":"p","title":"P","description":"d","arguments":[{"name":"a","title":"A","required":true}],"icons":[{"src":"https://x/i.png"}],"_meta":{"k":1}}`,
	}
	for rev, want := range cases {
		b, err := pol.ShapePrompt(p, rev).AppendJSON(nil)
		if err != nil || string(b) != want {
			t.Errorf("%s: %s, %v\nwant %s", rev, b, err, want)
		}
	}
	if p.Title != "P" || p.Arguments[0].Title != "A" || p.Icons == nil {
		t.Fatal("ShapePrompt modified its argument")
	}
}

func TestPromptResult(t *testing.T) {
	var pol domain.RevisionPolicy
	r := &domain.GetPromptResult{Description: "d", Messages: []domain.PromptMessage{
		{Role: domain.RoleUser, Content: &domain.AudioContent{Data: "AQ==", MimeType: "audio/wav"}},
		{Role: domain.RoleAssistant, Content: &domain.TextContent{Text: "ok"}},
	}, Meta: map[string]any{"k": 1}}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	s := pol.Features(domain.Revision20241105).ShapePromptResult(r)
	if s.Meta != nil || s.Messages[0].Content.ContentType() != "text" || r.Messages[0].Content.ContentType() != "audio" {
		t.Fatalf("shaped %+v", s)
	}
	b, err := pol.Features(domain.Revision20250326).ShapePromptResult(r).AppendJSON(nil)
	want := `"description":"d","messages":[{"role":"user","content":{"type":"audio","data":"AQ==","mimeType":"audio/wav"}},{"role":"assistant","content":{"type":"text","text":"ok"}}]`
	if err != nil || string(b) != want {
		t.Fatalf("%s, %v", b, err)
	}
	for _, bad := range []domain.GetPromptResult{
		{Messages: []domain.PromptMessage{{Role: "system", Content: &domain.TextContent{Text: "x"}}}},
		{Messages: []domain.PromptMessage{{Role: domain.RoleUser}}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", bad)
		}
	}
}

func TestTemplateVariables(t *testing.T) {
	if v := domain.TemplateVariables("x://{owner}/{repo}/f"); strings.Join(v, ",") != "owner,repo" {
		t.Fatal(v)
	}
	if v := domain.TemplateVariables("x://{a}{b}"); v != nil {
		t.Fatal(v)
	}
}

func TestCompletionsCapability(t *testing.T) {
	var pol domain.RevisionPolicy
	if pol.Features(domain.Revision20241105).CompletionsCapability || !pol.Features(domain.Revision20250326).CompletionsCapability {
		t.Fatal("CompletionsCapability")
	}
}
