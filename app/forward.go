package app

import (
	"cmp"
	"context"
	"log/slog"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of the bounds on what the engine forwards to the other
// instances over Options.Bus.
const (
	// DefaultMaxForwardsPerMessage is the default of
	// [Options.MaxForwardsPerMessage]: 16 client responses and
	// cancellations forwarded per message (a batch counts as one).
	DefaultMaxForwardsPerMessage = 16
	// defaultMaxForwardsPerClient is the default of
	// [Options.MaxForwardsPerClient]: 64 forwarded per client per second.
	defaultMaxForwardsPerClient = 64
)

// forwarder carries a client's messages that belong to another instance
// there over Options.Bus: its responses to server requests another
// instance sent, and its cancellations of requests not running here; and
// serves those the other instances forward here. What one message and one
// client may forward is bounded (Options.MaxForwardsPerMessage,
// MaxForwardsPerClient).
type forwarder struct {
	bus        *noticeBus
	sessions   *sessionSet
	perMessage int // Options.MaxForwardsPerMessage
	perClient  int // Options.MaxForwardsPerClient
	clock      ports.Clock
	log        ports.Logger
	gate       forwardGate
}

// forwardResponse publishes a client's response that answers no request
// of this instance, for the instance whose request it answers (the
// client's requests of one session may reach any instance): only when
// its id names another instance ("<instance>-<n>", see outbound), to that
// instance alone, and within the forwarding bounds. It reports false for
// a response that can match nowhere (its id names no instance, or this
// one).
func (f *forwarder) forwardResponse(ctx context.Context, s *session, m message) bool {
	if f.bus.bus == nil || s == nil {
		return false
	}
	to, ok := requestOrigin(m.id)
	if !ok || to == f.bus.instance {
		return false
	}
	sid, peer, _ := s.forwardInfo()
	if sid == "" {
		return false
	}
	if !f.mayForward(ctx, ports.NoticeClientResponse, sid, peer) {
		return true
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
	f.bus.publish(ports.Notice{Kind: ports.NoticeClientResponse, ID: randomHex(16), Origin: f.bus.instance, To: to, Session: sid, Data: msg})
	return true
}

// remoteResponse hands a response forwarded by another instance to the
// request of the session held here that waits for it, if any: only a
// response to a request of this instance.
func (f *forwarder) remoteResponse(n ports.Notice) {
	m, rerr := decodeMessage(n.Data)
	if rerr != nil || !m.isResponse || n.Session == "" {
		return
	}
	if origin, ok := requestOrigin(m.id); !ok || origin != f.bus.instance {
		return
	}
	for _, s := range f.sessions.list() {
		if s.sessionID() == n.Session && s.out.deliver(m) {
			return
		}
	}
}

// forwardCancel publishes a client's cancellation of a request that is
// not in flight here, for the instance serving it: only the cancellation
// of a request id (a string or a number, of at most 1,024 bytes) of an
// initialized session, and within the forwarding bounds.
func (f *forwarder) forwardCancel(ctx context.Context, s *session, id jsontext.Value) {
	if f.bus.bus == nil || s == nil || len(id) > 1024 {
		return
	}
	if k := id.Kind(); k != '"' && k != '0' {
		return
	}
	sid, peer, initialized := s.forwardInfo()
	if sid == "" || !initialized || !f.mayForward(ctx, ports.NoticeClientCancel, sid, peer) {
		return
	}
	f.bus.publish(ports.Notice{Kind: ports.NoticeClientCancel, ID: randomHex(16), Origin: f.bus.instance, Session: sid, Data: canonicalID(id)})
}

// remoteCancel cancels the request a cancellation forwarded by another
// instance names, if a session held here serves it.
func (f *forwarder) remoteCancel(n ports.Notice) {
	if n.Session == "" || len(n.Data) == 0 {
		return
	}
	for _, s := range f.sessions.list() {
		if s.sessionID() == n.Session && s.cancelRequest(jsontext.Value(n.Data)) {
			return
		}
	}
}

// requestOrigin returns the instance a server request id names: the ids
// of an engine with a bus are strings "<instance>-<n>" (see outbound),
// the instance being 16 lowercase hex digits and n decimal digits.
func requestOrigin(id jsontext.Value) (string, bool) {
	const name = 2 * instanceBytes
	if len(id) < name+4 || len(id) > name+23 || id[0] != '"' || id[len(id)-1] != '"' || id[name+1] != '-' {
		return "", false
	}
	for _, c := range id[1 : name+1] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	for _, c := range id[name+2 : len(id)-1] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return string(id[1 : name+1]), true
}

// withBudget gives the members of one message (a batch) served
// with the returned context one budget of Options.MaxForwardsPerMessage.
func (f *forwarder) withBudget(ctx context.Context) context.Context {
	if f.bus.bus == nil || f.perMessage < 0 {
		return ctx
	}
	b := &forwardBudget{}
	b.left.Store(int64(f.perMessage))
	return context.WithValue(ctx, forwardBudgetKey{}, b)
}

// allow counts one forward of client at now, unless it already made
// limit of them this second (a negative limit: no bound).
func (g *forwardGate) allow(client string, limit int, now time.Time) bool {
	if limit < 0 {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if sec := now.Unix(); sec != g.second || g.counts == nil {
		g.second, g.counts = sec, make(map[string]int) // the last second's counts are dropped
	}
	if g.counts[client] >= limit {
		return false
	}
	g.counts[client]++
	return true
}

// mayForward takes one forward of the session sid of client peer from
// the message's budget and the client's: when either is spent, it counts
// and logs the drop (a warning at the 1st, 2nd, 4th, 8th... drop, so that
// a flood does not flood the log) and reports false.
func (f *forwarder) mayForward(ctx context.Context, kind ports.NoticeKind, sid, peer string) bool {
	bound := ""
	if b, ok := ctx.Value(forwardBudgetKey{}).(*forwardBudget); ok && b.left.Add(-1) < 0 {
		bound = "MaxForwardsPerMessage"
	} else if !f.gate.allow(cmp.Or(peer, "session:"+sid), f.perClient, f.clock.Now()) {
		bound = "MaxForwardsPerClient"
	}
	if bound == "" {
		return true
	}
	if k := f.gate.dropped.Add(1); bits.OnesCount64(k) == 1 {
		logf(f.log, ctx, slog.LevelWarn, "hexmcp: a client's responses and cancellations past a bound are not forwarded to the other instances",
			slog.Any("kind", string(kind)), slog.Any("bound", bound), slog.Any("client", peer), slog.Any("session", sid),
			slog.Any("max_per_message", f.perMessage), slog.Any("max_per_client_per_second", f.perClient),
			slog.Any("dropped_total", k))
	}
	return false
}

// clientResponse serves a response the client sent: it resolves the
// server request it answers, here or (forwardResponse) at the instance
// that sent it. One that answers nothing is logged and dropped (it cannot
// be answered).
func (f *forwarder) clientResponse(ctx context.Context, s *session, m message) {
	if s != nil && s.out.deliver(m) || f.forwardResponse(ctx, s, m) {
		return
	}
	logf(f.log, context.Background(), slog.LevelDebug, "hexmcp: dropped a response to no pending server request", slog.Any("id", string(m.id)))
}

// forwardBudget is what one message of a client may still forward
// (Options.MaxForwardsPerMessage), carried by the context of its
// members.
type forwardBudget struct{ left atomic.Int64 }

type forwardBudgetKey struct{}

// forwardGate counts what each client forwarded in the current second
// (Options.MaxForwardsPerClient), and what was dropped.
type forwardGate struct {
	mu      sync.Mutex
	second  int64
	counts  map[string]int // forwards of each client in second
	dropped atomic.Uint64
}

// forwardInfo returns what forwarding needs of the session: its id ("" for
// a connection's session), its client (Peer) and whether it is
// initialized.
func (s *session) forwardInfo() (sid, peer string, initialized bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id, s.peer, s.initialized
}

// sessionID is the session's id ("" for a connection's session).
func (s *session) sessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// DroppedForwards returns how many client responses and cancellations
// the engine did not forward to the other instances because a bound
// ([Options.MaxForwardsPerMessage], [Options.MaxForwardsPerClient]) was
// reached.
func (e *Engine) DroppedForwards() uint64 { return e.fwd.gate.dropped.Load() }
