package handlerapi

import (
	"context"
	"net/netip"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// TransportInfo is what the transport knows about a request: for HTTP its
// headers and the authenticated principal. Transports attach it with
// app.WithTransportInfo; handlers read it with RequestContext.Transport.
type TransportInfo struct {
	// Header holds the request's headers, keys in canonical form
	// (http.Header can wrap it). Nil on transports without headers.
	Header map[string][]string
	// Principal is who the request comes from, when an authenticator
	// vouched for it.
	Principal *ports.Principal
	// RemoteAddr is the peer's network address, when known.
	RemoteAddr string
	// Client names the client for limits counted per client, when the
	// transport decides it (the HTTP transport, for subscriptions/listen:
	// its Options.ClientKey). Empty: [TransportInfo.ClientKey] derives it
	// from Principal and RemoteAddr.
	Client string
}

// ClientKey names the client a request comes from, for limits counted per
// client (such as Options.MaxListenersPerClient): Client when the
// transport set it, else "sub:" and the subject when an authenticator
// vouched for the request, else "ip:" and the peer's IP address
// (RemoteAddr without its port; an IPv6 address by its /64 prefix, which
// one host or network commonly holds whole), else "addr:" and RemoteAddr
// when it is no IP address, else "" (the transport names no client: one
// connection, as on stdio). These are the keys of the HTTP transport's
// DefaultClientKey.
//
// Behind a reverse proxy every unauthenticated client has the proxy's
// address, and so one key: authenticate clients, or have the transport
// name the client from a forwarding header the proxy vouches for.
func (t TransportInfo) ClientKey() string {
	switch {
	case t.Client != "":
		return t.Client
	case t.Principal != nil && t.Principal.Subject != "":
		return "sub:" + t.Principal.Subject
	case t.RemoteAddr == "":
		return ""
	}
	ap, err := netip.ParseAddrPort(t.RemoteAddr)
	if err != nil {
		a, err := netip.ParseAddr(t.RemoteAddr)
		if err != nil {
			return "addr:" + t.RemoteAddr
		}
		ap = netip.AddrPortFrom(a, 0)
	}
	a := ap.Addr().WithZone("").Unmap()
	if a.Is6() {
		return "ip:" + netip.PrefixFrom(a, 64).Masked().String()
	}
	return "ip:" + a.String()
}

// Viewer is who a request, a session or a listen stream is: what a
// [Visibility] decides on.
type Viewer struct {
	// SessionID is the handshake-era session's id on transports that name
	// sessions (Streamable HTTP); empty otherwise.
	SessionID string
	// Principal is the authenticated caller, when an authenticator vouched
	// for it (nil otherwise).
	Principal *ports.Principal
	// Client is the client's clientInfo: from initialize in the handshake
	// era, from _meta in the stateless era (zero when it sent none).
	Client domain.Implementation
	// Transport is what the transport knows of the request (or of the
	// request that opened the session or stream).
	Transport TransportInfo
	// Revision and Era are those of the request or session.
	Revision domain.Revision
	Era      domain.Era
}

// Visibility decides, per request, which tools, resources and prompts a
// request sees. A hidden tool is absent from tools/list and a tools/call
// of it is answered exactly as one of an unknown tool; a hidden resource
// (or resource template, by its URI template) is absent from its list,
// answered as an unknown URI by resources/read and resources/subscribe,
// left out of a subscriptions/listen acknowledgement as an unknown URI is,
// and its notifications/resources/updated reach no listen stream whose
// caller does not see it when they are sent (unknown to
// completion/complete too); a hidden prompt is absent from prompts/list
// and answered as unknown by prompts/get and completion/complete. A nil
// func hides nothing of its kind. The funcs are called often (every list,
// every call, every notification of a followed resource, and for every
// session when a list changes): keep them fast and free of I/O.
//
// With a filter set, list-changed notifications reach a session (or a
// listen stream) only when the list it sees changed, and stateless-era
// results of the filtered lists carry cacheScope "private". When what a
// filter decides changes without the registry changing (a user's rights
// changed), call Server.VisibilityChanged.
type Visibility struct {
	Tool     func(ctx context.Context, v *Viewer, t *domain.Tool) bool
	Resource func(ctx context.Context, v *Viewer, uri string) bool
	Prompt   func(ctx context.Context, v *Viewer, p *domain.Prompt) bool

	// hideScoped hides the resources whose scopes the viewer lacks
	// (HideUnauthorized), which Resource cannot see.
	hideScoped bool
}

// HideUnauthorized returns v with tools, prompts and resources (and
// resource templates) whose scopes (hexmcp.WithScopes) the viewer's principal
// lacks hidden as well: absent from its lists and answered as unknown,
// rather than refused with CodeInsufficientScope. Use it as
// Options.Visibility when a client should not learn of tools it cannot
// call; without it, such tools are listed and refused with a scope
// challenge (step-up).
func HideUnauthorized(v Visibility) Visibility {
	tool, prompt := v.Tool, v.Prompt
	v.Tool = func(ctx context.Context, p *Viewer, t *domain.Tool) bool {
		return ViewerHolds(p, t.Scopes) && (tool == nil || tool(ctx, p, t))
	}
	v.Prompt = func(ctx context.Context, p *Viewer, pr *domain.Prompt) bool {
		return ViewerHolds(p, pr.Scopes) && (prompt == nil || prompt(ctx, p, pr))
	}
	v.hideScoped = true
	return v
}

// ViewerHolds reports whether the viewer's principal holds every scope of
// scopes (a definition without scopes is everyone's).
func ViewerHolds(p *Viewer, scopes []string) bool {
	return len(scopes) == 0 || MissingScopes(scopes, ViewerScopes(p)) == nil
}

// ViewerScopes are the scopes of the viewer's principal (none without
// one).
func ViewerScopes(p *Viewer) []string {
	if p == nil || p.Principal == nil {
		return nil
	}
	return p.Principal.Scopes
}

// MissingScopes returns the scopes of required that granted lacks, in
// order (nil when none is missing).
func MissingScopes(required, granted []string) []string {
	var missing []string
	for _, r := range required {
		found := false
		for _, g := range granted {
			if g == r {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, r)
		}
	}
	return missing
}

// The reasons of a [SessionEnd].
const (
	// SessionClosed: the connection that held the session closed (stdio,
	// WebSocket).
	SessionClosed = "closed"
	// SessionDeleted: the client ended it (Streamable HTTP DELETE).
	SessionDeleted = "deleted"
	// SessionRemoved: the store dropped it (expired or evicted).
	SessionRemoved = "removed"
)

// SessionEnd describes a handshake-era session that ended, for
// Options.OnSessionEnd (telemetry: mcp.server.session.duration).
type SessionEnd struct {
	// ID is the session's id on transports that name sessions; "" for a
	// connection's session.
	ID string
	// Revision is the negotiated protocol revision.
	Revision domain.Revision
	// Transport is what the transport knew of the request that initialized
	// the session.
	Transport TransportInfo
	// Started is when the session was initialized (for a session restored
	// from a store, when the store created it); Ended when it ended.
	Started, Ended time.Time
	// Reason is SessionClosed, SessionDeleted or SessionRemoved.
	Reason string
}

// HidesScoped reports whether v hides what its viewer lacks the scopes of
// (made by [HideUnauthorized]).
func HidesScoped(v Visibility) bool { return v.hideScoped }

// CodeInsufficientScope is the JSON-RPC error code of a tools/call (or
// prompts/get) refused because the caller's principal lacks a scope the
// tool declares (hexmcp.WithScopes). -32052 lies in the range JSON-RPC 2.0
// leaves to servers; data names the scopes required and those missing:
//
//	{"code":-32052,"message":"Insufficient scope: needs files:write","data":{"scopes":["files:read","files:write"],"missing":["files:write"]}}
//
// Over Streamable HTTP the answer is a 403 whose WWW-Authenticate header
// carries error="insufficient_scope" and scope="<the required scopes>", as
// the MCP authorization spec asks, so that the client can obtain a token
// with them (the Scopes of the transport's answer).
const CodeInsufficientScope = -32052

// Unlimited, as the value of a limit in the engine's options
// (hexmcp.Options: MaxListeners, MaxListenersPerClient,
// MaxListenSubscriptions, ListenIdleTimeout, and any other whose doc says
// "negative: no bound") or a transport's, turns that limit off.
// Zero takes the default: a limit is never off by omission.
const Unlimited = -1
