package app

import (
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// fanout serves a notice on the sessions and listen streams held here:
// the notifications it stands for go to every session and stream that
// asked for them and, when a Visibility filters the lists, only to those
// whose visible list changed; a client's response or cancellation
// forwarded by another instance goes to the request it names.
type fanout struct {
	policy    domain.RevisionPolicy
	sessions  *sessionSet
	listen    *listeners
	vis       *viewFilter
	tools     *toolCatalog
	resources *resourceCatalog
	prompts   *promptCatalog
	fwd       *forwarder
}

// deliver serves a notice on the sessions and listen streams held here.
// Notifications to sessions carry the notice's ID as key, so that a session
// held by several instances gets each once.
func (fo *fanout) deliver(n ports.Notice) int {
	switch n.Kind {
	case ports.NoticeToolsChanged:
		fo.tools.cache.invalidate()
		fo.listChanged(listenTools, "notifications/tools/list_changed", (*session).wantsListChanged, n.ID)
	case ports.NoticeResourcesChanged:
		fo.resources.cache.invalidate()
		fo.listChanged(listenResources, "notifications/resources/list_changed", (*session).wantsResourceListChanged, n.ID)
	case ports.NoticePromptsChanged:
		fo.prompts.cache.invalidate()
		fo.listChanged(listenPrompts, "notifications/prompts/list_changed", (*session).wantsPromptListChanged, n.ID)
	case ports.NoticeVisibilityChanged:
		fo.visibilityChanged(n.ID)
	case ports.NoticeResourceUpdated:
		return fo.resourceUpdated(n.URI, n.ID)
	case ports.NoticeClientResponse:
		fo.fwd.remoteResponse(n)
	case ports.NoticeClientCancel:
		fo.fwd.remoteCancel(n)
	case ports.NoticeTopic:
		return fo.listen.deliverTopic(n.Data)
	case ports.NoticeElicitationComplete:
		return fo.elicitationComplete(n)
	}
	return 0
}

// elicitationComplete delivers a NoticeElicitationComplete to the session
// it names, if held here and its revision has URL-mode elicitation.
func (fo *fanout) elicitationComplete(n ports.Notice) int {
	msg, err := encodeNotification("notifications/elicitation/complete", map[string]string{"elicitationId": n.URI})
	if err != nil {
		return 0
	}
	told := 0
	for _, s := range fo.sessions.list() {
		s.mu.Lock()
		ok := s.id == n.Session && s.initialized && fo.policy.Features(s.rev).ElicitationURL
		s.mu.Unlock()
		if ok && s.write(msg, n.ID) {
			told++
		}
	}
	return told
}

// listChanged sends method (a list-changed notification of kind) to every
// session that wants it and to the listen streams that asked for it; with
// a filter of kind, only to those whose own visible list changed.
func (fo *fanout) listChanged(kind listenKind, method string, wants func(*session) bool, key string) {
	msg, _ := encodeNotification(method, nil)
	filtered := fo.vis.filters(kind)
	for _, s := range fo.sessions.list() {
		if !wants(s) {
			continue
		}
		if filtered && !s.seen.sawChange(kind, fo.vis.fingerprint(kind, s.viewer(), s)) {
			continue
		}
		s.sendKeyed(msg, key)
	}
	for _, l := range fo.listen.forKind(kind) {
		if filtered && !l.seen.sawChange(kind, fo.vis.fingerprint(kind, l.view, nil)) {
			continue
		}
		l.push(notice{method: method}, nil)
	}
}

func (fo *fanout) visibilityChanged(key string) {
	if fo.vis.filters(listenTools) {
		fo.listChanged(listenTools, "notifications/tools/list_changed", (*session).wantsListChanged, key)
	}
	if fo.vis.filters(listenResources) {
		fo.listChanged(listenResources, "notifications/resources/list_changed", (*session).wantsResourceListChanged, key)
	}
	if fo.vis.filters(listenPrompts) {
		fo.listChanged(listenPrompts, "notifications/prompts/list_changed", (*session).wantsPromptListChanged, key)
	}
}

// resourceUpdated tells the sessions and listen streams held here that
// uri changed; key is the notice's (see session.sendKeyed).
func (fo *fanout) resourceUpdated(uri, key string) int {
	msg, err := encodeNotification("notifications/resources/updated", map[string]any{"uri": uri})
	if err != nil {
		return 0
	}
	n := fo.listen.resourceUpdated(uri)
	for _, s := range fo.sessions.list() {
		if s.subscribed(uri) {
			s.sendKeyed(msg, key)
			n++
		}
	}
	return n
}
