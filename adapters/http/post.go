package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
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
	// The client the request comes from, named once per request (a
	// user's Options.ClientKey may cost): now when its body counts in its
	// client's share or the engine is told the client, else when a
	// session is created for it ("" until then).
	client := ""
	if h.budget.perClient() || h.opts.ClientKey != nil {
		client = h.clientKey(r)
	}
	raw, hold, ok := h.readBody(w, r, client)
	if !ok {
		return
	}
	// A request's body leaves the budget of bodies in flight once it is
	// decoded; what its call keeps counts in its client's share until it
	// has been served (see keepRequest), except for a
	// subscriptions/listen stream, which gives it back as it starts.
	// Notifications and responses, served at once, keep their bodies
	// counted meanwhile.
	defer hold.release()
	bufCap := cap(raw)
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		h.serveBatch(w, r, raw, acc, hold, client)
		return
	}
	mi := h.x.Inspect(raw)
	if mi.Kind == exchange.Request {
		if mi, ok = h.keepRequest(w, mi, bufCap, hold); !ok {
			return
		}
	}
	switch {
	case mi.Kind == exchange.Invalid:
		// The engine words the error (-32700 for bad JSON, -32600 for a
		// message that is not JSON-RPC); the request cannot be served: 400.
		resp := h.x.Serve(r.Context(), nil, mi, nil).Response
		if resp == nil { // an invalid notification: the engine answers nothing
			newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Invalid Request").write(w)
			return
		}
		writeJSON(w, http.StatusBadRequest, resp)
		return
	case mi.Stateless():
		h.serveStateless(w, r, mi, acc, hold, client)
		return
	}
	if e := h.checkVersionHeader(r, mi.ID); e != nil {
		e.write(w)
		return
	}
	if mi.Kind != exchange.Request && r.Header.Get(HeaderSessionID) == "" {
		// A notification or response that names no session and no
		// stateless-era version in _meta has nowhere to go: accepted and
		// ignored ("If the server accepts the input, the server MUST return
		// HTTP status code 202 Accepted with no body"). A 400 would be
		// fatal to clients that send it anyway: the official Go SDK posts a
		// bare notifications/cancelled (no session, no protocol version
		// header, no _meta) after a cancelled 2026-07-28 call, and takes any
		// error status as the end of its session. A notification still
		// reaches the engine's middleware, which sees every one.
		if mi.Kind == exchange.Notification {
			ctx, done := h.statelessContext(r, client)
			h.x.Serve(ctx, nil, mi, nil)
			done()
		}
		w.WriteHeader(http.StatusAccepted)
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
		h.serveInSession(w, r, sid, mi, acc, hold, client)
		return
	}
	if mi.Kind == exchange.Request && mi.Method == domain.MethodInitialize {
		h.serveInitialize(w, r, mi, acc, client)
		return
	}
	// 2025-11-25, "Session Management": a server that requires a session
	// SHOULD answer a request without Mcp-Session-Id (other than initialize)
	// with 400.
	newErr(http.StatusBadRequest, mi.ID, domain.CodeInvalidRequest,
		"Bad Request: the Mcp-Session-Id header is required; send initialize first, or name the protocol version in _meta").write(w)
}

// readBody reads a POST body within Options.MaxBodyBytes (413 beyond) and
// Options.BodyTimeout (408 past it, and the connection closes), counting
// the bytes it holds in the budget of bodies in flight as they arrive,
// never from the announced Content-Length (see firstChunk): in its
// client's share of the budget (Options.MaxInFlightBytesPerClient; 429
// with Retry-After when the client's other bodies take it) and in the
// whole (Options.MaxInFlightBytes; waiting for room a short time, else
// 503 with Retry-After). The caller releases the hold it returns.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, client string) ([]byte, *bodyHold, bool) {
	limit := h.opts.MaxBodyBytes
	if r.ContentLength > limit {
		newErr(http.StatusRequestEntityTooLarge, nil, domain.CodeInvalidRequest, "Request Entity Too Large").write(w)
		return nil, nil, false
	}
	var hold *bodyHold
	if h.budget != nil {
		key := ""
		if h.budget.perClient() {
			key = client
		}
		hold = h.budget.hold(key)
	}
	if r.ContentLength == 0 {
		return []byte{}, hold, true
	}
	deadline, timeout := h.bodyDeadline(w, r)
	raw, err := readCounted(r.Context(), http.MaxBytesReader(w, r.Body, limit), r.ContentLength, limit, hold, deadline)
	if err != nil {
		hold.release()
		h.bodyError(err, timeout).write(w)
		return nil, nil, false
	}
	if !deadline.IsZero() && r.ProtoMajor != 1 {
		// HTTP/1 clears the deadline itself once the body has been read
		// (net/http then watches the connection); HTTP/2 needs telling.
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	}
	return raw, hold, true
}

// bodyDeadline sets the read deadline of the POST's connection (its stream,
// in HTTP/2) to Options.BodyTimeout from now, and returns it with that
// timeout. When the http.Server's own ReadTimeout is shorter, that one
// applies (it is returned, with a zero deadline); also a zero deadline
// when there is no timeout, or when the ResponseWriter cannot set one (the
// writer of a middleware that does not Unwrap to net/http's).
func (h *Handler) bodyDeadline(w http.ResponseWriter, r *http.Request) (time.Time, time.Duration) {
	d := h.opts.BodyTimeout
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.ReadTimeout > 0 && (d <= 0 || srv.ReadTimeout <= d) {
		return time.Time{}, srv.ReadTimeout
	}
	if d <= 0 {
		return time.Time{}, 0
	}
	deadline := time.Now().Add(d)
	if http.NewResponseController(w).SetReadDeadline(deadline) != nil {
		return time.Time{}, d
	}
	return deadline, d
}

// readCounted reads body, which announces cl bytes (-1: unknown), into a
// buffer that starts at firstChunk (or cl when smaller) and doubles as it
// fills, up to cl (or limit), each step counted in hold before it is made.
func readCounted(ctx context.Context, body io.Reader, cl, limit int64, hold *bodyHold, deadline time.Time) ([]byte, error) {
	size := int64(firstChunk)
	if cl >= 0 {
		size = min(size, cl)
	}
	if err := hold.grow(ctx, size, deadline); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			have := int64(len(buf))
			if have == cl {
				return buf, nil
			}
			if have >= limit {
				// No length announced, and the buffer is at the limit:
				// the body must end here (MaxBytesReader refuses more).
				return buf, atEnd(body)
			}
			next := min(2*have, limit)
			if cl >= 0 {
				next = min(next, cl)
			}
			if err := hold.grow(ctx, next-have, deadline); err != nil {
				return nil, err
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF:
			if cl >= 0 && int64(len(buf)) < cl {
				return nil, io.ErrUnexpectedEOF
			}
			return buf, nil
		case err != nil:
			return nil, err
		}
	}
}

// atEnd reads body until it ends (nil) or yields a byte or an error.
func atEnd(body io.Reader) error {
	var one [1]byte
	for {
		n, err := body.Read(one[:])
		switch {
		case err == io.EOF && n == 0:
			return nil
		case err != nil:
			return err
		case n > 0:
			return &http.MaxBytesError{}
		}
	}
}

// bodyError is the answer to a POST whose body could not be read.
func (h *Handler) bodyError(err error, timeout time.Duration) *rpcErr {
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, errBusy):
		return busy()
	case errors.Is(err, errClientShare):
		return clientShareTaken(h.budget.share)
	case errors.Is(err, errBodyTimeout), errors.Is(err, os.ErrDeadlineExceeded):
		return bodyTimedOut(timeout)
	case errors.As(err, &tooBig):
		return newErr(http.StatusRequestEntityTooLarge, nil, domain.CodeInvalidRequest, "Request Entity Too Large")
	}
	return newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Bad Request: the body could not be read")
}

// detachMin is the least padding (bytes of a body that its request does
// not refer to) for which a request is decoded again from a copy of what
// it refers to (exchange.Message.Detach) before it is served.
const detachMin = 4 << 10

// keepRequest ends the counting of a request's body in the budget of
// bodies in flight, once the request is decoded, and counts instead what
// its call keeps until it has been served, in its client's calls
// (Options.MaxInFlightBytesPerClient): the body's buffer (bufCap bytes),
// or, when the request refers to much less of it (padding around its
// params), a copy of what it refers to (exchange.Message.Detach), so that
// the buffer is freed. A client whose calls keep its share already gets
// 429 with Retry-After and the request's id.
func (h *Handler) keepRequest(w http.ResponseWriter, mi exchange.Message, bufCap int, hold *bodyHold) (exchange.Message, bool) {
	keep := int64(bufCap)
	if size := int64(mi.RetainedSize()); keep-size >= detachMin && keep-size > size {
		mi = h.x.Detach(mi)
		keep = int64(mi.RetainedSize())
	}
	if !hold.keepForCall(keep) {
		clientCallsFull(mi.ID, h.budget.share).write(w)
		return mi, false
	}
	return mi, true
}

// serveStateless serves a 2026-07-28 request: no session (an
// Mcp-Session-Id header is ignored, as that revision's "Backward
// Compatibility" says), request metadata headers checked against the body,
// the response scoped to the request.
//
// hold is the request's part of the budget of bodies in flight; a listen
// stream gives it back as it starts (see serveListen).
func (h *Handler) serveStateless(w http.ResponseWriter, r *http.Request, mi exchange.Message, acc accepts, hold *bodyHold, client string) {
	if mi.Kind != exchange.Request {
		// 2026-07-28 defines no client notification over HTTP, nor headers
		// for one: accept it (it has no effect without a session but
		// reaches the engine's middleware).
		ctx, done := h.statelessContext(r, client)
		h.x.Serve(ctx, nil, mi, nil)
		done()
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if e := h.checkStateless(r, mi); e != nil {
		e.write(w)
		return
	}
	spec, _ := h.x.Method(mi.Method)
	if spec.Stream && !acc.sse {
		newErr(http.StatusNotAcceptable, mi.ID, domain.CodeInvalidRequest, "Not Acceptable: "+mi.Method+" answers with an SSE stream; the client must accept text/event-stream").write(w)
		return
	}
	if spec.Stream {
		h.serveListen(w, r, mi, acc, hold, client)
		return
	}
	ctx, done := h.statelessContext(r, client)
	defer done()
	pw := &postWriter{h: h, w: w, acc: acc}
	ans := h.x.Serve(ctx, nil, mi, pw)
	pw.finishAnswer(r, ans, true)
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
// The session counts against its client (Options.ClientKey) for the
// store's per-client limit: a refusal for that reason is a 429, one
// because the store is full a 503, both with Retry-After.
func (h *Handler) serveInitialize(w http.ResponseWriter, r *http.Request, mi exchange.Message, acc accepts, client string) {
	sid := newSessionID()
	// The session belongs to the authenticated principal, on every
	// instance: lookup refuses it to anyone else.
	if client == "" {
		client = h.clientKey(r)
	}
	sess := h.x.NewSession(sid, owner(r.Context()), client)
	ls := h.newLive(sid, sess)
	pw := &postWriter{h: h, w: w, acc: acc, ls: ls}
	ctx, done := h.sessionContext(r, pw, client)
	defer done()
	// The session is stored once the engine accepted initialize, inside
	// its middleware: a refusal of the store is the answer middleware
	// sees (and audits), as the client does.
	var stored bool
	var refused *rpcErr
	commit := func(ctx context.Context, st ports.SessionState) error {
		// Known here before the store has it, so that a removal the store
		// reports from now on (an eviction right after Create) finds it.
		h.addLive(ls)
		if err := h.sessions.Create(ctx, st); err != nil {
			h.dropLive(ls)
			refused = h.createError(mi.ID, err)
			return domain.NewProtocolError(refused.code, refused.message, refused.data)
		}
		stored = true
		return nil
	}
	ans := h.x.Initialize(ctx, sess, mi, pw, commit)
	if !stored {
		ls.markGone() // nothing to resume: the answer's events are not stored
		ls.end()
		if refused != nil {
			pw.fail(refused)
			return
		}
		pw.finish(ans.Response, statusFor(false, ans))
		return
	}
	pw.setSessionHeader(sid)
	pw.finish(ans.Response, http.StatusOK)
}

// Retry-After of the refusals of a new session. At the store's total limit
// a place frees up as soon as any session is deleted, expires or becomes
// evictable; at a client's own limit, when one of its sessions does
// (within memory.DefaultMinIdleForEviction at most, unless they are in
// use), or at once when the client ends one it no longer uses.
const (
	retryAfterSessions       = "10"
	retryAfterClientSessions = "30"
	// retryAfterStore is the Retry-After of a request refused because the
	// session store failed (unreachable, timed out): soon, it may be back.
	retryAfterStore = "2"
)

// createError is the answer to an initialize whose session the store
// refused.
func (h *Handler) createError(id json.RawMessage, err error) *rpcErr {
	switch {
	case errors.Is(err, ports.ErrTooManySessionsForClient):
		e := newErr(http.StatusTooManyRequests, id, domain.CodeInvalidRequest,
			"Too Many Requests: this client holds too many sessions; end those it no longer uses (DELETE) or retry later")
		e.retryAfter = retryAfterClientSessions
		return e
	case errors.Is(err, ports.ErrTooManySessions):
		e := newErr(http.StatusServiceUnavailable, id, domain.CodeInternalError, "Service unavailable: too many sessions")
		e.retryAfter = retryAfterSessions
		return e
	}
	h.logf(slog.LevelError, "hexmcp: creating a session in the store failed", slog.Any("error", err))
	e := newErr(http.StatusServiceUnavailable, id, domain.CodeInternalError, "Service unavailable: the session store cannot be reached; retry later")
	e.retryAfter = retryAfterStore
	return e
}

// serveInSession serves a message of a handshake-era session. hold is what the POST holds of the budget of bodies in
// flight: a call that goes on after the POST has returned (see below)
// takes it along.
func (h *Handler) serveInSession(w http.ResponseWriter, r *http.Request, sid string, mi exchange.Message, acc accepts, hold *bodyHold, client string) {
	ls, e := h.lookup(r.Context(), sid, mi.ID)
	if e != nil {
		e.write(w)
		return
	}
	if mi.Kind != exchange.Request {
		// Notifications (initialized, cancelled) and responses: 202.
		ctx := h.withTransport(r.Context(), r, client)
		h.x.Serve(ctx, ls.sess, mi, nil)
		h.syncState(ctx, ls)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if !ls.acquire(1, h.opts.MaxInFlightPerSession) {
		tooMany(mi.ID).write(w)
		return
	}
	pw := &postWriter{h: h, w: w, acc: acc, ls: ls}
	ctx, done := h.sessionContext(r, pw, client)
	serve := func() {
		defer ls.release(1)
		defer done()
		ans := h.syncAnswer(ctx, ls, mi.ID, h.x.Serve(ctx, ls.sess, mi, pw))
		if ans.Response == nil && ls.ctx.Err() != nil {
			if h.abortCtx.Err() != nil {
				pw.fail(newErr(http.StatusServiceUnavailable, mi.ID, domain.CodeInternalError, "Service unavailable: the server is stopping"))
				return
			}
			// The session ended (DELETE, expiry) while the call ran.
			pw.fail(newErr(http.StatusNotFound, mi.ID, domain.CodeInvalidRequest, "Session not found"))
			return
		}
		pw.finishAnswer(r, ans, false)
	}
	sig := signalsFrom(r.Context())
	if sig == nil || h.watcher == nil || !acc.sse {
		// Nobody could resume the stream elsewhere: the request holds the
		// call until it is answered.
		serve()
		return
	}
	// On a Server sharing its event store, the call runs off the request,
	// so that a shutdown can hand its stream over (see handOff) instead of
	// waiting for the call with the connection open: the Server waits for
	// the call itself (signals.calls).
	sig.calls.Add(1)
	answered := make(chan struct{})
	own := hold.take()
	go func() {
		defer sig.calls.Done()
		defer close(answered)
		defer own.release()
		serve()
	}()
	select {
	case <-answered:
		return
	case <-sig.closing.Done():
	}
	if !pw.handOff() {
		<-answered
	}
}

func tooMany(id json.RawMessage) *rpcErr {
	e := newErr(http.StatusTooManyRequests, id, domain.CodeInvalidRequest, "Too Many Requests: too many requests in flight for this session")
	e.retryAfter = "1"
	return e
}

// serveBatch serves a JSON-RPC batch. Batches exist only in 2025-03-26, so
// only a session of that revision may send one; anything else is a 400
// with -32600. A member that is a stateless-era request is answered -32600
// in the batch (see [statelessInBatch]). The messages are served
// concurrently and the responses sent as one array, in the order of the
// requests (202 when there is none).
//
// hold is what the POST holds of the budget of bodies in flight: once
// decoded, the batch's members (copies) are counted in the client's calls
// instead of its body (see keepRequest).
func (h *Handler) serveBatch(w http.ResponseWriter, r *http.Request, raw []byte, acc accepts, hold *bodyHold, client string) {
	sid := r.Header.Get(HeaderSessionID)
	if sid == "" {
		newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Invalid Request: JSON-RPC batches exist only in sessions of protocol revision 2025-03-26").write(w)
		return
	}
	ls := h.lookupChecked(w, r, sid)
	if ls == nil {
		return
	}
	if !h.policy.Features(ls.revision()).Batches {
		newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Invalid Request: JSON-RPC batches exist only in protocol revision 2025-03-26").write(w)
		return
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && deeperThan(raw[:min(max(se.Offset, 0), int64(len(raw)))], exchange.MaxNestingDepth) {
			// JSON nested past the decoder's bound (encoding/json's is the
			// engine's, exchange.MaxNestingDepth): answered as the engine
			// answers it on the other transports; no member can be told.
			e := newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, fmt.Sprintf(
				"Invalid Request: the message nests objects and arrays deeper than %d levels, the most this server reads", exchange.MaxNestingDepth))
			e.data = map[string]any{"limit": "maxNestingDepth", "max": exchange.MaxNestingDepth}
			e.write(w)
			return
		}
		newErr(http.StatusBadRequest, nil, domain.CodeParseError, "Parse error: the message is not valid JSON").write(w)
		return
	}
	if len(items) == 0 {
		newErr(http.StatusBadRequest, nil, domain.CodeInvalidRequest, "Invalid Request: empty batch").write(w)
		return
	}
	keep := 0
	for _, it := range items {
		keep += cap(it)
	}
	if !hold.keepForCall(int64(keep)) {
		clientCallsFull(nil, h.budget.share).write(w)
		return
	}
	// The engine serves the members (the port's ServeBatch, the same on
	// every transport): a stateless-era request (its _meta names a
	// protocol version; its request metadata headers cannot be checked
	// inside a batch, where one set of headers comes with many bodies, and
	// the 2026-07-28 transport allows only "a single JSON-RPC request or
	// notification" per POST) is refused by itself, with its id, and the
	// other members are served.
	infos := make([]exchange.Message, len(items))
	requests := 0
	for i, it := range items {
		infos[i] = h.x.Inspect(it)
		if infos[i].Kind == exchange.Request && !infos[i].Stateless() {
			requests++
		}
	}
	if !ls.acquire(requests, h.opts.MaxInFlightPerSession) {
		tooMany(nil).write(w)
		return
	}
	defer ls.release(requests)
	pw := &postWriter{h: h, w: w, acc: acc, ls: ls}
	ctx, done := h.sessionContext(r, pw, client)
	defer done()
	out := h.x.ServeBatch(ctx, ls.sess, infos, pw)
	h.syncState(ctx, ls)
	pw.finishBatch(out)
}

// deeperThan reports whether raw nests objects and arrays deeper than limit
// levels (brackets inside strings do not count). It is asked of the part
// of a body the decoder read before refusing it: nested past the bound
// there, the body was refused for its depth (the decoder stops at the
// first fault), whatever the decoder's error says; otherwise it is not
// JSON.
func deeperThan(raw []byte, limit int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > limit {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}
