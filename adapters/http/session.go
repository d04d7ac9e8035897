package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
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
// context that tells it ended here, and its streams.
type liveSession struct {
	id     string
	sess   *app.Session
	ctx    context.Context // cancelled when the session ends here, and on Abort
	cancel context.CancelFunc
	// gone is cancelled when the session itself ended (DELETE, or the store
	// no longer has it), not only its copy here: its streams' events are
	// then deleted from the event store.
	gone     context.Context
	markGone context.CancelFunc

	mu         sync.Mutex
	stored     ports.SessionState // what the store holds, as far as we know
	inflight   int
	lastUsed   time.Time
	standalone *stream
	// postStreams are the ids of the resumable POST streams this instance
	// opened for the session, latest last (at most maxTrackedStreams).
	postStreams []string
}

// maxTrackedStreams bounds the POST stream ids a session remembers for
// their deletion; older ones are left to the event store's expiry.
const maxTrackedStreams = 256

func (h *Handler) newLive(id string, sess *app.Session) *liveSession {
	ls := &liveSession{id: id, sess: sess, lastUsed: time.Now()}
	ls.ctx, ls.cancel = context.WithCancel(h.abortCtx)
	ls.gone, ls.markGone = context.WithCancel(context.Background())
	// Closing the engine's session ends its calls in flight (the engine
	// cancels every call served through HandleMessage with its session):
	// when the session ends here, and on Abort.
	context.AfterFunc(ls.ctx, sess.Close)
	return ls
}

// end ends the session here: its calls in flight are cancelled and the
// engine's session is released. The store keeps it.
func (ls *liveSession) end() {
	ls.cancel()
	ls.sess.Close()
}

// trackStream remembers a POST stream of the session for its deletion.
func (ls *liveSession) trackStream(id string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.postStreams) >= maxTrackedStreams {
		ls.postStreams = slices.Delete(ls.postStreams, 0, len(ls.postStreams)-maxTrackedStreams+1)
	}
	ls.postStreams = append(ls.postStreams, id)
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
		ls.standalone = &stream{h: h, id: standaloneID(ls.id), gone: ls.gone}
		ls.sess.SetWriter(ls.standalone)
	}
	return ls.standalone
}

// standaloneID is the event-store id of a session's standalone (GET)
// stream: the same on every instance.
func standaloneID(sid string) string { return sid + "/_" }

// owner is who a request comes from, as a session records it: the
// authenticated principal's subject, "" without authentication.
func owner(ctx context.Context) string {
	if p := PrincipalFrom(ctx); p != nil {
		return p.Subject
	}
	return ""
}

// lookup finds a live session. The store is asked every time: it decides
// expiry, and another instance may have deleted the session. A session the
// store holds but this instance does not (another instance created it, or
// it left memory) is restored from the store. It answers 404 for an
// unknown, expired or deleted session (2025-11-25: "respond to requests
// containing that session ID with HTTP 404 Not Found"), and for a session
// that belongs to another principal (its stored Owner), as if it did not
// exist.
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
	if st.Owner != owner(ctx) {
		return nil, newErr(http.StatusNotFound, id, domain.CodeInvalidRequest, "Session not found")
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
	if !sameState(st, ls.stored) {
		// Another instance changed the session (subscribe, setLevel):
		// take its state rather than overwrite it later.
		ls.sess.Update(st)
		ls.stored = st
	}
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

// forget ends this instance's copy of a session the store no longer has
// (deleted or expired), and deletes the events of its streams: the
// standalone stream, and the POST streams this instance opened for it.
// (Those another instance opened are deleted there, when it learns that
// the session is gone, or expire in the event store.)
func (h *Handler) forget(sid string) {
	h.mu.Lock()
	ls := h.live[sid]
	delete(h.live, sid)
	h.mu.Unlock()
	if ls == nil {
		return
	}
	// Mark it gone first: a stream that appends an event from now on
	// deletes itself again (see stream.storeLocked), so that no event
	// outlives the deletion below.
	ls.markGone()
	ls.end()
	ls.mu.Lock()
	ids := append(slices.Clip(ls.postStreams), standaloneID(sid))
	ls.mu.Unlock()
	ctx := context.Background()
	for _, id := range ids {
		if err := h.events.DeleteStream(ctx, id); err != nil {
			h.logf(ports.LevelWarn, "mcp http: deleting the events of an ended session's stream failed", ports.F("error", err))
		}
	}
}

// addLive makes a new session known after the store accepted it.
func (h *Handler) addLive(ls *liveSession) {
	h.mu.Lock()
	h.live[ls.id] = ls
	h.mu.Unlock()
}

// syncState writes the session's state to the store when a request
// changed it (initialize, resources/subscribe and unsubscribe,
// logging/setLevel).
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
	return a.ID == b.ID && a.Owner == b.Owner && a.Initialized == b.Initialized && a.Revision == b.Revision &&
		a.Client.Name == b.Client.Name && a.Client.Version == b.Client.Version && a.Client.Title == b.Client.Title &&
		bytes.Equal(a.Capabilities, b.Capabilities) && slices.Equal(a.Subscriptions, b.Subscriptions) &&
		a.ResourcesAdvertised == b.ResourcesAdvertised && a.PromptsAdvertised == b.PromptsAdvertised && a.LogLevel == b.LogLevel
}

// checkVersionHeader refuses an MCP-Protocol-Version the server does not
// support (or a repeated header) with 400 and an UnsupportedProtocolVersion
// error that lists the supported revisions (2025-11-25, "Protocol Version
// Header": "If the server receives a request with an invalid or
// unsupported MCP-Protocol-Version, it MUST respond with 400 Bad
// Request"). An absent header is left alone (2025-11-25: assume 2025-03-26
// when nothing else tells the revision). In a session, a supported value
// other than the negotiated revision is accepted too: the client SHOULD
// send the negotiated one, and the session is served at its revision
// whatever the header says.
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
// and cancels with notifications/cancelled). It is cancelled on a server's
// hard stop, and when the client goes away before anything was streamed: a
// JSON answer could not be resumed. The engine ends the call by itself
// when the session ends here (DELETE, expiry, Abort: the engine's session
// is closed) and on Engine.Abort.
func (h *Handler) sessionContext(r *http.Request, pw *postWriter) (context.Context, func()) {
	ctx, cancel := context.WithCancel(withTransport(context.WithoutCancel(r.Context()), r))
	stops := []func() bool{
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
