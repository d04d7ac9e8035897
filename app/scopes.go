package app

import (
	"context"
	"maps"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
)

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
	r := newRPCError(id, handlerapi.CodeInsufficientScope, "Insufficient scope: needs "+strings.Join(missing, " "), data)
	r.scopes = required
	return r
}
