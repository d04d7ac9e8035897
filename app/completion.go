package app

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// completions serves completion/complete: the values a prompt argument's
// or a resource template variable's completer suggests, for what the
// caller may see and use.
type completions struct {
	prompts   *promptCatalog
	resources *resourceCatalog
	vis       *viewFilter
	res       *results
	env       *requestEnv
	log       ports.Logger
}

// maxCompletionValues is the most values a completion result may carry.
const maxCompletionValues = 100

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

// has reports whether some prompt argument or template variable
// has a completer: the completions capability is advertised, and
// completion/complete served, only then.
func (cs *completions) has() bool {
	if cs.prompts.registry != nil {
		for _, p := range cs.prompts.registry.List() {
			if len(p.Completers) > 0 {
				return true
			}
		}
	}
	if cs.resources.registry != nil {
		for _, t := range cs.resources.registry.ListTemplates() {
			if len(t.Completers) > 0 {
				return true
			}
		}
	}
	return false
}

// run runs a completer, turning a panic into an error.
func (cs *completions) run(ctx context.Context, c ports.Completer, value string, context map[string]string) (v []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			logf(cs.log, ctx, slog.LevelError, "hexmcp: completer panicked", panicAttrs(ctx, r)...)
			v, err = nil, errPanic
		}
	}()
	return c(ctx, value, context)
}

// serve answers completion/complete for a prompt argument
// (ref/prompt) or a resource template variable (ref/resource, whose uri is
// the template). An argument without a completer gets no values. A prompt
// or template the caller may not use is answered as prompts/get and
// resources/read answer it: unknown when hidden, hexmcp.CodeInsufficientScope
// when it lacks the scopes.
func (cs *completions) serve(ctx context.Context, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
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
		if cs.prompts.registry != nil {
			rp, ok = cs.prompts.registry.Get(cp.Ref.Name)
		}
		if ok && cs.vis.rules.Prompt != nil {
			ok = cs.vis.promptVisible(ctx, viewerOf(ctx, ci), rp.Prompt)
		}
		if !ok {
			return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: unknown prompt "+strconv.Quote(cp.Ref.Name), map[string]any{"name": cp.Ref.Name})
		}
		if rerr := checkScopes(ctx, m.id, rp.Prompt.Scopes); rerr != nil {
			return nil, rerr // as prompts/get: the values are the prompt's
		}
		c = rp.Completers[*cp.Argument.Name]
	case "ref/resource":
		if rerr := cs.resources.checkURILength(m, cp.Ref.URI); rerr != nil {
			return nil, rerr
		}
		found := false
		var scopes []string
		if cs.resources.registry != nil {
			for _, t := range cs.resources.registry.ListTemplates() {
				if t.Template.URITemplate == cp.Ref.URI && (!cs.vis.filters(listenResources) || cs.vis.resourceVisible(ctx, viewerOf(ctx, ci), cp.Ref.URI, t.Template.Scopes)) {
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
		values, err = cs.run(withRequest(ctx, cs.env.newRequestContext(ctx, m, ci)), c, *cp.Argument.Value, context)
		if err != nil {
			return nil, handlerFailed(ctx, cs.log, m, ci, err, "hexmcp: completer failed", slog.Any("ref", cp.Ref.Name+cp.Ref.URI), slog.Any("argument", *cp.Argument.Name))
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
		b = cs.res.appendMeta(b, ci.rev)
	}
	return append(b, "}}"...), nil
}
