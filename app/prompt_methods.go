package app

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// promptCatalog serves the prompts: it registers them (AddPrompt), lists
// them and renders them (prompts/get), as each request sees them
// (viewFilter).
type promptCatalog struct {
	registry ports.PromptRegistry // nil: no prompts
	policy   domain.RevisionPolicy
	cache    encodingCache
	log      ports.Logger

	catalogParts
}

func (pc *promptCatalog) list(ctx context.Context, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	items := pc.registry.List()
	if pc.vis.rules.Prompt != nil {
		v := viewerOf(ctx, ci)
		items = slices.DeleteFunc(slices.Clone(items), func(r ports.RegisteredPrompt) bool { return !pc.vis.promptVisible(ctx, v, r.Prompt) })
	}
	return encodePage(pc.res, m, p, ci, "prompts", items,
		func(r ports.RegisteredPrompt) string { return r.Prompt.Name },
		func(r ports.RegisteredPrompt) ([]byte, error) {
			return cachedEncoding(&pc.cache, pc.policy, r.Prompt, ci.rev, domain.RevisionPolicy.ShapePrompt)
		})
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

func (pc *promptCatalog) get(ctx context.Context, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	name, ok := stringParam(p.Name)
	if !ok || name == "" {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: "name" must be a non-empty string`, nil)
	}
	args, rerr := stringMap(m, p.Arguments, "arguments")
	if rerr != nil {
		return nil, rerr
	}
	rp, ok := pc.registry.Get(name)
	if ok && pc.vis.rules.Prompt != nil {
		ok = pc.vis.promptVisible(ctx, viewerOf(ctx, ci), rp.Prompt)
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
	rc := pc.env.newRequestContext(ctx, m, ci)
	if rerr := pc.input.begin(ctx, rc, m, p, name, p.Arguments); rerr != nil {
		return nil, rerr
	}
	res, err := pc.run(withRequest(ctx, rc), rp, args)
	if err == nil && res == nil {
		err = errors.New("the handler returned no result")
	}
	if err == nil {
		err = res.Validate()
	}
	if err != nil {
		if out, rerr, ok := pc.input.errorResult(ctx, m, ci, rc.input, err); ok {
			return out, rerr
		}
		return nil, handlerFailed(ctx, pc.log, m, ci, err, "hexmcp: prompt handler failed", slog.Any("prompt", name))
	}
	shaped := ci.features.ShapePromptResult(res)
	b := appendResponseHead(make([]byte, 0, 256), m.id)
	b = append(b, '{')
	if ci.features.ResultType {
		b = append(b, `"resultType":"complete",`...)
	}
	if b, err = shaped.AppendJSON(b); err != nil {
		logf(pc.log, ctx, slog.LevelError, "hexmcp: prompt result cannot be encoded", slog.Any("prompt", name), slog.Any("error", err))
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}
	if ci.era == domain.EraStateless {
		b = pc.res.appendMeta(b, ci.rev)
	} else if len(shaped.Meta) > 0 {
		raw, err := json.Marshal(shaped.Meta, json.Deterministic(true))
		if err != nil {
			logf(pc.log, ctx, slog.LevelError, "hexmcp: prompt result _meta cannot be encoded", slog.Any("prompt", name), slog.Any("error", err))
			return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
		}
		b = append(b, `,"_meta":`...)
		b = append(b, raw...)
	}
	return append(b, "}}"...), nil
}
