package app

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	"github.com/hexmcp/hexmcp/domain"
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

// Resource is a declared resource or resource template, ready for
// [Engine.AddResource]: its definition and the handler that reads it. Build
// one with [NewResource], [TextResource], [BlobResource] or
// [NewResourceTemplate]. A mistake in the declaration is kept and returned
// by Engine.AddResource; Err reports it earlier.
type Resource struct {
	res        *domain.Resource
	tmpl       *domain.ResourceTemplate
	handler    ports.ResourceHandler
	completers map[string]ports.Completer
	err        error
}

// IsTemplate reports whether r declares a resource template.
func (r Resource) IsTemplate() bool { return r.tmpl != nil }

// Definition returns the resource's definition as it will be listed, or nil
// for a template.
func (r Resource) Definition() *domain.Resource { return r.res }

// TemplateDefinition returns the template's definition as it will be
// listed, or nil for a plain resource.
func (r Resource) TemplateDefinition() *domain.ResourceTemplate { return r.tmpl }

// Err returns the declaration error, if any.
func (r Resource) Err() error { return r.err }

// uri is the resource's URI or the template's URI template.
func (r Resource) uri() string {
	switch {
	case r.res != nil:
		return r.res.URI
	case r.tmpl != nil:
		return r.tmpl.URITemplate
	}
	return ""
}

type resourceConfig struct {
	common      commonConfig
	mimeType    string
	size        *int64
	annotations *domain.Annotations
	completers  map[string]ports.Completer
	rawValues   bool
	err         string // a declaration error of an option
}

func (c *resourceConfig) setErr(reason string) {
	if c.err == "" {
		c.err = reason
	}
}

// WithMimeType sets the MIME type of a resource or template; contents read
// without one get it.
func WithMimeType(mime string) ResourceOption {
	return resourceOption(func(c *resourceConfig) { c.mimeType = mime })
}

// WithSize sets the size of a resource's raw contents in bytes (resources
// only; a template with a size is a declaration error).
func WithSize(n int64) ResourceOption {
	return resourceOption(func(c *resourceConfig) { c.size = &n })
}

// WithTemplateCompleter sets the completer that suggests values of the
// template variable name for completion/complete (templates only; a plain
// resource with one, or a variable the template lacks, is a declaration
// error).
func WithTemplateCompleter(name string, complete ports.Completer) ResourceOption {
	return resourceOption(func(c *resourceConfig) {
		if c.completers == nil {
			c.completers = make(map[string]ports.Completer)
		}
		c.completers[name] = complete
	})
}

// WithRawTemplateValues hands the template's variables to its handler
// exactly as they appear in the URI: neither percent-decoded nor checked
// ([domain.MatchTemplateRaw]), so "file:///..%2Fsecret" gives the value
// "..%2Fsecret" and "%00" stays "%00" (templates only; a plain resource
// with it is a declaration error). Without it a value is decoded and a
// value that would leave one path segment ("..", '/', '\\', a control
// character) does not match, so the request is answered like any unknown
// URI. A handler that takes raw values must decode and check them itself.
func WithRawTemplateValues() ResourceOption {
	return resourceOption(func(c *resourceConfig) { c.rawValues = true })
}

func applyResourceOptions(opts []ResourceOption) *resourceConfig {
	c := &resourceConfig{}
	for _, o := range opts {
		if o != nil {
			o.applyResource(c)
		}
	}
	return c
}

// NewResource declares the resource at uri, named name, read by read (whose
// vars argument is nil).
func NewResource(uri, name string, read ports.ResourceHandler, opts ...ResourceOption) Resource {
	c := applyResourceOptions(opts)
	r := Resource{
		res: &domain.Resource{
			URI: uri, Name: name, Title: c.common.title, Description: c.common.description, MimeType: c.mimeType,
			Size: c.size, Icons: c.common.icons, Annotations: c.annotations, Meta: c.common.meta, Scopes: c.common.scopes,
		},
		handler: read,
	}
	if len(c.completers) > 0 {
		r.err = &domain.ResourceDefinitionError{URI: uri, Reason: "a plain resource has no variables to complete"}
	}
	if c.rawValues {
		r.err = &domain.ResourceDefinitionError{URI: uri, Reason: "a plain resource has no template values (WithRawTemplateValues)"}
	}
	if c.err != "" {
		r.err = &domain.ResourceDefinitionError{URI: uri, Reason: c.err}
	}
	return r
}

// TextResource declares a resource whose contents are the fixed text. Its
// MIME type is text/plain unless an option sets another.
func TextResource(uri, name, text string, opts ...ResourceOption) Resource {
	opts = append([]ResourceOption{WithMimeType("text/plain")}, opts...)
	return NewResource(uri, name, func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) {
		return []domain.ResourceContents{{Text: text}}, nil
	}, opts...)
}

// BlobResource declares a resource whose contents are the fixed bytes, sent
// base64-encoded. Its MIME type is application/octet-stream unless an option
// sets another.
func BlobResource(uri, name string, data []byte, opts ...ResourceOption) Resource {
	opts = append([]ResourceOption{WithMimeType("application/octet-stream")}, opts...)
	blob := base64.StdEncoding.EncodeToString(data)
	return NewResource(uri, name, func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) {
		if blob == "" {
			return []domain.ResourceContents{{Text: ""}}, nil
		}
		return []domain.ResourceContents{{Blob: blob}}, nil
	}, opts...)
}

// NewResourceTemplate declares a resource template: every URI that matches
// uriTemplate (a level-1 RFC 6570 template such as "file:///logs/{day}.txt")
// is read by read, with the template's variables in vars. A plain resource
// of the same URI wins over a template.
//
// The values in vars are percent-decoded and safe as one path segment: a
// URI whose value decodes to "." or "..", or holds '/', '\\', a control
// character (NUL included) or bytes that are not UTF-8, does not match
// ([domain.ResourceTemplate.Match]), so "file:///..%2Fsecret.txt" is answered
// resource-not-found and never reaches read, while "%20" arrives as a
// space. A handler that maps values to files should still open them inside
// a root (os.Root, or filepath.IsLocal before filepath.Join).
// [WithRawTemplateValues] hands read the undecoded, unchecked text instead.
func NewResourceTemplate(uriTemplate, name string, read ports.ResourceHandler, opts ...ResourceOption) Resource {
	c := applyResourceOptions(opts)
	r := Resource{
		tmpl: &domain.ResourceTemplate{
			URITemplate: uriTemplate, Name: name, Title: c.common.title, Description: c.common.description, MimeType: c.mimeType,
			Icons: c.common.icons, Annotations: c.annotations, Meta: c.common.meta, Scopes: c.common.scopes, RawValues: c.rawValues,
		},
		handler:    read,
		completers: c.completers,
	}
	for v := range c.completers {
		if !slices.Contains(domain.TemplateVariables(uriTemplate), v) {
			r.err = &domain.ResourceDefinitionError{URI: uriTemplate, Reason: fmt.Sprintf("completer for variable %q, which the template lacks", v)}
		}
	}
	if c.size != nil {
		r.err = &domain.ResourceDefinitionError{URI: uriTemplate, Reason: "a resource template has no size"}
	}
	if c.err != "" {
		r.err = &domain.ResourceDefinitionError{URI: uriTemplate, Reason: c.err}
	}
	return r
}

var errNoResourceRegistry = errors.New("hexmcp: the engine has no resource registry (Options.ResourceRegistry)")

// AddResource registers a resource or a resource template: it checks the
// definition, stores it in the resource registry and tells connected
// clients that the list changed (notifications/resources/list_changed). A
// bad definition, a duplicate URI or a URI (template) longer than
// Options.MaxURILength is a returned error (see
// [domain.ResourceDefinitionError]); so is an engine without
// Options.ResourceRegistry.
func (e *Engine) AddResource(r Resource) error {
	if err := e.resources.add(r); err != nil {
		return err
	}
	e.resources.changed()
	return nil
}

// add checks and registers a resource or template (Engine.AddResource).
func (rs *resourceCatalog) add(r Resource) error {
	if rs.registry == nil {
		return errNoResourceRegistry
	}
	if r.err != nil {
		return r.err
	}
	if r.res == nil && r.tmpl == nil {
		return &domain.ResourceDefinitionError{Reason: "empty declaration (use NewResource or NewResourceTemplate)"}
	}
	if r.handler == nil {
		return &domain.ResourceDefinitionError{URI: r.uri(), Reason: "no handler"}
	}
	if uri := r.uri(); !within(len(uri), rs.maxURILength) {
		return &domain.ResourceDefinitionError{URI: uri,
			Reason: fmt.Sprintf("longer than Options.MaxURILength (%d bytes > %d): no client could name it", len(uri), rs.maxURILength)}
	}
	if r.res != nil {
		def := *r.res
		if err := def.Validate(); err != nil {
			return err
		}
		if err := rs.registry.Add(ports.RegisteredResource{Resource: &def, Handler: r.handler}); err != nil {
			return &domain.ResourceDefinitionError{URI: def.URI, Reason: err.Error(), Err: err}
		}
	} else {
		def := *r.tmpl
		if err := def.Validate(); err != nil {
			return err
		}
		if err := rs.registry.AddTemplate(ports.RegisteredResourceTemplate{Template: &def, Handler: r.handler, Completers: r.completers}); err != nil {
			return &domain.ResourceDefinitionError{URI: def.URITemplate, Reason: err.Error(), Err: err}
		}
	}
	return nil
}

// AddResourceTemplate is [Engine.AddResource] for a declaration that must
// be a template (from [NewResourceTemplate]).
func (e *Engine) AddResourceTemplate(t Resource) error {
	if t.err == nil && !t.IsTemplate() {
		uri := ""
		if t.res != nil {
			uri = t.res.URI
		}
		return &domain.ResourceDefinitionError{URI: uri, Reason: "not a resource template (use NewResourceTemplate)"}
	}
	return e.AddResource(t)
}

// AddResources registers several resources or templates and stops at the
// first error.
func (e *Engine) AddResources(rs ...Resource) error { return addEach(rs, e.AddResource) }

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
			logf(rs.log, ctx, slog.LevelError, "hexmcp: resource handler panicked", slog.Any("uri", uri), slog.Any("panic", fmt.Sprint(r)), slog.Any("stack", string(debug.Stack())))
			c, err = nil, errPanic
		}
	}()
	return h(ctx, uri, vars)
}
