package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// inputRounds serves multi round-trip requests (2026-07-28): it reads the
// client's answers of a retry (inputResponses, and those of earlier rounds
// in its signed requestState), answers a handler that asked what has no
// answer yet with an input_required result and a new signed state, and
// checks every answer, in both eras, before a handler gets it.
type inputRounds struct {
	keys      ports.StateKeys       // Options.StateKeys
	clock     ports.Clock           // requestState expiry
	ttl       time.Duration         // Options.RequestStateTTL
	validator ports.SchemaValidator // nil: form answers are not checked against their schema
	res       *results
	log       ports.Logger

	schemaCache sync.Map // requested elicitation schema -> ports.Schema
	schemaCount atomic.Int64
}

// maxCachedSchemas bounds the requested schemas inputRounds keeps compiled.
const maxCachedSchemas = 256

// inputRound is a stateless-era request's side of multi round-trip
// requests: the answers known (from requestState and inputResponses), the
// ones the handler used, and the questions it asked without an answer.
type inputRound struct {
	want      stateV1 // method, target, subject (digest once computed)
	args      jsontext.Value
	responses map[string]jsontext.Value
	mu        sync.Mutex
	used      map[string]jsontext.Value
	asked     []question
}

// ask records a question to put in the input_required result (once per
// key). in.mu is held.
func (in *inputRound) ask(r question) {
	if !slices.ContainsFunc(in.asked, func(a question) bool { return a.Key == r.Key }) {
		in.asked = append(in.asked, r)
	}
}

// decodeAnswer decodes and checks the client's answer to r.
func (ir *inputRounds) decodeAnswer(r question, raw jsontext.Value) (any, error) {
	bad := func(reason string) error {
		return &handlerapi.InputResponseError{Key: r.Key, Method: r.Method, Reason: reason}
	}
	if raw.Kind() != '{' {
		return nil, bad("it must be an object")
	}
	var (
		v     interface{ Check() error }
		value any
	)
	switch r.Method {
	case domain.MethodElicit:
		x := new(domain.ElicitResult)
		v, value = x, x
	case domain.MethodCreateMessage:
		x := new(domain.CreateMessageResult)
		v, value = x, x
	case domain.MethodListRoots:
		x := new(domain.ListRootsResult)
		v, value = x, x
	}
	if err := json.Unmarshal(raw, value); err != nil {
		return nil, bad(decl.DescribeDecodeError(err))
	}
	if err := v.Check(); err != nil {
		return nil, bad(err.Error())
	}
	if er, ok := value.(*domain.ElicitResult); ok && er.Accepted() && r.Schema != nil && ir.validator != nil {
		if len(er.Content) == 0 {
			return nil, bad("an accepted form elicitation must carry content")
		}
		schema, err := ir.elicitSchema(r.Schema)
		if err != nil {
			return nil, fmt.Errorf("hexmcp: the requested schema of %q does not compile: %w", r.Key, err)
		}
		var content any
		if err := json.Unmarshal(er.Content, &content); err != nil {
			return nil, bad("content is not valid JSON")
		}
		if err := schema.Validate(content); err != nil {
			return nil, bad("content does not match the requested schema: " + err.Error())
		}
	}
	return value, nil
}

// elicitSchema compiles a requested schema, keeping a bounded number of
// them.
func (ir *inputRounds) elicitSchema(raw []byte) (ports.Schema, error) {
	key := string(raw)
	if s, ok := ir.schemaCache.Load(key); ok {
		return s.(ports.Schema), nil
	}
	s, err := ir.validator.Compile(raw)
	if err != nil {
		return nil, err
	}
	if ir.schemaCount.Add(1) <= maxCachedSchemas {
		ir.schemaCache.Store(key, s)
	}
	return s, nil
}

// begin prepares a stateless-era request of a method that may answer
// input_required: it checks inputResponses and verifies requestState, into
// rc's own round (no allocation for a call that asks nothing). target names
// what is called (tool or prompt name, resource URI); args are the
// request's arguments.
func (ir *inputRounds) begin(ctx context.Context, rc *RequestContext, m message, p *wireParams, target string, args jsontext.Value) *rpcError {
	if !rc.info.features.InputRequired {
		return nil
	}
	// The digest of the arguments is computed only when state is checked
	// or made: most calls never ask anything.
	in := rc.round // allocated with rc (newRequestContext)
	rc.input = in
	in.want = stateV1{Method: m.method, Target: target}
	in.args = args
	if rc.trans.Principal != nil {
		in.want.Subject = rc.trans.Principal.Subject
	}
	if v := p.InputResponses; v != nil {
		if v.Kind() != '{' {
			return newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: "inputResponses" must be an object`, nil)
		}
		var rs map[string]jsontext.Value
		if err := json.Unmarshal(v, &rs); err != nil {
			return newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: inputResponses: "+decl.DescribeDecodeError(err), nil)
		}
		in.responses = make(map[string]jsontext.Value, len(rs))
		for k, r := range rs {
			if r.Kind() != '{' {
				return newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: inputResponses[`+strconv.Quote(k)+`] must be an object`, nil)
			}
			in.responses[k] = r
		}
	}
	if v := p.RequestState; v != nil {
		s, ok := stringParam(v)
		if !ok {
			return newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: "requestState" must be a string`, nil)
		}
		in.want.Digest = argumentsDigest(args)
		st, err := ir.open(ctx, s, in.want)
		if err != nil {
			if errors.Is(err, errStateForged) || errors.Is(err, errStateExpired) || errors.Is(err, errStateMismatch) {
				return newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: "+err.Error(), nil)
			}
			logf(ir.log, ctx, slog.LevelError, "hexmcp: verifying a requestState failed", slog.Any("error", err))
			return newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
		}
		// Answers of earlier rounds stand; the retry adds the new ones.
		if in.responses == nil {
			in.responses = make(map[string]jsontext.Value, len(st.Responses))
		}
		for k, r := range st.Responses {
			in.responses[k] = r
		}
	}
	return nil
}

// errorResult answers a handler error that belongs to asking the client:
// an input_required result, -32021 or -32602. ok is false for any other
// error.
func (ir *inputRounds) errorResult(ctx context.Context, m message, ci callInfo, in *inputRound, err error) (out []byte, rerr *rpcError, ok bool) {
	var mc *handlerapi.MissingCapabilityError
	if errors.As(err, &mc) {
		return nil, newRPCError(m.id, domain.CodeMissingClientCapability, mc.Error(), map[string]any{"requiredCapabilities": mc.Required}), true
	}
	var ue *handlerapi.URLElicitationRequiredError
	if errors.As(err, &ue) {
		return nil, newRPCError(m.id, domain.CodeURLElicitationRequired, "URL elicitation required", map[string]any{"elicitations": ue.Elicitations}), true
	}
	var ie *handlerapi.InputResponseError
	if errors.As(err, &ie) {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: "+ie.Error(), map[string]any{"key": ie.Key}), true
	}
	var required *handlerapi.InputRequiredError
	if !errors.As(err, &required) || in == nil {
		return nil, nil, false
	}
	in.mu.Lock()
	asked := slices.Clone(in.asked)
	st := in.want
	st.Responses = maps.Clone(in.used)
	in.mu.Unlock()
	if st.Digest == "" {
		st.Digest = argumentsDigest(in.args)
	}
	if len(asked) == 0 {
		return nil, nil, false
	}
	st.Expires = ir.clock.Now().Add(ir.ttl).UnixMilli()
	state, serr := ir.sign(ctx, st)
	if serr != nil {
		logf(ir.log, ctx, slog.LevelError, "hexmcp: signing a requestState failed", slog.Any("error", serr))
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil), true
	}
	b := appendResponseHead(make([]byte, 0, 512), m.id)
	b = append(b, `{"resultType":"input_required","inputRequests":{`...)
	for i, r := range asked {
		if i > 0 {
			b = append(b, ',')
		}
		params, perr := json.Marshal(r.Params, json.Deterministic(true))
		if perr != nil {
			logf(ir.log, ctx, slog.LevelError, "hexmcp: encoding an input request failed", slog.Any("key", r.Key), slog.Any("error", perr))
			return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil), true
		}
		b = domain.AppendJSONString(b, r.Key)
		b = append(b, `:{"method":`...)
		b = domain.AppendJSONString(b, r.Method)
		b = append(b, `,"params":`...)
		b = append(b, params...)
		b = append(b, '}')
	}
	b = append(b, `},"requestState":`...)
	b = domain.AppendJSONString(b, state)
	b = ir.res.appendMeta(b, ci.rev)
	return append(b, "}}"...), nil, true
}
