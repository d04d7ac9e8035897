package app

import (
	"cmp"
	"slices"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// A handshake-era session's own tools (RequestContext.AddSessionTool):
// listed and callable in that session only, beside the registry's.

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
// (hexmcp.ErrNoSession).
func (rc *RequestContext) AddSessionTool(t decl.Tool) error {
	s := rc.info.session
	if s == nil || rc.info.era != domain.EraHandshake {
		return handlerapi.ErrNoSession
	}
	env := rc.env
	rt, err := env.tools.prepare(t)
	if err != nil {
		return err
	}
	name := rt.Tool.Name
	if _, ok := env.tools.registry.Get(name); ok {
		return &domain.DefinitionError{Kind: "tool", Name: name, Reason: domain.ErrDuplicateTool.Error(), Err: domain.ErrDuplicateTool}
	}
	s.mu.Lock() // serializes the writers; readers load the slice
	own := s.ownTools()
	i, dup := slices.BinarySearchFunc(own, name, byName)
	if dup {
		s.mu.Unlock()
		return &domain.DefinitionError{Kind: "tool", Name: name, Reason: domain.ErrDuplicateTool.Error(), Err: domain.ErrDuplicateTool}
	}
	tools := slices.Insert(slices.Clone(own), i, rt) // a new slice: readers hold the old one
	s.tools.Store(&tools)
	s.mu.Unlock()
	env.vis.sessionToolsChanged(s)
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
		rc.env.vis.sessionToolsChanged(s)
	}
	return found
}

// byToolName orders tools by name; byName finds a name among them.
func byToolName(a, b ports.RegisteredTool) int       { return cmp.Compare(a.Tool.Name, b.Tool.Name) }
func byName(t ports.RegisteredTool, name string) int { return cmp.Compare(t.Tool.Name, name) }
