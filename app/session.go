package app

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// defaultMaxClientDeclarationBytes is the default
// Options.MaxClientDeclarationBytes: 64 KiB. Clients declare a few hundred
// bytes of capabilities and clientInfo; 64 KiB leaves room for extension
// settings, icons given as data: URIs and ordinary request headers.
const defaultMaxClientDeclarationBytes = 64 << 10

// declarationTooLarge refuses a request whose client declares more of
// itself (what) than the engine keeps (Options.MaxClientDeclarationBytes).
func declarationTooLarge(id jsontext.Value, n, max int, what string) *rpcError {
	return newRPCError(id, domain.CodeInvalidParams,
		"Invalid params: "+what+" take "+strconv.Itoa(n)+" bytes; the server keeps at most "+strconv.Itoa(max)+" bytes of what a client declares of itself",
		map[string]any{"limit": "maxClientDeclarationBytes", "max": max})
}

// headerBytes is the size of request headers: their names and values.
func headerBytes(h map[string][]string) int {
	n := 0
	for k, vs := range h {
		n += len(k)
		for _, v := range vs {
			n += len(v)
		}
	}
	return n
}

// keptCapabilities is what a session keeps of the capabilities of its
// initialize: a compact copy of their JSON (nil for none), which holds
// nothing of the request's body.
func keptCapabilities(raw jsontext.Value) jsontext.Value {
	if len(raw) == 0 {
		return nil
	}
	if c, err := compact(raw); err == nil {
		return jsontext.Value(bytes.Clone(c))
	}
	return jsontext.Value(bytes.Clone(raw))
}

// session is the engine's state for one connection. In the handshake era it
// holds the negotiated revision and client; stateless-era requests on the
// same connection use none of it.
type session struct {
	set *sessionSet // the engine's sessions
	// conn receives the session's own messages (responses on a connection,
	// server-initiated notifications); nil drops them.
	conn ports.MessageWriter

	// base is the parent of every handler context: it outlives the serve
	// context (so a graceful stop lets calls finish) and is cancelled by
	// Engine.Abort or when the connection is torn down.
	base  context.Context
	abort context.CancelFunc
	// unread is closed when the session's connection stops reading (the
	// peer went away, or a graceful stop): no answer to a server request
	// can arrive any more. Nil on HTTP, whose sessions read every POST.
	unread chan struct{}

	wmu    sync.Mutex
	broken bool

	// out tracks the session's requests to the client (handshake era).
	out outbound

	mu          sync.Mutex
	id          string
	owner       string // who the session belongs to (transport-defined)
	peer        string // the client it counts against (transport-defined)
	initialized bool   // initialize answered
	ready       bool   // notifications/initialized received
	rev         domain.Revision
	client      domain.Implementation
	caps        jsontext.Value
	logLevel    domain.LogLevel // set by logging/setLevel; "" sends nothing
	inflight    map[string]context.CancelFunc
	// resourcesAdvertised: initialize advertised the resources capability,
	// so resource list-changed notifications are sent.
	resourcesAdvertised bool
	// promptsAdvertised: initialize advertised the prompts capability, so
	// prompt list-changed notifications are sent.
	promptsAdvertised bool
	// subscriptions are the resource URIs of resources/subscribe, sorted,
	// without duplicates. The slice is never modified in place (a change
	// makes a new one), so State hands it out without copying or sorting.
	subscriptions []string
	// subBytes is the total length of subscriptions.
	subBytes int
	// trans is what the transport knew of the request that initialized
	// the session (its principal, for Visibility outside requests).
	trans handlerapi.TransportInfo
	// tools are the session's own tools (RequestContext.AddSessionTool),
	// sorted by name; a stored slice is never modified (writers hold mu).
	tools atomic.Pointer[[]ports.RegisteredTool]
	// seen fingerprints the lists the session saw last (Visibility).
	seen seenLists
	// started is when the session was initialized (or, restored, when the
	// store created it); ended is set once its end was reported
	// (Options.OnSessionEnd).
	started time.Time
	ended   bool
}

// send writes one message; write errors mark the connection broken.
func (s *session) send(msg []byte) { s.trySend(msg) }

// sendKeyed is send for a notification caused by a notice (key is its
// ID): a writer that several instances share gets it once (see
// [ports.KeyedMessageWriter]).
func (s *session) sendKeyed(msg []byte, key string) { s.write(msg, key) }

// trySend is send reporting whether the message was written (false: no
// writer is attached, or the connection is broken).
func (s *session) trySend(msg []byte) bool { return s.write(msg, "") }

// write writes msg, with key when there is one and the writer takes keys.
func (s *session) write(msg []byte, key string) bool {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.broken || s.conn == nil {
		return false
	}
	var err error
	if kw, ok := s.conn.(ports.KeyedMessageWriter); ok && key != "" {
		err = kw.WriteKeyedMessage(s.base, key, msg)
	} else {
		err = s.conn.WriteMessage(s.base, msg)
	}
	if err != nil {
		s.broken = true
		logf(s.set.log, s.base, slog.LevelWarn, "hexmcp: writing to the client failed; dropping the connection's output", slog.Any("error", err))
		return false
	}
	return true
}

func (s *session) wantsListChanged() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized
}

func (s *session) wantsResourceListChanged() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized && s.resourcesAdvertised
}

func (s *session) wantsPromptListChanged() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized && s.promptsAdvertised
}

func (s *session) subscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := slices.BinarySearch(s.subscriptions, uri)
	return ok
}

// subscribeResult is what subscribe did.
type subscribeResult int

const (
	subscribed        subscribeResult = iota // added, or already there
	subscribeTooMany                         // past the count limit
	subscribeTooLarge                        // past the byte limit
)

// subscribe adds uri to the subscriptions unless that would take them past
// maxCount entries or maxBytes bytes (a negative limit: no bound). A URI
// already there is not added again and always succeeds.
func (s *session) subscribe(uri string, maxCount, maxBytes int) subscribeResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, found := slices.BinarySearch(s.subscriptions, uri)
	if found {
		return subscribed
	}
	if !within(len(s.subscriptions)+1, maxCount) {
		return subscribeTooMany
	}
	if !within(s.subBytes+len(uri), maxBytes) {
		return subscribeTooLarge
	}
	next := make([]string, len(s.subscriptions)+1)
	copy(next, s.subscriptions[:i])
	next[i] = uri
	copy(next[i+1:], s.subscriptions[i:])
	s.subscriptions, s.subBytes = next, s.subBytes+len(uri)
	return subscribed
}

// unsubscribe removes uri from the subscriptions, if it is there.
func (s *session) unsubscribe(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, found := slices.BinarySearch(s.subscriptions, uri)
	if !found {
		return
	}
	if len(s.subscriptions) == 1 {
		s.subscriptions, s.subBytes = nil, 0
		return
	}
	s.subscriptions, s.subBytes = slices.Concat(s.subscriptions[:i], s.subscriptions[i+1:]), s.subBytes-len(uri)
}

// sessionHandle is a handshake-era conversation held outside a connection
// loop: a Streamable HTTP session (exchange.PortOf).
type sessionHandle struct {
	s    *session
	stop func() bool // unhooks the session from Engine.Abort
}

// newSession returns a new, uninitialized session with the given id (the
// caller mints it). Server-initiated messages (list-changed notifications)
// go to out, which may be nil.
func (e *Engine) newSession(ctx context.Context, id string, out ports.MessageWriter) *sessionHandle {
	s := &session{set: &e.sessions, id: id, conn: out, inflight: make(map[string]context.CancelFunc)}
	s.out.prefix = e.bus.instance
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	s.base = base
	// The calls of a session served through the exchange port run under their
	// HTTP requests' contexts, not under base: ending the session cancels
	// them through the in-flight table (no watcher per call).
	s.abort = func() {
		cancelBase()
		s.cancelInflight()
	}
	stop := hookAbort(e.abortCtx, ctx, s.abort)
	e.sessions.track(s)
	return &sessionHandle{s: s, stop: stop}
}

// restoreSession rebuilds a session from a stored state, so that a session
// created by another server instance can be served here.
func (e *Engine) restoreSession(ctx context.Context, st ports.SessionState, out ports.MessageWriter) *sessionHandle {
	sess := e.newSession(ctx, st.ID, out)
	sess.update(st)
	return sess
}

// update replaces the session's state by st (all but the id), as when
// another server instance changed it in a shared store: a transport that
// keeps sessions in memory calls it when the stored state differs from the
// one it last wrote or read.
func (sess *sessionHandle) update(st ports.SessionState) {
	s := sess.s
	// The session is known to the engine (notifications look at it): set
	// its state under its lock.
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initialized, s.ready, s.rev, s.client, s.owner, s.peer = st.Initialized, st.Ready, st.Revision, st.Client, st.Owner, st.Peer
	if !st.Created.IsZero() {
		s.started = st.Created
	}
	s.caps = nil
	if len(st.Capabilities) > 0 {
		s.caps = jsontext.Value(st.Capabilities)
	}
	s.resourcesAdvertised, s.promptsAdvertised, s.logLevel = st.ResourcesAdvertised, st.PromptsAdvertised, st.LogLevel
	// The stored subscriptions are kept whatever this engine's limits (the
	// store holds what some instance accepted); new ones are refused while
	// over them. A copy, sorted and without duplicates: st is the caller's.
	s.subscriptions, s.subBytes = nil, 0
	if len(st.Subscriptions) > 0 {
		s.subscriptions = slices.Compact(slices.Sorted(slices.Values(st.Subscriptions)))
		for _, uri := range s.subscriptions {
			s.subBytes += len(uri)
		}
	}
}

// state returns what must be stored to restore the session elsewhere.
// Created and LastSeen are left to the store. It costs the same however
// many subscriptions the session holds: its Subscriptions slice is shared
// with the session and with earlier states taken since the last change (a
// subscription change makes a new slice, and never alters one handed out),
// so callers must not modify it.
func (sess *sessionHandle) state() ports.SessionState {
	s := sess.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ports.SessionState{ID: s.id, Owner: s.owner, Peer: s.peer, Initialized: s.initialized, Ready: s.ready, Revision: s.rev, Client: s.client, Capabilities: json.RawMessage(s.caps),
		ResourcesAdvertised: s.resourcesAdvertised, PromptsAdvertised: s.promptsAdvertised, LogLevel: s.logLevel}
	// Shared, never modified: see session.subscriptions.
	st.Subscriptions = s.subscriptions
	return st
}

// setOwner records who the session belongs to (for HTTP, the
// authenticated subject), kept in its [ports.SessionState] so that every
// server instance can refuse the session to anyone else; setPeer the
// client it counts against for a session store's per-client limit (for
// HTTP, the authenticated subject or the remote address).
func (sess *sessionHandle) setOwner(owner, peer string) {
	sess.s.mu.Lock()
	sess.s.owner, sess.s.peer = owner, peer
	sess.s.mu.Unlock()
}

// setWriter attaches (or, with nil, detaches) the writer that receives the
// session's server-initiated messages, such as the standalone GET stream.
func (sess *sessionHandle) setWriter(w ports.MessageWriter) {
	s := sess.s
	s.wmu.Lock()
	s.conn, s.broken = w, false
	s.wmu.Unlock()
}

// ended reports that the session itself ended, not only this instance's
// copy of it (a DELETE, or the store dropped it): [Options.OnSessionEnd]
// is called once, with reason. The transport still closes the session. A
// transport that merely lets its copy go calls Close alone.
func (sess *sessionHandle) ended(reason string) { sess.s.set.ended(sess.s, reason) }

// Close ends the session, cancelling its running requests.
func (sess *sessionHandle) Close() {
	sess.stop()
	sess.s.abort()
	sess.s.set.untrack(sess.s)
}

// idKey is the key of a request id in the in-flight map.
func idKey(id jsontext.Value) string { return string(id) }

// cancelRequest cancels the request of the session with id, if it is in
// flight here, and reports whether it was.
func (s *session) cancelRequest(id jsontext.Value) bool {
	s.mu.Lock()
	cancel := s.inflight[idKey(canonicalID(id))]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}

// inflightCall is a request of the session in progress, registered under
// its id (see register) until end.
type inflightCall struct {
	s      *session
	key    string
	ctx    context.Context
	cancel context.CancelFunc
}

// register registers a cancellable request under its id, with a context
// derived from parent.
func (s *session) register(parent context.Context, id jsontext.Value) (inflightCall, *rpcError) {
	key := idKey(canonicalID(id))
	ctx, cancel := context.WithCancel(parent)
	s.mu.Lock()
	if _, dup := s.inflight[key]; dup {
		s.mu.Unlock()
		cancel()
		return inflightCall{}, newRPCError(id, domain.CodeInvalidRequest, "Invalid Request: a request with this id is already in progress", nil)
	}
	s.inflight[key] = cancel
	s.mu.Unlock()
	if s.base.Err() != nil {
		// The session ended (Session.Close, Engine.Abort) before the call
		// was registered, so cancelInflight missed it.
		cancel()
	}
	return inflightCall{s: s, key: key, ctx: ctx, cancel: cancel}, nil
}

// end unregisters the request and returns its response out, or nil when
// the request was cancelled meanwhile (a cancelled request gets no
// response).
func (r inflightCall) end(out []byte) []byte {
	r.s.mu.Lock()
	delete(r.s.inflight, r.key)
	r.s.mu.Unlock()
	cancelled := r.ctx.Err() != nil
	r.cancel()
	if cancelled {
		return nil
	}
	return out
}

// cancelInflight cancels every request of the session in flight.
func (s *session) cancelInflight() {
	s.mu.Lock()
	cancels := make([]context.CancelFunc, 0, len(s.inflight))
	for _, c := range s.inflight {
		cancels = append(cancels, c)
	}
	s.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}

// canonicalID is the form of a request id that identifies it: a number
// as its float64 prints (1.0, 1e0 and 1 are one id), a string as it is.
func canonicalID(id jsontext.Value) jsontext.Value {
	if plainInteger(id) {
		return id // already as it prints: not parsed again
	}
	if id.Kind() == '0' {
		if f, err := strconv.ParseFloat(string(id), 64); err == nil {
			return jsontext.Value(strconv.FormatFloat(f, 'g', -1, 64))
		}
	}
	return id
}

// plainInteger reports whether id is an integer of at most 6 digits
// without a leading zero (a lone 0 and -0 included), which strconv's
// shortest 'g' form prints back unchanged (from 7 digits on it takes an
// exponent: 1234567 is 1.234567e+06).
func plainInteger(id []byte) bool {
	digits := id
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 6 || len(digits) > 1 && digits[0] == '0' {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func compact(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
