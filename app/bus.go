package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/ports"
)

// startBus subscribes the engine to Options.Bus.
func (e *Engine) startBus() {
	if e.opts.Bus == nil {
		return
	}
	e.instance = randomHex(8)
	e.stopBus = e.opts.Bus.Subscribe(e.onNotice)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// raise serves a notice raised here: it is delivered to the sessions and
// listen streams held here at once, then published to the other
// instances (Options.Bus). It returns what delivery returns (the number of
// sessions and streams told, for a resource update).
func (e *Engine) raise(n ports.Notice) int {
	if e.opts.Bus != nil {
		n.ID, n.Origin = randomHex(16), e.instance
	}
	told := e.deliver(n)
	e.publish(n)
	return told
}

// publish hands n to the bus; a failure is logged: the instances that
// missed it have no way to learn of it (the bus delivers at most once).
func (e *Engine) publish(n ports.Notice) {
	if e.opts.Bus == nil {
		return
	}
	if err := e.opts.Bus.Publish(context.Background(), n); err != nil {
		e.logf(context.Background(), ports.LevelWarn, "hexmcp: publishing a notice to the other instances failed; their sessions miss it",
			ports.F("kind", string(n.Kind)), ports.F("error", err))
	}
}

// onNotice serves a notice from the bus. The engine's own were delivered
// when they were raised.
func (e *Engine) onNotice(n ports.Notice) {
	if n.Origin == e.instance {
		return
	}
	e.deliver(n)
}

// deliver serves a notice on the sessions and listen streams held here.
// Notifications to sessions carry the notice's ID as key, so that a session
// held by several instances gets each once.
func (e *Engine) deliver(n ports.Notice) int {
	switch n.Kind {
	case ports.NoticeToolsChanged:
		e.listCache.invalidate()
		e.listChanged(listenTools, "notifications/tools/list_changed", (*session).wantsListChanged, n.ID)
	case ports.NoticeResourcesChanged:
		e.resCache.Clear()
		e.listChanged(listenResources, "notifications/resources/list_changed", (*session).wantsResourceListChanged, n.ID)
	case ports.NoticePromptsChanged:
		e.promptCache.Clear()
		e.listChanged(listenPrompts, "notifications/prompts/list_changed", (*session).wantsPromptListChanged, n.ID)
	case ports.NoticeVisibilityChanged:
		e.visibilityChanged(n.ID)
	case ports.NoticeResourceUpdated:
		return e.resourceUpdated(n.URI, n.ID)
	case ports.NoticeClientResponse:
		e.remoteResponse(n)
	case ports.NoticeClientCancel:
		e.remoteCancel(n)
	case ports.NoticeTopic:
		return e.deliverTopic(n.Data)
	case ports.NoticeElicitationComplete:
		return e.elicitationComplete(n)
	}
	return 0
}

// NotifyElicitationComplete tells the client of the handshake-era session
// sessionID ([RequestContext.SessionID]) that the out-of-band interaction
// of its URL-mode elicitation elicitationID ended
// (notifications/elicitation/complete, 2025-11-25 on), so that it may
// retry at once. It serves the case where the interaction ends somewhere
// else than in the request (an OAuth callback reaching any instance): with
// [Options.Bus], every instance holding the session is told, and a session
// stream shared by several gets it once. It reports how many sessions were
// told here. Within the request, [RequestContext.NotifyElicitationComplete]
// does the same.
func (e *Engine) NotifyElicitationComplete(sessionID, elicitationID string) int {
	if sessionID == "" {
		return 0
	}
	return e.raise(ports.Notice{Kind: ports.NoticeElicitationComplete, Session: sessionID, URI: elicitationID})
}

// elicitationComplete delivers a NoticeElicitationComplete to the session
// it names, if held here and its revision has URL-mode elicitation.
func (e *Engine) elicitationComplete(n ports.Notice) int {
	msg, err := encodeNotification("notifications/elicitation/complete", map[string]string{"elicitationId": n.URI})
	if err != nil {
		return 0
	}
	told := 0
	for _, s := range e.sessionList() {
		s.mu.Lock()
		ok := s.id == n.Session && s.initialized && e.policy.Features(s.rev).ElicitationURL
		s.mu.Unlock()
		if ok && s.write(msg, n.ID) {
			told++
		}
	}
	return told
}

// forwardResponse publishes a client's response that answers no request
// of this instance, for the instance whose request it answers (the
// client's requests of one session may reach any instance). It reports
// whether it did.
func (e *Engine) forwardResponse(s *session, m message) bool {
	if e.opts.Bus == nil || s == nil {
		return false
	}
	sid := s.sessionID()
	if sid == "" {
		return false
	}
	msg := make([]byte, 0, len(m.id)+len(m.payload)+40)
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = append(msg, m.id...)
	if m.isError {
		msg = append(msg, `,"error":`...)
	} else {
		msg = append(msg, `,"result":`...)
	}
	msg = append(msg, m.payload...)
	msg = append(msg, '}')
	e.publish(ports.Notice{Kind: ports.NoticeClientResponse, ID: randomHex(16), Origin: e.instance, Session: sid, Data: msg})
	return true
}

// remoteResponse hands a response forwarded by another instance to the
// request of the session held here that waits for it, if any.
func (e *Engine) remoteResponse(n ports.Notice) {
	m, rerr := decodeMessage(n.Data)
	if rerr != nil || !m.isResponse || n.Session == "" {
		return
	}
	for _, s := range e.sessionList() {
		if s.sessionID() == n.Session && s.out.deliver(m) {
			return
		}
	}
}

// forwardCancel publishes a client's cancellation of a request that is
// not in flight here, for the instance serving it.
func (e *Engine) forwardCancel(s *session, id jsontext.Value) {
	if e.opts.Bus == nil || s == nil || len(id) > 1024 {
		return
	}
	if sid := s.sessionID(); sid != "" {
		e.publish(ports.Notice{Kind: ports.NoticeClientCancel, ID: randomHex(16), Origin: e.instance, Session: sid, Data: canonicalID(id)})
	}
}

// remoteCancel cancels the request a cancellation forwarded by another
// instance names, if a session held here serves it.
func (e *Engine) remoteCancel(n ports.Notice) {
	if n.Session == "" || len(n.Data) == 0 {
		return
	}
	for _, s := range e.sessionList() {
		if s.sessionID() == n.Session && s.cancelRequest(jsontext.Value(n.Data)) {
			return
		}
	}
}

// sessionID is the session's id ("" for a connection's session).
func (s *session) sessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}
