package app

import (
	"context"
	"maps"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
)

// callInfo is what a request knows about its revision and client.
type callInfo struct {
	era           domain.Era
	rev           domain.Revision
	features      domain.Features
	clientInfo    jsontext.Value // stateless: from _meta
	caps          jsontext.Value
	progressToken jsontext.Value
	logLevel      domain.LogLevel // stateless: from _meta ("" sends nothing)
	trace         TraceContext
	session       *session
}

// request serves one request and returns the encoded response.
func (e *Engine) request(ctx context.Context, s *session, m message) []byte {
	out, _ := e.requestWith(ctx, s, m, nil)
	return out
}

// requestWith is request with the params already decoded (p not nil).
func (e *Engine) requestWith(ctx context.Context, s *session, m message, p *wireParams) ([]byte, *rpcError) {
	entry := methods[m.method]
	if entry == nil {
		entry = e.ext.methods[m.method]
	}
	if entry == nil || entry.present != nil && !entry.present(e) {
		rerr := newRPCError(m.id, domain.CodeMethodNotFound, "Method not found: "+m.method, nil)
		return encodeError(rerr), rerr
	}
	if p == nil {
		var rerr *rpcError
		if p, rerr = decodeParams(m.params, m.id); rerr != nil {
			return encodeError(rerr), rerr
		}
	}
	ci, rerr := e.resolve(s, m, p)
	if rerr != nil {
		return encodeError(rerr), rerr
	}
	if !entry.existsIn(ci.era) {
		rerr := newRPCError(m.id, domain.CodeMethodNotFound, "Method not found: "+m.method+" does not exist in protocol revision "+string(ci.rev), nil)
		return encodeError(rerr), rerr
	}
	var (
		out []byte
		err *rpcError
	)
	if e.middleware == nil {
		out, err = entry.serve(e, ctx, s, m, p, ci)
	} else {
		out, err = e.serveThroughMiddleware(ctx, entry, s, m, p, ci)
	}
	if err != nil {
		return encodeError(err), err
	}
	return out, nil
}

// resolve finds the era and revision of a request. A request whose _meta
// names a protocol version is served statelessly (2026-07-28 on), on any
// connection, whatever its method (so an initialize carrying it is answered
// -32601: the method does not exist there); any other request belongs to the
// connection's handshake-era session, which must have been initialized (ping
// excepted).
func (e *Engine) resolve(s *session, m message, p *wireParams) (callInfo, *rpcError) {
	ci := callInfo{session: s}
	if p.Meta != nil {
		ci.trace.TraceParent, _ = stringParam(p.Meta.TraceParent)
		ci.trace.TraceState, _ = stringParam(p.Meta.TraceState)
		ci.trace.Baggage, _ = stringParam(p.Meta.Baggage)
		ci.progressToken = p.Meta.ProgressToken
		if ci.progressToken != nil {
			if k := ci.progressToken.Kind(); k != '"' && k != '0' {
				return ci, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: _meta.progressToken must be a string or a number", nil)
			}
		}
	}
	if p.Meta != nil && p.Meta.ProtocolVersion != nil {
		v, ok := stringParam(p.Meta.ProtocolVersion)
		if !ok {
			rerr := newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: _meta["`+metaProtocolVersion+`"] must be a string`, nil)
			rerr.malformed = true
			return ci, rerr
		}
		if !e.policy.AcceptsStateless(v) {
			return ci, newRPCError(m.id, domain.CodeUnsupportedProtocolVersion, "Unsupported protocol version",
				map[string]any{"supported": e.policy.SupportedStrings(), "requested": v})
		}
		caps := p.Meta.ClientCapabilities
		if caps == nil || caps.Kind() != '{' {
			rerr := newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: _meta["`+metaClientCapabilities+`"] is required and must be an object`, nil)
			rerr.malformed = true
			return ci, rerr
		}
		if ci := p.Meta.ClientInfo; ci != nil && ci.Kind() != '{' {
			return callInfo{}, newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: _meta["`+metaClientInfo+`"] must be an object`, nil)
		}
		if n := len(caps) + len(p.Meta.ClientInfo); !within(n, e.opts.MaxClientDeclarationBytes) {
			return callInfo{}, declarationTooLarge(m.id, n, e.opts.MaxClientDeclarationBytes, `_meta["`+metaClientCapabilities+`"] and _meta["`+metaClientInfo+`"]`)
		}
		if lv := p.Meta.LogLevel; lv != nil {
			l, ok := stringParam(lv)
			if !ok || !domain.LogLevel(l).Valid() {
				return callInfo{}, newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: _meta["`+metaLogLevel+`"] must be one of debug, info, notice, warning, error, critical, alert, emergency`, nil)
			}
			ci.logLevel = domain.LogLevel(l)
		}
		ci.era = domain.EraStateless
		ci.rev = domain.Revision(v)
		ci.features = e.policy.Features(ci.rev)
		ci.caps = caps
		ci.clientInfo = p.Meta.ClientInfo
		return ci, nil
	}
	ci.era = domain.EraHandshake
	if s == nil {
		return ci, noSessionError(e, m)
	}
	s.mu.Lock()
	ci.rev, ci.caps = s.rev, s.caps
	initialized := s.initialized
	s.mu.Unlock()
	if !initialized && m.method != "initialize" && m.method != "ping" {
		return ci, noSessionError(e, m)
	}
	ci.features = e.policy.Features(ci.rev)
	return ci, nil
}

// noSessionError answers a request that is neither stateless (no protocol
// version in _meta) nor part of an initialized session. It is -32602, as the
// stateless revision prescribes for a request without its required _meta,
// and the message tells a handshake-era client what to do.
func noSessionError(e *Engine, m message) *rpcError {
	return newRPCError(m.id, domain.CodeInvalidParams,
		`Invalid params: no protocol version: send initialize first, or put the version in _meta["`+metaProtocolVersion+`"] on every request`,
		map[string]any{"supported": e.policy.SupportedStrings()})
}

func (e *Engine) initialize(ctx context.Context, s *session, m message, p *wireParams) ([]byte, *rpcError) {
	requested, ok := stringParam(p.ProtocolVersion)
	if !ok {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: protocolVersion must be a string", nil)
	}
	if p.Capabilities != nil && p.Capabilities.Kind() != '{' {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: capabilities must be an object", nil)
	}
	// The session keeps them (and the request's headers) for its life:
	// bounded before anything is decoded.
	trans, _ := ctx.Value(transportKey{}).(TransportInfo)
	if n := len(p.Capabilities) + len(p.ClientInfo) + headerBytes(trans.Header); !within(n, e.opts.MaxClientDeclarationBytes) {
		return nil, declarationTooLarge(m.id, n, e.opts.MaxClientDeclarationBytes, "capabilities, clientInfo and request headers")
	}
	var client domain.Implementation
	if p.ClientInfo != nil {
		if err := json.Unmarshal(p.ClientInfo, &client); err != nil {
			return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: clientInfo: "+describeDecodeError(err), nil)
		}
	}
	rev, ok := e.policy.Negotiate(requested)
	if !ok {
		return nil, newRPCError(m.id, domain.CodeUnsupportedProtocolVersion, "Unsupported protocol version: this server serves only stateless revisions",
			map[string]any{"supported": e.policy.SupportedStrings(), "requested": requested})
	}
	if s == nil {
		return nil, newRPCError(m.id, domain.CodeInvalidRequest, "Invalid Request: initialize needs a session", nil)
	}
	s.mu.Lock()
	if s.initialized {
		s.mu.Unlock()
		return nil, newRPCError(m.id, domain.CodeInvalidRequest, "Invalid Request: the session is already initialized", nil)
	}
	caps := e.capabilities(e.policy.Features(rev))
	_, s.resourcesAdvertised = caps["resources"]
	_, s.promptsAdvertised = caps["prompts"]
	// A copy, compact: p.Capabilities is part of the request's body, which
	// the session must not keep whole.
	s.initialized, s.rev, s.client, s.caps = true, rev, client, keptCapabilities(p.Capabilities)
	if s.started.IsZero() {
		s.started = e.opts.Clock.Now()
	}
	s.trans = trans
	s.mu.Unlock()
	if rerr := e.sessions.commit(ctx, s, m.id); rerr != nil {
		return nil, rerr
	}
	if e.vis.filtersAny() {
		e.vis.recordSeen(s.viewer(), s, nil)
	}

	res := struct {
		ProtocolVersion string                `json:"protocolVersion"`
		Capabilities    any                   `json:"capabilities"`
		ServerInfo      domain.Implementation `json:"serverInfo"`
		Instructions    string                `json:"instructions,omitempty"`
	}{string(rev), caps, e.policy.ShapeImplementation(e.opts.Info, rev), e.opts.Instructions}
	return e.res.encode(m.id, res)
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
func (e *Engine) capabilities(f domain.Features) map[string]any {
	// logging: any tool may log to the client (RequestContext.Log).
	caps := map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}}
	if e.resources.has() {
		res := map[string]any{"listChanged": true}
		if f.ResourceSubscriptions {
			res["subscribe"] = true
		}
		caps["resources"] = res
	}
	if e.prompts.has() {
		caps["prompts"] = map[string]any{"listChanged": true}
	}
	if f.CompletionsCapability && e.completions.has() {
		caps["completions"] = map[string]any{}
	}
	if len(e.ext.settings) > 0 {
		caps["extensions"] = maps.Clone(e.ext.settings)
	}
	return caps
}

// setLevel answers logging/setLevel: the session's client gets log
// messages at that level and above from then on.
func (e *Engine) setLevel(s *session, m message, p *wireParams) ([]byte, *rpcError) {
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

func (e *Engine) discover(m message, ci callInfo) ([]byte, *rpcError) {
	res := struct {
		ResultType        string         `json:"resultType"`
		SupportedVersions []string       `json:"supportedVersions"`
		Capabilities      map[string]any `json:"capabilities"`
		Instructions      string         `json:"instructions,omitempty"`
		TTLMs             int64          `json:"ttlMs"`
		CacheScope        string         `json:"cacheScope"`
		Meta              map[string]any `json:"_meta"`
	}{"complete", e.policy.SupportedStrings(), e.capabilities(ci.features), e.opts.Instructions,
		e.res.ttlMs, e.res.cacheScope(), e.res.meta(ci.rev)}
	return e.res.encode(m.id, res)
}
