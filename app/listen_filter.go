package app

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
)

// The notifications filter of subscriptions/listen: read within the
// limits, then kept to what the caller may follow.

// newListener decodes the notifications filter of a listen request, within
// the engine's limits, and returns the listener, the filter and the
// acknowledged notifications (the extensions' topics are acknowledged by
// acceptTopics).
func (ls *listeners) newListener(id jsontext.Value, filter jsontext.Value) (*listener, listenFilter, map[string]any, *rpcError) {
	if filter == nil || filter.Kind() != '{' {
		return nil, listenFilter{}, nil, newRPCError(id, domain.CodeInvalidParams, "Invalid params: notifications is required and must be an object", nil)
	}
	f, rerr := ls.decodeFilter(id, filter)
	if rerr != nil {
		return nil, listenFilter{}, nil, rerr
	}
	l := &listener{wake: make(chan struct{}, 1)}
	l.kinds[listenTools] = f.toolsListChanged
	l.kinds[listenPrompts] = f.promptsListChanged && ls.prompts.registry != nil
	l.kinds[listenResources] = f.resourcesListChanged && ls.resources.registry != nil
	uris := f.resourceSubscriptions
	if ls.resources.registry != nil && len(uris) > 0 {
		l.uris = make(map[string]struct{}, len(uris))
		for _, u := range uris {
			l.uris[u] = struct{}{}
		}
	}
	acked := map[string]any{}
	if l.kinds[listenTools] {
		acked["toolsListChanged"] = true
	}
	if l.kinds[listenPrompts] {
		acked["promptsListChanged"] = true
	}
	if l.kinds[listenResources] {
		acked["resourcesListChanged"] = true
	}
	if l.uris != nil {
		acked["resourceSubscriptions"] = uris
	}
	return l, f, acked, nil
}

// followable keeps, of the URIs a listen stream asks to follow
// (resourceSubscriptions), those its caller may follow, by the rule of
// resources/subscribe (mayFollow). A URI the server cannot read (unknown)
// and one hidden from the caller (Visibility, HideUnauthorized) are left
// out of the acknowledgement, which lists what the server honors, alike.
// A resource or template whose scopes (hexmcp.WithScopes) the caller lacks
// refuses the request, as subscribe does, with hexmcp.CodeInsufficientScope:
// data names every scope the refused URIs need and, in "uris", those URIs
// (over HTTP a 403 whose challenge names the scopes: step-up).
func (ls *listeners) followable(ctx context.Context, id jsontext.Value, l *listener, acked map[string]any) *rpcError {
	uris, _ := acked["resourceSubscriptions"].([]string)
	if len(uris) == 0 {
		return nil
	}
	viewer := func() *handlerapi.Viewer { return l.view }
	kept := make([]string, 0, len(uris))
	var refused, need []string
	for _, u := range uris {
		_, _, _, scopes, ok := ls.resources.resolve(ctx, u, viewer)
		switch {
		case !ok:
			delete(l.uris, u)
		case !handlerapi.ViewerHolds(l.view, scopes):
			refused = append(refused, u)
			for _, sc := range scopes {
				if !slices.Contains(need, sc) {
					need = append(need, sc)
				}
			}
		default:
			kept = append(kept, u)
		}
	}
	if refused != nil {
		return insufficientScope(id, need, handlerapi.ViewerScopes(l.view), map[string]any{"uris": refused})
	}
	if len(kept) == 0 {
		l.uris = nil
		delete(acked, "resourceSubscriptions")
		return nil
	}
	acked["resourceSubscriptions"] = kept
	return nil
}

// acceptTopics asks each extension whose topic the listen request names
// which of its ids the stream may listen to, and records and acknowledges
// those. An extension's protocol error refuses the request.
func (ls *listeners) acceptTopics(ctx context.Context, s *session, m message, p *wireParams, ci callInfo, l *listener, f listenFilter, acked map[string]any) *rpcError {
	if len(f.topics) == 0 {
		return nil
	}
	req := newRequest(ctx, s, m, p, ci)
	for name, ids := range f.topics {
		t := ls.topics[name]
		accepted := ids
		if t.Accept != nil {
			var err error
			if accepted, err = t.Accept(ctx, req, slices.Clone(ids)); err != nil {
				var pe *domain.ProtocolError
				if errors.As(err, &pe) {
					return &rpcError{id: m.id, err: pe}
				}
				logf(ls.log, ctx, slog.LevelError, "hexmcp: an extension refused a listen topic", slog.Any("topic", name), slog.Any("error", err))
				return newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
			}
		}
		set := make(map[string]struct{}, len(accepted))
		list := make([]string, 0, len(accepted))
		for _, id := range accepted {
			if _, dup := set[id]; !dup && slices.Contains(ids, id) {
				set[id] = struct{}{}
				list = append(list, id)
			}
		}
		if l.topics == nil {
			l.topics = make(map[string]map[string]struct{})
		}
		l.topics[name] = set
		acked[name] = list
	}
	return nil
}

// decodeFilter decodes the notifications object in one pass over it,
// without copying it: unknown members are skipped, and
// resourceSubscriptions is read URI by URI, within the limits.
func (ls *listeners) decodeFilter(id, filter jsontext.Value) (listenFilter, *rpcError) {
	var f listenFilter
	invalid := func(what string) *rpcError {
		return newRPCError(id, domain.CodeInvalidParams, "Invalid params: notifications"+what, nil)
	}
	// A bytes.Buffer is read in place: values read alias filter.
	dec := jsontext.NewDecoder(bytes.NewBuffer(filter))
	if _, err := dec.ReadToken(); err != nil {
		return f, invalid(" is required and must be an object")
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return f, invalid(" is malformed")
		}
		var flag *bool
		name := tok.String()
		switch name {
		case "toolsListChanged":
			flag = &f.toolsListChanged
		case "promptsListChanged":
			flag = &f.promptsListChanged
		case "resourcesListChanged":
			flag = &f.resourcesListChanged
		case "resourceSubscriptions":
			var rerr *rpcError
			if f.resourceSubscriptions, rerr = ls.decodeIDs(id, dec, "resourceSubscriptions"); rerr != nil {
				return f, rerr
			}
			continue
		default:
			if _, ok := ls.topics[name]; ok {
				ids, rerr := ls.decodeIDs(id, dec, name)
				if rerr != nil {
					return f, rerr
				}
				if ids != nil {
					if f.topics == nil {
						f.topics = make(map[string][]string)
					}
					f.topics[name] = ids
				}
				continue
			}
			if err := dec.SkipValue(); err != nil {
				return f, invalid(" is malformed")
			}
			continue
		}
		switch tok, err := dec.ReadToken(); {
		case err != nil:
			return f, invalid(" is malformed")
		case tok.Kind() == 't':
			*flag = true
		case tok.Kind() == 'f', tok.Kind() == 'n':
			*flag = false
		default:
			return f, invalid("." + name + " must be a boolean")
		}
	}
	return f, nil
}

// decodeIDs reads the array of strings notifications.<name> (null: none;
// an extension's topic, or resourceSubscriptions) within the same limits:
// Options.MaxListenSubscriptions entries of Options.MaxURILength bytes.
func (ls *listeners) decodeIDs(id jsontext.Value, dec *jsontext.Decoder, name string) ([]string, *rpcError) {
	notArray := newRPCError(id, domain.CodeInvalidParams, "Invalid params: notifications."+name+" must be an array of strings", nil)
	noun, one := "ids", "id"
	if name == "resourceSubscriptions" {
		noun, one = "URIs", "URI"
	}
	switch dec.PeekKind() {
	case 'n':
		if _, err := dec.ReadToken(); err != nil {
			return nil, notArray
		}
		return nil, nil
	case '[':
	default:
		return nil, notArray
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, notArray
	}
	maxN, maxLen := ls.maxSubscriptions, ls.maxURILength
	var out []string
	for dec.PeekKind() != ']' {
		if maxN >= 0 && len(out) >= maxN {
			return nil, newRPCError(id, domain.CodeInvalidParams,
				"Invalid params: notifications."+name+" lists more than "+strconv.Itoa(maxN)+" "+noun+", the most one listen stream may subscribe to",
				map[string]any{"limit": "maxListenSubscriptions", "max": maxN})
		}
		if dec.PeekKind() != '"' {
			return nil, notArray
		}
		val, err := dec.ReadValue()
		if err != nil {
			return nil, notArray
		}
		// An escape stands for at least one byte in at most six: a string
		// that long on the wire is too long decoded, whatever it holds.
		tooLong := maxLen >= 0 && len(val)-2 > 6*maxLen
		var u string
		if !tooLong {
			u = unquote(val)
			tooLong = maxLen >= 0 && len(u) > maxLen
		}
		if tooLong {
			return nil, newRPCError(id, domain.CodeInvalidParams,
				"Invalid params: notifications."+name+"["+strconv.Itoa(len(out))+"] is longer than "+strconv.Itoa(maxLen)+" bytes, the longest "+one+" this server accepts",
				map[string]any{"limit": "maxURILength", "max": maxLen})
		}
		out = append(out, u)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, notArray
	}
	return out, nil
}
