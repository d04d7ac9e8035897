package mcphttp

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/ports"
)

// localIdle is how long a session this instance holds stays in its memory
// without a request, a stream or a call in flight. Dropping it loses
// nothing the store keeps: the next request restores it.
var localIdle = 30 * time.Minute

// sweepEvery is how often the local sessions are checked for idleness.
const sweepEvery = time.Minute

// defaultMaxLocalSessionBytes is the default Options.MaxLocalSessionBytes:
// 64 MiB, what the in-memory session store holds at most.
//
// A handler keeps in memory a copy of each session it served lately (the
// engine's session, with the state the store holds), counted as the
// state's size (ports.SessionState.Size) and 2 KiB for the rest. Such a
// copy is only a cache: the store is asked at every request, and a copy
// that left memory is restored from the store by the session's next
// request (losing only what the store does not hold: the session's own
// tools, and the server requests it awaits). With a store that reports
// removals (the in-memory one) copies leave with their sessions; with one
// that does not (Redis), a copy outlives a session that expired or was
// deleted through another instance until it has been idle for 30
// minutes. Past the budget, the copies used least recently that are idle
// (no request in flight, no stream attached, not used for a second) leave
// memory, as many as needed; copies in use stay (they are bounded by the
// requests and streams in flight).
const defaultMaxLocalSessionBytes = 64 << 20

// copyOverhead is what a local copy counts besides its state's size: the
// engine's session, the copy and their contexts.
const copyOverhead = 2 << 10

// localMinIdle is how long a copy must have gone unused before the byte
// budget may drop it: longer than a request takes from its lookup to
// counting itself in flight.
var localMinIdle = time.Second

// localCopies is the byte budget of a handler's live sessions
// (Options.MaxLocalSessionBytes). Its fields are guarded by Handler.mu.
type localCopies struct {
	max   int       // negative: no bound
	bytes int       // the sum of the copies' sizes
	lru   list.List // of *liveSession, the one looked up least recently first
}

func newLocalCopies(max int) localCopies {
	if max == 0 {
		max = defaultMaxLocalSessionBytes
	}
	return localCopies{max: max}
}

// copySize is what a copy of a session counts, whose state's size is n.
func copySize(n int) int { return n + copyOverhead }

// addCopyLocked counts ls, just made known here, as used now. h.mu is held.
func (h *Handler) addCopyLocked(ls *liveSession, now time.Time) {
	ls.elem = h.copies.lru.PushBack(ls)
	ls.size = copySize(ls.sess.Size())
	ls.touched = now
	h.copies.bytes += ls.size
}

// touchCopyLocked records that ls was looked up now. h.mu is held.
func (h *Handler) touchCopyLocked(ls *liveSession, now time.Time) {
	if ls.elem != nil {
		h.copies.lru.MoveToBack(ls.elem)
		ls.touched = now
	}
}

// resizeCopyLocked records the size of ls's state, which changed. h.mu is
// held.
func (h *Handler) resizeCopyLocked(ls *liveSession) {
	if ls.elem != nil {
		n := copySize(ls.sess.Size())
		h.copies.bytes += n - ls.size
		ls.size = n
	}
}

// removeCopyLocked takes ls out of h.live and of the budget, if it is
// there. h.mu is held.
func (h *Handler) removeCopyLocked(ls *liveSession) {
	if h.live[ls.id] == ls {
		delete(h.live, ls.id)
	}
	if ls.elem != nil {
		h.copies.lru.Remove(ls.elem)
		h.copies.bytes -= ls.size
		ls.elem = nil
	}
}

// trimCopiesLocked drops idle copies, least recently used first, while the
// copies are over their budget, and returns them for the caller to end
// outside the lock (see endSwept). h.mu is held.
func (h *Handler) trimCopiesLocked(now time.Time) (idle, removed []*liveSession) {
	c := &h.copies
	if c.max < 0 {
		return nil, nil
	}
	for n := c.lru.Len(); n > 0 && c.bytes > c.max; n-- {
		ls := c.lru.Front().Value.(*liveSession)
		if now.Sub(ls.touched) < localMinIdle {
			break // the later ones were looked up more recently still
		}
		gone, ok := ls.evictable()
		if !ok {
			c.lru.MoveToBack(ls.elem) // in use: look at the others
			continue
		}
		h.removeCopyLocked(ls)
		if gone {
			removed = append(removed, ls)
		} else {
			idle = append(idle, ls)
		}
	}
	return idle, removed
}

// liveSession is a session this instance serves: the engine's session, the
// context that tells it ended here, and its streams.
type liveSession struct {
	id     string
	sess   exchange.Session
	ctx    context.Context // cancelled when the session ends here, and on Abort
	cancel context.CancelFunc
	// gone is cancelled when the session itself ended (DELETE, or the store
	// no longer has it), not only its copy here: its streams' events are
	// then deleted from the event store.
	gone     context.Context
	markGone context.CancelFunc

	mu       sync.Mutex
	inflight int
	// removed: the store reported the session gone while calls were in
	// flight here; the sweep drops it once they are done.
	removed    bool
	lastUsed   time.Time
	standalone *stream
	// following counts the GET connections that follow a stream of the
	// session from a shared event store here (see Handler.follow).
	following int
	// follower is the connection that follows the session's own stream
	// here, if one does (shared mode): a second GET is refused, a
	// resumption takes over.
	follower *queuedConn
	// postStreams are the ids of the resumable POST streams this instance
	// opened for the session, latest last (at most maxTrackedStreams).
	postStreams []string

	// elem, size and touched place the copy in the handler's byte budget
	// (localCopies); guarded by Handler.mu. elem is nil once it left.
	elem    *list.Element
	size    int
	touched time.Time
}

// maxTrackedStreams bounds the POST stream ids a session remembers for
// their deletion; older ones are left to the event store's expiry.
const maxTrackedStreams = 256

func (h *Handler) newLive(id string, sess exchange.Session) *liveSession {
	ls := &liveSession{id: id, sess: sess, lastUsed: time.Now()}
	ls.ctx, ls.cancel = context.WithCancel(h.abortCtx)
	ls.gone, ls.markGone = context.WithCancel(context.Background())
	if h.watcher != nil {
		// A shared session stream: this instance appends the session's
		// messages to it whether or not it holds the client's GET.
		h.standaloneStream(ls)
	}
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

// revision is the session's negotiated revision, as the engine holds it.
func (ls *liveSession) revision() domain.Revision { return ls.sess.Revision() }

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

// evictable reports whether the copy may leave this instance's memory now
// (nothing in flight, no stream attached), and whether the store reported
// the session gone.
func (ls *liveSession) evictable() (gone, ok bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.inflight > 0 || ls.following > 0 {
		return false, false
	}
	if st := ls.standalone; st != nil && !ls.removed {
		st.mu.Lock()
		attached := st.conn != nil && st.conn.alive()
		st.mu.Unlock()
		if attached {
			return false, false
		}
	}
	return ls.removed, true
}

// idle reports whether the session may leave this instance's memory.
func (ls *liveSession) idle(now time.Time) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.inflight > 0 || ls.following > 0 {
		return false
	}
	if ls.removed {
		return true
	}
	if now.Sub(ls.lastUsed) < localIdle {
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
	if p := ports.PrincipalFrom(ctx); p != nil {
		return p.Subject
	}
	return ""
}

// DefaultClientKey names the client a new session counts against for the
// session store's per-client limit (ports.SessionState.Peer) when
// Options.ClientKey is nil: "sub:" and the authenticated principal's
// subject (see [RequireBearer]), else "ip:" and the request's remote IP
// address without port: an IPv4 address as it is, an IPv6 one by its /64
// prefix (one host or network commonly holds a whole /64, so counting its
// addresses one by one would bound nothing). A remote address that does
// not parse is used whole, after "addr:".
func DefaultClientKey(r *http.Request) string {
	// The engine's rule, so that sessions and listen streams count the
	// same client; a request has no connection to stand for an unknown
	// address, so all such requests are one client.
	if k := (exchange.Transport{Principal: ports.PrincipalFrom(r.Context()), RemoteAddr: r.RemoteAddr}).ClientKey(); k != "" {
		return k
	}
	return "addr:" + r.RemoteAddr
}

// clientKey is the Peer of a session a request initializes.
func (h *Handler) clientKey(r *http.Request) string {
	if f := h.opts.ClientKey; f != nil {
		if k := f(r); k != "" {
			return k
		}
	}
	return DefaultClientKey(r)
}

// lookupChecked is lookup of sid for a request without a JSON-RPC id (a
// GET, a DELETE, a batch), then checkVersionHeader; on a refusal by either
// it writes the error to w and returns nil.
func (h *Handler) lookupChecked(w http.ResponseWriter, r *http.Request, sid string) *liveSession {
	ls, e := h.lookup(r.Context(), sid, nil)
	if e == nil {
		e = h.checkVersionHeader(r, nil)
	}
	if e != nil {
		e.write(w)
		return nil
	}
	return ls
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
		h.logf(slog.LevelError, "hexmcp: reading the session store failed", slog.Any("error", err))
		e := newErr(http.StatusServiceUnavailable, id, domain.CodeInternalError, "Service unavailable: the session store cannot be reached; retry later")
		e.retryAfter = retryAfterStore
		return nil, e
	}
	if st.Owner != owner(ctx) {
		return nil, newErr(http.StatusNotFound, id, domain.CodeInvalidRequest, "Session not found")
	}
	now := time.Now()
	h.mu.Lock()
	idle, removed := h.sweepLocked(now)
	ls := h.live[sid]
	if ls == nil {
		ls = h.newLive(sid, h.x.RestoreSession(st))
		h.live[sid] = ls
		h.addCopyLocked(ls, now)
	} else {
		h.touchCopyLocked(ls, now)
	}
	ls.mu.Lock()
	ls.lastUsed = now
	ls.mu.Unlock()
	if ls.sess.Refresh(st) {
		// Another instance changed the session (subscribe, setLevel):
		// the engine took its state.
		h.resizeCopyLocked(ls)
	}
	i2, r2 := h.trimCopiesLocked(now)
	h.mu.Unlock()
	h.endSwept(append(idle, i2...), append(removed, r2...))
	return ls, nil
}

// sweepLocked removes the idle local sessions, at most once a minute, and
// returns them for the caller to end outside the lock (see endSwept): those
// merely idle here, and those the store reported gone (see storeRemoved).
func (h *Handler) sweepLocked(now time.Time) (idle, removed []*liveSession) {
	if now.Sub(h.lastSweep) < sweepEvery {
		return nil, nil
	}
	h.lastSweep = now
	for _, ls := range h.live {
		if ls.idle(now) {
			h.removeCopyLocked(ls)
			ls.mu.Lock()
			gone := ls.removed
			ls.mu.Unlock()
			if gone {
				removed = append(removed, ls)
			} else {
				idle = append(idle, ls)
			}
		}
	}
	return idle, removed
}

// endSwept ends the sessions sweepLocked removed: an idle one is only
// ended here (the store keeps it), one the store no longer has is
// forgotten with its events.
func (h *Handler) endSwept(idle, removed []*liveSession) {
	for _, ls := range idle {
		ls.end()
	}
	for _, ls := range removed {
		h.drop(ls)
	}
}

// storeRemoved is called by a store that reports removals
// ([ports.SessionRemovalNotifier], as the in-memory one does) when a
// session left it: expired, evicted or deleted. This instance's copy is
// forgotten at once, as lookup would when the client came back, so that
// the sessions held here are never more than the store's, however many
// the store expires or evicts. A copy with calls in flight keeps serving
// them (their responses are still delivered) and is forgotten by the next
// sweep after they are done.
func (h *Handler) storeRemoved(sid string) {
	h.mu.Lock()
	ls := h.live[sid]
	h.mu.Unlock()
	if ls == nil {
		return
	}
	ls.sess.Removed()
	ls.mu.Lock()
	busy := ls.inflight > 0
	ls.removed = busy
	ls.mu.Unlock()
	if !busy {
		h.forget(sid)
	}
}

// forget ends this instance's copy of a session the store no longer has
// (deleted or expired), and deletes the events of its streams: the
// standalone stream, and the POST streams this instance opened for it.
// (Those another instance opened are deleted there, when it learns that
// the session is gone, or expire in the event store.)
func (h *Handler) forget(sid string) {
	h.mu.Lock()
	ls := h.live[sid]
	if ls != nil {
		h.removeCopyLocked(ls)
	}
	h.mu.Unlock()
	if ls != nil {
		h.drop(ls)
	}
}

// drop ends a session this instance no longer holds (see forget).
func (h *Handler) drop(ls *liveSession) {
	sid := ls.id
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
			h.logf(slog.LevelWarn, "hexmcp: deleting the events of an ended session's stream failed", slog.Any("error", err))
		}
	}
}

// addLive makes a new session known here, just before the store is asked
// to create it. It runs the sweep of idle local sessions too (at most once
// a minute), so that they leave memory also while no client comes back to
// an existing session.
func (h *Handler) addLive(ls *liveSession) {
	now := time.Now()
	h.mu.Lock()
	if old := h.live[ls.id]; old != nil {
		h.removeCopyLocked(old) // never: ids are random
	}
	h.live[ls.id] = ls
	h.addCopyLocked(ls, now)
	idle, removed := h.sweepLocked(now)
	i2, r2 := h.trimCopiesLocked(now)
	h.mu.Unlock()
	h.endSwept(append(idle, i2...), append(removed, r2...))
}

// dropLive takes back a session addLive made known, which the store
// refused.
func (h *Handler) dropLive(ls *liveSession) {
	h.mu.Lock()
	h.removeCopyLocked(ls)
	h.mu.Unlock()
}

// syncState has the engine write the session's state to the store when a
// request changed it (see [exchange.Session.Sync]): Ready once the
// handshake is complete, so that the store no longer treats the session as
// pending.
//
// A store may refuse a larger state past a byte budget (see
// ports.SessionStore.Update): the engine then undoes the change, and the
// refusal, an error wrapping ports.ErrTooManySessions, is returned for the
// request's answer (see syncAnswer). Other failures are logged.
func (h *Handler) syncState(ctx context.Context, ls *liveSession) error {
	changed, err := ls.sess.Sync(ctx)
	if changed {
		h.mu.Lock()
		h.resizeCopyLocked(ls)
		h.mu.Unlock()
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ports.ErrTooManySessions):
		h.logf(slog.LevelInfo, "hexmcp: the session store refused a larger session state; the change is undone", slog.Any("error", err))
		return err
	case !errors.Is(err, ports.ErrSessionNotFound):
		// A session the store dropped meanwhile (expired or evicted
		// during the request) is not a failure: its next request is
		// 404.
		h.logf(slog.LevelError, "hexmcp: updating the session store failed", slog.Any("error", err))
	}
	return nil
}

// syncAnswer is syncState for a request whose answer is ans: when the
// store refuses the state the request made (a subscription past a byte
// budget), the request is answered -32602 with its id, naming the budget
// (data.limit "maxSessionBytesPerClient" or "maxSessionBytes"), as the
// engine answers a subscription past its own limits; the change is not
// kept.
func (h *Handler) syncAnswer(ctx context.Context, ls *liveSession, id json.RawMessage, ans exchange.Answer) exchange.Answer {
	err := h.syncState(ctx, ls)
	if err == nil || ans.Response == nil || ans.IsError {
		return ans
	}
	e := newErr(http.StatusOK, id, domain.CodeInvalidParams,
		"Invalid params: the server's sessions hold as many bytes as they may; retry later")
	e.data = map[string]any{"limit": "maxSessionBytes"}
	if errors.Is(err, ports.ErrTooManySessionsForClient) {
		e.message = "Invalid params: this client's sessions hold as many bytes as they may; unsubscribe, or end the sessions it no longer uses (DELETE), first"
		e.data = map[string]any{"limit": "maxSessionBytesPerClient"}
	}
	return exchange.Answer{Response: e.body(), IsError: true, Code: domain.CodeInvalidParams}
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
func (h *Handler) sessionContext(r *http.Request, pw *postWriter, client string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(h.withTransport(context.WithoutCancel(r.Context()), r, client))
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
func (h *Handler) statelessContext(r *http.Request, client string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(h.withTransport(r.Context(), r, client))
	stop := context.AfterFunc(h.abortCtx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}
