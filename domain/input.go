package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Methods a server asks the client to run: as server-to-client requests in
// the handshake era, as entries of inputRequests (multi round-trip
// requests, MRTR) in the stateless era.
const (
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
	MethodListRoots     = "roots/list"
)

// ElicitMode is how an elicitation asks the user: a form the client renders
// from a schema, or a URL the user opens (2025-11-25 on).
type ElicitMode string

// The elicitation modes.
const (
	ElicitModeForm ElicitMode = "form"
	ElicitModeURL  ElicitMode = "url"
)

// ElicitParams are the params of elicitation/create; hexmcp.ElicitForm
// and hexmcp.ElicitURL make them.
type ElicitParams struct {
	// Mode is "form" (the default; left off the wire) or "url".
	Mode ElicitMode
	// Message is what the user is asked.
	Message string
	// RequestedSchema (form mode) is a flat JSON object schema whose
	// properties are strings, numbers, integers, booleans or enums
	// (single-select strings, multi-select string arrays), each optionally
	// with a title, description and default (SEP-1034, SEP-1330).
	RequestedSchema json.RawMessage
	// URL (url mode) is the page the user opens; ElicitationID identifies
	// the elicitation for notifications/elicitation/complete.
	URL           string
	ElicitationID string
	// Meta is the request's _meta (optional).
	Meta map[string]any
}

// Validate reports params that no client may be sent.
func (p ElicitParams) Validate() error {
	switch p.Mode {
	case "", ElicitModeForm:
		if len(p.RequestedSchema) == 0 {
			return errors.New("a form elicitation needs a requestedSchema")
		}
		if p.URL != "" || p.ElicitationID != "" {
			return errors.New("a form elicitation has no url or elicitationId")
		}
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(p.RequestedSchema, &s); err != nil || s.Type != "object" || s.Properties == nil {
			return errors.New(`requestedSchema must be an object schema with "type":"object" and "properties"`)
		}
	case ElicitModeURL:
		if p.URL == "" || p.ElicitationID == "" {
			return errors.New("a url elicitation needs a url and an elicitationId")
		}
	default:
		return fmt.Errorf("unknown elicitation mode %q", p.Mode)
	}
	if p.Message == "" {
		return errors.New("an elicitation needs a message")
	}
	return nil
}

// MarshalJSON encodes the params as the wire wants them: "mode" only for
// url mode (form is the default, and revisions before 2025-11-25 know no
// mode).
func (p ElicitParams) MarshalJSON() ([]byte, error) {
	w := struct {
		Meta            map[string]any  `json:"_meta,omitempty"`
		Mode            ElicitMode      `json:"mode,omitempty"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
		URL             string          `json:"url,omitempty"`
		ElicitationID   string          `json:"elicitationId,omitempty"`
	}{p.Meta, "", p.Message, p.RequestedSchema, p.URL, p.ElicitationID}
	if p.Mode == ElicitModeURL {
		w.Mode = ElicitModeURL
	}
	return json.Marshal(w)
}

// ElicitAction is the user's answer to an elicitation.
type ElicitAction string

// The elicitation actions.
const (
	ElicitAccept  ElicitAction = "accept"  // the user submitted the form
	ElicitDecline ElicitAction = "decline" // the user said no
	ElicitCancel  ElicitAction = "cancel"  // the user dismissed the request
)

// ElicitResult is the client's answer to elicitation/create.
type ElicitResult struct {
	Action ElicitAction `json:"action"`
	// Content holds the submitted values (form mode, action accept): a
	// JSON object matching the requested schema.
	Content json.RawMessage `json:"content,omitempty"`
}

// Accepted reports whether the user submitted the form (or, in url mode,
// agreed to open the page).
func (r *ElicitResult) Accepted() bool { return r != nil && r.Action == ElicitAccept }

// Decode decodes the submitted values into v (a pointer to a struct or a
// map). It is an error when the user did not accept.
func (r *ElicitResult) Decode(v any) error {
	if !r.Accepted() {
		return fmt.Errorf("the user did not accept the elicitation (action %q)", r.actionString())
	}
	if len(r.Content) == 0 {
		return errors.New("the accepted elicitation carries no content")
	}
	return json.Unmarshal(r.Content, v)
}

func (r *ElicitResult) actionString() string {
	if r == nil {
		return ""
	}
	return string(r.Action)
}

// Check reports a result that does not follow the protocol.
func (r *ElicitResult) Check() error {
	switch r.Action {
	case ElicitAccept, ElicitDecline, ElicitCancel:
	default:
		return fmt.Errorf(`"action" must be "accept", "decline" or "cancel", not %q`, r.Action)
	}
	if len(r.Content) > 0 && !isJSONObject(r.Content) && string(r.Content) != "null" {
		return errors.New(`"content" must be an object`)
	}
	return nil
}

// ElicitSchemaFor describes the Go struct type t as an elicitation schema:
// [InferSchema] with its tags (title, description, default, enum), checked
// to be the flat object of primitive properties that elicitation allows
// (strings, numbers, integers, booleans, string enums and arrays of string
// enums), and without "additionalProperties", which the elicitation schema
// does not have.
func ElicitSchemaFor(t reflect.Type) (json.RawMessage, error) {
	raw, err := InferSchema(t)
	if err != nil {
		return nil, err
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if string(s["type"]) != `"object"` {
		return nil, &SchemaError{Type: t.String(), Reason: "an elicitation schema must describe a struct"}
	}
	var props map[string]struct {
		Type  string `json:"type"`
		Items *struct {
			Type  string `json:"type"`
			Enum  []any  `json:"enum"`
			AnyOf []any  `json:"anyOf"`
		} `json:"items"`
	}
	if err := json.Unmarshal(s["properties"], &props); err != nil {
		return nil, err
	}
	for name, p := range props {
		switch p.Type {
		case "string", "number", "integer", "boolean":
		case "array":
			if p.Items == nil || p.Items.Type != "string" || len(p.Items.Enum) == 0 && len(p.Items.AnyOf) == 0 {
				return nil, &SchemaError{Type: t.String(), Field: name, Reason: "elicitation property " + name + " is an array that is not a multi-select of string enums"}
			}
		default:
			return nil, &SchemaError{Type: t.String(), Field: name, Reason: "elicitation property " + name + " must be a string, number, integer, boolean or enum, not " + strings.TrimSpace(p.Type)}
		}
	}
	delete(s, "additionalProperties")
	delete(s, "$defs")
	out, err := json.Marshal(orderedSchema(s))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// orderedSchema keeps an object schema's usual keyword order.
type orderedSchema map[string]json.RawMessage

func (o orderedSchema) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	first := true
	put := func(k string) {
		v, ok := o[k]
		if !ok {
			return
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = AppendJSONString(b, k)
		b = append(b, ':')
		b = append(b, v...)
	}
	for _, k := range []string{"type", "title", "description", "properties", "required"} {
		put(k)
	}
	return append(b, '}'), nil
}

// SamplingMessage is one message of a sampling conversation. Content is a
// content block ({"type":"text",...}, image, audio; tool_use and
// tool_result from 2025-11-25) or an array of them, as JSON.
type SamplingMessage struct {
	Role    Role            `json:"role"`
	Content json.RawMessage `json:"content"`
	Meta    map[string]any  `json:"_meta,omitempty"`
}

// ModelHint suggests a model by name (substring match by the client).
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ModelPreferences tell the client how to choose a model; priorities are
// between 0 and 1.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// CreateMessageParams are the params of sampling/createMessage: the server
// asks the client's LLM for a completion.
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	// IncludeContext is "none", "thisServer" or "allServers" (the last two
	// need the client's sampling.context capability).
	IncludeContext string         `json:"includeContext,omitempty"`
	Temperature    *float64       `json:"temperature,omitempty"`
	MaxTokens      int            `json:"maxTokens"`
	StopSequences  []string       `json:"stopSequences,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	// Tools and ToolChoice (2025-11-25 on) need the client's sampling.tools
	// capability; both are passed on as JSON.
	Tools      json.RawMessage `json:"tools,omitempty"`
	ToolChoice json.RawMessage `json:"toolChoice,omitempty"`
	Meta       map[string]any  `json:"_meta,omitempty"`
}

// Validate reports params that no client may be sent.
func (p CreateMessageParams) Validate() error {
	if len(p.Messages) == 0 {
		return errors.New("sampling needs at least one message")
	}
	if p.MaxTokens <= 0 {
		return errors.New("sampling needs maxTokens greater than 0")
	}
	for i, m := range p.Messages {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return fmt.Errorf("message %d: role must be user or assistant", i)
		}
		if len(m.Content) == 0 {
			return fmt.Errorf("message %d has no content", i)
		}
	}
	return nil
}

// CreateMessageResult is the client's answer to sampling/createMessage.
type CreateMessageResult struct {
	Role Role `json:"role"`
	// Content is a content block or an array of them, as JSON.
	Content json.RawMessage `json:"content"`
	// Model names the model that answered.
	Model string `json:"model"`
	// StopReason is "endTurn", "stopSequence", "maxTokens", "toolUse" or
	// another string.
	StopReason string `json:"stopReason,omitempty"`
}

// Text returns the text of the result's text blocks, joined by newlines.
func (r *CreateMessageResult) Text() string {
	if r == nil {
		return ""
	}
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var one block
	if err := json.Unmarshal(r.Content, &one); err == nil {
		if one.Type == "text" {
			return one.Text
		}
		return ""
	}
	var many []block
	if err := json.Unmarshal(r.Content, &many); err != nil {
		return ""
	}
	var parts []string
	for _, b := range many {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Check reports a result that does not follow the protocol.
func (r *CreateMessageResult) Check() error {
	if r.Role != RoleUser && r.Role != RoleAssistant {
		return errors.New(`"role" must be "user" or "assistant"`)
	}
	if len(r.Content) == 0 || r.Content[0] != '{' && r.Content[0] != '[' {
		return errors.New(`"content" must be a content block or an array of them`)
	}
	if r.Model == "" {
		return errors.New(`"model" is missing`)
	}
	return nil
}

// Root is a directory or file the client lets the server work with.
type Root struct {
	// URI is a file:// URI.
	URI  string         `json:"uri"`
	Name string         `json:"name,omitempty"`
	Meta map[string]any `json:"_meta,omitempty"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
}

// Check reports a result that does not follow the protocol.
func (r *ListRootsResult) Check() error {
	if r.Roots == nil {
		return errors.New(`"roots" is missing`)
	}
	for i, root := range r.Roots {
		if root.URI == "" {
			return fmt.Errorf("root %d has no uri", i)
		}
	}
	return nil
}
