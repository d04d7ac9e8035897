package domain_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
)

func TestMatchTemplate(t *testing.T) {
	cases := []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
	}{
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template//data", nil},
		{"test://template/{id}/data", "test://template/1/2/data", nil},
		{"test://template/{id}/data", "test://template/123/data/x", nil},
		{"file:///logs/{day}.txt", "file:///logs/2025-01-01.txt", map[string]string{"day": "2025-01-01"}},
		{"file:///logs/{day}.txt", "file:///logs/a.b.txt", map[string]string{"day": "a.b"}},
		{"db://{table}/{row}", "db://users/42", map[string]string{"table": "users", "row": "42"}},
		{"db://{table}/{row}", "db://users", nil},
		{"x://{a}-{b}", "x://1-2-3", map[string]string{"a": "1", "b": "2-3"}},
		{"x://n/{q}", "x://n/a%20b%2Cc", map[string]string{"q": "a b,c"}},
		{"x://n/{q}", "x://n/a%20b%2Fc", nil}, // a decoded '/' does not match
		{"x://n/{q}", "x://n/%zz", nil},
		{"x://static", "x://static", map[string]string{}},
		{"x://{bad", "x://a", nil},
	}
	for _, c := range cases {
		got, ok := domain.MatchTemplate(c.tmpl, c.uri)
		if ok != (c.want != nil) || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("MatchTemplate(%q, %q) = %v, %v; want %v", c.tmpl, c.uri, got, ok, c.want)
		}
	}
}

func TestValidateTemplate(t *testing.T) {
	for _, ok := range []string{"test://template/{id}/data", "file:///{path}", "x://{a}.{b}", "x://plain"} {
		if err := domain.ValidateTemplate(ok); err != nil {
			t.Errorf("ValidateTemplate(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "{id}", "no-scheme/{id}", "x://{a}{b}", "x://{+path}", "x://{a,b}", "x://{}", "x://{a", "x://a}", "x://{a}/{a}", "x://{a-b}"} {
		if err := domain.ValidateTemplate(bad); err == nil {
			t.Errorf("ValidateTemplate(%q) accepted", bad)
		}
	}
	// An operator is named as such.
	for _, op := range []string{"x://{+path}", "x://{#frag}", "x://{/seg}", "x://{?q}"} {
		if err := domain.ValidateTemplate(op); err == nil || !strings.Contains(err.Error(), "only level-1 {var} expressions are supported") {
			t.Errorf("ValidateTemplate(%q) = %v, want the operator refused as such", op, err)
		}
	}
}

func TestResourceValidate(t *testing.T) {
	neg := int64(-1)
	bad := []domain.Resource{
		{Name: "n"},
		{URI: "no-scheme", Name: "n"},
		{URI: "x://a"},
		{URI: "x://a", Name: "n", MimeType: "text"},
		{URI: "x://a", Name: "n", Size: &neg},
		{URI: "x://a", Name: "n", Icons: []domain.Icon{{Src: "ftp://x"}}},
		{URI: "x://a", Name: "n", Meta: map[string]any{"f": func() {}}},
	}
	for _, r := range bad {
		err := r.Validate()
		var de *domain.DefinitionError
		if !errors.As(err, &de) || de.Kind != "resource" {
			t.Errorf("Validate(%+v) = %v, want a resource DefinitionError", r, err)
		}
	}
	ok := domain.Resource{URI: "test://static-text", Name: "static", MimeType: "text/plain"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	tm := domain.ResourceTemplate{URITemplate: "x://{a}{b}", Name: "t"}
	if err := tm.Validate(); err == nil {
		t.Fatal("adjacent expressions accepted")
	}
}

func TestShapeResource(t *testing.T) {
	size := int64(5)
	prio := 0.5
	r := &domain.Resource{
		URI: "x://a", Name: "a", Title: "A", Description: "d", MimeType: "text/plain", Size: &size,
		Icons:       []domain.Icon{{Src: "https://example.com/i.png"}},
		Annotations: &domain.Annotations{Audience: []string{"user"}, Priority: &prio, LastModified: "2025-01-12T15:00:58Z"},
		Meta:        map[string]any{"k": "v"},
	}
	var p domain.RevisionPolicy
	want := map[domain.Revision]string{
		domain.Revision20241105: `{"uri":"x://a","name":"a","description":"d","mimeType":"text/plain","size":5,"annotations":{"audience":["user"],"priority":0.5}}`,
		domain.Revision20250326: `{"uri":"x://a","name":"a","description":"d","mimeType":"text/plain","size":5,"annotations":{"audience":["user"],"priority":0.5}}`,
		domain.Revision20250618: `{"uri":"x://a","name":"a","title":"A","description":"d","mimeType":"text/plain","size":5,"annotations":{"audience":["user"],"priority":0.5,"lastModified":"2025-01-12T15:00:58Z"},"_meta":{"k":"v"}}`,
		domain.Revision20251125: `{"uri":"x://a","name":"a","title":"A","description":"d","mimeType":"text/plain","size":5,"icons":[{"src":"https://example.com/i.png"}],"annotations":{"audience":["user"],"priority":0.5,"lastModified":"2025-01-12T15:00:58Z"},"_meta":{"k":"v"}}`,
		domain.Revision20260728: `{"uri":"x://a","name":"a","title":"A","description":"d","mimeType":"text/plain","size":5,"icons":[{"src":"https://example.com/i.png"}],"annotations":{"audience":["user"],"priority":0.5,"lastModified":"2025-01-12T15:00:58Z"},"_meta":{"k":"v"}}`,
	}
	for rev, w := range want {
		b, err := p.ShapeResource(r, rev).AppendJSON(nil)
		if err != nil || string(b) != w {
			t.Errorf("%s:\n got %s (%v)\nwant %s", rev, b, err, w)
		}
	}
	if r.Title != "A" || r.Meta == nil || r.Annotations.LastModified == "" {
		t.Fatal("ShapeResource modified its input")
	}

	tm := &domain.ResourceTemplate{URITemplate: "x://{id}", Name: "t", Title: "T", MimeType: "text/plain", Icons: r.Icons, Meta: r.Meta}
	b, _ := p.ShapeResourceTemplate(tm, domain.Revision20250326).AppendJSON(nil)
	if string(b) != `{"uriTemplate":"x://{id}","name":"t","mimeType":"text/plain"}` {
		t.Errorf("template 2025-03-26: %s", b)
	}
	b, _ = p.ShapeResourceTemplate(tm, domain.Revision20251125).AppendJSON(nil)
	if string(b) != `{"uriTemplate":"x://{id}","name":"t","title":"T","mimeType":"text/plain","icons":[{"src":"https://example.com/i.png"}],"_meta":{"k":"v"}}` {
		t.Errorf("template 2025-11-25: %s", b)
	}
}

func TestResourceContentsJSON(t *testing.T) {
	var p domain.RevisionPolicy
	c := domain.ResourceContents{URI: "x://a", MimeType: "text/plain", Text: "hi", Meta: map[string]any{"k": 1}}
	sc := p.Features(domain.Revision20250326).ShapeResourceContents(c)
	b, _ := sc.AppendJSON(nil)
	if string(b) != `{"uri":"x://a","mimeType":"text/plain","text":"hi"}` {
		t.Errorf("text: %s", b)
	}
	b, _ = json.Marshal(&domain.ResourceContents{URI: "x://b", Blob: "AAE=", Meta: map[string]any{"k": 1}})
	if string(b) != `{"uri":"x://b","blob":"AAE=","_meta":{"k":1}}` {
		t.Errorf("blob: %s", b)
	}
	b, _ = (&domain.ResourceContents{URI: "x://e"}).AppendJSON(nil)
	if string(b) != `{"uri":"x://e","text":""}` {
		t.Errorf("empty text: %s", b)
	}
}

func TestResourceNotFoundCode(t *testing.T) {
	var p domain.RevisionPolicy
	for rev, want := range map[domain.Revision]int{
		domain.Revision20241105: -32002, domain.Revision20250618: -32002, domain.Revision20251125: -32002,
		domain.Revision20260728: -32602,
	} {
		if got := p.ResourceNotFoundCode(rev); got != want {
			t.Errorf("%s: %d, want %d", rev, got, want)
		}
	}
}
