package app

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
)

// Ask puts questions to the client and returns the answers (see "Asking the
// client for input" in the package documentation): in the handshake era by
// requests to the client, in the stateless era through an input_required
// result and the client's retry. Keys must be non-empty and unique.
func (rc *RequestContext) Ask(ctx context.Context, questions ...handlerapi.InputRequest) (handlerapi.InputResponses, error) {
	if rc == nil {
		return handlerapi.InputResponses{}, errors.New("hexmcp: Ask outside a request")
	}
	if len(questions) == 0 {
		return handlerapi.NewResponses(map[string]any{}), nil
	}
	reqs := questionsOf(questions)
	seen := make(map[string]bool, len(reqs))
	for _, r := range reqs {
		switch {
		case r.Method == "":
			return handlerapi.InputResponses{}, errors.New("hexmcp: an InputRequest must be made with ElicitInput, SamplingInput or RootsInput")
		case r.Key == "":
			return handlerapi.InputResponses{}, fmt.Errorf("hexmcp: a %s question needs a key", r.Method)
		case seen[r.Key]:
			return handlerapi.InputResponses{}, fmt.Errorf("hexmcp: two questions have the key %q", r.Key)
		case r.Err != nil:
			return handlerapi.InputResponses{}, fmt.Errorf("hexmcp: question %q: %w", r.Key, r.Err)
		}
		seen[r.Key] = true
	}
	if err := rc.checkCapabilities(reqs); err != nil {
		return handlerapi.InputResponses{}, err
	}
	raw, err := rc.answers(ctx, reqs)
	if err != nil {
		return handlerapi.InputResponses{}, err
	}
	out := make(map[string]any, len(reqs))
	for _, r := range reqs {
		v, err := rc.env.input.decodeAnswer(r, raw[r.Key])
		if err != nil {
			return handlerapi.InputResponses{}, err
		}
		out[r.Key] = v
	}
	return handlerapi.NewResponses(out), nil
}

// question is an InputRequest taken apart.
type question = handlerapi.Question

// questionsOf takes the questions of a handler apart.
func questionsOf(rs []handlerapi.InputRequest) []question {
	qs := make([]question, len(rs))
	for i, r := range rs {
		qs[i] = handlerapi.QuestionOf(r)
	}
	return qs
}

// Elicit asks the user (elicitation/create) and returns the answer; see
// [RequestContext.Ask].
func (rc *RequestContext) Elicit(ctx context.Context, key string, p domain.ElicitParams) (*domain.ElicitResult, error) {
	return askOne(ctx, rc, handlerapi.ElicitInput(key, p), handlerapi.InputResponses.Elicitation)
}

// CreateMessage asks the client's LLM for a completion
// (sampling/createMessage); see [RequestContext.Ask].
func (rc *RequestContext) CreateMessage(ctx context.Context, key string, p domain.CreateMessageParams) (*domain.CreateMessageResult, error) {
	return askOne(ctx, rc, handlerapi.SamplingInput(key, p), handlerapi.InputResponses.Sampling)
}

// ListRoots asks for the client's roots (roots/list); see
// [RequestContext.Ask].
func (rc *RequestContext) ListRoots(ctx context.Context, key string) (*domain.ListRootsResult, error) {
	return askOne(ctx, rc, handlerapi.RootsInput(key), handlerapi.InputResponses.Roots)
}

// askOne asks req alone and returns its answer, read with get.
func askOne[T any](ctx context.Context, rc *RequestContext, req handlerapi.InputRequest, get func(handlerapi.InputResponses, string) (T, bool)) (T, error) {
	res, err := rc.Ask(ctx, req)
	if err != nil {
		var zero T
		return zero, err
	}
	v, _ := get(res, req.Key())
	return v, nil
}

// CanAsk reports whether the client can answer the questions: it declared
// the capabilities they need (sub-capabilities included, such as
// elicitation.url or sampling.tools) and the request's revision has the
// methods (no elicitation before 2025-06-18, whatever the client
// declares). It is exactly the check [RequestContext.Ask] makes before it
// returns a *hexmcp.MissingCapabilityError: a handler that can do without the
// answers asks CanAsk first, with the questions it is about to ask.
//
//	q := hexmcp.ElicitInput("confirm", hexmcp.ElicitForm("Go ahead?", schema))
//	if !rc.CanAsk(q) {
//		return "", hexmcp.NewToolError("This client cannot confirm; nothing was done.")
//	}
//	res, err := rc.Ask(ctx, q)
func (rc *RequestContext) CanAsk(questions ...handlerapi.InputRequest) bool {
	return rc != nil && rc.checkCapabilities(questionsOf(questions)) == nil
}

// checkCapabilities refuses questions the client cannot answer.
func (rc *RequestContext) checkCapabilities(reqs []question) error {
	// A capability counts as declared only as an object; its members
	// (sub-capabilities) likewise.
	var top map[string]jsontext.Value
	if rc.info.caps != nil {
		_ = json.Unmarshal(rc.info.caps, &top) // the engine checked it is an object
	}
	caps := make(map[string]map[string]jsontext.Value, len(top))
	for name, v := range top {
		if v.Kind() != '{' {
			continue
		}
		var sub map[string]jsontext.Value
		if json.Unmarshal(v, &sub) == nil {
			caps[name] = sub
		}
	}
	missing := map[string]any{}
	var rev domain.Revision
	for _, r := range reqs {
		name := clientCapabilityOf(r.Method)
		if !rc.env.policy.ClientMethodExists(rc.info.rev, r.Method) {
			missing[name], rev = map[string]any{}, rc.info.rev
			continue
		}
		declared, ok := caps[name]
		if !ok {
			missing[name] = map[string]any{}
			continue
		}
		var sub string
		switch p := r.Params.(type) {
		case domain.ElicitParams:
			// {"elicitation":{}} declares form mode only (2025-11-25
			// keeps it so for older clients); a client that lists modes
			// must list the one used.
			if p.Mode == domain.ElicitModeURL {
				sub = "url"
			} else if len(declared) > 0 {
				sub = "form"
			}
		case domain.CreateMessageParams:
			if len(p.Tools) > 0 || len(p.ToolChoice) > 0 {
				sub = "tools"
			} else if p.IncludeContext != "" && p.IncludeContext != "none" {
				sub = "context"
			}
		}
		if sub != "" {
			if v, ok := declared[sub]; !ok || v.Kind() != '{' {
				missing[name] = map[string]any{sub: map[string]any{}}
			}
		}
	}
	if len(missing) > 0 {
		return &handlerapi.MissingCapabilityError{Required: missing, Revision: rev}
	}
	return nil
}

// answers gets the raw answers to reqs, by key.
func (rc *RequestContext) answers(ctx context.Context, reqs []question) (map[string]jsontext.Value, error) {
	if rc.info.features.InputRequired {
		in := rc.input
		if in == nil {
			return nil, errors.New("hexmcp: only tools/call, prompts/get and resources/read may ask the client for input")
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		out := make(map[string]jsontext.Value, len(reqs))
		var missing []string
		for _, r := range reqs {
			if v, ok := in.responses[r.Key]; ok {
				out[r.Key] = v
				if in.used == nil {
					in.used = make(map[string]jsontext.Value)
				}
				in.used[r.Key] = v
				continue
			}
			missing = append(missing, r.Key)
			in.ask(r)
		}
		if len(missing) > 0 {
			return nil, &handlerapi.InputRequiredError{Keys: missing}
		}
		return out, nil
	}
	s := rc.info.session
	if s == nil {
		return nil, errors.New("hexmcp: no session to send the request on")
	}
	out := make(map[string]jsontext.Value, len(reqs))
	if len(reqs) == 1 {
		v, err := s.callClient(ctx, rc.env.timeout, rc.related, &rc.wmu, rc.slot, reqs[0].Method, reqs[0].Params)
		if err != nil {
			return nil, err
		}
		out[reqs[0].Key] = v
		rc.record(out)
		return out, nil
	}
	// Several questions go out together and are awaited together; the
	// first failure gives up the others.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for _, r := range reqs {
		wg.Go(func() {
			v, err := s.callClient(ctx, rc.env.timeout, rc.related, &rc.wmu, rc.slot, r.Method, r.Params)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				return
			}
			out[r.Key] = v
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	rc.record(out)
	return out, nil
}

// record keeps the answers the client gave to the requests the server
// sent it (handshake era), for Answers.
func (rc *RequestContext) record(answers map[string]jsontext.Value) {
	in := rc.answered(true)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.used == nil {
		in.used = make(map[string]jsontext.Value, len(answers))
	}
	for k, v := range answers {
		in.used[k] = v
	}
}

// answered returns the round that keeps the answers received (nil when
// none was and create is false), making it on the first answer of a call
// whose revision has no input rounds.
func (rc *RequestContext) answered(create bool) *inputRound {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.round == nil && create {
		rc.round = new(inputRound)
	}
	return rc.round
}

// Answers returns the client's answers the handler has received so far
// (by Ask, Elicit, CreateMessage, ListRoots), by key, as the client sent
// them: taken from inputResponses and requestState in the stateless era,
// from the client's responses in the handshake era. The tasks extension
// carries them into the task a call goes on as (tasks.Detach).
func (rc *RequestContext) Answers() map[string]stdjson.RawMessage {
	if rc == nil {
		return nil
	}
	in := rc.answered(false)
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.used) == 0 {
		return nil
	}
	out := make(map[string]stdjson.RawMessage, len(in.used))
	for k, v := range in.used {
		out[k] = stdjson.RawMessage(bytes.Clone(v))
	}
	return out
}
