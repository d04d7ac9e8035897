package porttest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// TestResourceRegistry checks registries made fresh by newRegistry for each
// subtest against the contract of [ports.ResourceRegistry]: its resources
// as every registry keeps its items, and its templates.
func TestResourceRegistry(t *testing.T, newRegistry func(t *testing.T) ports.ResourceRegistry) {
	testRegistry(t, newRegistry, registryContract[ports.RegisteredResource, ports.ResourceRegistry]{
		noun: "resource", keyName: "URI", one: "x://a", duplicate: domain.ErrDuplicateResource,
		unsorted: []string{"x://m", "x://b", "x://z", "a://a", "x://B"}, sorted: "[a://a x://B x://b x://m x://z]", prefix: "x://r",
		item:      resource,
		key:       func(r ports.RegisteredResource) string { return r.Resource.URI },
		noHandler: func(r ports.RegisteredResource) bool { return r.Handler == nil },
		handles: func(r ports.RegisteredResource, uri string) bool {
			c, _ := r.Handler(ctx, uri, nil)
			return len(c) == 1 && c[0].Text == uri
		},
		alsoDuplicate:   duplicateTemplate,
		alsoConcurrent:  concurrentTemplates,
		afterConcurrent: concurrentTemplatesLeft,
	})
	t.Run("Templates", func(t *testing.T) { resourceTemplates(t, newRegistry(t)) })
	t.Run("TemplateValues", func(t *testing.T) { resourceTemplateValues(t, newRegistry(t)) })
}

func resource(uri string) ports.RegisteredResource {
	return ports.RegisteredResource{
		Resource: &domain.Resource{URI: uri, Name: uri},
		Handler: func(_ context.Context, u string, _ map[string]string) ([]domain.ResourceContents, error) {
			return []domain.ResourceContents{{URI: u, Text: uri}}, nil
		},
	}
}

func template(tmpl string) ports.RegisteredResourceTemplate {
	return ports.RegisteredResourceTemplate{
		Template: &domain.ResourceTemplate{URITemplate: tmpl, Name: tmpl},
		Handler: func(_ context.Context, u string, _ map[string]string) ([]domain.ResourceContents, error) {
			return []domain.ResourceContents{{URI: u, Text: tmpl}}, nil
		},
	}
}

// duplicateTemplate checks, in DuplicateIsAnError, that a URI template
// already present is refused too, and stored once.
func duplicateTemplate(t *testing.T, r ports.ResourceRegistry) {
	if err := r.AddTemplate(template("x://{id}")); err != nil {
		t.Fatal(err)
	}
	if err := r.AddTemplate(template("x://{id}")); !errors.Is(err, domain.ErrDuplicateResource) {
		t.Fatalf("duplicate AddTemplate = %v, want domain.ErrDuplicateResource", err)
	}
	if len(r.ListTemplates()) != 1 {
		t.Fatal("duplicate was stored")
	}
}

// concurrentTemplates is round j of goroutine i of Concurrent, for the
// templates.
func concurrentTemplates(r ports.ResourceRegistry, i, j int) {
	tm := fmt.Sprintf("t%d_%d://{id}", i, j)
	_ = r.AddTemplate(template(tm))
	r.ListTemplates()
	r.Match(fmt.Sprintf("t%d_%d://x", i, j))
	if j%2 == 0 {
		r.RemoveTemplate(tm)
	}
}

func concurrentTemplatesLeft(t *testing.T, r ports.ResourceRegistry) {
	if n := len(r.ListTemplates()); n != 8*25 {
		t.Fatalf("ListTemplates has %d templates, want %d", n, 8*25)
	}
}

func resourceTemplates(t *testing.T, r ports.ResourceRegistry) {
	for _, tm := range []string{"x://{a}/data", "x://items/{id}", "w://{id}"} {
		if err := r.AddTemplate(template(tm)); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, tm := range r.ListTemplates() {
		names = append(names, tm.Template.URITemplate)
	}
	if fmt.Sprint(names) != "[w://{id} x://items/{id} x://{a}/data]" {
		t.Fatalf("ListTemplates order = %v", names)
	}
	tm, vars, ok := r.Match("x://items/7")
	if !ok || tm.Template.URITemplate != "x://items/{id}" || vars["id"] != "7" {
		t.Fatalf("Match = %+v, %v, %v", tm.Template, vars, ok)
	}
	if c, _ := tm.Handler(ctx, "x://items/7", vars); len(c) != 1 || c[0].Text != "x://items/{id}" {
		t.Fatal("template handler not kept")
	}
	// x://items/data matches both x://items/{id} and x://{a}/data: the
	// first in ListTemplates order wins.
	if tm, _, ok := r.Match("x://items/data"); !ok || tm.Template.URITemplate != "x://items/{id}" {
		t.Fatalf("ambiguous Match = %+v, %v", tm.Template, ok)
	}
	if _, _, ok := r.Match("y://nothing"); ok {
		t.Fatal("Match of an unmatched URI succeeded")
	}
	if !r.RemoveTemplate("x://items/{id}") || r.RemoveTemplate("x://items/{id}") {
		t.Fatal("RemoveTemplate")
	}
	if tm, vars, ok := r.Match("x://items/data"); !ok || tm.Template.URITemplate != "x://{a}/data" || vars["a"] != "items" {
		t.Fatalf("Match after RemoveTemplate = %+v, %v, %v", tm.Template, vars, ok)
	}
	if len(r.List()) != 0 {
		t.Fatal("templates listed as resources")
	}
}

// resourceTemplateValues checks that Match decodes and checks values as
// domain.ResourceTemplate.Match does: a value that leaves one path segment
// does not match, unless the template asks for raw values.
func resourceTemplateValues(t *testing.T, r ports.ResourceRegistry) {
	raw := template("r://{v}")
	raw.Template.RawValues = true
	for _, tm := range []ports.RegisteredResourceTemplate{template("f:///{path}"), raw} {
		if err := r.AddTemplate(tm); err != nil {
			t.Fatal(err)
		}
	}
	for _, uri := range []string{"f:///..%2Fsecret", "f:///a%5Cb", "f:///a%00b", "f:///.."} {
		if _, vars, ok := r.Match(uri); ok {
			t.Errorf("Match(%q) = %q, want no match", uri, vars)
		}
	}
	if _, vars, ok := r.Match("f:///a%20b"); !ok || vars["path"] != "a b" {
		t.Errorf("Match of %%20 = %q, %v", vars, ok)
	}
	if _, vars, ok := r.Match("r://..%2Fsecret"); !ok || vars["v"] != "..%2Fsecret" {
		t.Errorf("Match of a raw template = %q, %v", vars, ok)
	}
}
