package decl_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
)

func read(context.Context, string, map[string]string) ([]domain.ResourceContents, error) {
	return []domain.ResourceContents{{Text: "read"}}, nil
}

func noop(context.Context, string, map[string]string) ([]string, error) { return nil, nil }

// A plain resource's declaration: every option in its definition, its
// handler, no template.
func TestNewResource(t *testing.T) {
	r := decl.NewResource("x://a", "a", read, decl.WithMimeType("text/x"), decl.WithSize(42), nil)
	res, tmpl, h, completers, err := decl.ResourceOf(r)
	if err != nil || r.Err() != nil || tmpl != nil || r.TemplateDefinition() != nil || r.IsTemplate() || completers != nil {
		t.Fatalf("ResourceOf = template %v, completers %v, %v", tmpl, completers, err)
	}
	if res != r.Definition() || res.URI != "x://a" || res.Name != "a" || res.MimeType != "text/x" || res.Size == nil || *res.Size != 42 {
		t.Errorf("definition %+v", res)
	}
	if c, err := h(context.Background(), "x://a", nil); err != nil || len(c) != 1 || c[0].Text != "read" {
		t.Errorf("handler = %+v, %v", c, err)
	}
	if res, tmpl, h, c, err := decl.ResourceOf(decl.Resource{}); res != nil || tmpl != nil || h != nil || c != nil || err != nil {
		t.Error("the zero Resource declares something")
	}
}

// Options that only a template takes are errors on a plain resource, and
// the reverse; an option's own error is the one reported.
func TestResourceDeclarationErrors(t *testing.T) {
	toolAnn := decl.WithAnnotations(domain.ToolAnnotations{})
	for _, tc := range []struct {
		name string
		r    decl.Resource
		want string
	}{
		{"plain resource with a completer", decl.NewResource("x://a", "a", read, decl.WithTemplateCompleter("a", noop)), "a plain resource has no variables to complete"},
		{"plain resource with raw values", decl.NewResource("x://a", "a", read, decl.WithRawTemplateValues()), "(WithRawTemplateValues)"},
		{"raw values and a completer", decl.NewResource("x://a", "a", read, decl.WithTemplateCompleter("a", noop), decl.WithRawTemplateValues()), "(WithRawTemplateValues)"},
		{"raw values and tool annotations", decl.TextResource("x://a", "a", "t", decl.WithRawTemplateValues(), toolAnn), "domain.Annotations"},
		{"completer of no variable", decl.NewResourceTemplate("x://{a}", "a", read, decl.WithTemplateCompleter("a", noop), decl.WithTemplateCompleter("b", noop)), `completer for variable "b", which the template lacks`},
		{"sized template", decl.NewResourceTemplate("x://{a}", "t", read, decl.WithSize(3)), "a resource template has no size"},
		{"sized template, missing variable", decl.NewResourceTemplate("x://{a}", "t", read, decl.WithTemplateCompleter("b", noop), decl.WithSize(3)), "a resource template has no size"},
		{"sized template, tool annotations", decl.NewResourceTemplate("x://{a}", "t", read, decl.WithSize(3), toolAnn), "domain.Annotations"},
	} {
		wantResourceError(t, tc.name, tc.r.Err(), tc.want)
		if _, _, _, _, err := decl.ResourceOf(tc.r); err != tc.r.Err() {
			t.Errorf("%s: ResourceOf's error %v is not Err's", tc.name, err)
		}
	}
	if err := decl.NewResourceTemplate("x://{a}", "t", read, decl.WithSize(3)).Err(); err == nil || !strings.Contains(err.Error(), `"x://{a}"`) {
		t.Errorf("the error does not name the template: %v", err)
	}
}

// A template's declaration: its options, its completers (for variables it
// has), raw values when asked.
func TestNewResourceTemplate(t *testing.T) {
	one := func(context.Context, string, map[string]string) ([]string, error) { return []string{"one"}, nil }
	r := decl.NewResourceTemplate("x://{a}/{b}", "t", read, decl.WithMimeType("text/x"),
		decl.WithTemplateCompleter("a", one), decl.WithTemplateCompleter("b", noop), nil)
	res, tmpl, h, completers, err := decl.ResourceOf(r)
	if err != nil || res != nil || r.Definition() != nil || !r.IsTemplate() || tmpl != r.TemplateDefinition() {
		t.Fatalf("ResourceOf = resource %v, %v", res, err)
	}
	if tmpl.URITemplate != "x://{a}/{b}" || tmpl.Name != "t" || tmpl.MimeType != "text/x" || tmpl.RawValues {
		t.Errorf("definition %+v", tmpl)
	}
	if len(completers) != 2 || completers["b"] == nil {
		t.Fatalf("completers %v, want a and b", completers)
	}
	if got, _ := completers["a"](context.Background(), "", nil); !reflect.DeepEqual(got, []string{"one"}) {
		t.Errorf("completer of a = %v", got)
	}
	if c, err := h(context.Background(), "x://1/2", map[string]string{"a": "1"}); err != nil || len(c) != 1 {
		t.Errorf("handler = %v, %v", c, err)
	}
	raw := decl.NewResourceTemplate("x://{a}", "t", read, decl.WithRawTemplateValues())
	if raw.Err() != nil || !raw.TemplateDefinition().RawValues {
		t.Errorf("WithRawTemplateValues: %+v, %v", raw.TemplateDefinition(), raw.Err())
	}
}

// TextResource and BlobResource read their fixed contents, with a default
// MIME type an option overrides.
func TestFixedResources(t *testing.T) {
	for _, tc := range []struct {
		r        decl.Resource
		mime     string
		contents []domain.ResourceContents
	}{
		{decl.TextResource("x://t", "t", "hello"), "text/plain", []domain.ResourceContents{{Text: "hello"}}},
		{decl.TextResource("x://t", "t", "", decl.WithMimeType("text/markdown")), "text/markdown", []domain.ResourceContents{{Text: ""}}},
		{decl.BlobResource("x://b", "b", []byte{0, 1, 2, 0xff}), "application/octet-stream", []domain.ResourceContents{{Blob: "AAEC/w=="}}},
		{decl.BlobResource("x://b", "b", []byte{0, 1, 2}, decl.WithMimeType("image/png")), "image/png", []domain.ResourceContents{{Blob: "AAEC"}}},
		{decl.BlobResource("x://b", "b", nil), "application/octet-stream", []domain.ResourceContents{{Text: ""}}},
	} {
		res, _, h, _, err := decl.ResourceOf(tc.r)
		if err != nil || res.MimeType != tc.mime {
			t.Errorf("%s: MIME type %q, %v; want %q", res.URI, res.MimeType, err, tc.mime)
		}
		got, err := h(context.Background(), res.URI, nil)
		if err != nil || !reflect.DeepEqual(got, tc.contents) {
			t.Errorf("%s: contents %+v, %v; want %+v", res.URI, got, err, tc.contents)
		}
	}
}
