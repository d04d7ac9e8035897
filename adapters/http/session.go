package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// localIdle is how long a session this instance holds stays in its memory
// without a request, a stream or a call in flight. Dropping it loses
// nothing the store keeps: the next request restores it.
var localIdle = 30 * time.Minute

// sweepEvery is how often the local sessions are checked for idleness.
const sweepEvery = time.Minute

// liveSession is a session this instance serves: the engine's session, the
// context its requests run under, and its standalone stream.
type liveSession struct {
	id     string
	sess   *app.Session
	ctx    context.Context // cancelled when the session ends here
	cancel context.CancelFunc

	mu         sync.Mutex
	stored     ports.SessionState // what the store holds, as far as we know
	inflight   int
	lastUsed   time.Time
	standalone *stream
}

func (h *Handler) newLive(id string, sess *app.Session) *liveSession {
	ls := &liveSession{id: id, sess: sess, lastUsed: time.Now()}
	ls.ctx, ls.cancel = context.WithCancel(h.abortCtx)
	return ls
}

// end cancels the session's requests and releases the engine's session.
func (ls *liveSession) end() {
	ls.cancel()
	ls.sess.Close()
}

func (ls *liveSession) revision() domain.Revision {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.stored.Revision
}

// acquire counts n requests in flight, unless that passes max.
func (ls *liveSession) acquire(n, max int) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.inflight+n > max {
		return false
	}
	ls.inflight += n
	return true
}

func (ls *liveSession) release(n int) {
	ls.mu.Lock()
	ls.inflight -= n
	ls.lastUsed = time.Now()
	ls.mu.Unlock()
}

// idle reports whether the session may leave this instance's memory.
func (ls *liveSession) idle(now time.Time) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.inflight > 0 || now.Sub(ls.lastUsed) < localIdle {
		return false
	}
	if st := ls.standalone; st != nil {
		st.mu.Lock()
		attached := st.conn != nil && st.conn.alive()
		st.mu.Unlock()
		if attached {
			return false
		}
	}
	return true
}

// standaloneStream returns the session's GET stream, making it the
// session's writer for server-initiated messages the first time.
func (h *Handler) standaloneStream(ls *liveSession) *stream {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.standalone == nil {
		ls.standalone = &stream{h: h, id: ls.id + "/_"}
		ls.sess.SetWriter(ls.standalone)
	}
	return ls.standalone
}

// lookup finds a live session. The store is asked every time: it decides
// expiry, and another instance may have deleted the session. A session the
// store holds but this instance does not (another instance created it, or
// it left memory) is restored from the store. It answers 404 for an
// unknown, expired or deleted session (2025-11-25: "respond to requests
// containing that session ID with HTTP 404 Not Found").
func (h *Handler) lookup(ctx context.Context, sid string, id json.RawMessage) (*liveSession, *rpcErr) {
	if !validSessionID(sid) {
		return nil, newErr(http.StatusNotFound, id, domain.CodeInvalidRequest, "Session not found")
	}
	st, err := h.sessions.Get(ctx, sid)
	if err != nil {
		if errors.Is(err, ports.ErrSessionNotFound) {
			h.forget(sid)
			return nil, newErr(http.StatusNotFound, id, domain.CodeInvalidRequest, "Session not found")
		}
		h.logf(ports.LevelError, "mcp http: reading the session store failed", ports.F("error", err))
		return nil, newErr(http.StatusServiceUnavailable, id, domain.CodeInternalError, "Service unavailable")
	}
	now := time.Now()
	h.mu.Lock()
	evicted := h.sweepLocked(now)
	ls := h.live[sid]
	if ls == nil {
		ls = h.newLive(sid, h.e.RestoreSession(context.Background(), st, nil))
		ls.stored = st
		h.live[sid] = ls
	}
	ls.mu.Lock()
	ls.lastUsed = now
	ls.mu.Unlock()
	h.mu.Unlock()
	for _, old := range evicted {
		old.end()
	}
	return ls, nil
}

// sweepLocked removes the idle local sessions, at most once a minute, and
// returns them for the caller to end outside the lock.
func (h *Handler) sweepLocked(now time.Time) []*liveSession {
	if now.Sub(h.lastSweep) < sweepEvery {
		return nil
	}
	h.lastSweep = now
	var out []*liveSession
	for id, ls := range h.live {
		if ls.idle(now) {
			delete(h.live, id)
			out = append(out, ls)
		}
	}
	return out
}

// forget ends this instance's copy of a session the store no longer has.
func (h *Handler) forget(sid string) {
	h.mu.Lock()
	ls := h.live[sid]
	delete(h.live, sid)
	h.mu.Unlock()
	if ls != nil {
		ls.end()
	}
}

// addLive makes a new session known after the store accepted it.
func (h *Handler) addLive(ls *liveSession) {
	h.mu.Lock()
	h.live[ls.id] = ls
	h.mu.Unlock()
}

// syncState writes the session's state to the store when a request
// changed it (initialize, in practice).
func (h *Handler) syncState(ctx context.Context, ls *liveSession) {
	st := ls.sess.State()
	ls.mu.Lock()
	same := sameState(st, ls.stored)
	ls.mu.Unlock()
	if same {
		return
	}
	if err := h.sessions.Update(context.WithoutCancel(ctx), st); err != nil {
		h.logf(ports.LevelError, "mcp http: updating the session store failed", ports.F("error", err))
		return
	}
	ls.mu.Lock()
	ls.stored = st
	ls.mu.Unlock()
}

// sameState compares what the engine owns of two states (Created and
// LastSeen belong to the store).
func sameState(a, b ports.SessionState) bool {
	return a.ID == b.ID && a.Initialized == b.Initialized && a.Revision == b.Revision &&
		a.Client.Name == b.Client.Name && a.Client.Version == b.Client.Version && a.Client.Title == b.Client.Title &&
		bytes.Equal(a.Capabilities, b.Capabilities)
}

// checkSessionVersion applies the MCP-Protocol-Version rule to a request in
// a session (2025-11-25, "Protocol Version Header"): an unsupported value
// is a 400; a value other than the negotiated revision is a 400 too. An
// absent header is fine: the session knows its revision.
func (h *Handler) checkSessionVersion(r *http.Request, ls *liveSession, id json.RawMessage) *rpcErr {
	if e := h.checkVersionHeader(r, id); e != nil {
		return e
	}
	pv := r.Header.Get(HeaderProtocolVersion)
	if rev := ls.revision(); pv != "" && rev != "" && domain.Revision(pv) != rev {
		return newErr(http.StatusBadRequest, id, domain.CodeInvalidRequest,
			"Bad Request: the MCP-Protocol-Version header does not match the revision negotiated for this session ("+string(rev)+")")
	}
	return nil
}

// checkVersionHeader refuses an MCP-Protocol-Version the server does not
// support with 400 and an UnsupportedProtocolVersion error that lists the
// supported revisions. An absent header is left alone (2025-11-25: assume
// 2025-03-26 when nothing else tells the revision).
func (h *Handler) checkVersionHeader(r *http.Request, id json.RawMessage) *rpcErr {
	pv, ok, many := single(r.Header, HeaderProtocolVersion)
	if !ok {
		return nil
	}
	if many || !h.policy.Supports(domain.Revision(pv)) {
		e := newErr(http.StatusBadRequest, id, domain.CodeUnsupportedProtocolVersion, "Unsupported protocol version")
		e.data = map[string]any{"supported": h.policy.SupportedStrings(), "requested": pv}
		return e
	}
	return nil
}

// sessionContext is the context of a handshake-era request. It keeps the
// request's values but not its cancellation: the 2025 revisions say that a
// lost connection is not a cancellation (the client may resume the stream,
// and cancels with notifications/cancelled). It is cancelled when the
// session ends (DELETE, expiry), on Abort or a server's hard stop, and when
// the client goes away before anything was streamed: a JSON answer could
// not be resumed.
func (h *Handler) sessionContext(r *http.Request, ls *liveSession, pw *postWriter) (context.Context, func()) {
	ctx, cancel := context.WithCancel(withTransport(context.WithoutCancel(r.Context()), r))
	stops := []func() bool{
		context.AfterFunc(ls.ctx, cancel),
		context.AfterFunc(r.Context(), func() {
			if !pw.streaming() {
				cancel()
			}
		}),
	}
	if sig := signalsFrom(r.Context()); sig != nil {
		stops = append(stops, context.AfterFunc(sig.abort, cancel))
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// statelessContext is the context of a stateless-era request: cancelled
// when the client goes away (2026-07-28, "Cancellation": closing the
// stream is the cancellation) and on Abort.
func (h *Handler) statelessContext(r *http.Request) (context.Context, func()) {
	ctx, cancel := context.WithCancel(withTransport(r.Context(), r))
	stop := context.AfterFunc(h.abortCtx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}
