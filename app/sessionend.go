package app

import (
	"context"
	"log/slog"

	"github.com/hexmcp/hexmcp/internal/handlerapi"
)

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
	end := handlerapi.SessionEnd{ID: s.id, Revision: s.rev, Transport: s.trans, Started: s.started, Ended: ss.clock.Now(), Reason: reason}
	s.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			logf(ss.log, context.Background(), slog.LevelError, "hexmcp: OnSessionEnd panicked", slog.Any("panic", r))
		}
	}()
	ss.onEnd(end)
}
