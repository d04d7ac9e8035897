package app

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// The engine reaches a transport that frames each exchange itself (the
// SDK's Streamable HTTP transport, which serves one message or batch per
// POST and must know what a message is, and what it was answered with, to
// choose its headers and status) through an [exchange.Port], which
// [exchange.PortOf] returns. Its types are internal to the SDK's module;
// transports of other modules serve connections ([Engine.ServeConn]).
//
// The sessions it opens are kept in the store given: each knows the state
// the store holds of it, takes the store's when another instance changed
// it ([exchange.Session.Refresh]) and writes its own when a request
// changed it ([exchange.Session.Sync]).
func init() {
	exchange.SetEngine(func(engine any, store ports.SessionStore) (exchange.Port, bool) {
		e, ok := engine.(*Engine)
		if !ok || e == nil {
			return nil, false
		}
		return exchangePort{e: e, store: store}, true
	})
}

// exchangeOf is the engine's exchange port for store.
func (e *Engine) exchangeOf(store ports.SessionStore) exchange.Port {
	return exchangePort{e: e, store: store}
}

// exchangePort is the engine as an [exchange.Port].
type exchangePort struct {
	e     *Engine
	store ports.SessionStore
}

// httpSession is a [Session] as an [exchange.Session]: a session that a
// store keeps, with the state the store holds of it.
type httpSession struct {
	*sessionHandle
	store ports.SessionStore

	mu     sync.Mutex
	stored ports.SessionState // what the store holds, as far as we know
}

func (p exchangePort) Inspect(raw []byte) exchange.Message { return inspect(raw).toExchange() }

func (p exchangePort) Detach(m exchange.Message) exchange.Message {
	return fromExchange(m).Detach().toExchange()
}

func (p exchangePort) Method(name string) (exchange.MethodSpec, bool) {
	m, ok := methods[name]
	if !ok {
		return exchange.MethodSpec{}, false
	}
	return m.MethodSpec, true
}

func (p exchangePort) Tool(name string) (*domain.Tool, bool) { return p.e.LookupTool(name) }

func (p exchangePort) WithTransport(ctx context.Context, t exchange.Transport) context.Context {
	return WithTransportInfo(ctx, t)
}

// sessionOf is the engine's session behind s (nil: none).
func sessionOf(s exchange.Session) *session {
	if hs, ok := s.(*httpSession); ok && hs != nil {
		return hs.sessionHandle.s
	}
	return nil
}

func (p exchangePort) Serve(ctx context.Context, s exchange.Session, m exchange.Message, related ports.MessageWriter) exchange.Answer {
	mi := fromExchange(m)
	return p.e.handleAnswer(ctx, sessionOf(s), mi.msg, mi.params, mi.rerr, related)
}

func (p exchangePort) ServeBatch(ctx context.Context, s exchange.Session, members []exchange.Message, related ports.MessageWriter) [][]byte {
	infos := make([]messageInfo, len(members))
	for i, m := range members {
		infos[i] = fromExchange(m)
	}
	return p.e.batch(ctx, sessionOf(s), infos, related, nil)
}

func (p exchangePort) Initialize(ctx context.Context, s exchange.Session, m exchange.Message, related ports.MessageWriter, commit func(context.Context, ports.SessionState) error) exchange.Answer {
	hs, _ := s.(*httpSession)
	if hs == nil {
		return p.Serve(ctx, s, m, related)
	}
	return p.Serve(withSessionCommit(ctx, func(ctx context.Context) error {
		st := hs.state()
		// Known as stored before the store has it: the transport counts
		// the session's size from now on.
		hs.mu.Lock()
		hs.stored = st
		hs.mu.Unlock()
		return commit(ctx, st)
	}), s, m, related)
}

func (p exchangePort) NewSession(id, owner, peer string) exchange.Session {
	sess := p.e.newSession(context.Background(), id, nil)
	sess.setOwner(owner, peer)
	return &httpSession{sessionHandle: sess, store: p.store}
}

func (p exchangePort) RestoreSession(st ports.SessionState) exchange.Session {
	return &httpSession{sessionHandle: p.e.restoreSession(context.Background(), st, nil), store: p.store, stored: st}
}

func (hs *httpSession) SetWriter(w ports.MessageWriter) { hs.setWriter(w) }
func (hs *httpSession) Deleted()                        { hs.ended(handlerapi.SessionDeleted) }
func (hs *httpSession) Removed()                        { hs.ended(handlerapi.SessionRemoved) }

func (hs *httpSession) Size() int {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.stored.Size()
}

func (hs *httpSession) Revision() domain.Revision {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.stored.Revision
}

func (hs *httpSession) Refresh(st ports.SessionState) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if sameState(st, hs.stored) {
		return false
	}
	// Another instance changed the session (subscribe, setLevel): take
	// its state rather than overwrite it later.
	hs.update(st)
	hs.stored = st
	return true
}

// Sync writes the session's state to the store when a request changed it
// (notifications/initialized, resources/subscribe and unsubscribe,
// logging/setLevel): Ready once the handshake is complete, so that the
// store no longer treats the session as pending.
//
// A store may refuse a larger state past a byte budget (see
// [ports.SessionStore.Update]): the change is then undone here too (the
// session takes back the stored state, so that it holds nothing the store
// refused), and the refusal, an error wrapping ports.ErrTooManySessions,
// is returned. Other failures are returned too; a session the store
// dropped meanwhile (ports.ErrSessionNotFound) is not one.
func (hs *httpSession) Sync(ctx context.Context) (bool, error) {
	st := hs.state()
	hs.mu.Lock()
	same := sameState(st, hs.stored)
	hs.mu.Unlock()
	if same {
		return false, nil
	}
	if err := hs.store.Update(context.WithoutCancel(ctx), st); err != nil {
		if errors.Is(err, ports.ErrTooManySessions) {
			return hs.undoGrowth(ctx, st), err
		}
		return false, err
	}
	hs.mu.Lock()
	hs.stored = st
	hs.mu.Unlock()
	return true, nil
}

// undoGrowth takes back the subscriptions of refused (a state the store
// refused) that the store does not hold, and writes the rest of the
// session's changes (such as Ready) to the store. It reports whether the
// stored state changed.
func (hs *httpSession) undoGrowth(ctx context.Context, refused ports.SessionState) bool {
	hs.mu.Lock()
	added := map[string]bool{}
	for _, uri := range refused.Subscriptions {
		if _, ok := slices.BinarySearch(hs.stored.Subscriptions, uri); !ok {
			added[uri] = true
		}
	}
	st := hs.state()
	st.Subscriptions = slices.DeleteFunc(slices.Clone(st.Subscriptions), func(uri string) bool { return added[uri] })
	if len(st.Subscriptions) == 0 {
		st.Subscriptions = nil
	}
	hs.update(st)
	same := sameState(st, hs.stored)
	hs.mu.Unlock()
	if same || hs.store.Update(context.WithoutCancel(ctx), st) != nil {
		return false
	}
	hs.mu.Lock()
	hs.stored = st
	hs.mu.Unlock()
	return true
}

// sameState compares what the engine owns of two states (Created and
// LastSeen belong to the store).
func sameState(a, b ports.SessionState) bool {
	return a.ID == b.ID && a.Owner == b.Owner && a.Peer == b.Peer && a.Initialized == b.Initialized && a.Ready == b.Ready && a.Revision == b.Revision &&
		a.Client.Name == b.Client.Name && a.Client.Version == b.Client.Version && a.Client.Title == b.Client.Title &&
		bytes.Equal(a.Capabilities, b.Capabilities) && slices.Equal(a.Subscriptions, b.Subscriptions) &&
		a.ResourcesAdvertised == b.ResourcesAdvertised && a.PromptsAdvertised == b.PromptsAdvertised && a.LogLevel == b.LogLevel
}
