package app

import (
	"bytes"
	"context"

	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/ports"
)

// Names the external tests use, unexported by issue 19.
const DefaultMaxListenSubscriptions = defaultMaxListenSubscriptions
const DefaultMaxURILength = defaultMaxURILength

// The engine's request-level plumbing, which issue 19 took out of the
// public API (the Streamable HTTP transport reaches it through
// exchange.PortOf): the external tests still reach it here.

// Inspect is inspect.
func Inspect(raw []byte) MessageInfo { return inspect(raw) }

// MessageInfo is messageInfo.
type MessageInfo = messageInfo

// Kinds of message.
const (
	KindInvalid      = kindInvalid
	KindRequest      = kindRequest
	KindNotification = kindNotification
	KindResponse     = kindResponse
)

// MaxNestingDepth is maxNestingDepth.
const MaxNestingDepth = maxNestingDepth

// WithSessionCommit is withSessionCommit.
func WithSessionCommit(ctx context.Context, commit func(ctx context.Context) error) context.Context {
	return withSessionCommit(ctx, commit)
}

// RestoreSession is restoreSession.
func (e *Engine) RestoreSession(ctx context.Context, st ports.SessionState, out ports.MessageWriter) *Session {
	return e.restoreSession(ctx, st, out)
}

// HandleBatch serves a batch of a session as the exchange port does.
func (e *Engine) HandleBatch(ctx context.Context, sess *Session, members []MessageInfo, related ports.MessageWriter) [][]byte {
	var s *session
	if sess != nil {
		s = sess.s
	}
	return e.batch(ctx, s, members, related, nil)
}

// HandleInspected serves a message as the exchange port does.
func (e *Engine) HandleInspected(ctx context.Context, sess *Session, mi MessageInfo, related ports.MessageWriter) []byte {
	var hs exchange.Session
	if sess != nil {
		hs = &httpSession{sessionHandle: sess}
	}
	return e.exchangeOf(nil).Serve(ctx, hs, mi.toExchange(), related).Response
}

// State is state.
func (sess *Session) State() ports.SessionState { return sess.state() }

// SetPeer sets the session's peer.
func (sess *Session) SetPeer(peer string) {
	sess.s.mu.Lock()
	sess.s.peer = peer
	sess.s.mu.Unlock()
}

// Answer serves a message as the exchange port does, and tells the answer.
func (e *Engine) Answer(ctx context.Context, sess *Session, mi MessageInfo, related ports.MessageWriter) exchange.Answer {
	var hs exchange.Session
	if sess != nil {
		hs = &httpSession{sessionHandle: sess}
	}
	return e.exchangeOf(nil).Serve(ctx, hs, mi.toExchange(), related)
}

// Methods returns every entry of the method table, in a fixed order.
func Methods() []MethodSpec {
	out := make([]MethodSpec, len(methodList))
	for i := range methodList {
		out[i] = methodList[i].MethodSpec
	}
	return out
}

// Session is sessionHandle: a handshake-era conversation held outside a
// connection loop, for the external tests (the Streamable HTTP transport
// reaches sessions through exchange.PortOf).
type Session = sessionHandle

// NewSession is newSession.
func (e *Engine) NewSession(ctx context.Context, id string, out ports.MessageWriter) *Session {
	return e.newSession(ctx, id, out)
}

// HandleMessage serves one message outside a connection loop (for
// request-response transports, and tests): it returns the response to
// send, or nil for a notification or a client response.
// Notifications that belong to the request (progress) go to related, or to
// the session's writer when related is nil.
//
// Stateless-era requests need no session (sess may be nil); handshake-era
// ones are served by sess, from NewSession. Cancelling ctx
// cancels a tool call in progress.
//
// The engine keeps parts of raw without copying them (the request's id and
// params; a tool's handler gets its arguments as they are and may keep
// them), also after HandleMessage returns: raw must not be written again.
func (e *Engine) HandleMessage(ctx context.Context, sess *Session, raw []byte, related ports.MessageWriter) []byte {
	var s *session
	if sess != nil {
		s = sess.s
	}
	m, rerr := decodeMessage(bytes.TrimSpace(raw))
	return e.handleAnswer(ctx, s, m, nil, rerr, related).Response
}

// Delete ends the session as a Streamable HTTP DELETE does: it calls
// Options.OnSessionEnd with SessionDeleted.
func (sess *Session) Delete() { (&httpSession{sessionHandle: sess}).Deleted() }
