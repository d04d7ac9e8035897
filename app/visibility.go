package app

import (
	"cmp"
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

// filters reports whether the engine filters the lists of kind.
func (e *Engine) filters(kind listenKind) bool {
	v := &e.opts.Visibility
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

// viewer is the Viewer of a request.
func (e *Engine) viewer(ctx context.Context, ci callInfo) *Viewer {
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
func (e *Engine) toolVisible(ctx context.Context, v *Viewer, t *domain.Tool) bool {
	return e.opts.Visibility.Tool == nil || e.opts.Visibility.Tool(ctx, v, t)
}

func (e *Engine) resourceVisible(ctx context.Context, v *Viewer, uri string, scopes []string) bool {
	if e.opts.Visibility.hideScoped && len(scopes) > 0 && !viewerHolds(v, scopes) {
		return false
	}
	return e.opts.Visibility.Resource == nil || e.opts.Visibility.Resource(ctx, v, uri)
}

func (e *Engine) promptVisible(ctx context.Context, v *Viewer, p *domain.Prompt) bool {
	return e.opts.Visibility.Prompt == nil || e.opts.Visibility.Prompt(ctx, v, p)
}

// visibleTools is the tool list a request (or session) sees: the
// registry's, with the session's own tools merged in by name, filtered.
func (e *Engine) visibleTools(ctx context.Context, v *Viewer, s *session) []ports.RegisteredTool {
	tools := e.registry.List()
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
	if e.opts.Visibility.Tool == nil {
		return tools
	}
	out := make([]ports.RegisteredTool, 0, len(tools))
	for _, t := range tools {
		if e.toolVisible(ctx, v, t.Tool) {
			out = append(out, t)
		}
	}
	return out
}

// byToolName orders tools by name; byName finds a name among them.
func byToolName(a, b ports.RegisteredTool) int       { return cmp.Compare(a.Tool.Name, b.Tool.Name) }
func byName(t ports.RegisteredTool, name string) int { return cmp.Compare(t.Tool.Name, name) }

// fingerprint hashes the list of kind the viewer sees (names and
// definition identities), to tell whether it changed.
func (e *Engine) fingerprint(kind listenKind, v *Viewer, s *session) uint64 {
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
		for _, t := range e.visibleTools(ctx, v, s) {
			add(t.Tool.Name, t.Tool)
		}
	case listenResources:
		if e.resources == nil {
			break
		}
		for _, r := range e.resources.List() {
			if e.resourceVisible(ctx, v, r.Resource.URI, r.Resource.Scopes) {
				add(r.Resource.URI, r.Resource)
			}
		}
		for _, t := range e.resources.ListTemplates() {
			if e.resourceVisible(ctx, v, t.Template.URITemplate, t.Template.Scopes) {
				add(t.Template.URITemplate, t.Template)
			}
		}
	case listenPrompts:
		if e.prompts == nil {
			break
		}
		for _, p := range e.prompts.List() {
			if e.promptVisible(ctx, v, p.Prompt) {
				add(p.Prompt.Name, p.Prompt)
			}
		}
	}
	return h.Sum64() | 1 // never 0, which means "not seen yet"
}

// listChanged sends method (a list-changed notification of kind) to every
// session that wants it and to the listen streams that asked for it; with
// a filter of kind, only to those whose own visible list changed.
func (e *Engine) listChanged(kind listenKind, method string, wants func(*session) bool, key string) {
	msg, _ := encodeNotification(method, nil)
	filtered := e.filters(kind)
	for _, s := range e.sessionList() {
		if !wants(s) {
			continue
		}
		if filtered && !s.seen.sawChange(kind, e.fingerprint(kind, s.viewer(), s)) {
			continue
		}
		s.sendKeyed(msg, key)
	}
	for _, l := range e.listenersFor(kind) {
		if filtered && !l.seen.sawChange(kind, e.fingerprint(kind, l.view, nil)) {
			continue
		}
		l.push(notice{method: method}, nil)
	}
}

// VisibilityChanged tells the engine that what its [Visibility] decides
// may have changed (a user's rights changed): every session and listen
// stream whose visible list of tools, resources or prompts changed gets
// its list-changed notification. With [Options.Bus], on every instance.
func (e *Engine) VisibilityChanged() { e.raise(ports.Notice{Kind: ports.NoticeVisibilityChanged}) }

func (e *Engine) visibilityChanged(key string) {
	if e.filters(listenTools) {
		e.listChanged(listenTools, "notifications/tools/list_changed", (*session).wantsListChanged, key)
	}
	if e.filters(listenResources) {
		e.listChanged(listenResources, "notifications/resources/list_changed", (*session).wantsResourceListChanged, key)
	}
	if e.filters(listenPrompts) {
		e.listChanged(listenPrompts, "notifications/prompts/list_changed", (*session).wantsPromptListChanged, key)
	}
}

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
func (e *Engine) filtersAny() bool {
	return e.filters(listenTools) || e.filters(listenResources) || e.filters(listenPrompts)
}

// recordSeen records, for a session or stream that starts, the lists it
// sees, so that the first change is compared with them. Callers skip it
// (and making v) unless filtersAny.
func (e *Engine) recordSeen(v *Viewer, s *session, l *listener) {
	for _, kind := range []listenKind{listenTools, listenResources, listenPrompts} {
		if !e.filters(kind) {
			continue
		}
		fp := e.fingerprint(kind, v, s)
		if s != nil {
			s.seen.sawChange(kind, fp)
		}
		if l != nil {
			l.seen.sawChange(kind, fp)
		}
	}
}

// ownTools returns the session's own tools, sorted by name, without a
// lock: a tools/call looks here first.
func (s *session) ownTools() []ports.RegisteredTool {
	if p := s.tools.Load(); p != nil {
		return *p
	}
	return nil
}

// ownTool finds one of the session's own tools.
func (s *session) ownTool(name string) (ports.RegisteredTool, bool) {
	own := s.ownTools()
	if i, ok := slices.BinarySearchFunc(own, name, byName); ok {
		return own[i], true
	}
	return ports.RegisteredTool{}, false
}

// AddSessionTool adds a tool for the request's handshake-era session
// only: it is listed and callable there, and nowhere else, until the
// session ends or [RequestContext.RemoveSessionTool] removes it; the
// session gets notifications/tools/list_changed. Its definition is checked
// and compiled as [Engine.AddTool] does. A name the session already has
// (its own, or a registered tool it sees) is [domain.ErrDuplicateTool]; a
// stateless-era request has no session to add to
// ([ErrNoSession]).
func (rc *RequestContext) AddSessionTool(t Tool) error {
	s := rc.info.session
	if s == nil || rc.info.era != domain.EraHandshake {
		return ErrNoSession
	}
	e := rc.engine
	rt, err := e.prepare(t)
	if err != nil {
		return err
	}
	name := rt.Tool.Name
	if _, ok := e.registry.Get(name); ok {
		return &domain.ToolDefinitionError{Tool: name, Reason: domain.ErrDuplicateTool.Error(), Err: domain.ErrDuplicateTool}
	}
	s.mu.Lock() // serializes the writers; readers load the slice
	own := s.ownTools()
	i, dup := slices.BinarySearchFunc(own, name, byName)
	if dup {
		s.mu.Unlock()
		return &domain.ToolDefinitionError{Tool: name, Reason: domain.ErrDuplicateTool.Error(), Err: domain.ErrDuplicateTool}
	}
	tools := slices.Insert(slices.Clone(own), i, rt) // a new slice: readers hold the old one
	s.tools.Store(&tools)
	s.mu.Unlock()
	e.sessionToolsChanged(s)
	return nil
}

// RemoveSessionTool removes a tool that [RequestContext.AddSessionTool]
// added to the request's session, and reports whether there was one.
func (rc *RequestContext) RemoveSessionTool(name string) bool {
	s := rc.info.session
	if s == nil || rc.info.era != domain.EraHandshake {
		return false
	}
	s.mu.Lock()
	own := s.ownTools()
	i, found := slices.BinarySearchFunc(own, name, byName)
	if found {
		tools := slices.Delete(slices.Clone(own), i, i+1)
		s.tools.Store(&tools)
	}
	s.mu.Unlock()
	if found {
		rc.engine.sessionToolsChanged(s)
	}
	return found
}

// sessionToolsChanged tells a session its own tool list changed.
func (e *Engine) sessionToolsChanged(s *session) {
	if e.filters(listenTools) {
		s.seen.sawChange(listenTools, e.fingerprint(listenTools, s.viewer(), s))
	}
	if s.wantsListChanged() {
		msg, _ := encodeNotification("notifications/tools/list_changed", nil)
		s.send(msg)
	}
}

// findTool finds the tool a tools/call names, as the request sees it: the
// session's own first, then the registry's, hidden ones not at all.
func (e *Engine) findTool(ctx context.Context, ci callInfo, name string) (ports.RegisteredTool, bool) {
	if s := ci.session; s != nil && ci.era == domain.EraHandshake {
		if rt, ok := s.ownTool(name); ok {
			return rt, e.opts.Visibility.Tool == nil || e.toolVisible(ctx, e.viewer(ctx, ci), rt.Tool)
		}
	}
	rt, ok := e.registry.Get(name)
	if !ok || e.opts.Visibility.Tool == nil {
		return rt, ok
	}
	return rt, e.toolVisible(ctx, e.viewer(ctx, ci), rt.Tool)
}
