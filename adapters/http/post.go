package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// servePost serves a POST: one JSON-RPC message (or, in a 2025-03-26
// session, a batch).
func (h *Handler) servePost(w http.ResponseWriter, r *http.Request) {
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		newErr(http.StatusUnsupportedMediaType, nil, domain.CodeInvalidRequest, "Unsupported Media Type: the body must be application/json").write(w)
		return
	}
	acc := parseAccept(r.Header.Values("Accept"))
	if !acc.json && !acc.sse {
		newErr(http.StatusNotAcceptable, nil, domain.CodeInvalidRequest, "Not Acceptable: the client must accept application/json or text/event-stream").write(w)
		return
	}
	raw, ok := h.readBody(w, r)
	if !ok {
		return
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		h.serveBatch(w, r, raw, acc)
		return
	}
	mi := app.Inspect(raw)
	switch {
	case mi.Kind == app.KindInvalid:
		// The engine words the error (-32700 for bad JSON, -32600 for a
		// message that is not JSON-RPC); the request cannot be served: 400.
		resp := h.e.HandleMessage(r.Context(), nil, raw, nil)
		if resp == nil { // an invalid notification: the engine answers nothing
			newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Invalid Request").write(w)
			return
		}
		writeJSON(w, http.StatusBadRequest, resp)
		return
	case mi.Stateless():
		h.serveStateless(w, r, raw, mi, acc)
		return
	}
	if e := h.checkVersionHeader(r, mi.ID); e != nil {
		e.write(w)
		return
	}
	if pv := r.Header.Get(HeaderProtocolVersion); pv != "" && h.policy.AcceptsStateless(pv) {
		// A stateless-era client (its header says so; an Mcp-Session-Id is
		// ignored in that era) whose body does not name the version in
		// _meta. That is a request missing a required field, not a header
		// mismatch (there is no body value to compare with): 2026-07-28
		// basic, "Per-request protocol fields": "A request missing any
		// required field is malformed; the server MUST reject it with
		// JSON-RPC error code -32602 (Invalid params). On HTTP, the response
		// status MUST be 400 Bad Request." This holds with an Mcp-Session-Id
		// too: intermediaries trust the mirrored headers of a request that
		// names 2026-07-28 as validated against its body, so it is not
		// served in a session, where they are not.
		missingMeta(mi.ID, "_meta[\""+metaProtocolVersion+"\"] is required and must be a string (the MCP-Protocol-Version header names "+pv+")").write(w)
		return
	}
	if sid := r.Header.Get(HeaderSessionID); sid != "" {
		h.serveInSession(w, r, sid, raw, mi, acc)
		return
	}
	if mi.Kind == app.KindRequest && mi.Method == "initialize" {
		h.serveInitialize(w, r, raw, acc)
		return
	}
	// 2025-11-25, "Session Management": a server that requires a session
	// SHOULD answer a request without Mcp-Session-Id (other than initialize)
	// with 400.
	newErr(http.StatusBadRequest, mi.ID, domain.CodeInvalidRequest,
		"Bad Request: the Mcp-Session-Id header is required; send initialize first, or name the protocol version in _meta").write(w)
}

// readBody reads a POST body within Options.MaxBodyBytes (413 beyond).
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	max := h.opts.MaxBodyBytes
	if r.ContentLength > max {
		newErr(http.StatusRequestEntityTooLarge, nil, domain.CodeInvalidRequest, "Request Entity Too Large").write(w)
		return nil, false
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			newErr(http.StatusRequestEntityTooLarge, nil, domain.CodeInvalidRequest, "Request Entity Too Large").write(w)
		} else {
			newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Bad Request: the body could not be read").write(w)
		}
		return nil, false
	}
	return raw, true
}

// serveStateless serves a 2026-07-28 request: no session (an
// Mcp-Session-Id header is ignored, as that revision's "Backward
// Compatibility" says), request metadata headers checked against the body,
// the response scoped to the request.
func (h *Handler) serveStateless(w http.ResponseWriter, r *http.Request, raw []byte, mi app.MessageInfo, acc accepts) {
	if mi.Kind != app.KindRequest {
		// 2026-07-28 defines no client notification over HTTP, nor headers
		// for one: accept it (it has no effect without a session).
		h.e.HandleMessage(r.Context(), nil, raw, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if e := h.checkStateless(r, mi); e != nil {
		e.write(w)
		return
	}
	if mi.Method == "subscriptions/listen" && !acc.sse {
		newErr(http.StatusNotAcceptable, mi.ID, domain.CodeInvalidRequest, "Not Acceptable: subscriptions/listen answers with an SSE stream; the client must accept text/event-stream").write(w)
		return
	}
	ctx, done := h.statelessContext(r)
	defer done()
	if mi.Method == "subscriptions/listen" {
		// A listen stream never ends by itself: a graceful stop
		// (CloseStreams, Server.Shutdown) ends it, as it ends GET streams,
		// and the engine then answers it with its completion result.
		var stop func()
		ctx, stop = h.listenContext(ctx, r)
		defer stop()
	}
	pw := &postWriter{h: h, w: w, acc: acc}
	resp := h.e.HandleInspected(ctx, nil, mi, pw)
	pw.finish(resp, statusFor(true, resp, raw))
}

// listenContext derives from ctx the context of a subscriptions/listen
// request, which lasts until it is cancelled. The handler's streams being
// closed (CloseStreams) or the server serving it shutting down ends it on
// the server's initiative: with the cause [app.ErrEndedByServer], for which
// the engine answers the request with its completion result (2026-07-28,
// "Graceful Closure"). The client going away just cancels ctx: no answer.
func (h *Handler) listenContext(ctx context.Context, r *http.Request) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	var serverClosing <-chan struct{}
	if sig := signalsFrom(r.Context()); sig != nil {
		serverClosing = sig.closing.Done()
	}
	go func() {
		select {
		case <-h.closing:
			cancel(app.ErrEndedByServer)
		case <-serverClosing:
			cancel(app.ErrEndedByServer)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

// serveInitialize starts a session: it mints the id, lets the engine answer
// initialize, stores the session's state and sends the id in
// Mcp-Session-Id with the response. A failed initialize creates nothing.
func (h *Handler) serveInitialize(w http.ResponseWriter, r *http.Request, raw []byte, acc accepts) {
	sid := newSessionID()
	sess := h.e.NewSession(context.Background(), sid, nil)
	// The session belongs to the authenticated principal, on every
	// instance: lookup refuses it to anyone else.
	sess.SetOwner(owner(r.Context()))
	ls := h.newLive(sid, sess)
	pw := &postWriter{h: h, w: w, acc: acc, ls: ls}
	ctx, done := h.sessionContext(r, pw)
	defer done()
	resp := h.e.HandleMessage(ctx, sess, raw, pw)
	st := sess.State()
	if !st.Initialized {
		ls.markGone() // nothing to resume: the answer's events are not stored
		ls.end()
		pw.finish(resp, statusFor(false, resp, nil))
		return
	}
	if err := h.sessions.Create(ctx, st); err != nil {
		ls.markGone()
		ls.end()
		id := app.Inspect(raw).ID
		e := newErr(http.StatusServiceUnavailable, id, domain.CodeInternalError, "Service unavailable")
		if errors.Is(err, ports.ErrTooManySessions) {
			e.message = "Service unavailable: too many sessions"
			e.retryAfter = "10"
		} else {
			h.logf(ports.LevelError, "mcp http: creating a session in the store failed", ports.F("error", err))
		}
		pw.fail(e)
		return
	}
	ls.stored = st
	h.addLive(ls)
	pw.setSessionHeader(sid)
	pw.finish(resp, http.StatusOK)
}

// serveInSession serves a message of a handshake-era session.
func (h *Handler) serveInSession(w http.ResponseWriter, r *http.Request, sid string, raw []byte, mi app.MessageInfo, acc accepts) {
	ls, e := h.lookup(r.Context(), sid, mi.ID)
	if e != nil {
		e.write(w)
		return
	}
	if mi.Kind != app.KindRequest {
		// Notifications (initialized, cancelled) and responses: 202.
		ctx := withTransport(r.Context(), r)
		h.e.HandleMessage(ctx, ls.sess, raw, nil)
		h.syncState(ctx, ls)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if !ls.acquire(1, h.opts.MaxInFlightPerSession) {
		tooMany(mi.ID).write(w)
		return
	}
	defer ls.release(1)
	pw := &postWriter{h: h, w: w, acc: acc, ls: ls}
	ctx, done := h.sessionContext(r, pw)
	defer done()
	resp := h.e.HandleInspected(ctx, ls.sess, mi, pw)
	h.syncState(ctx, ls)
	if resp == nil && ls.ctx.Err() != nil {
		if h.abortCtx.Err() != nil {
			pw.fail(newErr(http.StatusServiceUnavailable, mi.ID, domain.CodeInternalError, "Service unavailable: the server is stopping"))
			return
		}
		// The session ended (DELETE, expiry) while the call ran.
		pw.fail(newErr(http.StatusNotFound, mi.ID, domain.CodeInvalidRequest, "Session not found"))
		return
	}
	pw.finish(resp, statusFor(false, resp, nil))
}

func tooMany(id json.RawMessage) *rpcErr {
	e := newErr(http.StatusTooManyRequests, id, domain.CodeInvalidRequest, "Too Many Requests: too many requests in flight for this session")
	e.retryAfter = "1"
	return e
}

// serveBatch serves a JSON-RPC batch. Batches exist only in 2025-03-26, so
// only a session of that revision may send one; anything else is a 400
// with -32600. The messages are served concurrently and the responses sent
// as one array, in the order of the requests (202 when there is none).
func (h *Handler) serveBatch(w http.ResponseWriter, r *http.Request, raw []byte, acc accepts) {
	sid := r.Header.Get(HeaderSessionID)
	if sid == "" {
		newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Invalid Request: JSON-RPC batches exist only in sessions of protocol revision 2025-03-26").write(w)
		return
	}
	ls, e := h.lookup(r.Context(), sid, nil)
	if e == nil {
		e = h.checkVersionHeader(r, nil)
	}
	if e != nil {
		e.write(w)
		return
	}
	if !h.policy.Features(ls.revision()).Batches {
		newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Invalid Request: JSON-RPC batches exist only in protocol revision 2025-03-26").write(w)
		return
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		newErr(http.StatusBadRequest, nil, domain.CodeParseError, "Parse error: the message is not valid JSON").write(w)
		return
	}
	if len(items) == 0 {
		newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Invalid Request: empty batch").write(w)
		return
	}
	kinds := make([]app.MessageKind, len(items))
	requests := 0
	for i, it := range items {
		if kinds[i] = app.Inspect(it).Kind; kinds[i] == app.KindRequest {
			requests++
		}
	}
	if !ls.acquire(requests, h.opts.MaxInFlightPerSession) {
		tooMany(nil).write(w)
		return
	}
	defer ls.release(requests)
	pw := &postWriter{h: h, w: w, acc: acc, ls: ls}
	ctx, done := h.sessionContext(r, pw)
	defer done()
	out := make([][]byte, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		if kinds[i] == app.KindRequest {
			wg.Go(func() { out[i] = h.e.HandleMessage(ctx, ls.sess, it, pw) })
		} else {
			out[i] = h.e.HandleMessage(ctx, ls.sess, it, pw)
		}
	}
	wg.Wait()
	h.syncState(ctx, ls)
	pw.finishBatch(out)
}
