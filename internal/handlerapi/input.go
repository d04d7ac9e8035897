package handlerapi

import (
	"encoding/json"

	"github.com/hexmcp/hexmcp/domain"
)

// ElicitForm asks the user to fill in a form described by schema
// (hexmcp.ElicitForm).
func ElicitForm(message string, schema json.RawMessage) domain.ElicitParams {
	return domain.ElicitParams{Mode: domain.ElicitModeForm, Message: message, RequestedSchema: schema}
}

// ElicitURL asks the user to open url (hexmcp.ElicitURL).
func ElicitURL(message, url, elicitationID string) domain.ElicitParams {
	return domain.ElicitParams{Mode: domain.ElicitModeURL, Message: message, URL: url, ElicitationID: elicitationID}
}

// UserText is a sampling message of the user holding one text block
// (hexmcp.UserText).
func UserText(text string) domain.SamplingMessage {
	return domain.SamplingMessage{Role: domain.RoleUser, Content: textBlock(text)}
}

// AssistantText is a sampling message of the assistant holding one text
// block (hexmcp.AssistantText).
func AssistantText(text string) domain.SamplingMessage {
	return domain.SamplingMessage{Role: domain.RoleAssistant, Content: textBlock(text)}
}

// textBlock is the JSON of one text content block.
func textBlock(text string) json.RawMessage {
	b := append([]byte(`{"type":"text","text":`), domain.AppendJSONString(nil, text)...)
	return append(b, '}')
}

// InputRequest is one question for the client: build it with [ElicitInput],
// [SamplingInput] or [RootsInput].
type InputRequest struct {
	q Question
}

// Question is an [InputRequest] taken apart, as the engine asks it.
type Question struct {
	// Key is the question's key; Method the client method that answers
	// it, with Params.
	Key, Method string
	Params      any
	// Err made the question invalid (nil when it is valid).
	Err error
	// Schema, for a form elicitation, is what the answer must match.
	Schema []byte
}

// QuestionOf returns the parts of r.
func QuestionOf(r InputRequest) Question { return r.q }

// Key is the question's key.
func (r InputRequest) Key() string { return r.q.Key }

// Method is the client method that answers it.
func (r InputRequest) Method() string { return r.q.Method }

// ElicitInput asks the user (elicitation/create) under key.
func ElicitInput(key string, p domain.ElicitParams) InputRequest {
	q := Question{Key: key, Method: domain.MethodElicit, Params: p, Err: p.Validate()}
	if p.Mode != domain.ElicitModeURL {
		q.Schema = p.RequestedSchema
	}
	return InputRequest{q}
}

// SamplingInput asks the client's LLM for a completion
// (sampling/createMessage) under key.
func SamplingInput(key string, p domain.CreateMessageParams) InputRequest {
	return InputRequest{Question{Key: key, Method: domain.MethodCreateMessage, Params: p, Err: p.Validate()}}
}

// RootsInput asks for the client's roots (roots/list) under key.
func RootsInput(key string) InputRequest {
	return InputRequest{Question{Key: key, Method: domain.MethodListRoots, Params: struct{}{}}}
}

// InputResponses holds the client's answers, by key.
type InputResponses struct {
	m map[string]any
}

// Elicitation returns the answer to the elicitation asked under key.
func (r InputResponses) Elicitation(key string) (*domain.ElicitResult, bool) {
	v, ok := r.m[key].(*domain.ElicitResult)
	return v, ok
}

// Sampling returns the answer to the sampling request asked under key.
func (r InputResponses) Sampling(key string) (*domain.CreateMessageResult, bool) {
	v, ok := r.m[key].(*domain.CreateMessageResult)
	return v, ok
}

// Roots returns the answer to the roots request asked under key.
func (r InputResponses) Roots(key string) (*domain.ListRootsResult, bool) {
	v, ok := r.m[key].(*domain.ListRootsResult)
	return v, ok
}

// NewResponses returns the answers m (by key: a *domain.ElicitResult,
// *domain.CreateMessageResult or *domain.ListRootsResult) as
// InputResponses.
func NewResponses(m map[string]any) InputResponses { return InputResponses{m: m} }
