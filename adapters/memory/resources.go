package memory

import (
	"fmt"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// resourceRegistry is the [ports.ResourceRegistry] of
// [NewResourceRegistry].
type resourceRegistry struct {
	resources sortedSet[ports.RegisteredResource]
	templates sortedSet[ports.RegisteredResourceTemplate]
}

// NewResourceRegistry returns an empty [ports.ResourceRegistry] kept in
// memory, safe for concurrent use. Lists are answered from sorted snapshots
// rebuilt only when the set changes.
func NewResourceRegistry() ports.ResourceRegistry { return &resourceRegistry{} }

// Add stores r; a duplicate URI is an error wrapping
// domain.ErrDuplicateResource.
func (r *resourceRegistry) Add(res ports.RegisteredResource) error {
	if res.Resource == nil {
		return fmt.Errorf("hexmcp: memory resource registry: resource definition is nil")
	}
	return r.resources.add(res.Resource.URI, res, "resource", domain.ErrDuplicateResource)
}

// Remove deletes a resource and reports whether it was there.
func (r *resourceRegistry) Remove(uri string) bool { return r.resources.remove(uri) }

// Get finds a resource by URI.
func (r *resourceRegistry) Get(uri string) (ports.RegisteredResource, bool) {
	return r.resources.get(uri)
}

// List returns the resources sorted by URI. The slice is shared: callers
// must not modify it.
func (r *resourceRegistry) List() []ports.RegisteredResource {
	return r.resources.list(func(res ports.RegisteredResource) string { return res.Resource.URI })
}

// AddTemplate stores t; a duplicate URI template is an error wrapping
// domain.ErrDuplicateResource.
func (r *resourceRegistry) AddTemplate(t ports.RegisteredResourceTemplate) error {
	if t.Template == nil {
		return fmt.Errorf("hexmcp: memory resource registry: template definition is nil")
	}
	return r.templates.add(t.Template.URITemplate, t, "resource template", domain.ErrDuplicateResource)
}

// RemoveTemplate deletes a template and reports whether it was there.
func (r *resourceRegistry) RemoveTemplate(uriTemplate string) bool {
	return r.templates.remove(uriTemplate)
}

// ListTemplates returns the templates sorted by URI template. The slice is
// shared: callers must not modify it.
func (r *resourceRegistry) ListTemplates() []ports.RegisteredResourceTemplate {
	return r.templates.list(func(t ports.RegisteredResourceTemplate) string { return t.Template.URITemplate })
}

// Match finds the first template, in ListTemplates order, that uri matches
// ([domain.ResourceTemplate.Match]: decoded, checked values unless the
// template asks for raw ones).
func (r *resourceRegistry) Match(uri string) (ports.RegisteredResourceTemplate, map[string]string, bool) {
	for _, t := range r.ListTemplates() {
		if vars, ok := t.Template.Match(uri); ok {
			return t, vars, true
		}
	}
	return ports.RegisteredResourceTemplate{}, nil, false
}

var _ ports.ResourceRegistry = (*resourceRegistry)(nil)
