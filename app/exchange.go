package app

import (
	"bytes"
	"context"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/ports"
)

// Exchange returns the port through which a transport that frames each
// exchange itself reaches the engine: the SDK's Streamable HTTP transport,
// which serves one message (or batch) per POST and must know what a
// message is, and what it was answered with, to choose its headers and
// status. Its types are internal to the SDK's module; transports of other
// modules serve connections ([Engine.ServeConn]).
func (e *Engine) Exchange() exchange.Port { return exchangePort{e} }

// exchangePort is the engine as an [exchange.Port].
type exchangePort struct{ e *Engine }

// httpSession is a [Session] as an [exchange.Session]: the same value,
// seen through the port.
type httpSession Session

func (p exchangePort) Inspect(raw []byte) exchange.Message { return inspect(raw).toExchange() }

func (p exchangePort) Detach(m exchange.Message) exchange.Message {
	return fromExchange(m).Detach().toExchange()
}

func (p exchangePort) Method(name string) (exchange.MethodSpec, bool) {
	m, ok := methods[name]
	if !ok {
		return exchange.MethodSpec{}, false
	}
	return exchange.MethodSpec(m.MethodSpec), true
}

func (p exchangePort) Tool(name string) (*domain.Tool, bool) { return p.e.LookupTool(name) }

func (p exchangePort) WithTransport(ctx context.Context, t exchange.Transport) context.Context {
	return withTransportInfo(ctx, TransportInfo(t))
}

// sessionOf is the engine's session behind s (nil: none).
func sessionOf(s exchange.Session) *session {
	if hs, ok := s.(*httpSession); ok && hs != nil {
		return hs.s
	}
	return nil
}

func (p exchangePort) Serve(ctx context.Context, s exchange.Session, m exchange.Message, related ports.MessageWriter) exchange.Answer {
	mi := fromExchange(m)
	return p.e.handleAnswer(ctx, sessionOf(s), mi.msg, mi.params, mi.rerr, related)
}

func (p exchangePort) ServeRaw(ctx context.Context, s exchange.Session, raw []byte) []byte {
	m, rerr := decodeMessage(bytes.TrimSpace(raw))
	return p.e.handleAnswer(ctx, sessionOf(s), m, nil, rerr, nil).Response
}

func (p exchangePort) ServeBatch(ctx context.Context, s exchange.Session, members []exchange.Message, related ports.MessageWriter) [][]byte {
	infos := make([]messageInfo, len(members))
	for i, m := range members {
		infos[i] = fromExchange(m)
	}
	return p.e.batch(ctx, sessionOf(s), infos, related, nil)
}

func (p exchangePort) Initialize(ctx context.Context, s exchange.Session, m exchange.Message, related ports.MessageWriter, commit func(context.Context) error) exchange.Answer {
	return p.Serve(withSessionCommit(ctx, commit), s, m, related)
}

func (p exchangePort) NewSession(id, owner, peer string) exchange.Session {
	sess := p.e.NewSession(context.Background(), id, nil)
	sess.setOwner(owner, peer)
	return (*httpSession)(sess)
}

func (p exchangePort) RestoreSession(st ports.SessionState) exchange.Session {
	return (*httpSession)(p.e.restoreSession(context.Background(), st, nil))
}

func (hs *httpSession) State() ports.SessionState       { return (*Session)(hs).state() }
func (hs *httpSession) Update(st ports.SessionState)    { (*Session)(hs).update(st) }
func (hs *httpSession) SetWriter(w ports.MessageWriter) { (*Session)(hs).setWriter(w) }
func (hs *httpSession) Deleted()                        { (*Session)(hs).ended(SessionDeleted) }
func (hs *httpSession) Removed()                        { (*Session)(hs).ended(SessionRemoved) }
func (hs *httpSession) Close()                          { (*Session)(hs).Close() }
