package domain

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Resource describes a resource as clients see it in resources/list.
// Optional fields are left out of the wire form when unset, and fields a
// client's revision does not know are removed by
// [RevisionPolicy.ShapeResource].
type Resource struct {
	// URI identifies the resource (RFC 3986); it must have a scheme.
	URI string
	// Name is the resource's programmatic name; required.
	Name string
	// Title is a human-readable name for display (2025-06-18 on).
	Title string
	// Description tells the model what the resource holds.
	Description string
	// MimeType is the type of the resource's contents, when known.
	MimeType string
	// Size is the size of the raw contents in bytes, when known.
	Size *int64
	// Icons are images a client may show for the resource (2025-11-25 on).
	Icons []Icon
	// Annotations are hints for the client (lastModified from 2025-06-18).
	Annotations *Annotations
	// Meta is sent as _meta (2025-06-18 on).
	Meta map[string]any
	// Scopes are the OAuth scopes a caller must hold, all of them, to
	// read the resource or subscribe to it (see [Tool.Scopes]); never sent
	// to clients. Empty: any caller.
	Scopes []string
}

// ResourceTemplate describes a family of resources whose URIs follow an
// RFC 6570 URI template, as clients see it in resources/templates/list.
// Only level-1 templates ("{var}" expressions) are supported.
type ResourceTemplate struct {
	// URITemplate is the template, e.g. "file:///logs/{day}.txt".
	URITemplate string
	// Name is the template's programmatic name; required.
	Name string
	// Title is a human-readable name for display (2025-06-18 on).
	Title string
	// Description tells the model what the resources hold.
	Description string
	// MimeType is the type of every matching resource, when they share one.
	MimeType string
	// Icons are images a client may show (2025-11-25 on).
	Icons []Icon
	// Annotations are hints for the client (lastModified from 2025-06-18).
	Annotations *Annotations
	// Meta is sent as _meta (2025-06-18 on).
	Meta map[string]any
	// Scopes are the OAuth scopes a caller must hold to read a resource
	// of the template or subscribe to it (see [Resource.Scopes]); never
	// sent to clients.
	Scopes []string
	// RawValues hands the template's variables to the handler exactly as
	// they appear in the URI: not percent-decoded and not checked (see
	// [ResourceTemplate.Match]). It is not part of the wire form. Off by
	// default: values are decoded and a value that could leave a path
	// segment ("..", '/', '\\', a control character) does not match.
	RawValues bool
}

// Validate checks the resource: a URI with a scheme, a name, the icons,
// the size and that _meta can be encoded.
func (r *Resource) Validate() error {
	if err := validateResourceURI(r.URI); err != nil {
		return &DefinitionError{Kind: "resource", Name: r.URI, Reason: err.Error()}
	}
	if r.Size != nil && *r.Size < 0 {
		return &DefinitionError{Kind: "resource", Name: r.URI, Reason: "size is negative"}
	}
	return validateResourceCommon(r.URI, r.Name, r.MimeType, r.Icons, r.Meta)
}

// Validate checks the template: a level-1 URI template with a scheme, a
// name, the icons and that _meta can be encoded.
func (t *ResourceTemplate) Validate() error {
	if err := validateTemplate(t.URITemplate); err != nil {
		return &DefinitionError{Kind: "resource", Name: t.URITemplate, Reason: err.Error()}
	}
	return validateResourceCommon(t.URITemplate, t.Name, t.MimeType, t.Icons, t.Meta)
}

func validateResourceCommon(uri, name, mime string, icons []Icon, meta map[string]any) error {
	if name == "" {
		return &DefinitionError{Kind: "resource", Name: uri, Reason: "name is empty"}
	}
	if mime != "" && !strings.Contains(mime, "/") {
		return &DefinitionError{Kind: "resource", Name: uri, Reason: fmt.Sprintf("mimeType %q is not a MIME type", mime)}
	}
	for n, ic := range icons {
		if err := ic.Validate(); err != nil {
			return &DefinitionError{Kind: "resource", Name: uri, Reason: fmt.Sprintf("icons[%d]: %v", n, err)}
		}
	}
	if meta != nil {
		if _, err := json.Marshal(meta); err != nil {
			return &DefinitionError{Kind: "resource", Name: uri, Reason: "_meta cannot be encoded as JSON: " + err.Error()}
		}
	}
	return nil
}

func validateResourceURI(uri string) error {
	if uri == "" {
		return fmt.Errorf("uri is empty")
	}
	u, err := url.Parse(uri)
	if err != nil {
		return fmt.Errorf("uri is not a URI: %w", err)
	}
	if u.Scheme == "" {
		return fmt.Errorf("uri has no scheme")
	}
	return nil
}

// shapeResource returns r as a client of the revision may see it: title
// and _meta before 2025-06-18, icons before 2025-11-25 and
// annotations.lastModified before 2025-06-18 are removed. r is not modified.
func (f Features) shapeResource(r *Resource) *Resource {
	s := *r
	f.stripListed(&s.Title, &s.Icons, &s.Meta)
	s.Annotations = stripAnn(r.Annotations, f)
	return &s
}

// ShapeResource is Features.shapeResource of revision rev's features.
func (p RevisionPolicy) ShapeResource(r *Resource, rev Revision) *Resource {
	return p.Features(rev).shapeResource(r)
}

// shapeResourceTemplate is [RevisionPolicy.ShapeResource] for templates.
func (f Features) shapeResourceTemplate(t *ResourceTemplate) *ResourceTemplate {
	s := *t
	f.stripListed(&s.Title, &s.Icons, &s.Meta)
	s.Annotations = stripAnn(t.Annotations, f)
	return &s
}

// ShapeResourceTemplate is Features.shapeResourceTemplate of revision rev's features.
func (p RevisionPolicy) ShapeResourceTemplate(t *ResourceTemplate, rev Revision) *ResourceTemplate {
	return p.Features(rev).shapeResourceTemplate(t)
}

// ShapeResourceContents returns c as the revision may carry it: _meta is
// removed before 2025-06-18.
func (f Features) ShapeResourceContents(c ResourceContents) ResourceContents {
	c.Meta = stripMeta(c.Meta, f)
	return c
}

// AppendJSON appends the resource's wire form to b; unset optional fields
// are left out. Shape it for the revision first with
// [RevisionPolicy.ShapeResource].
func (r *Resource) AppendJSON(b []byte) ([]byte, error) {
	return appendResourceJSON(b, `{"uri":`, r)
}

// appendResourceJSON appends the wire form that a resource, a resource
// template and a resource link share: head (the opening, up to the key of
// the first member), r.URI as that member's value, then r's other fields;
// unset optional fields are left out.
func appendResourceJSON(b []byte, head string, r *Resource) ([]byte, error) {
	b = append(b, head...)
	b = appendJSONString(b, r.URI)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, r.Name)
	b = appendOptString(b, "title", r.Title)
	b = appendOptString(b, "description", r.Description)
	b = appendOptString(b, "mimeType", r.MimeType)
	var err error
	if r.Size != nil {
		if b, err = appendMember(b, "size", *r.Size); err != nil {
			return nil, err
		}
	}
	if b, err = appendIcons(b, r.Icons); err != nil {
		return nil, err
	}
	return closeBlock(b, r.Annotations, r.Meta)
}

// MarshalJSON encodes the resource as it is (unshaped).
func (r *Resource) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// AppendJSON appends the template's wire form to b; unset optional fields
// are left out.
func (t *ResourceTemplate) AppendJSON(b []byte) ([]byte, error) {
	return appendResourceJSON(b, `{"uriTemplate":`, &Resource{URI: t.URITemplate, Name: t.Name, Title: t.Title,
		Description: t.Description, MimeType: t.MimeType, Icons: t.Icons, Annotations: t.Annotations, Meta: t.Meta})
}

// MarshalJSON encodes the template as it is (unshaped).
func (t *ResourceTemplate) MarshalJSON() ([]byte, error) { return t.AppendJSON(nil) }

// AppendJSON appends the contents' wire form to b: uri, mimeType when set,
// blob when set and text otherwise, and _meta when set.
func (c *ResourceContents) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"uri":`...)
	b = appendJSONString(b, c.URI)
	b = appendOptString(b, "mimeType", c.MimeType)
	if c.Blob != "" {
		b = append(b, `,"blob":`...)
		b = appendJSONString(b, c.Blob)
	} else {
		b = append(b, `,"text":`...)
		b = appendJSONString(b, c.Text)
	}
	return closeBlock(b, nil, c.Meta)
}

// MarshalJSON encodes the contents.
func (c *ResourceContents) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil) }

// templatePart is a literal run of a URI template, or a variable.
type templatePart struct {
	literal string
	name    string // a variable when not empty
}

// parseTemplate splits a level-1 RFC 6570 template into parts.
func parseTemplate(tmpl string) ([]templatePart, error) {
	var parts []templatePart
	rest := tmpl
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			parts = append(parts, templatePart{literal: rest})
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("unmatched '}' in URI template")
		}
		if open > 0 {
			parts = append(parts, templatePart{literal: rest[:open]})
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unclosed '{' in URI template")
		}
		name := rest[open+1 : open+end]
		if name == "" {
			return nil, fmt.Errorf("empty expression {} in URI template")
		}
		if strings.ContainsAny(name[:1], "+#./;?&=,!@|") {
			return nil, fmt.Errorf("expression {%s}: only level-1 {var} expressions are supported", name)
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
				return nil, fmt.Errorf("expression {%s}: a variable name has only A-Z a-z 0-9 _ (level-1 templates)", name)
			}
		}
		if n := len(parts); n > 0 && parts[n-1].name != "" {
			return nil, fmt.Errorf("expressions {%s}{%s} are adjacent: the URI cannot be split between them", parts[n-1].name, name)
		}
		for _, p := range parts {
			if p.name == name {
				return nil, fmt.Errorf("variable {%s} appears twice", name)
			}
		}
		parts = append(parts, templatePart{name: name})
		rest = rest[open+end+1:]
	}
	return parts, nil
}

// validateTemplate checks that tmpl is a level-1 RFC 6570 URI template
// ("{var}" expressions only, never two adjacent) whose literal prefix has a
// scheme.
func validateTemplate(tmpl string) error {
	if tmpl == "" {
		return fmt.Errorf("uriTemplate is empty")
	}
	parts, err := parseTemplate(tmpl)
	if err != nil {
		return err
	}
	if parts[0].name != "" || !strings.Contains(parts[0].literal, ":") {
		return fmt.Errorf("uriTemplate must start with a scheme (e.g. file:///{path})")
	}
	if _, err := url.Parse(strings.SplitN(parts[0].literal, ":", 2)[0] + ":x"); err != nil {
		return fmt.Errorf("uriTemplate has an invalid scheme: %w", err)
	}
	return nil
}

// TemplateVariables returns the variable names of a level-1 URI template,
// in order (nil when tmpl is not a valid template).
func TemplateVariables(tmpl string) []string {
	parts, err := parseTemplate(tmpl)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range parts {
		if p.name != "" {
			out = append(out, p.name)
		}
	}
	return out
}

// matchTemplateDecoded is [ResourceTemplate.Match] of tmpl with decoded,
// checked values.
func matchTemplateDecoded(tmpl, uri string) (vars map[string]string, ok bool) {
	return matchTemplate(tmpl, uri, false)
}

// matchTemplateRaw is [matchTemplateDecoded] without percent-decoding and
// without the checks of the values: each value is the text of uri it matched,
// exactly (it still holds no '/', and may hold "%2F", "%00" or be ".."). It
// is for handlers that decode and check values themselves.
func matchTemplateRaw(tmpl, uri string) (vars map[string]string, ok bool) {
	return matchTemplate(tmpl, uri, true)
}

// Match matches uri against the template (a level-1 URI template) and
// returns the variables' values, percent-decoded unless t.RawValues is
// set. Resource registries match with it. A variable matches one or more
// characters other than '/' (simple string expansion encodes '/', so a
// value never holds one); when several splits of uri fit the template, each
// variable takes the shortest value that lets the rest match, from the left.
// ok is false when uri does not match or the template is not valid.
//
// A decoded value is safe to use as one path segment or file name: uri does
// not match when a value does not decode (a bad %-escape), or decodes to
// "." or "..", to anything holding '/' or '\\' (so "..%2Fsecret" and
// "%5C" do not match), to a control character (NUL, newline, DEL, C1), or
// to bytes that are not UTF-8. Every other encoding decodes as usual
// ("%20" is a space, "%C3%A9" is "é"). A handler that builds a file path
// from a value should still confine it (os.Root, filepath.IsLocal): the
// checks keep a value inside one segment, they do not know the handler's
// directory layout. RawValues skips the decoding and the checks: each
// value is then the text of uri it matched, exactly (it still holds no
// '/', and may hold "%2F", "%00" or be ".."), for handlers that decode
// and check values themselves.
//
// Matching does not backtrack: its time grows with len(uri) times the
// template's length, whatever uri holds.
func (t *ResourceTemplate) Match(uri string) (vars map[string]string, ok bool) {
	return matchTemplate(t.URITemplate, uri, t.RawValues)
}

func matchTemplate(tmpl, uri string, raw bool) (map[string]string, bool) {
	parts, err := parseTemplate(tmpl)
	if err != nil {
		return nil, false
	}
	ends, ok := splitParts(parts, uri)
	if !ok {
		return nil, false
	}
	vars := make(map[string]string, len(parts)/2+1)
	start := 0
	for k, p := range parts {
		end := ends[k]
		if p.name != "" {
			v := uri[start:end]
			if !raw {
				if v, ok = decodeValue(v); !ok {
					return nil, false
				}
			}
			vars[p.name] = v
		}
		start = end
	}
	return vars, true
}

// splitParts finds where each part of a parsed template ends in s: the end
// offsets, in order, of the split in which every variable takes the
// shortest value (one or more characters, no '/') that lets the rest match.
// It works backwards once over s per part (no backtracking): can[k][i]
// records where part k ends when it starts at i and parts[k+1:] match the
// rest (0: they cannot; a part is never empty, so an end is never 0).
func splitParts(parts []templatePart, s string) ([]int, bool) {
	n := len(parts)
	if n == 0 { // the empty template
		return nil, s == ""
	}
	if first := parts[0]; first.name == "" && !strings.HasPrefix(s, first.literal) {
		return nil, false
	}
	if last := parts[n-1]; last.name == "" && !strings.HasSuffix(s, last.literal) {
		return nil, false
	}
	if n == 1 && parts[0].name == "" {
		if len(s) != len(parts[0].literal) {
			return nil, false
		}
		return []int{len(s)}, true
	}
	w := len(s) + 1
	can := make([]int32, n*w)
	// restOK reports whether parts[k+1:] match s[j:].
	restOK := func(k, j int) bool {
		if k == n-1 {
			return j == len(s)
		}
		return can[(k+1)*w+j] != 0
	}
	for k := n - 1; k >= 0; k-- {
		row := can[k*w : (k+1)*w]
		if lit := parts[k].literal; parts[k].name == "" {
			for i := 0; i+len(lit) <= len(s); i++ {
				at := strings.Index(s[i:], lit)
				if at < 0 {
					break
				}
				i += at
				if restOK(k, i+len(lit)) {
					row[i] = int32(i + len(lit))
				}
			}
			continue
		}
		// A variable starting at i ends at the smallest j > i after
		// which the rest matches, provided s[i:j] holds no '/'.
		nearest := 0
		for i := len(s) - 1; i >= 0; i-- {
			switch {
			case s[i] == '/':
				nearest = 0
			case restOK(k, i+1):
				nearest = i + 1
			}
			row[i] = int32(nearest)
		}
	}
	ends := make([]int, n)
	i := 0
	for k := range parts {
		j := int(can[k*w+i])
		if j == 0 {
			return nil, false
		}
		ends[k] = j
		i = j
	}
	return ends, i == len(s)
}

// decodeValue percent-decodes a matched template value and refuses a value
// that would not stay one safe path segment (see [ResourceTemplate.Match]).
func decodeValue(raw string) (string, bool) {
	v, err := url.PathUnescape(raw)
	if err != nil || v == "." || v == ".." || !utf8.ValidString(v) {
		return "", false
	}
	for _, r := range v {
		if r == '/' || r == '\\' || unicode.IsControl(r) {
			return "", false
		}
	}
	return v, true
}
