package app

import (
	"context"
	"maps"

	"github.com/go-json-experiment/json"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// lifecycle serves the server's side of the MCP lifecycle: initialize in
// the handshake era, server/discover in the stateless one, the
// capabilities both advertise, and logging/setLevel.
type lifecycle struct {
	policy         domain.RevisionPolicy
	instructions   string // Options.Instructions
	maxDeclaration int    // Options.MaxClientDeclarationBytes
	clock          ports.Clock
	res            *results
	sessions       *sessionSet
	vis            *viewFilter
	resources      *resourceCatalog
	prompts        *promptCatalog
	completions    *completions
	ext            *extensions
}

// initialize answers initialize: it negotiates the revision and makes the
// session's state, kept (withSessionCommit) before the answer leaves.
func (lc *lifecycle) initialize(ctx context.Context, s *session, m message, p *wireParams) ([]byte, *rpcError) {
	requested, ok := stringParam(p.ProtocolVersion)
	if !ok {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: protocolVersion must be a string", nil)
	}
	if p.Capabilities != nil && p.Capabilities.Kind() != '{' {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: capabilities must be an object", nil)
	}
	// The session keeps them (and the request's headers) for its life:
	// bounded before anything is decoded.
	trans, _ := ctx.Value(transportKey{}).(handlerapi.TransportInfo)
	if n := len(p.Capabilities) + len(p.ClientInfo) + headerBytes(trans.Header); !within(n, lc.maxDeclaration) {
		return nil, declarationTooLarge(m.id, n, lc.maxDeclaration, "capabilities, clientInfo and request headers")
	}
	var client domain.Implementation
	if p.ClientInfo != nil {
		if err := json.Unmarshal(p.ClientInfo, &client); err != nil {
			return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: clientInfo: "+decl.DescribeDecodeError(err), nil)
		}
	}
	rev, ok := lc.policy.Negotiate(requested)
	if !ok {
		return nil, newRPCError(m.id, domain.CodeUnsupportedProtocolVersion, "Unsupported protocol version: this server serves only stateless revisions",
			map[string]any{"supported": lc.policy.SupportedStrings(), "requested": requested})
	}
	if s == nil {
		return nil, newRPCError(m.id, domain.CodeInvalidRequest, "Invalid Request: initialize needs a session", nil)
	}
	s.mu.Lock()
	if s.initialized {
		s.mu.Unlock()
		return nil, newRPCError(m.id, domain.CodeInvalidRequest, "Invalid Request: the session is already initialized", nil)
	}
	caps := lc.capabilities(lc.policy.Features(rev))
	_, s.resourcesAdvertised = caps["resources"]
	_, s.promptsAdvertised = caps["prompts"]
	// A copy, compact: p.Capabilities is part of the request's body, which
	// the session must not keep whole.
	s.initialized, s.rev, s.client, s.caps = true, rev, client, keptCapabilities(p.Capabilities)
	if s.started.IsZero() {
		s.started = lc.clock.Now()
	}
	s.trans = trans
	s.mu.Unlock()
	if rerr := lc.sessions.commit(ctx, s, m.id); rerr != nil {
		return nil, rerr
	}
	if lc.vis.filtersAny() {
		lc.vis.recordSeen(s.viewer(), s, nil)
	}

	res := struct {
		ProtocolVersion string                `json:"protocolVersion"`
		Capabilities    any                   `json:"capabilities"`
		ServerInfo      domain.Implementation `json:"serverInfo"`
		Instructions    string                `json:"instructions,omitempty"`
	}{string(rev), caps, lc.policy.ShapeImplementation(lc.res.info, rev), lc.instructions}
	return lc.res.encode(m.id, res)
}

// capabilities are the server's. tools.listChanged, resources.listChanged
// and prompts.listChanged are advertised in every revision: handshake-era
// sessions get the notifications on the session, stateless-era clients on
// their subscriptions/listen streams. resources is advertised only while a
// resource or template is registered (from what is registered, never more);
// resources.subscribe where the revision has resources/subscribe. The
// same holds for prompts (prompts.listChanged); completions is advertised
// while some prompt argument or template variable has a completer (from
// 2025-03-26, which introduced the capability). extensions holds the
// settings of every registered extension (Options.Extensions), in both
// eras, and is absent without one.
func (lc *lifecycle) capabilities(f domain.Features) map[string]any {
	// logging: any tool may log to the client (RequestContext.Log).
	caps := map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}}
	if lc.resources.has() {
		res := map[string]any{"listChanged": true}
		if f.ResourceSubscriptions {
			res["subscribe"] = true
		}
		caps["resources"] = res
	}
	if lc.prompts.has() {
		caps["prompts"] = map[string]any{"listChanged": true}
	}
	if f.CompletionsCapability && lc.completions.has() {
		caps["completions"] = map[string]any{}
	}
	if len(lc.ext.settings) > 0 {
		caps["extensions"] = maps.Clone(lc.ext.settings)
	}
	return caps
}

// setLevel answers logging/setLevel: the session's client gets log
// messages at that level and above from then on.
func (lc *lifecycle) setLevel(s *session, m message, p *wireParams) ([]byte, *rpcError) {
	l, ok := stringParam(p.Level)
	if !ok || !domain.LogLevel(l).Valid() {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency", nil)
	}
	s.mu.Lock()
	s.logLevel = domain.LogLevel(l)
	s.mu.Unlock()
	out := appendResponseHead(nil, m.id)
	return append(out, "{}}"...), nil
}

// discover answers server/discover (stateless era).
func (lc *lifecycle) discover(m message, ci callInfo) ([]byte, *rpcError) {
	res := struct {
		ResultType        string         `json:"resultType"`
		SupportedVersions []string       `json:"supportedVersions"`
		Capabilities      map[string]any `json:"capabilities"`
		Instructions      string         `json:"instructions,omitempty"`
		TTLMs             int64          `json:"ttlMs"`
		CacheScope        string         `json:"cacheScope"`
		Meta              map[string]any `json:"_meta"`
	}{"complete", lc.policy.SupportedStrings(), lc.capabilities(ci.features), lc.instructions,
		lc.res.ttlMs, lc.res.cacheScope(), lc.res.meta(ci.rev)}
	return lc.res.encode(m.id, res)
}
