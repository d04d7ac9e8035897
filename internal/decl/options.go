package decl

import (
	"maps"

	"github.com/hexmcp/hexmcp/domain"
)

// The options of definitions.
//
// Tools ([NewTool], [Func], [NewRawTool]), prompts ([NewPrompt]) and
// resources ([NewResource], [NewResourceTemplate], [TextResource],
// [BlobResource]) take options of one pattern: With followed by the field
// the option sets. The options that set a field every kind has ([WithTitle],
// [WithDescription], [WithIcons], [WithMeta], and [WithAnnotations] for
// tools and resources) are the same functions for every kind; the others
// belong to one kind, and giving one to another kind does not compile.

// ToolOption sets one field of a tool's definition.
type ToolOption interface{ applyTool(*toolConfig) }

// PromptOption sets one field of a prompt's definition.
type PromptOption interface{ applyPrompt(*promptConfig) }

// ResourceOption sets one field of a resource's or resource template's
// definition.
type ResourceOption interface{ applyResource(*resourceConfig) }

// Option sets a field that tools, prompts and resources all have; it is a
// [ToolOption], a [PromptOption] and a [ResourceOption].
type Option struct{ set func(*commonConfig) }

func (o Option) applyTool(c *toolConfig) {
	if o.set != nil {
		o.set(&c.common)
	}
}

func (o Option) applyPrompt(c *promptConfig) {
	if o.set != nil {
		o.set(&c.common)
	}
}

func (o Option) applyResource(c *resourceConfig) {
	if o.set != nil {
		o.set(&c.common)
	}
}

// commonConfig holds the fields every kind of definition has.
type commonConfig struct {
	title, description string
	icons              []domain.Icon
	meta               map[string]any
	scopes             []string
}

// WithScopes names the OAuth scopes a caller must hold, all of them, to
// call the tool, get the prompt (or complete its arguments), or read a
// resource (of a template), complete a template's variables, and follow
// it (resources/subscribe, or resourceSubscriptions on a
// subscriptions/listen stream) (domain.Tool.Scopes,
// domain.Resource.Scopes): the engine
// checks the authenticated principal's scopes (TransportInfo.Principal) on
// every transport and refuses a caller without them with
// [CodeInsufficientScope] (over Streamable HTTP: 403 with a
// WWW-Authenticate challenge naming the scopes, so that the client can ask
// for them: step-up). A request with no principal at all is refused too.
// [HideUnauthorized] also hides them from the lists of callers who lack
// the scopes.
func WithScopes(scopes ...string) Option {
	return Option{func(c *commonConfig) { c.scopes = append([]string(nil), scopes...) }}
}

// WithTitle sets the human-readable title (2025-06-18 on).
func WithTitle(title string) Option {
	return Option{func(c *commonConfig) { c.title = title }}
}

// WithDescription sets the description the model (or the user) reads.
// Without it a definition has none: the SDK never makes one up from the
// name.
func WithDescription(d string) Option {
	return Option{func(c *commonConfig) { c.description = d }}
}

// WithIcons adds icons (2025-11-25 on); each is validated when the
// definition is registered.
func WithIcons(icons ...domain.Icon) Option {
	return Option{func(c *commonConfig) { c.icons = append(c.icons, icons...) }}
}

// WithMeta sets members of _meta (2025-06-18 on); given twice, the maps
// merge.
func WithMeta(meta map[string]any) Option {
	return Option{func(c *commonConfig) {
		if c.meta == nil {
			c.meta = make(map[string]any, len(meta))
		}
		maps.Copy(c.meta, meta)
	}}
}

// AnnotationsOption sets the annotations of a tool or a resource: tools
// take [domain.ToolAnnotations] (behaviour hints), resources and resource
// templates [domain.Annotations] (audience, priority, lastModified). The
// other kind given to either is a definition error when it is registered.
type AnnotationsOption struct {
	tool *domain.ToolAnnotations
	res  *domain.Annotations
}

// WithAnnotations sets the annotations: [domain.ToolAnnotations] for a tool
// (2025-03-26 on; unset hints are omitted on the wire),
// [domain.Annotations] for a resource or resource template.
func WithAnnotations[A domain.ToolAnnotations | domain.Annotations](a A) AnnotationsOption {
	switch v := any(a).(type) {
	case domain.ToolAnnotations:
		return AnnotationsOption{tool: &v}
	case domain.Annotations:
		return AnnotationsOption{res: &v}
	}
	return AnnotationsOption{}
}

func (o AnnotationsOption) applyTool(c *toolConfig) {
	if o.res != nil {
		c.setErr("a tool's annotations are domain.ToolAnnotations, not domain.Annotations")
		return
	}
	if o.tool != nil {
		a := *o.tool
		c.def.Annotations = &a
	}
}

func (o AnnotationsOption) applyResource(c *resourceConfig) {
	if o.tool != nil {
		c.setErr("a resource's annotations are domain.Annotations, not domain.ToolAnnotations")
		return
	}
	if o.res != nil {
		a := *o.res
		c.annotations = &a
	}
}

// toolOption is a ToolOption of one function.
type toolOption func(*toolConfig)

func (f toolOption) applyTool(c *toolConfig) { f(c) }

// promptOption is a PromptOption of one function.
type promptOption func(*promptConfig)

func (f promptOption) applyPrompt(c *promptConfig) { f(c) }

// resourceOption is a ResourceOption of one function.
type resourceOption func(*resourceConfig)

func (f resourceOption) applyResource(c *resourceConfig) { f(c) }
