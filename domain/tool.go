package domain

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Tool describes a tool as clients see it in tools/list. Optional fields are
// left out of the wire form when unset, and fields a client's revision does
// not know are removed by [RevisionPolicy.ShapeTool].
type Tool struct {
	// Name identifies the tool: 1 to 128 characters of A-Z a-z 0-9 _ - .
	Name string
	// Title is a human-readable name for display (2025-06-18 on).
	Title string
	// Description tells the model what the tool does. The SDK never makes one
	// up: left empty, it stays absent.
	Description string
	// InputSchema is the JSON Schema of the arguments; its root is an object.
	InputSchema json.RawMessage
	// OutputSchema, when set, describes structuredContent (2025-06-18 on).
	// Before 2026-07-28 only an object-rooted schema is sent.
	OutputSchema json.RawMessage
	// Annotations are hints about the tool's behaviour (2025-03-26 on).
	Annotations *ToolAnnotations
	// Icons are images a client may show for the tool (2025-11-25 on).
	Icons []Icon
	// Meta is sent as _meta (2025-06-18 on).
	Meta map[string]any
	// Scopes are the OAuth scopes a caller must hold, all of them, to call
	// the tool (the authenticated principal's scopes); never sent to
	// clients. Empty: any caller.
	Scopes []string
	// PassAccessToken lets the tool's handler read the caller's raw bearer
	// token (app.RequestContext.AccessToken); without it, handlers see the
	// principal only. Never sent to clients.
	PassAccessToken bool
}

// ToolAnnotations are hints about a tool. Unset fields are omitted; a client
// must not rely on hints for security decisions.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// IsZero reports whether no annotation is set.
func (a *ToolAnnotations) IsZero() bool {
	return a == nil || (a.Title == "" && a.ReadOnlyHint == nil && a.DestructiveHint == nil &&
		a.IdempotentHint == nil && a.OpenWorldHint == nil)
}

// Icon is an image a client may display. Src is an https:, http: or data: URI.
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	// Theme is "light" or "dark": the background the icon is made for.
	Theme string `json:"theme,omitempty"`
}

// Validate checks the icon against the spec's rules.
func (i Icon) Validate() error {
	if i.Src == "" {
		return fmt.Errorf("icon: src is required")
	}
	u, err := url.Parse(i.Src)
	if err != nil {
		return fmt.Errorf("icon: src %q is not a URI: %w", i.Src, err)
	}
	switch u.Scheme {
	case "https", "http":
		if u.Host == "" {
			return fmt.Errorf("icon: src %q has no host", i.Src)
		}
	case "data":
		if !strings.Contains(i.Src, ",") {
			return fmt.Errorf("icon: src %q is not a valid data: URI", i.Src)
		}
	default:
		return fmt.Errorf("icon: src %q must be an https:, http: or data: URI", i.Src)
	}
	if i.MimeType != "" && !strings.Contains(i.MimeType, "/") {
		return fmt.Errorf("icon: mimeType %q is not a MIME type", i.MimeType)
	}
	for _, s := range i.Sizes {
		if !validIconSize(s) {
			return fmt.Errorf("icon: size %q must be WIDTHxHEIGHT (e.g. 48x48) or any", s)
		}
	}
	switch i.Theme {
	case "", "light", "dark":
	default:
		return fmt.Errorf("icon: theme %q must be light or dark", i.Theme)
	}
	return nil
}

func validIconSize(s string) bool {
	if s == "any" {
		return true
	}
	w, h, ok := strings.Cut(s, "x")
	return ok && allDigits(w) && allDigits(h)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// maxToolNameLength is the longest tool name the spec allows.
const maxToolNameLength = 128

// ValidateToolName checks a name against the spec (SEP-986): 1 to 128
// characters, each one of A-Z a-z 0-9 _ - and '.'.
func ValidateToolName(name string) error {
	if name == "" {
		return &DefinitionError{Kind: "tool", Reason: "tool name is empty"}
	}
	if len(name) > maxToolNameLength {
		return &DefinitionError{Kind: "tool", Name: name[:32] + "…", Reason: fmt.Sprintf("tool name is %d characters long; at most %d are allowed", len(name), maxToolNameLength)}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return &DefinitionError{Kind: "tool", Name: name, Reason: fmt.Sprintf("tool name has character %q at %d; only A-Z a-z 0-9 _ - . are allowed", rune(c), i)}
		}
	}
	return nil
}

// Validate checks everything about the tool that can be checked without a
// schema compiler: the name, that the input schema is a JSON object with
// type "object", that the output schema is valid JSON, and the icons.
func (t *Tool) Validate() error {
	if err := ValidateToolName(t.Name); err != nil {
		return err
	}
	if err := checkSchemaRoot(t.InputSchema, true); err != nil {
		return &DefinitionError{Kind: "tool", Name: t.Name, Reason: "inputSchema: " + err.Error()}
	}
	if len(t.OutputSchema) > 0 {
		if err := checkSchemaRoot(t.OutputSchema, false); err != nil {
			return &DefinitionError{Kind: "tool", Name: t.Name, Reason: "outputSchema: " + err.Error()}
		}
	}
	for n, ic := range t.Icons {
		if err := ic.Validate(); err != nil {
			return &DefinitionError{Kind: "tool", Name: t.Name, Reason: fmt.Sprintf("icons[%d]: %v", n, err)}
		}
	}
	if t.Meta != nil {
		if _, err := json.Marshal(t.Meta); err != nil {
			return &DefinitionError{Kind: "tool", Name: t.Name, Reason: "_meta cannot be encoded as JSON: " + err.Error()}
		}
	}
	return nil
}

// checkSchemaRoot checks that raw is a JSON object (a schema); when
// mustBeObject, its "type" must be "object".
func checkSchemaRoot(raw json.RawMessage, mustBeObject bool) error {
	if len(raw) == 0 {
		return fmt.Errorf("missing")
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(raw, &root); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if mustBeObject {
		if string(root["type"]) != `"object"` {
			return fmt.Errorf(`root must have "type": "object"`)
		}
	}
	return nil
}

// schemaRootIsObject reports whether a schema's root declares "type":"object".
func schemaRootIsObject(raw json.RawMessage) bool {
	return checkSchemaRoot(raw, true) == nil
}
