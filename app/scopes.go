package app

import (
	"context"
	"maps"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
)

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

// principalScopes returns the scopes of the request's principal (none
// without one).
func principalScopes(ctx context.Context) []string {
	ti, _ := ctx.Value(transportKey{}).(TransportInfo)
	if ti.Principal == nil {
		return nil
	}
	return ti.Principal.Scopes
}

// checkScopes refuses a request whose principal lacks one of required.
func checkScopes(ctx context.Context, id jsontext.Value, required []string) *rpcError {
	if len(required) == 0 {
		return nil
	}
	return insufficientScope(id, required, principalScopes(ctx), nil)
}

// insufficientScope refuses a request whose principal, granted those
// scopes, lacks one of required (nil when it lacks none); extra joins the
// error's data.
func insufficientScope(id jsontext.Value, required, granted []string, extra map[string]any) *rpcError {
	missing := missingScopes(required, granted)
	if missing == nil {
		return nil
	}
	data := map[string]any{"scopes": required, "missing": missing}
	maps.Copy(data, extra)
	r := newRPCError(id, CodeInsufficientScope, "Insufficient scope: needs "+strings.Join(missing, " "), data)
	r.scopes = required
	return r
}

// HideUnauthorized returns v with tools, prompts and resources (and
// resource templates) whose scopes (hexmcp.WithScopes) the viewer's principal
// lacks hidden as well: absent from its lists and answered as unknown,
// rather than refused with [CodeInsufficientScope]. Use it as
// Options.Visibility when a client should not learn of tools it cannot
// call; without it, such tools are listed and refused with a scope
// challenge (step-up).
func HideUnauthorized(v Visibility) Visibility {
	tool, prompt := v.Tool, v.Prompt
	v.Tool = func(ctx context.Context, p *Viewer, t *domain.Tool) bool {
		return viewerHolds(p, t.Scopes) && (tool == nil || tool(ctx, p, t))
	}
	v.Prompt = func(ctx context.Context, p *Viewer, pr *domain.Prompt) bool {
		return viewerHolds(p, pr.Scopes) && (prompt == nil || prompt(ctx, p, pr))
	}
	v.hideScoped = true
	return v
}

// viewerHolds reports whether the viewer's principal holds every scope of
// scopes (a definition without scopes is everyone's).
func viewerHolds(p *Viewer, scopes []string) bool {
	return len(scopes) == 0 || missingScopes(scopes, viewerScopes(p)) == nil
}

// viewerScopes are the scopes of the viewer's principal (none without
// one).
func viewerScopes(p *Viewer) []string {
	if p == nil || p.Principal == nil {
		return nil
	}
	return p.Principal.Scopes
}
