package app

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/ports"
)

// The dispatch: how the engine serves one message, whatever brought it (a
// connection's loop, the exchange port, a batch). A client's response
// goes to the server request it answers (forwarder), a notification to
// notify (through the middleware), a request to its entry of the method
// table, its era and revision resolved once (resolve); the parts of the
// engine answer from there.

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

// handleAnswer serves a decoded message (params, when not nil, already
// decoded) and tells what the answer is.
func (e *Engine) handleAnswer(ctx context.Context, s *session, m message, p *wireParams, rerr *rpcError, related ports.MessageWriter) exchange.Answer {
	if rerr != nil {
		if m.method != "" && m.id == nil {
			return exchange.Answer{}
		}
		return rerr.answer(encodeError(rerr))
	}
	if m.isResponse {
		e.fwd.clientResponse(ctx, s, m)
		return exchange.Answer{}
	}
	if m.id == nil {
		e.notification(ctx, s, m)
		return exchange.Answer{}
	}
	if related != nil {
		ctx = context.WithValue(ctx, relatedKey{}, related)
	}
	if !e.runsAsCall(m.method) || s == nil {
		out, rerr := e.requestWith(ctx, s, m, p)
		return rerr.answer(out)
	}
	call, rerr := s.register(ctx, m.id)
	if rerr != nil {
		return rerr.answer(encodeError(rerr))
	}
	out, rerr := e.requestWith(call.ctx, s, m, p)
	if out = call.end(out); out == nil {
		return exchange.Answer{} // cancelled: no response
	}
	return rerr.answer(out)
}

// notify is the engine's own handling of a notification.
func (e *Engine) notify(ctx context.Context, s *session, m message) {
	if s == nil {
		return
	}
	switch m.method {
	case "notifications/initialized":
		s.mu.Lock()
		if s.initialized {
			s.ready = true
		}
		s.mu.Unlock()
	case "notifications/cancelled":
		p, rerr := decodeParams(m.params, nil)
		if rerr != nil || p.RequestID == nil {
			return
		}
		if !s.cancelRequest(p.RequestID) {
			e.fwd.forwardCancel(ctx, s, p.RequestID)
		}
	}
}

// relatedKey carries a request's own writer for related notifications.
type relatedKey struct{}

// requestWith serves one request and returns the encoded response; p, when
// not nil, are its params already decoded.
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
	if e.mw.handler == nil {
		out, err = entry.serve(e, ctx, s, m, p, ci)
	} else {
		out, err = e.mw.serve(ctx, entry, s, m, p, ci)
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
		return ci, noSessionError(e.policy, m)
	}
	s.mu.Lock()
	ci.rev, ci.caps = s.rev, s.caps
	initialized := s.initialized
	s.mu.Unlock()
	if !initialized && m.method != "initialize" && m.method != "ping" {
		return ci, noSessionError(e.policy, m)
	}
	ci.features = e.policy.Features(ci.rev)
	return ci, nil
}

// noSessionError answers a request that is neither stateless (no protocol
// version in _meta) nor part of an initialized session. It is -32602, as the
// stateless revision prescribes for a request without its required _meta,
// and the message tells a handshake-era client what to do.
func noSessionError(policy domain.RevisionPolicy, m message) *rpcError {
	return newRPCError(m.id, domain.CodeInvalidParams,
		`Invalid params: no protocol version: send initialize first, or put the version in _meta["`+metaProtocolVersion+`"] on every request`,
		map[string]any{"supported": policy.SupportedStrings()})
}
