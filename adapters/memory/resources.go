package memory

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// ResourceRegistry is a [ports.ResourceRegistry] kept in memory. The zero
// value is ready to use. Lists are answered from sorted snapshots rebuilt
// only when the set changes.
type ResourceRegistry struct {
	mu        sync.RWMutex
	resources map[string]ports.RegisteredResource
	templates map[string]ports.RegisteredResourceTemplate
	sortedR   []ports.RegisteredResource         // nil when stale
	sortedT   []ports.RegisteredResourceTemplate // nil when stale
}

// NewResourceRegistry returns an empty resource registry.
func NewResourceRegistry() *ResourceRegistry { return &ResourceRegistry{} }

// Add stores r; a duplicate URI is an error wrapping
// domain.ErrDuplicateResource.
func (r *ResourceRegistry) Add(res ports.RegisteredResource) error {
	if res.Resource == nil {
		return fmt.Errorf("memory resource registry: resource definition is nil")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resources == nil {
		r.resources = make(map[string]ports.RegisteredResource)
	}
	if _, dup := r.resources[res.Resource.URI]; dup {
		return fmt.Errorf("resource %q: %w", res.Resource.URI, domain.ErrDuplicateResource)
	}
	r.resources[res.Resource.URI] = res
	r.sortedR = nil
	return nil
}

// Remove deletes a resource and reports whether it was there.
func (r *ResourceRegistry) Remove(uri string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.resources[uri]; !ok {
		return false
	}
	delete(r.resources, uri)
	r.sortedR = nil
	return true
}

// Get finds a resource by URI.
func (r *ResourceRegistry) Get(uri string) (ports.RegisteredResource, bool) {
	r.mu.RLock()
	res, ok := r.resources[uri]
	r.mu.RUnlock()
	return res, ok
}

// List returns the resources sorted by URI. The slice is shared: callers
// must not modify it.
func (r *ResourceRegistry) List() []ports.RegisteredResource {
	r.mu.RLock()
	s := r.sortedR
	r.mu.RUnlock()
	if s != nil {
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sortedR == nil {
		s := make([]ports.RegisteredResource, 0, len(r.resources))
		for _, res := range r.resources {
			s = append(s, res)
		}
		slices.SortFunc(s, func(a, b ports.RegisteredResource) int { return strings.Compare(a.Resource.URI, b.Resource.URI) })
		r.sortedR = s
	}
	return r.sortedR
}

// AddTemplate stores t; a duplicate URI template is an error wrapping
// domain.ErrDuplicateResource.
func (r *ResourceRegistry) AddTemplate(t ports.RegisteredResourceTemplate) error {
	if t.Template == nil {
		return fmt.Errorf("memory resource registry: template definition is nil")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.templates == nil {
		r.templates = make(map[string]ports.RegisteredResourceTemplate)
	}
	if _, dup := r.templates[t.Template.URITemplate]; dup {
		return fmt.Errorf("resource template %q: %w", t.Template.URITemplate, domain.ErrDuplicateResource)
	}
	r.templates[t.Template.URITemplate] = t
	r.sortedT = nil
	return nil
}

// RemoveTemplate deletes a template and reports whether it was there.
func (r *ResourceRegistry) RemoveTemplate(uriTemplate string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.templates[uriTemplate]; !ok {
		return false
	}
	delete(r.templates, uriTemplate)
	r.sortedT = nil
	return true
}

// ListTemplates returns the templates sorted by URI template. The slice is
// shared: callers must not modify it.
func (r *ResourceRegistry) ListTemplates() []ports.RegisteredResourceTemplate {
	r.mu.RLock()
	s := r.sortedT
	r.mu.RUnlock()
	if s != nil {
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sortedT == nil {
		s := make([]ports.RegisteredResourceTemplate, 0, len(r.templates))
		for _, t := range r.templates {
			s = append(s, t)
		}
		slices.SortFunc(s, func(a, b ports.RegisteredResourceTemplate) int {
			return strings.Compare(a.Template.URITemplate, b.Template.URITemplate)
		})
		r.sortedT = s
	}
	return r.sortedT
}

// Match finds the first template, in ListTemplates order, that uri matches.
func (r *ResourceRegistry) Match(uri string) (ports.RegisteredResourceTemplate, map[string]string, bool) {
	for _, t := range r.ListTemplates() {
		if vars, ok := domain.MatchTemplate(t.Template.URITemplate, uri); ok {
			return t, vars, true
		}
	}
	return ports.RegisteredResourceTemplate{}, nil, false
}

var _ ports.ResourceRegistry = (*ResourceRegistry)(nil)
