package app

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// resourceCatalog serves the resources and resource templates: it
// registers them (AddResource), lists them, reads them (resources/read)
// and keeps the subscriptions of handshake-era sessions
// (resources/subscribe), as each request sees them (viewFilter) and
// within the URI and subscription limits.
type resourceCatalog struct {
	registry             ports.ResourceRegistry // nil: no resources
	policy               domain.RevisionPolicy
	maxURILength         int // Options.MaxURILength
	maxSubscriptions     int // Options.MaxSubscriptions
	maxSubscriptionBytes int // Options.MaxSubscriptionBytes
	cache                encodingCache
	log                  ports.Logger

	catalogParts
}

// pageStart finds where a page begins: after the item whose key the cursor
// names (items are sorted by key).
func pageStart[T any](items []T, key func(T) string, cursor jsontext.Value) (int, bool) {
	if cursor == nil || cursor.Kind() == 'n' {
		return 0, true
	}
	c, ok := stringParam(cursor)
	after, ok2 := decodeCursor(c)
	if !ok || !ok2 {
		return 0, false
	}
	for i, it := range items {
		if key(it) > after {
			return i, true
		}
	}
	return len(items), true
}

// encodePage answers a paged list method: {resultType?, member:[...],
// nextCursor?, ttlMs?, cacheScope?, _meta?}.
func encodePage[T any](r *results, m message, p *wireParams, ci callInfo, member string, items []T,
	key func(T) string, enc func(T) ([]byte, error)) ([]byte, *rpcError) {
	start, ok := pageStart(items, key, p.Cursor)
	if !ok {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: invalid cursor", nil)
	}
	end := min(start+r.pageSize, len(items))
	b := appendResponseHead(make([]byte, 0, 192*(end-start)+128), m.id)
	b = append(b, '{')
	if ci.features.ResultType {
		b = append(b, `"resultType":"complete",`...)
	}
	b = append(b, '"')
	b = append(b, member...)
	b = append(b, `":[`...)
	for i, it := range items[start:end] {
		if i > 0 {
			b = append(b, ',')
		}
		raw, err := enc(it)
		if err != nil {
			logf(r.log, context.Background(), slog.LevelError, "hexmcp: encoding a list entry failed", slog.Any("list", member), slog.Any("key", key(it)), slog.Any("error", err))
			return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
		}
		b = append(b, raw...)
	}
	b = append(b, ']')
	if end < len(items) {
		b = append(b, `,"nextCursor":`...)
		b = domain.AppendJSONString(b, encodeCursor(key(items[end-1])))
	}
	b = r.appendStatelessTail(b, ci, false)
	return append(b, "}}"...), nil
}

func (rs *resourceCatalog) list(ctx context.Context, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	items := rs.registry.List()
	if rs.vis.filters(listenResources) {
		v := viewerOf(ctx, ci)
		items = slices.DeleteFunc(slices.Clone(items), func(r ports.RegisteredResource) bool {
			return !rs.vis.resourceVisible(ctx, v, r.Resource.URI, r.Resource.Scopes)
		})
	}
	return encodePage(rs.res, m, p, ci, "resources", items,
		func(r ports.RegisteredResource) string { return r.Resource.URI },
		func(r ports.RegisteredResource) ([]byte, error) {
			return cachedEncoding(&rs.cache, rs.policy, r.Resource, ci.rev, domain.RevisionPolicy.ShapeResource)
		})
}

func (rs *resourceCatalog) listTemplates(ctx context.Context, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	items := rs.registry.ListTemplates()
	if rs.vis.filters(listenResources) {
		v := viewerOf(ctx, ci)
		items = slices.DeleteFunc(slices.Clone(items), func(t ports.RegisteredResourceTemplate) bool {
			return !rs.vis.resourceVisible(ctx, v, t.Template.URITemplate, t.Template.Scopes)
		})
	}
	return encodePage(rs.res, m, p, ci, "resourceTemplates", items,
		func(t ports.RegisteredResourceTemplate) string { return t.Template.URITemplate },
		func(t ports.RegisteredResourceTemplate) ([]byte, error) {
			return cachedEncoding(&rs.cache, rs.policy, t.Template, ci.rev, domain.RevisionPolicy.ShapeResourceTemplate)
		})
}

func (rs *resourceCatalog) notFound(m message, ci callInfo, uri string) *rpcError {
	return newRPCError(m.id, rs.policy.ResourceNotFoundCode(ci.rev), "Resource not found", map[string]any{"uri": uri})
}

// uriParam reads the "uri" param: a non-empty string of at most
// Options.MaxURILength bytes, else -32602.
func (rs *resourceCatalog) uriParam(m message, p *wireParams) (string, *rpcError) {
	uri, ok := stringParam(p.URI)
	if !ok || uri == "" {
		return "", newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: "uri" must be a non-empty string`, nil)
	}
	if rerr := rs.checkURILength(m, uri); rerr != nil {
		return "", rerr
	}
	return uri, nil
}

// checkURILength refuses a URI longer than Options.MaxURILength with
// -32602, naming the limit (data {"limit":"maxURILength","max":N}).
func (rs *resourceCatalog) checkURILength(m message, uri string) *rpcError {
	if within(len(uri), rs.maxURILength) {
		return nil
	}
	return newRPCError(m.id, domain.CodeInvalidParams,
		"Invalid params: the URI is "+strconv.Itoa(len(uri))+" bytes long; the limit is "+strconv.Itoa(rs.maxURILength),
		map[string]any{"limit": "maxURILength", "max": rs.maxURILength})
}

// find resolves uri: the registered resource of that URI, else the
// first template it matches (with the template's variables), and the
// scopes it requires.
func (rs *resourceCatalog) find(ctx context.Context, ci callInfo, uri string) (h ports.ResourceHandler, vars map[string]string, mime string, scopes []string, ok bool) {
	var v *handlerapi.Viewer
	return rs.resolve(ctx, uri, func() *handlerapi.Viewer {
		if v == nil {
			v = viewerOf(ctx, ci)
		}
		return v
	})
}

// resolve is find for the viewer viewer returns (asked
// only when a Visibility filters resources): a resource or template
// hidden from it is not found.
func (rs *resourceCatalog) resolve(ctx context.Context, uri string, viewer func() *handlerapi.Viewer) (h ports.ResourceHandler, vars map[string]string, mime string, scopes []string, ok bool) {
	visible := func(key string, need []string) bool {
		return !rs.vis.filters(listenResources) || rs.vis.resourceVisible(ctx, viewer(), key, need)
	}
	if r, ok := rs.registry.Get(uri); ok && visible(r.Resource.URI, r.Resource.Scopes) {
		return r.Handler, nil, r.Resource.MimeType, r.Resource.Scopes, true
	}
	if t, vars, ok := rs.registry.Match(uri); ok && visible(t.Template.URITemplate, t.Template.Scopes) {
		return t.Handler, vars, t.Template.MimeType, t.Template.Scopes, true
	}
	return nil, nil, "", nil, false
}

// mayFollow reports whether the viewer v may follow uri now, as
// resources/subscribe would let it: a resource or template match it sees,
// whose scopes it holds. Every way to follow a resource answers to it:
// a listen stream when it starts, and each of its notifications when it
// is queued and again when it is written.
func (rs *resourceCatalog) mayFollow(ctx context.Context, v *handlerapi.Viewer, uri string) bool {
	if rs.registry == nil {
		return false
	}
	_, _, _, scopes, ok := rs.resolve(ctx, uri, func() *handlerapi.Viewer { return v })
	return ok && handlerapi.ViewerHolds(v, scopes)
}

func (rs *resourceCatalog) read(ctx context.Context, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	uri, rerr := rs.uriParam(m, p)
	if rerr != nil {
		return nil, rerr
	}
	h, vars, mime, scopes, ok := rs.find(ctx, ci, uri)
	if !ok {
		return nil, rs.notFound(m, ci, uri)
	}
	if rerr := checkScopes(ctx, m.id, scopes); rerr != nil {
		return nil, rerr
	}
	rc := rs.env.newRequestContext(ctx, m, ci)
	if rerr := rs.input.begin(ctx, rc, m, p, uri, nil); rerr != nil {
		return nil, rerr
	}
	contents, err := rs.run(withRequest(ctx, rc), h, uri, vars)
	if err != nil {
		if out, rerr, ok := rs.input.errorResult(ctx, m, ci, rc.input, err); ok {
			return out, rerr
		}
		if errors.Is(err, domain.ErrResourceNotFound) {
			return nil, rs.notFound(m, ci, uri)
		}
		return nil, handlerFailed(ctx, rs.log, m, ci, err, "hexmcp: resource handler failed", slog.Any("uri", uri))
	}
	b := appendResponseHead(make([]byte, 0, 256), m.id)
	b = append(b, '{')
	if ci.features.ResultType {
		b = append(b, `"resultType":"complete",`...)
	}
	b = append(b, `"contents":[`...)
	for i, c := range contents {
		if i > 0 {
			b = append(b, ',')
		}
		if c.URI == "" {
			c.URI = uri
		}
		if c.MimeType == "" {
			c.MimeType = mime
		}
		c = ci.features.ShapeResourceContents(c)
		if b, err = c.AppendJSON(b); err != nil {
			logf(rs.log, ctx, slog.LevelError, "hexmcp: resource contents cannot be encoded", slog.Any("uri", uri), slog.Any("error", err))
			return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
		}
	}
	b = append(b, ']')
	b = rs.res.appendStatelessTail(b, ci, len(scopes) > 0)
	return append(b, "}}"...), nil
}

// subscribe answers resources/subscribe and resources/unsubscribe
// (handshake era): the session gets notifications/resources/updated for uri
// from [Engine.NotifyResourceUpdated] until it unsubscribes. Only a URI the
// server can read may be subscribed to (a registered resource, or a URI
// that matches a template); any other is answered like resources/read of
// it (resource not found). A session holds at most Options.MaxSubscriptions
// subscriptions of at most Options.MaxSubscriptionBytes in all; one more is
// -32602. Subscribing again to a URI is a no-op that counts once;
// unsubscribing needs no lookup (the resource may be gone) and always
// succeeds.
func (rs *resourceCatalog) subscribe(ctx context.Context, s *session, m message, p *wireParams, ci callInfo, on bool) ([]byte, *rpcError) {
	uri, rerr := rs.uriParam(m, p)
	if rerr != nil {
		return nil, rerr
	}
	if !on {
		s.unsubscribe(uri)
		return append(appendResponseHead(nil, m.id), "{}}"...), nil
	}
	_, _, _, scopes, ok := rs.find(ctx, ci, uri)
	if !ok {
		return nil, rs.notFound(m, ci, uri)
	}
	if rerr := checkScopes(ctx, m.id, scopes); rerr != nil {
		return nil, rerr
	}
	switch s.subscribe(uri, rs.maxSubscriptions, rs.maxSubscriptionBytes) {
	case subscribeTooMany:
		return nil, newRPCError(m.id, domain.CodeInvalidParams,
			"Invalid params: too many resource subscriptions: a session may hold "+strconv.Itoa(rs.maxSubscriptions)+"; unsubscribe from one first",
			map[string]any{"limit": "maxSubscriptions", "max": rs.maxSubscriptions})
	case subscribeTooLarge:
		return nil, newRPCError(m.id, domain.CodeInvalidParams,
			"Invalid params: resource subscriptions too large: a session's subscribed URIs may total "+strconv.Itoa(rs.maxSubscriptionBytes)+" bytes; unsubscribe from one first",
			map[string]any{"limit": "maxSubscriptionBytes", "max": rs.maxSubscriptionBytes})
	}
	return append(appendResponseHead(nil, m.id), "{}}"...), nil
}
