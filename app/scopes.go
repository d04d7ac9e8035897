package app

import (
	"context"
	"maps"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
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
	ti, _ := ctx.Value(transportKey{}).(handlerapi.TransportInfo)
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
	missing := handlerapi.MissingScopes(required, granted)
	if missing == nil {
		return nil
	}
	data := map[string]any{"scopes": required, "missing": missing}
	maps.Copy(data, extra)
	r := newRPCError(id, CodeInsufficientScope, "Insufficient scope: needs "+strings.Join(missing, " "), data)
	r.scopes = required
	return r
}
