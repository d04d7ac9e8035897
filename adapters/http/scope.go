package mcphttp

import (
	"context"
	"net/http"
	"strings"

	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
)

type challengeKey struct{}

// withResourceMetadata records in ctx the Protected Resource Metadata URL
// of the authentication in front of the handler (RequireBearer's
// AuthOptions.ResourceMetadataURL), for the scope challenges the handler
// writes itself.
func withResourceMetadata(ctx context.Context, url string) context.Context {
	if url == "" {
		return ctx
	}
	return context.WithValue(ctx, challengeKey{}, url)
}

// finishAnswer answers a request with the engine's answer: a call refused
// for a missing scope (hexmcp.CodeInsufficientScope) is a 403 whose
// WWW-Authenticate challenge names the scopes it needs (MCP authorization,
// "Scope Challenge Handling"), unless the response is already a stream.
func (pw *postWriter) finishAnswer(r *http.Request, ans exchange.Answer, stateless bool) {
	status := statusFor(stateless, ans)
	if ans.IsError && ans.Code == handlerapi.CodeInsufficientScope && !pw.streaming() {
		status = http.StatusForbidden
		url, _ := r.Context().Value(challengeKey{}).(string)
		pw.w.Header().Set("WWW-Authenticate", bearerChallenge("insufficient_scope", strings.Join(ans.Scopes, " "), url))
	}
	pw.finish(ans.Response, status)
}
