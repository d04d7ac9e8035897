package decl

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// Resource is a declared resource or resource template, ready for
// AddResource: its definition and the handler that reads it. Build
// one with [NewResource], [TextResource], [BlobResource] or
// [NewResourceTemplate]. A mistake in the declaration is kept and returned
// by AddResource; Err reports it earlier.
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
		r.err = &domain.DefinitionError{Kind: "resource", Name: uri, Reason: "a plain resource has no variables to complete"}
	}
	if c.rawValues {
		r.err = &domain.DefinitionError{Kind: "resource", Name: uri, Reason: "a plain resource has no template values (WithRawTemplateValues)"}
	}
	if c.err != "" {
		r.err = &domain.DefinitionError{Kind: "resource", Name: uri, Reason: c.err}
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
			r.err = &domain.DefinitionError{Kind: "resource", Name: uriTemplate, Reason: fmt.Sprintf("completer for variable %q, which the template lacks", v)}
		}
	}
	if c.size != nil {
		r.err = &domain.DefinitionError{Kind: "resource", Name: uriTemplate, Reason: "a resource template has no size"}
	}
	if c.err != "" {
		r.err = &domain.DefinitionError{Kind: "resource", Name: uriTemplate, Reason: c.err}
	}
	return r
}
