package memory

import (
	"errors"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// resourceRegistry is the [ports.ResourceRegistry] of
// [NewResourceRegistry]: its resources by URI (Add, Remove, List, and Get),
// and its templates by URI template.
type resourceRegistry struct {
	registry[ports.RegisteredResource]
	templates registry[ports.RegisteredResourceTemplate]
}

// NewResourceRegistry returns an empty [ports.ResourceRegistry] kept in
// memory, safe for concurrent use. A duplicate URI, or URI template, is an
// error wrapping domain.ErrDuplicateResource. Lists are answered from
// sorted snapshots rebuilt only when the set changes.
func NewResourceRegistry() ports.ResourceRegistry {
	return &resourceRegistry{
		registry: registry[ports.RegisteredResource]{
			defined: func(r ports.RegisteredResource) bool { return r.Resource != nil },
			key:     func(r ports.RegisteredResource) string { return r.Resource.URI },
			what:    "resource", dup: domain.ErrDuplicateResource,
			errNil: errors.New("hexmcp: memory resource registry: resource definition is nil"),
		},
		templates: registry[ports.RegisteredResourceTemplate]{
			defined: func(t ports.RegisteredResourceTemplate) bool { return t.Template != nil },
			key:     func(t ports.RegisteredResourceTemplate) string { return t.Template.URITemplate },
			what:    "resource template", dup: domain.ErrDuplicateResource,
			errNil: errors.New("hexmcp: memory resource registry: template definition is nil"),
		},
	}
}

// Get finds a resource by URI.
func (r *resourceRegistry) Get(uri string) (ports.RegisteredResource, bool) {
	return r.set.get(uri)
}

// AddTemplate stores t; a duplicate URI template is an error wrapping
// domain.ErrDuplicateResource.
func (r *resourceRegistry) AddTemplate(t ports.RegisteredResourceTemplate) error {
	return r.templates.Add(t)
}

// RemoveTemplate deletes a template and reports whether it was there.
func (r *resourceRegistry) RemoveTemplate(uriTemplate string) bool {
	return r.templates.Remove(uriTemplate)
}

// ListTemplates returns the templates sorted by URI template. The slice is
// shared: callers must not modify it.
func (r *resourceRegistry) ListTemplates() []ports.RegisteredResourceTemplate {
	return r.templates.List()
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
