package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/hexmcp/hexmcp/domain"
)

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
// [Options.OnSessionEnd] (telemetry: mcp.server.session.duration).
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

// ended calls Options.OnSessionEnd once for an initialized session.
func (ss *sessionSet) ended(s *session, reason string) {
	if ss.onEnd == nil {
		return
	}
	s.mu.Lock()
	if s.ended || !s.initialized {
		s.mu.Unlock()
		return
	}
	s.ended = true
	end := SessionEnd{ID: s.id, Revision: s.rev, Transport: s.trans, Started: s.started, Ended: ss.clock.Now(), Reason: reason}
	s.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			logf(ss.log, context.Background(), slog.LevelError, "hexmcp: OnSessionEnd panicked", slog.Any("panic", r))
		}
	}()
	ss.onEnd(end)
}
