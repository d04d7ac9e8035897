package domain

import (
	"encoding/json"
)

// Content is one block of a tool result: [TextContent], [ImageContent],
// [AudioContent], [ResourceLink] or [EmbeddedResource]. The set is closed.
type Content interface {
	// ContentType is the wire "type" of the block.
	ContentType() string
	json.Marshaler
	isContent()
}

// Annotations tell a client how to use a content block.
type Annotations struct {
	// Audience lists who the block is for: "user", "assistant".
	Audience []string `json:"audience,omitempty"`
	// Priority from 0 (optional) to 1 (required).
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is an ISO 8601 time (2025-06-18 on).
	LastModified string `json:"lastModified,omitempty"`
}

// TextContent is a block of text: plain, Markdown, or code.
type TextContent struct {
	Text        string
	Annotations *Annotations
	Meta        map[string]any
}

// ImageContent is an image, base64-encoded.
type ImageContent struct {
	Data        string // base64
	MimeType    string
	Annotations *Annotations
	Meta        map[string]any
}

// AudioContent is audio, base64-encoded (2025-03-26 on; see
// RevisionPolicy.shapeContent for what older clients receive).
type AudioContent struct {
	Data        string // base64
	MimeType    string
	Annotations *Annotations
	Meta        map[string]any
}

// ResourceLink points at a resource by URI without embedding it
// (2025-06-18 on).
type ResourceLink struct {
	URI         string
	Name        string
	Title       string
	Description string
	MimeType    string
	Size        *int64
	Icons       []Icon
	Annotations *Annotations
	Meta        map[string]any
}

// ResourceContents is the body of an embedded resource: text or blob.
type ResourceContents struct {
	URI      string
	MimeType string
	// Text holds textual contents; Blob base64 binary contents. Exactly one
	// is sent: Blob when it is set, Text otherwise.
	Text string
	Blob string
	Meta map[string]any
}

// EmbeddedResource carries a resource's contents inside the result.
type EmbeddedResource struct {
	Resource    ResourceContents
	Annotations *Annotations
	Meta        map[string]any
}

func (*TextContent) isContent()      {}
func (*ImageContent) isContent()     {}
func (*AudioContent) isContent()     {}
func (*ResourceLink) isContent()     {}
func (*EmbeddedResource) isContent() {}

// ContentType returns "text".
func (*TextContent) ContentType() string { return "text" }

// ContentType returns "image".
func (*ImageContent) ContentType() string { return "image" }

// ContentType returns "audio".
func (*AudioContent) ContentType() string { return "audio" }

// ContentType returns "resource_link".
func (*ResourceLink) ContentType() string { return "resource_link" }

// ContentType returns "resource".
func (*EmbeddedResource) ContentType() string { return "resource" }

// MarshalJSON encodes the block in its wire form.
func (c *TextContent) MarshalJSON() ([]byte, error) {
	return c.appendJSON(make([]byte, 0, len(c.Text)+32))
}

func (c *TextContent) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"type":"text","text":`...)
	b = appendJSONString(b, c.Text)
	return closeBlock(b, c.Annotations, c.Meta)
}

// MarshalJSON encodes the block in its wire form.
func (c *ImageContent) MarshalJSON() ([]byte, error) {
	return c.appendJSON(make([]byte, 0, len(c.Data)+len(c.MimeType)+48))
}

func (c *ImageContent) appendJSON(b []byte) ([]byte, error) {
	return appendBinary(b, "image", c.Data, c.MimeType, c.Annotations, c.Meta)
}

// MarshalJSON encodes the block in its wire form.
func (c *AudioContent) MarshalJSON() ([]byte, error) {
	return c.appendJSON(make([]byte, 0, len(c.Data)+len(c.MimeType)+48))
}

func (c *AudioContent) appendJSON(b []byte) ([]byte, error) {
	return appendBinary(b, "audio", c.Data, c.MimeType, c.Annotations, c.Meta)
}

func appendBinary(b []byte, typ, data, mime string, a *Annotations, meta map[string]any) ([]byte, error) {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","data":`...)
	b = appendJSONString(b, data)
	b = append(b, `,"mimeType":`...)
	b = appendJSONString(b, mime)
	return closeBlock(b, a, meta)
}

// MarshalJSON encodes the block in its wire form.
func (c *ResourceLink) MarshalJSON() ([]byte, error) {
	return c.appendJSON(make([]byte, 0, 96))
}

func (c *ResourceLink) appendJSON(b []byte) ([]byte, error) {
	return appendResourceJSON(b, `{"type":"resource_link","uri":`, &Resource{URI: c.URI, Name: c.Name, Title: c.Title,
		Description: c.Description, MimeType: c.MimeType, Size: c.Size, Icons: c.Icons, Annotations: c.Annotations, Meta: c.Meta})
}

// MarshalJSON encodes the block in its wire form.
func (c *EmbeddedResource) MarshalJSON() ([]byte, error) {
	return c.appendJSON(make([]byte, 0, len(c.Resource.Text)+len(c.Resource.Blob)+96))
}

func (c *EmbeddedResource) appendJSON(b []byte) ([]byte, error) {
	r := &c.Resource
	b = append(b, `{"type":"resource","resource":{"uri":`...)
	b = appendJSONString(b, r.URI)
	b = appendOptString(b, "mimeType", r.MimeType)
	if r.Blob != "" {
		b = append(b, `,"blob":`...)
		b = appendJSONString(b, r.Blob)
	} else {
		b = append(b, `,"text":`...)
		b = appendJSONString(b, r.Text)
	}
	b, err := closeBlock(b, nil, r.Meta)
	if err != nil {
		return nil, err
	}
	return closeBlock(b, c.Annotations, c.Meta)
}

// appendContent appends the wire form of c: in place for the SDK's own
// blocks, through MarshalJSON for any other implementation (a type that
// embeds one of them and encodes itself otherwise).
func appendContent(b []byte, c Content) ([]byte, error) {
	switch c := c.(type) {
	case *TextContent:
		return c.appendJSON(b)
	case *ImageContent:
		return c.appendJSON(b)
	case *AudioContent:
		return c.appendJSON(b)
	case *ResourceLink:
		return c.appendJSON(b)
	case *EmbeddedResource:
		return c.appendJSON(b)
	}
	raw, err := c.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

// contentSize is about the length of the wire form of c: its text or data,
// with room for a few escapes, and the members around it.
func contentSize(c Content) int {
	n := 0
	switch c := c.(type) {
	case *TextContent:
		n = len(c.Text)
	case *ImageContent:
		n = len(c.Data)
	case *AudioContent:
		n = len(c.Data)
	case *EmbeddedResource:
		n = len(c.Resource.Text) + len(c.Resource.Blob)
	}
	return n + n/16 + 48
}

func appendOptString(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendJSONString(b, v)
}

func appendMember(b []byte, key string, v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return append(b, raw...), nil
}

// appendIcons appends the member "icons" when there are icons.
func appendIcons(b []byte, icons []Icon) ([]byte, error) {
	if len(icons) == 0 {
		return b, nil
	}
	return appendMember(b, "icons", icons)
}

// closeBlock appends annotations and _meta when set, and the closing brace.
func closeBlock(b []byte, a *Annotations, meta map[string]any) ([]byte, error) {
	var err error
	if a != nil && (len(a.Audience) > 0 || a.Priority != nil || a.LastModified != "") {
		if b, err = appendMember(b, "annotations", a); err != nil {
			return nil, err
		}
	}
	if len(meta) > 0 {
		if b, err = appendMember(b, "_meta", meta); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}
