package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
)

type sessionCommitKey struct{}

// withSessionCommit returns a copy of ctx with which an initialize is
// served (by the exchange port's Initialize) so that commit runs once the
// engine has accepted it, before its answer leaves the engine and inside
// [Options.Middleware]: a transport that keeps sessions elsewhere (the
// Streamable HTTP transport's session store) stores the new session there.
// An error from commit becomes the answer to initialize (a
// *[domain.ProtocolError], or one it wraps, as it is; any other error
// -32603 "Internal error", logged), the session stays uninitialized, and
// middleware sees the error: what it records (hexmcp.Audit) is what
// the client gets. Without it, an initialize is accepted once the engine
// answers it.
func withSessionCommit(ctx context.Context, commit func(ctx context.Context) error) context.Context {
	return context.WithValue(ctx, sessionCommitKey{}, commit)
}

// commit runs the commit of withSessionCommit, if ctx carries one,
// for the session s whose initialize (id) the engine accepted; on error s
// is uninitialized again and the error is the answer.
func (ss *sessionSet) commit(ctx context.Context, s *session, id jsontext.Value) *rpcError {
	commit, _ := ctx.Value(sessionCommitKey{}).(func(context.Context) error)
	if commit == nil {
		return nil
	}
	err := commit(ctx)
	if err == nil {
		return nil
	}
	s.mu.Lock()
	s.initialized = false
	s.mu.Unlock()
	var pe *domain.ProtocolError
	if errors.As(err, &pe) {
		return &rpcError{id: id, err: pe}
	}
	logf(ss.log, ctx, slog.LevelError, "hexmcp: keeping a new session failed", slog.Any("error", err))
	return newRPCError(id, domain.CodeInternalError, "Internal error", nil)
}
