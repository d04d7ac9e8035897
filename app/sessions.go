package app

import (
	"sync"

	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// sessionSet holds the handshake-era sessions the engine serves: those of
// its connections (ServeConn) and those transports keep for it
// (the exchange port's). Notifications reach them through
// it; it
// reports their end (Options.OnSessionEnd) and keeps a new session where
// its transport keeps sessions (withSessionCommit).
type sessionSet struct {
	mu  sync.Mutex
	all map[*session]struct{}

	onEnd func(handlerapi.SessionEnd) // Options.OnSessionEnd
	clock ports.Clock
	log   ports.Logger
}

func (ss *sessionSet) track(s *session) {
	ss.mu.Lock()
	if ss.all == nil {
		ss.all = make(map[*session]struct{})
	}
	ss.all[s] = struct{}{}
	ss.mu.Unlock()
}

func (ss *sessionSet) untrack(s *session) {
	ss.mu.Lock()
	delete(ss.all, s)
	ss.mu.Unlock()
}

// list returns the sessions held now.
func (ss *sessionSet) list() []*session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]*session, 0, len(ss.all))
	for s := range ss.all {
		out = append(out, s)
	}
	return out
}
