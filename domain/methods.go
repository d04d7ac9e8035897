package domain

// methodEras says in which eras a request method exists: ping, initialize
// and logging/setLevel belong to the handshake era (2026-07-28 removed
// them), server/discover to the stateless era.
var methodEras = map[string]struct{ handshake, stateless bool }{
	"initialize":       {handshake: true},
	"ping":             {handshake: true},
	"logging/setLevel": {handshake: true}, // 2026-07-28: the level is per request, in _meta
	"server/discover":  {stateless: true},
	"tools/list":       {handshake: true, stateless: true},
	"tools/call":       {handshake: true, stateless: true},

	"resources/list":           {handshake: true, stateless: true},
	"resources/templates/list": {handshake: true, stateless: true},
	"resources/read":           {handshake: true, stateless: true},
	"resources/subscribe":      {handshake: true}, // 2026-07-28: subscriptions/listen
	"resources/unsubscribe":    {handshake: true},
	"subscriptions/listen":     {stateless: true}, // a long-lived notification stream

	"prompts/list":        {handshake: true, stateless: true},
	"prompts/get":         {handshake: true, stateless: true},
	"completion/complete": {handshake: true, stateless: true},
}

// KnowsMethod reports whether method is a request method this SDK serves in
// some revision.
func (p RevisionPolicy) KnowsMethod(method string) bool {
	_, ok := methodEras[method]
	return ok
}

// MethodExists reports whether method exists in revision r.
func (p RevisionPolicy) MethodExists(r Revision, method string) bool {
	eras, ok := methodEras[method]
	if !ok {
		return false
	}
	if p.Features(r).Era == EraStateless {
		return eras.stateless
	}
	return eras.handshake
}
