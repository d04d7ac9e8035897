// Package resourcetest is the contract suite of the [ports.ResourceRegistry]
// port: every resource registry adapter (the in-memory one, or one a host
// app writes on a shared store) must pass Run.
package resourcetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

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

// Run checks a registry made fresh by newRegistry for each subtest.
func Run(t *testing.T, newRegistry func(t *testing.T) ports.ResourceRegistry) {
	t.Run("AddGetRemove", func(t *testing.T) {
		r := newRegistry(t)
		if _, ok := r.Get("x://a"); ok {
			t.Fatal("empty registry found a resource")
		}
		if err := r.Add(resource("x://a")); err != nil {
			t.Fatal(err)
		}
		got, ok := r.Get("x://a")
		if !ok || got.Resource.URI != "x://a" || got.Handler == nil {
			t.Fatalf("Get = %+v, %v", got, ok)
		}
		if c, _ := got.Handler(context.Background(), "x://a", nil); len(c) != 1 || c[0].Text != "x://a" {
			t.Fatal("handler not kept")
		}
		if !r.Remove("x://a") {
			t.Fatal("Remove of a present resource returned false")
		}
		if r.Remove("x://a") {
			t.Fatal("Remove of an absent resource returned true")
		}
		if _, ok := r.Get("x://a"); ok {
			t.Fatal("removed resource still found")
		}
	})
	t.Run("DuplicateIsAnError", func(t *testing.T) {
		r := newRegistry(t)
		if err := r.Add(resource("x://a")); err != nil {
			t.Fatal(err)
		}
		if err := r.Add(resource("x://a")); !errors.Is(err, domain.ErrDuplicateResource) {
			t.Fatalf("duplicate Add = %v, want domain.ErrDuplicateResource", err)
		}
		if err := r.AddTemplate(template("x://{id}")); err != nil {
			t.Fatal(err)
		}
		if err := r.AddTemplate(template("x://{id}")); !errors.Is(err, domain.ErrDuplicateResource) {
			t.Fatalf("duplicate AddTemplate = %v, want domain.ErrDuplicateResource", err)
		}
		if len(r.List()) != 1 || len(r.ListTemplates()) != 1 {
			t.Fatal("duplicate was stored")
		}
	})
	t.Run("ListIsSortedByURI", func(t *testing.T) {
		r := newRegistry(t)
		for _, u := range []string{"x://m", "x://b", "x://z", "a://a", "x://B"} {
			if err := r.Add(resource(u)); err != nil {
				t.Fatal(err)
			}
		}
		var uris []string
		for _, rr := range r.List() {
			uris = append(uris, rr.Resource.URI)
		}
		if fmt.Sprint(uris) != "[a://a x://B x://b x://m x://z]" {
			t.Fatalf("List order = %v", uris)
		}
		r.Remove("x://b")
		if n := len(r.List()); n != 4 {
			t.Fatalf("after Remove, List has %d resources", n)
		}
	})
	t.Run("Templates", func(t *testing.T) {
		r := newRegistry(t)
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
		if c, _ := tm.Handler(context.Background(), "x://items/7", vars); len(c) != 1 || c[0].Text != "x://items/{id}" {
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
	})
	t.Run("TemplateValues", func(t *testing.T) {
		// Match decodes and checks values as domain.ResourceTemplate.Match
		// does: a value that leaves one path segment does not match, unless
		// the template asks for raw values.
		r := newRegistry(t)
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
	})
	t.Run("Concurrent", func(t *testing.T) {
		r := newRegistry(t)
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				for j := 0; j < 50; j++ {
					uri := fmt.Sprintf("x://r%d_%d", i, j)
					tm := fmt.Sprintf("t%d_%d://{id}", i, j)
					_ = r.Add(resource(uri))
					_ = r.AddTemplate(template(tm))
					r.Get(uri)
					r.List()
					r.ListTemplates()
					r.Match(fmt.Sprintf("t%d_%d://x", i, j))
					if j%2 == 0 {
						r.Remove(uri)
						r.RemoveTemplate(tm)
					}
				}
			}(i)
		}
		wg.Wait()
		if n := len(r.List()); n != 8*25 {
			t.Fatalf("List has %d resources, want %d", n, 8*25)
		}
		if n := len(r.ListTemplates()); n != 8*25 {
			t.Fatalf("ListTemplates has %d templates, want %d", n, 8*25)
		}
	})
}
