package app

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// maxCompletionValues is the most values a completion result may carry.
const maxCompletionValues = 100

func (e *Engine) encodedPrompt(p *domain.Prompt, rev domain.Revision) ([]byte, error) {
	k := resKey{p, rev}
	if b, ok := e.promptCache.Load(k); ok {
		return b.([]byte), nil
	}
	b, err := e.policy.ShapePrompt(p, rev).AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	e.promptCache.Store(k, b)
	return b, nil
}

func (e *Engine) promptsList(ctx context.Context, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	items := e.prompts.List()
	if e.vis.rules.Prompt != nil {
		v := viewerOf(ctx, ci)
		items = slices.DeleteFunc(slices.Clone(items), func(r ports.RegisteredPrompt) bool { return !e.vis.promptVisible(ctx, v, r.Prompt) })
	}
	return encodePage(&e.res, m, p, ci, "prompts", items,
		func(r ports.RegisteredPrompt) string { return r.Prompt.Name },
		func(r ports.RegisteredPrompt) ([]byte, error) { return e.encodedPrompt(r.Prompt, ci.rev) })
}

// stringMap decodes an optional JSON object of strings (prompt arguments,
// completion context); what names the member in error messages.
func stringMap(m message, raw jsontext.Value, what string) (map[string]string, *rpcError) {
	if raw == nil || raw.Kind() == 'n' {
		return nil, nil
	}
	var out map[string]string
	if raw.Kind() != '{' || json.Unmarshal(raw, &out) != nil {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: "`+what+`" must be an object of strings`, nil)
	}
	return out, nil
}

// withRequest returns ctx carrying rc for the handler.
func withRequest(ctx context.Context, rc *RequestContext) context.Context {
	return context.WithValue(ctx, requestKey{}, rc)
}

func (e *Engine) promptsGet(ctx context.Context, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	name, ok := stringParam(p.Name)
	if !ok || name == "" {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: "name" must be a non-empty string`, nil)
	}
	args, rerr := stringMap(m, p.Arguments, "arguments")
	if rerr != nil {
		return nil, rerr
	}
	rp, ok := e.prompts.Get(name)
	if ok && e.vis.rules.Prompt != nil {
		ok = e.vis.promptVisible(ctx, viewerOf(ctx, ci), rp.Prompt)
	}
	if !ok {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: unknown prompt "+strconv.Quote(name), map[string]any{"name": name})
	}
	if rerr := checkScopes(ctx, m.id, rp.Prompt.Scopes); rerr != nil {
		return nil, rerr
	}
	if missing := rp.Prompt.MissingArgument(args); missing != "" {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: missing required argument "+strconv.Quote(missing),
			map[string]any{"name": name, "argument": missing})
	}
	if args == nil {
		args = map[string]string{}
	}
	rc := e.env.newRequestContext(ctx, m, ci)
	if rerr := e.input.begin(ctx, rc, m, p, name, p.Arguments); rerr != nil {
		return nil, rerr
	}
	res, err := e.getPrompt(withRequest(ctx, rc), rp, args)
	if err == nil && res == nil {
		err = errors.New("the handler returned no result")
	}
	if err == nil {
		err = res.Validate()
	}
	if err != nil {
		if out, rerr, ok := e.input.errorResult(ctx, m, ci, rc.input, err); ok {
			return out, rerr
		}
		var pe *domain.ProtocolError
		if errors.As(err, &pe) {
			return nil, &rpcError{id: m.id, err: pe}
		}
		if ctx.Err() == nil && err != errPanic {
			e.logf(ctx, ports.LevelError, "hexmcp: prompt handler failed", ports.F("prompt", name), ports.F("error", err))
		}
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}
	shaped := ci.features.ShapePromptResult(res)
	b := appendResponseHead(make([]byte, 0, 256), m.id)
	b = append(b, '{')
	if ci.features.ResultType {
		b = append(b, `"resultType":"complete",`...)
	}
	if b, err = shaped.AppendJSON(b); err != nil {
		e.logf(ctx, ports.LevelError, "hexmcp: prompt result cannot be encoded", ports.F("prompt", name), ports.F("error", err))
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}
	if ci.era == domain.EraStateless {
		b = e.res.appendMeta(b, ci.rev)
	} else if len(shaped.Meta) > 0 {
		raw, err := json.Marshal(shaped.Meta, json.Deterministic(true))
		if err != nil {
			e.logf(ctx, ports.LevelError, "hexmcp: prompt result _meta cannot be encoded", ports.F("prompt", name), ports.F("error", err))
			return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
		}
		b = append(b, `,"_meta":`...)
		b = append(b, raw...)
	}
	return append(b, "}}"...), nil
}

// completeParams are completion/complete's ref, argument and context.
type completeParams struct {
	Ref struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	Argument struct {
		Name  *string `json:"name"`
		Value *string `json:"value"`
	}
	Context struct {
		Arguments jsontext.Value `json:"arguments"`
	}
}

// completionComplete answers completion/complete for a prompt argument
// (ref/prompt) or a resource template variable (ref/resource, whose uri is
// the template). An argument without a completer gets no values. A prompt
// or template the caller may not use is answered as prompts/get and
// resources/read answer it: unknown when hidden, [CodeInsufficientScope]
// when it lacks the scopes.
func (e *Engine) completionComplete(ctx context.Context, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	var cp completeParams
	bad := func(msg string) *rpcError {
		return newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: "+msg, nil)
	}
	if p.Ref == nil || p.Ref.Kind() != '{' || json.Unmarshal(p.Ref, &cp.Ref) != nil {
		return nil, bad(`"ref" must be an object with a "type"`)
	}
	if p.Argument == nil || p.Argument.Kind() != '{' || json.Unmarshal(p.Argument, &cp.Argument) != nil ||
		cp.Argument.Name == nil || cp.Argument.Value == nil {
		return nil, bad(`"argument" must be an object with the strings "name" and "value"`)
	}
	var context map[string]string
	if p.Context != nil && p.Context.Kind() != 'n' {
		if p.Context.Kind() != '{' || json.Unmarshal(p.Context, &cp.Context) != nil {
			return nil, bad(`"context" must be an object`)
		}
		var rerr *rpcError
		if context, rerr = stringMap(m, cp.Context.Arguments, "context.arguments"); rerr != nil {
			return nil, rerr
		}
	}
	var c ports.Completer
	switch cp.Ref.Type {
	case "ref/prompt":
		rp, ok := ports.RegisteredPrompt{}, false
		if e.prompts != nil {
			rp, ok = e.prompts.Get(cp.Ref.Name)
		}
		if ok && e.vis.rules.Prompt != nil {
			ok = e.vis.promptVisible(ctx, viewerOf(ctx, ci), rp.Prompt)
		}
		if !ok {
			return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: unknown prompt "+strconv.Quote(cp.Ref.Name), map[string]any{"name": cp.Ref.Name})
		}
		if rerr := checkScopes(ctx, m.id, rp.Prompt.Scopes); rerr != nil {
			return nil, rerr // as prompts/get: the values are the prompt's
		}
		c = rp.Completers[*cp.Argument.Name]
	case "ref/resource":
		if rerr := e.resources.checkURILength(m, cp.Ref.URI); rerr != nil {
			return nil, rerr
		}
		found := false
		var scopes []string
		if e.resources.registry != nil {
			for _, t := range e.resources.registry.ListTemplates() {
				if t.Template.URITemplate == cp.Ref.URI && (!e.vis.filters(listenResources) || e.vis.resourceVisible(ctx, viewerOf(ctx, ci), cp.Ref.URI, t.Template.Scopes)) {
					c, scopes, found = t.Completers[*cp.Argument.Name], t.Template.Scopes, true
					break
				}
			}
		}
		if !found {
			return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: unknown resource template "+strconv.Quote(cp.Ref.URI), map[string]any{"uri": cp.Ref.URI})
		}
		if rerr := checkScopes(ctx, m.id, scopes); rerr != nil {
			return nil, rerr // as resources/read of the template's URIs
		}
	default:
		return nil, bad(`"ref.type" must be "ref/prompt" or "ref/resource"`)
	}
	var values []string
	if c != nil {
		var err error
		values, err = e.complete(withRequest(ctx, e.env.newRequestContext(ctx, m, ci)), c, *cp.Argument.Value, context)
		if err != nil {
			var pe *domain.ProtocolError
			if errors.As(err, &pe) {
				return nil, &rpcError{id: m.id, err: pe}
			}
			if ctx.Err() == nil && err != errPanic {
				e.logf(ctx, ports.LevelError, "hexmcp: completer failed", ports.F("ref", cp.Ref.Name+cp.Ref.URI), ports.F("argument", *cp.Argument.Name), ports.F("error", err))
			}
			return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
		}
	}
	total := len(values)
	if total > maxCompletionValues {
		values = values[:maxCompletionValues]
	}
	b := appendResponseHead(make([]byte, 0, 128), m.id)
	b = append(b, '{')
	if ci.features.ResultType {
		b = append(b, `"resultType":"complete",`...)
	}
	b = append(b, `"completion":{"values":[`...)
	for i, v := range values {
		if i > 0 {
			b = append(b, ',')
		}
		b = domain.AppendJSONString(b, v)
	}
	b = append(b, ']')
	if total > maxCompletionValues {
		b = append(b, `,"total":`...)
		b = strconv.AppendInt(b, int64(total), 10)
		b = append(b, `,"hasMore":true`...)
	}
	b = append(b, '}')
	if ci.era == domain.EraStateless {
		b = e.res.appendMeta(b, ci.rev)
	}
	return append(b, "}}"...), nil
}
