package app

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"reflect"
	"slices"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// Viewer is who a request, a session or a listen stream is: what a
// [Visibility] decides on.
type Viewer struct {
	// SessionID is the handshake-era session's id on transports that name
	// sessions (Streamable HTTP); empty otherwise.
	SessionID string
	// Principal is the authenticated caller, when an authenticator vouched
	// for it (nil otherwise).
	Principal *ports.Principal
	// Client is the client's clientInfo: from initialize in the handshake
	// era, from _meta in the stateless era (zero when it sent none).
	Client domain.Implementation
	// Transport is what the transport knows of the request (or of the
	// request that opened the session or stream).
	Transport TransportInfo
	// Revision and Era are those of the request or session.
	Revision domain.Revision
	Era      domain.Era
}

// Visibility decides, per request, which tools, resources and prompts a
// request sees. A hidden tool is absent from tools/list and a tools/call
// of it is answered exactly as one of an unknown tool; a hidden resource
// (or resource template, by its URI template) is absent from its list,
// answered as an unknown URI by resources/read and resources/subscribe,
// left out of a subscriptions/listen acknowledgement as an unknown URI is,
// and its notifications/resources/updated reach no listen stream whose
// caller does not see it when they are sent (unknown to
// completion/complete too); a hidden prompt is absent from prompts/list
// and answered as unknown by prompts/get and completion/complete. A nil
// func hides nothing of its kind. The funcs are called often (every list,
// every call, every notification of a followed resource, and for every
// session when a list changes): keep them fast and free of I/O.
//
// With a filter set, list-changed notifications reach a session (or a
// listen stream) only when the list it sees changed, and stateless-era
// results of the filtered lists carry cacheScope "private". When what a
// filter decides changes without the registry changing (a user's rights
// changed), call [Engine.VisibilityChanged].
type Visibility struct {
	Tool     func(ctx context.Context, v *Viewer, t *domain.Tool) bool
	Resource func(ctx context.Context, v *Viewer, uri string) bool
	Prompt   func(ctx context.Context, v *Viewer, p *domain.Prompt) bool

	// hideScoped hides the resources whose scopes the viewer lacks
	// (HideUnauthorized), which Resource cannot see.
	hideScoped bool
}

// viewFilter applies Options.Visibility: what each request, session and
// listen stream sees of the tools, resources and prompts, and the
// fingerprints of the lists they saw, so that a list-changed notification
// goes only where the visible list changed.
type viewFilter struct {
	rules     Visibility
	tools     ports.ToolRegistry
	resources ports.ResourceRegistry // nil: no resources
	prompts   ports.PromptRegistry   // nil: no prompts
}

// filters reports whether the engine filters the lists of kind.
func (f *viewFilter) filters(kind listenKind) bool {
	v := &f.rules
	switch kind {
	case listenTools:
		return v.Tool != nil
	case listenResources:
		return v.Resource != nil || v.hideScoped
	case listenPrompts:
		return v.Prompt != nil
	}
	return false
}

// viewerOf is the Viewer of a request.
func viewerOf(ctx context.Context, ci callInfo) *Viewer {
	v := &Viewer{Revision: ci.rev, Era: ci.era}
	v.Transport, _ = ctx.Value(transportKey{}).(TransportInfo)
	v.Principal = v.Transport.Principal
	if s := ci.session; s != nil && ci.era == domain.EraHandshake {
		s.mu.Lock()
		v.SessionID, v.Client = s.id, s.client
		s.mu.Unlock()
	} else if ci.clientInfo != nil {
		_ = json.Unmarshal(ci.clientInfo, &v.Client)
	}
	return v
}

// sessionViewer is the Viewer of a handshake-era session, outside any
// request (for its list-changed notifications).
func (s *session) viewer() *Viewer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &Viewer{SessionID: s.id, Principal: s.trans.Principal, Client: s.client, Transport: s.trans,
		Revision: s.rev, Era: domain.EraHandshake}
}

// toolVisible tells whether the viewer of ctx and ci sees t.
func (f *viewFilter) toolVisible(ctx context.Context, v *Viewer, t *domain.Tool) bool {
	return f.rules.Tool == nil || f.rules.Tool(ctx, v, t)
}

func (f *viewFilter) resourceVisible(ctx context.Context, v *Viewer, uri string, scopes []string) bool {
	if f.rules.hideScoped && len(scopes) > 0 && !viewerHolds(v, scopes) {
		return false
	}
	return f.rules.Resource == nil || f.rules.Resource(ctx, v, uri)
}

func (f *viewFilter) promptVisible(ctx context.Context, v *Viewer, p *domain.Prompt) bool {
	return f.rules.Prompt == nil || f.rules.Prompt(ctx, v, p)
}

// visibleTools is the tool list a request (or session) sees: the
// registry's, with the session's own tools merged in by name, filtered.
func (f *viewFilter) visibleTools(ctx context.Context, v *Viewer, s *session) []ports.RegisteredTool {
	tools := f.tools.List()
	if s != nil {
		if own := s.ownTools(); len(own) > 0 {
			merged := make([]ports.RegisteredTool, 0, len(tools)+len(own))
			for _, t := range tools {
				if _, shadowed := slices.BinarySearchFunc(own, t.Tool.Name, byName); !shadowed {
					merged = append(merged, t)
				}
			}
			merged = append(merged, own...)
			slices.SortFunc(merged, byToolName)
			tools = merged
		}
	}
	if f.rules.Tool == nil {
		return tools
	}
	out := make([]ports.RegisteredTool, 0, len(tools))
	for _, t := range tools {
		if f.toolVisible(ctx, v, t.Tool) {
			out = append(out, t)
		}
	}
	return out
}

// fingerprint hashes the list of kind the viewer sees (names and
// definition identities), to tell whether it changed.
func (f *viewFilter) fingerprint(kind listenKind, v *Viewer, s *session) uint64 {
	ctx := context.Background()
	h := fnv.New64a()
	add := func(name string, def any) {
		h.Write([]byte(name))
		var id [9]byte // the definition's identity: a new definition is a change
		binary.LittleEndian.PutUint64(id[:8], uint64(reflect.ValueOf(def).Pointer()))
		h.Write(id[:])
	}
	switch kind {
	case listenTools:
		for _, t := range f.visibleTools(ctx, v, s) {
			add(t.Tool.Name, t.Tool)
		}
	case listenResources:
		if f.resources == nil {
			break
		}
		for _, r := range f.resources.List() {
			if f.resourceVisible(ctx, v, r.Resource.URI, r.Resource.Scopes) {
				add(r.Resource.URI, r.Resource)
			}
		}
		for _, t := range f.resources.ListTemplates() {
			if f.resourceVisible(ctx, v, t.Template.URITemplate, t.Template.Scopes) {
				add(t.Template.URITemplate, t.Template)
			}
		}
	case listenPrompts:
		if f.prompts == nil {
			break
		}
		for _, p := range f.prompts.List() {
			if f.promptVisible(ctx, v, p.Prompt) {
				add(p.Prompt.Name, p.Prompt)
			}
		}
	}
	return h.Sum64() | 1 // never 0, which means "not seen yet"
}

// VisibilityChanged tells the engine that what its [Visibility] decides
// may have changed (a user's rights changed): every session and listen
// stream whose visible list of tools, resources or prompts changed gets
// its list-changed notification. With [Options.Bus], on every instance.
func (e *Engine) VisibilityChanged() { e.bus.raise(ports.Notice{Kind: ports.NoticeVisibilityChanged}) }

// seenLists fingerprints the lists a session or a listen stream saw
// last (by listenKind), when a Visibility filters them: list-changed
// notifications go only when they change.
type seenLists struct {
	mu sync.Mutex
	fp [3]uint64
}

// sawChange records fp as the list of kind seen and reports whether it
// differs from the one recorded before.
func (l *seenLists) sawChange(kind listenKind, fp uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fp[kind] == fp {
		return false
	}
	l.fp[kind] = fp
	return true
}

// filtersAny reports whether a Visibility filters any list.
func (f *viewFilter) filtersAny() bool {
	return f.filters(listenTools) || f.filters(listenResources) || f.filters(listenPrompts)
}

// recordSeen records, for a session or stream that starts, the lists it
// sees, so that the first change is compared with them. Callers skip it
// (and making v) unless filtersAny.
func (f *viewFilter) recordSeen(v *Viewer, s *session, l *listener) {
	for _, kind := range []listenKind{listenTools, listenResources, listenPrompts} {
		if !f.filters(kind) {
			continue
		}
		fp := f.fingerprint(kind, v, s)
		if s != nil {
			s.seen.sawChange(kind, fp)
		}
		if l != nil {
			l.seen.sawChange(kind, fp)
		}
	}
}

// sessionToolsChanged tells a session its own tool list changed.
func (f *viewFilter) sessionToolsChanged(s *session) {
	if f.filters(listenTools) {
		s.seen.sawChange(listenTools, f.fingerprint(listenTools, s.viewer(), s))
	}
	if s.wantsListChanged() {
		msg, _ := encodeNotification("notifications/tools/list_changed", nil)
		s.send(msg)
	}
}
