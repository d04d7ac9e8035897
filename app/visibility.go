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
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// viewFilter applies Options.Visibility: what each request, session and
// listen stream sees of the tools, resources and prompts, and the
// fingerprints of the lists they saw, so that a list-changed notification
// goes only where the visible list changed.
type viewFilter struct {
	rules     handlerapi.Visibility
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
		return v.Resource != nil || handlerapi.HidesScoped(*v)
	case listenPrompts:
		return v.Prompt != nil
	}
	return false
}

// viewerOf is the Viewer of a request.
func viewerOf(ctx context.Context, ci callInfo) *handlerapi.Viewer {
	v := &handlerapi.Viewer{Revision: ci.rev, Era: ci.era}
	v.Transport, _ = ctx.Value(transportKey{}).(handlerapi.TransportInfo)
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
func (s *session) viewer() *handlerapi.Viewer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &handlerapi.Viewer{SessionID: s.id, Principal: s.trans.Principal, Client: s.client, Transport: s.trans,
		Revision: s.rev, Era: domain.EraHandshake}
}

// toolVisible tells whether the viewer of ctx and ci sees t.
func (f *viewFilter) toolVisible(ctx context.Context, v *handlerapi.Viewer, t *domain.Tool) bool {
	return f.rules.Tool == nil || f.rules.Tool(ctx, v, t)
}

func (f *viewFilter) resourceVisible(ctx context.Context, v *handlerapi.Viewer, uri string, scopes []string) bool {
	if handlerapi.HidesScoped(f.rules) && len(scopes) > 0 && !handlerapi.ViewerHolds(v, scopes) {
		return false
	}
	return f.rules.Resource == nil || f.rules.Resource(ctx, v, uri)
}

func (f *viewFilter) promptVisible(ctx context.Context, v *handlerapi.Viewer, p *domain.Prompt) bool {
	return f.rules.Prompt == nil || f.rules.Prompt(ctx, v, p)
}

// visibleTools is the tool list a request (or session) sees: the
// registry's, with the session's own tools merged in by name, filtered.
func (f *viewFilter) visibleTools(ctx context.Context, v *handlerapi.Viewer, s *session) []ports.RegisteredTool {
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
func (f *viewFilter) fingerprint(kind listenKind, v *handlerapi.Viewer, s *session) uint64 {
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

// VisibilityChanged tells the engine that what its Visibility decides
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
func (f *viewFilter) recordSeen(v *handlerapi.Viewer, s *session, l *listener) {
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
