package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of the resource limits of [Options].
const (
	// DefaultMaxURILength is the default Options.MaxURILength: 2 KiB, the
	// length past which URLs stop working in common software (browsers,
	// proxies, sitemaps); a resource URI is an identifier, not a payload.
	defaultMaxURILength = 2048
	// defaultMaxSubscriptions is the default Options.MaxSubscriptions:
	// more resources than a client shows or watches at once, small enough
	// that a session's state (which a shared session store copies on every
	// change) stays small.
	defaultMaxSubscriptions = 1000
	// defaultMaxSubscriptionBytes is the default
	// Options.MaxSubscriptionBytes: 64 KiB, which holds
	// defaultMaxSubscriptions URIs of 64 bytes, or 32 of the longest.
	defaultMaxSubscriptionBytes = 64 << 10
)

// limitOr returns v, or def when v is 0; a negative v (no bound) stays
// negative.
func limitOr[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// within reports whether n is within limit (a negative limit: no bound).
func within(n, limit int) bool { return limit < 0 || n <= limit }

var errNoResourceRegistry = errors.New("hexmcp: the engine has no resource registry (Options.ResourceRegistry)")

// AddResource registers a resource or a resource template (a
// hexmcp.Resource, from hexmcp.NewResource and its kin): it checks the
// definition, stores it in the resource registry and tells connected
// clients that the list changed (notifications/resources/list_changed). A
// bad definition, a duplicate URI or a URI (template) longer than
// Options.MaxURILength is a returned error (see
// [domain.DefinitionError]); so is an engine without
// Options.ResourceRegistry.
func (e *Engine) AddResource(r decl.Resource) error {
	if err := e.resources.add(r); err != nil {
		return err
	}
	e.resources.changed()
	return nil
}

// add checks and registers a resource or template (Engine.AddResource).
func (rs *resourceCatalog) add(r decl.Resource) error {
	if rs.registry == nil {
		return errNoResourceRegistry
	}
	res, tmpl, handler, completers, err := decl.ResourceOf(r)
	if err != nil {
		return err
	}
	var uri string
	switch {
	case res != nil:
		uri = res.URI
	case tmpl != nil:
		uri = tmpl.URITemplate
	default:
		return &domain.DefinitionError{Kind: "resource", Reason: "empty declaration (use NewResource or NewResourceTemplate)"}
	}
	if handler == nil {
		return &domain.DefinitionError{Kind: "resource", Name: uri, Reason: "no handler"}
	}
	if !within(len(uri), rs.maxURILength) {
		return &domain.DefinitionError{Kind: "resource", Name: uri,
			Reason: fmt.Sprintf("longer than Options.MaxURILength (%d bytes > %d): no client could name it", len(uri), rs.maxURILength)}
	}
	if res != nil {
		def := *res
		if err := def.Validate(); err != nil {
			return err
		}
		if err := rs.registry.Add(ports.RegisteredResource{Resource: &def, Handler: handler}); err != nil {
			return &domain.DefinitionError{Kind: "resource", Name: def.URI, Reason: err.Error(), Err: err}
		}
	} else {
		def := *tmpl
		if err := def.Validate(); err != nil {
			return err
		}
		if err := rs.registry.AddTemplate(ports.RegisteredResourceTemplate{Template: &def, Handler: handler, Completers: completers}); err != nil {
			return &domain.DefinitionError{Kind: "resource", Name: def.URITemplate, Reason: err.Error(), Err: err}
		}
	}
	return nil
}

// AddResourceTemplate is [Engine.AddResource] for a declaration that must
// be a template (from hexmcp.NewResourceTemplate).
func (e *Engine) AddResourceTemplate(t decl.Resource) error {
	if t.Err() == nil && !t.IsTemplate() {
		uri := ""
		if res := t.Definition(); res != nil {
			uri = res.URI
		}
		return &domain.DefinitionError{Kind: "resource", Name: uri, Reason: "not a resource template (use NewResourceTemplate)"}
	}
	return e.AddResource(t)
}

// AddResources registers several resources or templates and stops at the
// first error.
func (e *Engine) AddResources(rs ...decl.Resource) error { return addEach(rs, e.AddResource) }

// RemoveResource removes the resource at uri and reports whether it was
// registered.
func (e *Engine) RemoveResource(uri string) bool {
	return e.resources.registry != nil && announce(e.resources.registry.Remove(uri), e.resources.changed)
}

// RemoveResourceTemplate removes the template of that URI template and
// reports whether it was registered.
func (e *Engine) RemoveResourceTemplate(uriTemplate string) bool {
	return e.resources.registry != nil && announce(e.resources.registry.RemoveTemplate(uriTemplate), e.resources.changed)
}

// has reports whether anything is registered in the resource
// registry: the resources capability is advertised only then.
func (rs *resourceCatalog) has() bool {
	return rs.registry != nil && (len(rs.registry.List()) > 0 || len(rs.registry.ListTemplates()) > 0)
}

// changed drops cached encodings and sends
// notifications/resources/list_changed to every initialized handshake-era
// session that was told about resources and to the subscriptions/listen
// streams that asked for it.
func (rs *resourceCatalog) changed() { rs.bus.raise(ports.Notice{Kind: ports.NoticeResourcesChanged}) }

// NotifyResourceUpdated tells the handshake-era sessions subscribed to uri
// (resources/subscribe) and the subscriptions/listen streams that asked for
// it (resourceSubscriptions) that the resource changed
// (notifications/resources/updated). It reports how many were told here;
// with [Options.Bus], the sessions and streams of the other instances are
// told too.
func (e *Engine) NotifyResourceUpdated(uri string) int {
	return e.bus.raise(ports.Notice{Kind: ports.NoticeResourceUpdated, URI: uri})
}

// run runs a resource handler, turning a panic into an error.
func (rs *resourceCatalog) run(ctx context.Context, h ports.ResourceHandler, uri string, vars map[string]string) (c []domain.ResourceContents, err error) {
	defer func() {
		if r := recover(); r != nil {
			logf(rs.log, ctx, slog.LevelError, "hexmcp: resource handler panicked", panicAttrs(ctx, r, slog.Any("uri", uri))...)
			c, err = nil, errPanic
		}
	}()
	return h(ctx, uri, vars)
}
