package mcphttp

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

type challengeKey struct{}

// bearerGate is what RequireBearer tells the handlers behind it, for the
// scope challenges they write themselves: the Protected Resource Metadata
// URL (AuthOptions.ResourceMetadataURL), the scopes every request needs
// (AuthOptions.RequiredScopes) and the record of a refusal, written within
// RequireBearer's budget of records.
type bearerGate struct {
	metadataURL string
	required    []string
	refused     func(r *http.Request, p *ports.Principal, needed []string)
}

// withGate records g in ctx.
func withGate(ctx context.Context, g *bearerGate) context.Context {
	return context.WithValue(ctx, challengeKey{}, g)
}

// finishAnswer answers a request with the engine's answer: a call refused
// for a missing scope (hexmcp.CodeInsufficientScope) is a 403 whose
// WWW-Authenticate challenge names the scopes it needs (MCP authorization,
// "Scope Challenge Handling"), unless the response is already a stream:
// those every request needs (RequireBearer's RequiredScopes) and those of
// what it calls, so that a client that asks for exactly these keeps what
// it had. The refusal is logged as RequireBearer logs its own.
func (pw *postWriter) finishAnswer(r *http.Request, ans exchange.Answer, stateless bool) {
	status := statusFor(stateless, ans)
	if ans.IsError && ans.Code == handlerapi.CodeInsufficientScope && !pw.streaming() {
		status = http.StatusForbidden
		scopes, url := ans.Scopes, ""
		if g, _ := r.Context().Value(challengeKey{}).(*bearerGate); g != nil {
			url = g.metadataURL
			scopes = unionScopes(g.required, ans.Scopes)
			g.refused(r, ports.PrincipalFrom(r.Context()), ans.Scopes)
		}
		pw.w.Header().Set("WWW-Authenticate", bearerChallenge("insufficient_scope", strings.Join(scopes, " "), url))
	}
	pw.finish(ans.Response, status)
}

// unionScopes returns a's scopes, then those of b that a lacks.
func unionScopes(a, b []string) []string {
	if len(a) == 0 {
		return b
	}
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
