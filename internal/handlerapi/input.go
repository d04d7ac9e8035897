package handlerapi

import (
	"github.com/hexmcp/hexmcp/domain"
)

// InputRequest is one question for the client: build it with [ElicitInput],
// [SamplingInput] or [RootsInput].
type InputRequest struct {
	key    string
	method string
	params any
	err    error
	schema []byte // form elicitation: what the answer must match
}

// Key is the question's key.
func (r InputRequest) Key() string { return r.key }

// Method is the client method that answers it.
func (r InputRequest) Method() string { return r.method }

// ElicitInput asks the user (elicitation/create) under key.
func ElicitInput(key string, p domain.ElicitParams) InputRequest {
	r := InputRequest{key: key, method: domain.MethodElicit, params: p, err: p.Validate()}
	if p.Mode != domain.ElicitModeURL {
		r.schema = p.RequestedSchema
	}
	return r
}

// SamplingInput asks the client's LLM for a completion
// (sampling/createMessage) under key.
func SamplingInput(key string, p domain.CreateMessageParams) InputRequest {
	return InputRequest{key: key, method: domain.MethodCreateMessage, params: p, err: p.Validate()}
}

// RootsInput asks for the client's roots (roots/list) under key.
func RootsInput(key string) InputRequest {
	return InputRequest{key: key, method: domain.MethodListRoots, params: struct{}{}}
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

// Question returns the parts of r: its key, the client method that answers
// it, the method's params, the error that made it invalid (nil when it is
// valid), and for a form elicitation the schema its answer must match.
func Question(r InputRequest) (key, method string, params any, err error, schema []byte) {
	return r.key, r.method, r.params, r.err, r.schema
}

// NewResponses returns the answers m (by key: a *domain.ElicitResult,
// *domain.CreateMessageResult or *domain.ListRootsResult) as
// InputResponses.
func NewResponses(m map[string]any) InputResponses { return InputResponses{m: m} }
