package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/ports"
)

// sessionOf returns the Mcp-Session-Id of a GET or a DELETE. Without one
// (a stateless-era client, for which these endpoints do not exist:
// 2026-07-28, "Backward Compatibility") it answers 405 and returns "".
func sessionOf(w http.ResponseWriter, r *http.Request) string {
	sid := r.Header.Get(HeaderSessionID)
	if sid == "" {
		w.Header().Set("Allow", "POST")
		newErr(http.StatusMethodNotAllowed, nil, domain.CodeInvalidRequest, "Method Not Allowed: "+r.Method+" needs an Mcp-Session-Id").write(w)
	}
	return sid
}

// serveGet opens the session's standalone SSE stream, which carries the
// server-initiated messages (notifications/tools/list_changed), or, with
// Last-Event-ID, resumes a stream that was cut.
func (h *Handler) serveGet(w http.ResponseWriter, r *http.Request) {
	sid := sessionOf(w, r)
	if sid == "" {
		return
	}
	if !parseAccept(r.Header.Values("Accept")).sse {
		newErr(http.StatusNotAcceptable, nil, domain.CodeInvalidRequest, "Not Acceptable: a GET stream is text/event-stream").write(w)
		return
	}
	if h.streamsClosed(r) {
		newErr(http.StatusServiceUnavailable, nil, domain.CodeInvalidRequest, "Service unavailable: the server is shutting down").write(w)
		return
	}
	ls := h.lookupChecked(w, r, sid)
	if ls == nil {
		return
	}
	if last := r.Header.Get(headerLastEventID); last != "" {
		h.resume(w, r, ls, last)
		return
	}
	st := h.standaloneStream(ls)
	if h.watcher != nil {
		h.openShared(w, r, ls, st)
		return
	}
	c := newQueuedConn(nil, h.opts.MaxStreamQueueBytes)
	st.mu.Lock()
	if st.conn != nil && st.conn.alive() {
		st.mu.Unlock()
		newErr(http.StatusConflict, nil, domain.CodeInvalidRequest, "Conflict: the session already has a GET stream").write(w)
		return
	}
	st.conn = c
	if h.policy.Features(ls.revision()).SSEPriming {
		// 2025-11-25: prime the client with an event id to reconnect with.
		st.deliverLocked(st.storeLocked(nil))
	}
	st.mu.Unlock()
	h.pump(w, r, ls, st, c)
}

// Errors that stop a replay in resume.
var (
	// errForeignStream: the event is of another session's stream. It
	// stops the replay at its first event, before anything is copied.
	errForeignStream = errors.New("hexmcp: the event is of another session's stream")
	// errReplayFull: the events replayed so far fill the connection's
	// byte bound (Options.MaxStreamQueueBytes).
	errReplayFull = errors.New("hexmcp: the replay fills the connection's queue")
)

// resume serves GET + Last-Event-ID (2025-11-25, "Resumability and
// Redelivery"): the events of the stream of that id that came after it are
// sent again, then, when the stream is still going on here (the session's
// standalone stream, or a POST stream whose call is still running), its
// new events follow live. The resumed connection takes the stream over from
// a previous connection, which ends. An id the store does not know (never
// issued, expired, or of another session) is a 400: 404 would tell the
// client that its session is gone.
//
// The replay is bounded by Options.MaxStreamQueueBytes: a longer one sends
// its first events, then ends the stream with an SSE retry field, and the
// client resumes again from the last event it got.
func (h *Handler) resume(w http.ResponseWriter, r *http.Request, ls *liveSession, last string) {
	own := ls.id + "/"
	var evs []event
	size, full := 0, false
	collect := func(e ports.Event) error {
		if !strings.HasPrefix(e.StreamID, own) {
			return errForeignStream
		}
		if len(e.Data) > 0 { // priming events carry nothing to replay
			if len(evs) > 0 && size+len(e.Data) > h.opts.MaxStreamQueueBytes {
				full = true
				return errReplayFull
			}
			evs = append(evs, event{id: e.ID, data: bytes.Clone(e.Data)})
			size += len(e.Data)
		}
		last = e.ID
		return nil
	}
	streamID, err := h.events.Replay(r.Context(), last, collect)
	if errors.Is(err, errReplayFull) {
		err = nil
	}
	if err == nil && !full && !strings.HasPrefix(streamID, own) {
		// Nothing came after the id for collect to check. (A full replay
		// was checked event by event: a store need not name the stream
		// when fn stops it.)
		err = errForeignStream
	}
	if errors.Is(err, errForeignStream) {
		err, evs = ports.ErrEventNotFound, nil
	}
	if err != nil {
		if !errors.Is(err, ports.ErrEventNotFound) && r.Context().Err() == nil {
			h.logf(slog.LevelError, "hexmcp: replaying events failed", slog.Any("error", err))
			e := newErr(http.StatusServiceUnavailable, nil, domain.CodeInternalError, "Service unavailable: the event store cannot be reached; retry later")
			e.retryAfter = retryAfterStore
			e.write(w)
			return
		}
		newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Bad Request: unknown or expired Last-Event-ID").write(w)
		return
	}
	if full {
		// The rest waits in the store for the client's next resumption;
		// the stream's live connection, if any, stays as it is.
		c := newQueuedConn(evs, h.opts.MaxStreamQueueBytes)
		c.retry = true
		c.end()
		h.pump(w, r, ls, nil, c)
		return
	}
	var st *stream
	switch {
	case streamID == standaloneID(ls.id) && h.watcher != nil:
		// A shared session stream: its events come from the store.
		h.followFrom(w, r, ls, streamID, last, evs, false)
		return
	case streamID == standaloneID(ls.id):
		st = h.standaloneStream(ls)
	default:
		st = h.liveStream(streamID)
		if st == nil && h.watcher != nil && (len(evs) == 0 || h.x.Inspect(evs[len(evs)-1].data).Kind != exchange.Response) {
			// Begun at another instance and not answered yet: follow
			// it from the store until its response.
			h.followFrom(w, r, ls, streamID, last, evs, true)
			return
		}
	}
	// Events appended between the replay and here are read again under the
	// stream's lock, which holds back new ones until the connection is
	// attached: nothing is lost or sent twice.
	if st != nil {
		st.mu.Lock()
	}
	_, err = h.events.Replay(r.Context(), last, collect)
	if errors.Is(err, errReplayFull) {
		err = nil
	}
	c := newQueuedConn(evs, h.opts.MaxStreamQueueBytes)
	switch {
	case err != nil:
		c.fail()
	case full:
		c.retry = true
		c.end()
	case st == nil || st.done:
		// Finished, or going on at another instance: replay only. A stream
		// that has not delivered its response yet may still be going on
		// elsewhere: the client is told to come back (SSE retry) for the
		// rest.
		c.retry = st == nil && (len(evs) == 0 || h.x.Inspect(evs[len(evs)-1].data).Kind != exchange.Response)
		c.end()
	default:
		if st.conn != nil {
			st.conn.fail()
		}
		st.conn = c
	}
	if st != nil {
		st.mu.Unlock()
	}
	if err != nil {
		newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Bad Request: unknown or expired Last-Event-ID").write(w)
		return
	}
	h.pump(w, r, ls, st, c)
}

// openShared serves a GET without Last-Event-ID on a shared session
// stream (see Options.EventStore): a priming event is stored, to follow the
// stream from (and sent to the client when the revision primes streams).
func (h *Handler) openShared(w http.ResponseWriter, r *http.Request, ls *liveSession, st *stream) {
	ls.mu.Lock()
	busy := ls.follower != nil && ls.follower.alive()
	ls.mu.Unlock()
	if busy {
		newErr(http.StatusConflict, nil, domain.CodeInvalidRequest, "Conflict: the session already has a GET stream").write(w)
		return
	}
	id, err := h.events.Append(r.Context(), st.id, nil)
	if err != nil || id == "" || strings.ContainsAny(id, "\r\n\x00") {
		h.logf(slog.LevelError, "hexmcp: storing the priming event of a session stream failed", slog.Any("error", err))
		e := newErr(http.StatusServiceUnavailable, nil, domain.CodeInternalError, "Service unavailable: the event store cannot be reached; retry later")
		e.retryAfter = retryAfterStore
		e.write(w)
		return
	}
	var preload []event
	if h.policy.Features(ls.revision()).SSEPriming {
		preload = []event{{id: id}}
	}
	h.followFrom(w, r, ls, st.id, id, preload, false)
}

// followFrom serves a stream of a shared event store: preload (the events
// replayed already), then every event appended to the stream after the
// id last, by any instance, as the store tells of them
// ([ports.EventWatcher]); a POST stream (untilResponse) ends after its
// response. A client that falls behind the connection's queue is dropped
// and resumes from the store. A follower of the session's own stream
// takes over from the one before it here, as a resumption does.
func (h *Handler) followFrom(w http.ResponseWriter, r *http.Request, ls *liveSession, streamID, last string, preload []event, untilResponse bool) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	wake, stop := h.watcher.Watch(streamID)
	defer stop()
	c := newQueuedConn(preload, h.opts.MaxStreamQueueBytes)
	ls.mu.Lock()
	ls.following++
	if !untilResponse {
		if ls.follower != nil {
			ls.follower.fail() // taken over: that connection ends
		}
		ls.follower = c
	}
	ls.mu.Unlock()
	defer func() {
		ls.mu.Lock()
		ls.following--
		if ls.follower == c {
			ls.follower = nil
		}
		ls.mu.Unlock()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.follow(ctx, c, streamID, last, wake, untilResponse)
	}()
	h.pump(w, r, ls, nil, c)
	cancel()
	<-done
}

// followRetry is how long a follower waits after a failed replay (the
// store unreachable) before it tries again.
const followRetry = time.Second

// followQuiet ends the follow of a POST stream begun at another instance
// after that long without an event, with an SSE retry field: the client
// resumes (here or elsewhere) and the follow goes on. A stream whose call
// died with its instance thus ends for good once its events expire from
// the store (its TTL): the resumption then gets 400, which the client
// reports, instead of a connection held open forever.
var followQuiet = time.Minute

// follow feeds c with the events of streamID after last, replaying from
// the store each time wake says something was appended, until ctx ends, c
// fails, or (untilResponse) a response was delivered. Nothing is lost or
// repeated: each replay starts after the last event delivered, and the
// watch was set before the first.
func (h *Handler) follow(ctx context.Context, c *queuedConn, streamID, last string, wake <-chan struct{}, untilResponse bool) {
	errStop := errors.New("stop")
	// Only a POST stream's follow ends when quiet; a session stream is
	// quiet as long as nothing happens.
	quiet := time.NewTimer(followQuiet)
	defer quiet.Stop()
	if !untilResponse {
		quiet.Stop()
	}
	for {
		answered := false
		_, err := h.events.Replay(ctx, last, func(e ports.Event) error {
			if e.StreamID != streamID {
				return errForeignStream
			}
			if len(e.Data) > 0 {
				if !c.push(event{id: e.ID, data: e.Data}) {
					return errStop
				}
				if untilResponse && h.x.Inspect(e.Data).Kind == exchange.Response {
					answered = true
					last = e.ID
					return errStop
				}
			}
			last = e.ID
			return nil
		})
		switch {
		case answered:
			c.end()
			return
		case errors.Is(err, errStop), errors.Is(err, errForeignStream), errors.Is(err, ports.ErrEventNotFound):
			// The client fell behind, or the stream is gone from the
			// store (deleted with its session, or trimmed past what was
			// delivered): the connection ends, the client resumes (or
			// learns that it cannot).
			c.fail()
			return
		case err != nil && ctx.Err() == nil:
			h.logf(slog.LevelWarn, "hexmcp: following a shared stream failed; retrying", slog.Any("error", err))
			select {
			case <-ctx.Done():
				return
			case <-time.After(followRetry):
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
			if untilResponse {
				quiet.Reset(followQuiet)
			}
		case <-quiet.C:
			c.retry = true
			c.end()
			return
		}
	}
}

// pump writes a GET stream: the events queued on c, and keep-alive
// comments, until the stream ends, the client goes away, the session ends
// or the server shuts down.
func (h *Handler) pump(w http.ResponseWriter, r *http.Request, ls *liveSession, st *stream, c *queuedConn) {
	defer func() {
		if st != nil {
			st.detach(c)
		} else {
			c.fail()
		}
		ls.mu.Lock()
		ls.lastUsed = time.Now()
		ls.mu.Unlock()
	}()
	rc := startSSE(w, "")
	var tick <-chan time.Time
	if h.opts.KeepAlive > 0 {
		t := time.NewTicker(h.opts.KeepAlive)
		defer t.Stop()
		tick = t.C
	}
	var serverClosing <-chan struct{}
	if sig := signalsFrom(r.Context()); sig != nil {
		serverClosing = sig.closing.Done()
	}
	var buf []byte
	for {
		evs, ended, failed := c.take()
		if failed {
			return
		}
		if len(evs) > 0 {
			buf = buf[:0]
			for _, ev := range evs {
				buf = appendEvent(buf, ev)
			}
			if writeEvents(w, rc, h.opts.EventWriteTimeout, buf) != nil {
				return
			}
		}
		if ended {
			if c.retry {
				h.retryLater(w, rc)
			}
			return
		}
		select {
		case <-c.wake:
		case <-tick:
			if writeEvents(w, rc, h.opts.EventWriteTimeout, []byte(":\n\n")) != nil {
				return
			}
			if !h.touch(r.Context(), ls) {
				return
			}
		case <-r.Context().Done():
			return
		case <-ls.ctx.Done():
			return
		case <-h.closing:
			h.retryLater(w, rc)
			return
		case <-serverClosing:
			h.retryLater(w, rc)
			return
		}
	}
}

// retryLater ends a stream the server closes while it could go on (a
// shutdown) with an SSE retry field, as 2025-11-25 asks: the client
// reconnects after that many milliseconds (to another instance, or this one
// restarted) and resumes with Last-Event-ID.
func (h *Handler) retryLater(w http.ResponseWriter, rc *http.ResponseController) {
	_ = writeEvents(w, rc, h.opts.EventWriteTimeout, []byte("retry: 1000\n\n"))
}

// touch refreshes the session in the store during a quiet stream, and
// reports false (ending it here) when the store no longer has it.
func (h *Handler) touch(ctx context.Context, ls *liveSession) bool {
	_, err := h.sessions.Get(ctx, ls.id)
	if errors.Is(err, ports.ErrSessionNotFound) {
		h.forget(ls.id)
		return false
	}
	return true
}

// streamsClosed reports whether GET streams are refused: after
// CloseStreams, or while the server is shutting down.
func (h *Handler) streamsClosed(r *http.Request) bool {
	select {
	case <-h.closing:
		return true
	default:
	}
	if sig := signalsFrom(r.Context()); sig != nil {
		return sig.closing.Err() != nil
	}
	return false
}

// serveDelete ends a session (2025-11-25, "Session Management"): it is
// removed from the store, its calls in flight are cancelled, its GET
// stream ends and its streams' events are deleted from the event store.
// 204 No Content; 404 for an unknown session (or another principal's); 405
// without Mcp-Session-Id (a stateless-era client: 2026-07-28 has no
// DELETE).
func (h *Handler) serveDelete(w http.ResponseWriter, r *http.Request) {
	sid := sessionOf(w, r)
	if sid == "" {
		return
	}
	ls := h.lookupChecked(w, r, sid)
	if ls == nil {
		return
	}
	ls.sess.Deleted()
	if err := h.sessions.Delete(r.Context(), sid); err != nil {
		h.logf(slog.LevelError, "hexmcp: deleting a session from the store failed", slog.Any("error", err))
		e := newErr(http.StatusServiceUnavailable, nil, domain.CodeInternalError, "Service unavailable: the session store cannot be reached; retry later")
		e.retryAfter = retryAfterStore
		e.write(w)
		return
	}
	h.forget(sid)
	w.WriteHeader(http.StatusNoContent)
}
