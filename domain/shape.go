package domain

import (
	"encoding/json"
	"fmt"
	"strings"
)

// shapeTool returns t as a client of the revision may see it: title,
// outputSchema, annotations, icons and _meta are removed where it does not
// know them, and before 2026-07-28 an outputSchema whose root is not an
// object is removed too (it could not be honoured). t is not modified.
func (f Features) shapeTool(t *Tool) *Tool {
	s := *t
	f.stripListed(&s.Title, &s.Icons, &s.Meta)
	s.OutputSchema = f.shapeOutputSchema(t.OutputSchema)
	if !f.ToolAnnotations || s.Annotations.IsZero() {
		s.Annotations = nil
	}
	return &s
}

// stripListed clears, in place, what a tool, prompt, resource or resource
// template shares and the revision does not know: the title and _meta
// before 2025-06-18, the icons before 2025-11-25.
func (f Features) stripListed(title *string, icons *[]Icon, meta *map[string]any) {
	if !f.ToolTitle {
		*title = ""
	}
	if !f.Icons {
		*icons = nil
	}
	*meta = stripMeta(*meta, f)
}

// ShapeTool is Features.shapeTool of revision r's features.
func (p RevisionPolicy) ShapeTool(t *Tool, r Revision) *Tool {
	return p.Features(r).shapeTool(t)
}

// shapeOutputSchema returns the output schema to advertise under its revision, or nil.
func (f Features) shapeOutputSchema(schema json.RawMessage) json.RawMessage {
	if len(schema) == 0 || !f.OutputSchema {
		return nil
	}
	if !f.AnyStructuredContent && !schemaRootIsObject(schema) {
		return nil
	}
	return schema
}

// ShapeResult returns res as the revision may carry it: structuredContent is
// dropped where the revision has none (or, before 2026-07-28, when it is not an
// object), and each content block goes through Features.shapeContent.
// res is returned unchanged (not copied) when nothing needs to change.
func (f Features) ShapeResult(res *CallToolResult) *CallToolResult {
	dropStructured := res.StructuredContent != nil &&
		(!f.StructuredContent || !f.AnyStructuredContent && !isJSONObject(res.StructuredContent))
	dropMeta := len(res.Meta) > 0 && !f.Meta
	var blocks []Content
	for i, c := range res.Content {
		sc := f.shapeContent(c)
		if sc != c && blocks == nil {
			blocks = make([]Content, len(res.Content))
			copy(blocks, res.Content[:i])
		}
		if blocks != nil {
			blocks[i] = sc
		}
	}
	if !dropStructured && !dropMeta && blocks == nil {
		return res
	}
	out := *res
	if dropStructured {
		out.StructuredContent = nil
	}
	if dropMeta {
		out.Meta = nil
	}
	if blocks != nil {
		out.Content = blocks
	}
	return &out
}

// shapeResult is [Features.ShapeResult] of revision r's features.
func (p RevisionPolicy) shapeResult(res *CallToolResult, r Revision) *CallToolResult {
	return p.Features(r).ShapeResult(res)
}

// shapeContent returns c as the revision may carry it. Fields it does not know
// are removed (_meta and annotations.lastModified before 2025-06-18, title
// and icons of resource links where unknown). Block types the revision does not know are
// replaced by a text block that says what was there:
//   - audio before 2025-03-26 becomes the text
//     "[audio omitted (MIME): the client's protocol revision has no audio content]";
//   - a resource link before 2025-06-18 becomes the text
//     "Resource: NAME <URI>" (with the description on a second line).
//
// c is returned unchanged when nothing needs to change.
func (f Features) shapeContent(c Content) Content {
	switch v := c.(type) {
	case *TextContent:
		if needsStrip(v.Annotations, v.Meta, f) {
			cp := *v
			cp.Annotations, cp.Meta = stripAnn(v.Annotations, f), stripMeta(v.Meta, f)
			return &cp
		}
	case *ImageContent:
		if needsStrip(v.Annotations, v.Meta, f) {
			cp := *v
			cp.Annotations, cp.Meta = stripAnn(v.Annotations, f), stripMeta(v.Meta, f)
			return &cp
		}
	case *AudioContent:
		if !f.AudioContent {
			return &TextContent{Text: fmt.Sprintf("[audio omitted (%s): the client's protocol revision has no audio content]", v.MimeType)}
		}
		if needsStrip(v.Annotations, v.Meta, f) {
			cp := *v
			cp.Annotations, cp.Meta = stripAnn(v.Annotations, f), stripMeta(v.Meta, f)
			return &cp
		}
	case *ResourceLink:
		if !f.ResourceLink {
			var b strings.Builder
			b.WriteString("Resource: ")
			name := v.Name
			if v.Title != "" {
				name = v.Title
			}
			b.WriteString(name)
			b.WriteString(" <")
			b.WriteString(v.URI)
			b.WriteString(">")
			if v.Description != "" {
				b.WriteString("\n")
				b.WriteString(v.Description)
			}
			return &TextContent{Text: b.String(), Annotations: stripAnn(v.Annotations, f)}
		}
		if needsStrip(v.Annotations, v.Meta, f) || len(v.Icons) > 0 && !f.Icons {
			cp := *v
			cp.Annotations, cp.Meta = stripAnn(v.Annotations, f), stripMeta(v.Meta, f)
			if !f.Icons {
				cp.Icons = nil
			}
			return &cp
		}
	case *EmbeddedResource:
		if needsStrip(v.Annotations, v.Meta, f) || len(v.Resource.Meta) > 0 && !f.Meta {
			cp := *v
			cp.Annotations, cp.Meta = stripAnn(v.Annotations, f), stripMeta(v.Meta, f)
			cp.Resource.Meta = stripMeta(v.Resource.Meta, f)
			return &cp
		}
	}
	return c
}

// shapeContent is Features.shapeContent of revision r's features.
func (p RevisionPolicy) shapeContent(c Content, r Revision) Content {
	return p.Features(r).shapeContent(c)
}

func needsStrip(a *Annotations, meta map[string]any, f Features) bool {
	return len(meta) > 0 && !f.Meta || a != nil && a.LastModified != "" && !f.LastModified
}

func stripAnn(a *Annotations, f Features) *Annotations {
	if a == nil || f.LastModified || a.LastModified == "" {
		return a
	}
	cp := *a
	cp.LastModified = ""
	return &cp
}

func stripMeta(m map[string]any, f Features) map[string]any {
	if f.Meta {
		return m
	}
	return nil
}

func isJSONObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}

// AppendJSON appends the tool's wire form to b; unset optional fields are
// left out. Shape it for the revision first with [RevisionPolicy.ShapeTool].
func (t *Tool) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, t.Name)
	b = appendOptString(b, "title", t.Title)
	b = appendOptString(b, "description", t.Description)
	b = append(b, `,"inputSchema":`...)
	b = append(b, t.InputSchema...)
	if len(t.OutputSchema) > 0 {
		b = append(b, `,"outputSchema":`...)
		b = append(b, t.OutputSchema...)
	}
	var err error
	if !t.Annotations.IsZero() {
		if b, err = appendMember(b, "annotations", t.Annotations); err != nil {
			return nil, err
		}
	}
	if b, err = appendIcons(b, t.Icons); err != nil {
		return nil, err
	}
	if len(t.Meta) > 0 {
		if b, err = appendMember(b, "_meta", t.Meta); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// MarshalJSON encodes the tool as it is (unshaped).
func (t *Tool) MarshalJSON() ([]byte, error) { return t.AppendJSON(nil) }

// ShapeImplementation returns server or client info as the revision knows it:
// title from 2025-06-18, description, websiteUrl and icons from 2025-11-25.
func (f Features) ShapeImplementation(i Implementation) Implementation {
	if !f.ToolTitle {
		i.Title = ""
	}
	if !f.Icons {
		i.Description, i.WebsiteURL, i.Icons = "", "", nil
	}
	return i
}

// ShapeImplementation is [Features.ShapeImplementation] of revision r's features.
func (p RevisionPolicy) ShapeImplementation(i Implementation, r Revision) Implementation {
	return p.Features(r).ShapeImplementation(i)
}
