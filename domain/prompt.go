package domain

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Prompt describes a prompt or prompt template as clients see it in
// prompts/list. Optional fields are left out of the wire form when unset,
// and fields a client's revision does not know are removed by
// [RevisionPolicy.ShapePrompt].
type Prompt struct {
	// Name identifies the prompt; the same rules as tool names apply.
	Name string
	// Title is a human-readable name for display (2025-06-18 on).
	Title string
	// Description tells the user what the prompt provides.
	Description string
	// Arguments are the prompt's template arguments, in order.
	Arguments []PromptArgument
	// Icons are images a client may show for the prompt (2025-11-25 on).
	Icons []Icon
	// Meta is sent as _meta (2025-06-18 on).
	Meta map[string]any
	// Scopes are the OAuth scopes a caller must hold to get the prompt
	// (see [Tool.Scopes]); never sent to clients.
	Scopes []string
}

// PromptArgument describes one argument a prompt accepts. Argument values
// are strings.
type PromptArgument struct {
	// Name is the argument's name; required and unique within the prompt.
	Name string `json:"name"`
	// Title is a human-readable name for display (2025-06-18 on).
	Title string `json:"title,omitempty"`
	// Description tells the user what to give.
	Description string `json:"description,omitempty"`
	// Required marks an argument prompts/get cannot do without.
	Required bool `json:"required,omitempty"`
}

// Role is the speaker of a prompt message.
type Role string

// The roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PromptMessage is one message of a prompt: a role and one content block
// of any type (text, image, audio, resource link, embedded resource).
type PromptMessage struct {
	Role    Role
	Content Content
}

// GetPromptResult is what a prompt handler returns for prompts/get.
type GetPromptResult struct {
	// Description describes the prompt as rendered (optional).
	Description string
	// Messages are the prompt's messages, in order.
	Messages []PromptMessage
	// Meta is sent as _meta (2025-06-18 on; the stateless era's server
	// information takes precedence).
	Meta map[string]any
}

// ErrDuplicatePrompt is wrapped by the error a prompt registry returns for
// a name that is already registered.
var ErrDuplicatePrompt = errors.New("a prompt with this name is already registered")

// Validate checks the prompt: the name (the tool-name rules of SEP-986),
// each argument's name (present, unique), the icons and that _meta can be
// encoded.
func (p *Prompt) Validate() error {
	if err := ValidateToolName(p.Name); err != nil {
		var te *DefinitionError
		if errors.As(err, &te) {
			return &DefinitionError{Kind: "prompt", Name: te.Name, Reason: "prompt " + trimToolPrefix(te.Reason)}
		}
		return &DefinitionError{Kind: "prompt", Name: p.Name, Reason: err.Error()}
	}
	seen := make(map[string]bool, len(p.Arguments))
	for i, a := range p.Arguments {
		if a.Name == "" {
			return &DefinitionError{Kind: "prompt", Name: p.Name, Reason: fmt.Sprintf("arguments[%d]: name is empty", i)}
		}
		if seen[a.Name] {
			return &DefinitionError{Kind: "prompt", Name: p.Name, Reason: fmt.Sprintf("argument %q appears twice", a.Name)}
		}
		seen[a.Name] = true
	}
	for n, ic := range p.Icons {
		if err := ic.Validate(); err != nil {
			return &DefinitionError{Kind: "prompt", Name: p.Name, Reason: fmt.Sprintf("icons[%d]: %v", n, err)}
		}
	}
	if p.Meta != nil {
		if _, err := json.Marshal(p.Meta); err != nil {
			return &DefinitionError{Kind: "prompt", Name: p.Name, Reason: "_meta cannot be encoded as JSON: " + err.Error()}
		}
	}
	return nil
}

func trimToolPrefix(s string) string {
	const prefix = "tool "
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):]
	}
	return s
}

// MissingArgument returns the name of the first required argument of p
// that args lacks, or "".
func (p *Prompt) MissingArgument(args map[string]string) string {
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return a.Name
		}
	}
	return ""
}

// Validate checks that every message has the role "user" or "assistant"
// and a content block.
func (r *GetPromptResult) Validate() error {
	for i, m := range r.Messages {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return fmt.Errorf("messages[%d]: role %q is neither \"user\" nor \"assistant\"", i, m.Role)
		}
		if m.Content == nil {
			return fmt.Errorf("messages[%d]: content is nil", i)
		}
	}
	return nil
}

// shapePrompt returns p as a client of the revision may see it: titles (of
// the prompt and its arguments) and _meta before 2025-06-18 and icons
// before 2025-11-25 are removed. p is not modified.
func (f Features) shapePrompt(p *Prompt) *Prompt {
	s := *p
	f.stripListed(&s.Title, &s.Icons, &s.Meta)
	if !f.ToolTitle && len(p.Arguments) > 0 {
		s.Arguments = make([]PromptArgument, len(p.Arguments))
		for i, a := range p.Arguments {
			a.Title = ""
			s.Arguments[i] = a
		}
	}
	return &s
}

// ShapePrompt is Features.shapePrompt of revision rev's features.
func (pol RevisionPolicy) ShapePrompt(p *Prompt, rev Revision) *Prompt {
	return pol.Features(rev).shapePrompt(p)
}

// ShapePromptResult returns r as the revision may carry it: each message's
// content goes through RevisionPolicy.shapeContent (audio and resource
// links become text where unknown), and _meta is removed before
// 2025-06-18. r is not modified.
func (f Features) ShapePromptResult(r *GetPromptResult) *GetPromptResult {
	s := *r
	s.Messages = make([]PromptMessage, len(r.Messages))
	for i, m := range r.Messages {
		s.Messages[i] = PromptMessage{Role: m.Role, Content: f.shapeContent(m.Content)}
	}
	s.Meta = stripMeta(r.Meta, f)
	return &s
}

// AppendJSON appends the prompt's wire form to b; unset optional fields
// are left out. Shape it for the revision first with
// [RevisionPolicy.ShapePrompt].
func (p *Prompt) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, p.Name)
	b = appendOptString(b, "title", p.Title)
	b = appendOptString(b, "description", p.Description)
	var err error
	if len(p.Arguments) > 0 {
		if b, err = appendMember(b, "arguments", p.Arguments); err != nil {
			return nil, err
		}
	}
	if b, err = appendIcons(b, p.Icons); err != nil {
		return nil, err
	}
	return closeBlock(b, nil, p.Meta)
}

// MarshalJSON encodes the prompt as it is (unshaped).
func (p *Prompt) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil) }

// AppendJSON appends the result's members (without braces) to b:
// description when set, messages, and _meta when set (and meta is nil; the
// engine passes the stateless era's _meta as meta). Shape it first with
// [Features.ShapePromptResult].
func (r *GetPromptResult) AppendJSON(b []byte) ([]byte, error) {
	if r.Description != "" {
		b = append(b, `"description":`...)
		b = appendJSONString(b, r.Description)
		b = append(b, ',')
	}
	b = append(b, `"messages":[`...)
	for i, m := range r.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		if m.Content == nil {
			return nil, fmt.Errorf("messages[%d]: content is nil", i)
		}
		raw, err := m.Content.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("messages[%d] (%s): %w", i, m.Content.ContentType(), err)
		}
		b = append(b, `{"role":`...)
		b = appendJSONString(b, string(m.Role))
		b = append(b, `,"content":`...)
		b = append(b, raw...)
		b = append(b, '}')
	}
	return append(b, ']'), nil
}
