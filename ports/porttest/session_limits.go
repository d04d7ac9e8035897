package porttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// TestSessionExpiry checks the idle expiry of a store that expires a session
// whose LastSeen is more than idle ago, by the clock handed to newStore (a
// [*FakeClock] starting at [Start]), and counts Get and Update as activity.
func TestSessionExpiry(t *testing.T, idle time.Duration, newStore func(t *testing.T, clock ports.Clock) ports.SessionStore) {
	runSuite(t, sessionExpirySuite{idle: idle, newStore: newStore})
}

// sessionExpirySuite holds the subtests of [TestSessionExpiry], one method
// each.
type sessionExpirySuite struct {
	idle     time.Duration
	newStore sessionStoreMaker
}

func (suite sessionExpirySuite) IdleSessionExpires(t *testing.T) {
	s := expiresAfter(t, suite.newStore, sessionState("a"), suite.idle, "the idle timeout")
	// The id of an expired session can be used again.
	if err := s.Create(ctx, sessionState("a")); err != nil {
		t.Fatalf("Create over an expired session = %v", err)
	}
}

func (suite sessionExpirySuite) ActivityKeepsSessionAlive(t *testing.T) {
	c := NewFakeClock(Start)
	s := suite.newStore(t, c)
	for _, id := range []string{"got", "updated", "idle"} {
		if err := s.Create(ctx, sessionState(id)); err != nil {
			t.Fatal(err)
		}
	}
	step := suite.idle/2 + time.Second
	for range 4 {
		c.Advance(step)
		if _, err := s.Get(ctx, "got"); err != nil {
			t.Fatalf("Get of an active session = %v", err)
		}
		if err := s.Update(ctx, sessionState("updated")); err != nil {
			t.Fatalf("Update of an active session = %v", err)
		}
	}
	if _, err := s.Get(ctx, "idle"); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("Get of an idle session = %v, want ErrSessionNotFound", err)
	}
}

// pendingState is sessionState(id) of a session whose client has not sent
// notifications/initialized yet.
func pendingState(id string) ports.SessionState {
	st := sessionState(id)
	st.Ready = false
	return st
}

// TestSessionPending checks the pending expiry of a store that expires a
// session that is not Ready (its client never completed the handshake) once
// it has been idle for more than pending, by the clock handed to newStore (a
// [*FakeClock] starting at [Start]), and a Ready one only after idle, which
// must be longer than pending.
func TestSessionPending(t *testing.T, pending, idle time.Duration, newStore func(t *testing.T, clock ports.Clock) ports.SessionStore) {
	if idle <= pending+time.Second {
		t.Fatalf("TestSessionPending: idle %v must be longer than pending %v and a second", idle, pending)
	}

	runSuite(t, sessionPendingSuite{pending: pending, idle: idle, newStore: newStore})
}

// expiresAfter creates st in a store newStore made and checks that the
// store keeps it for timeout (named what) of idleness and forgets it once
// idle for a second longer, for Get and Update alike; it returns the store.
func expiresAfter(t *testing.T, newStore sessionStoreMaker, st ports.SessionState, timeout time.Duration, what string) ports.SessionStore {
	t.Helper()
	c := newClock()
	s := newStore(t, c)
	if err := s.Create(ctx, st); err != nil {
		t.Fatal(err)
	}
	c.Advance(timeout)
	if _, err := s.Get(ctx, st.ID); err != nil {
		t.Fatalf("Get after exactly %s = %v, want the session", what, err)
	}
	c.Advance(timeout + time.Second)
	if _, err := s.Get(ctx, st.ID); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("Get of a session idle past %s = %v, want ErrSessionNotFound", what, err)
	}
	if err := s.Update(ctx, sessionState(st.ID)); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("Update of a session idle past %s = %v, want ErrSessionNotFound", what, err)
	}
	return s
}

// sessionPendingSuite holds the subtests of [TestSessionPending], one method
// each.
type sessionPendingSuite struct {
	pending, idle time.Duration
	newStore      sessionStoreMaker
}

func (suite sessionPendingSuite) PendingSessionExpires(t *testing.T) {
	expiresAfter(t, suite.newStore, pendingState("p"), suite.pending, "the pending timeout")
}

func (suite sessionPendingSuite) ReadySessionOutlivesPending(t *testing.T) {
	c := NewFakeClock(Start)
	s := suite.newStore(t, c)
	for _, id := range []string{"made-ready", "pending"} {
		if err := s.Create(ctx, pendingState(id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, sessionState("ready")); err != nil {
		t.Fatal(err)
	}
	// notifications/initialized arrived: the transport stores Ready.
	if err := s.Update(ctx, sessionState("made-ready")); err != nil {
		t.Fatal(err)
	}
	c.Advance(suite.pending + time.Second)
	for _, id := range []string{"made-ready", "ready"} {
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatalf("Get of ready session %s idle past the pending timeout = %v, want the session", id, err)
		}
		checkState(t, got, sessionState(id))
	}
	if _, err := s.Get(ctx, "pending"); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("Get of the session that stayed pending = %v, want ErrSessionNotFound", err)
	}
}

// TestSessionPerClientLimit checks a store that lets one client (one
// non-empty Peer) hold at most max live sessions: past that, Create either
// refuses the session with an error wrapping
// [ports.ErrTooManySessionsForClient] (which wraps
// [ports.ErrTooManySessions]) or makes room among that client's own
// sessions; other clients' sessions are neither refused nor touched, and
// sessions without a Peer count against no client. The clock (a [*FakeClock]
// starting at [Start]) does not move. The store must have room for 3*max+2
// sessions in total.
func TestSessionPerClientLimit(t *testing.T, max int, newStore func(t *testing.T, clock ports.Clock) ports.SessionStore) {
	runSuite(t, perClientSuite{max: max, newStore: newStore})
}

// perClientSuite holds the subtests of [TestSessionPerClientLimit], one
// method each.
type perClientSuite struct {
	max      int
	newStore sessionStoreMaker
}

func (suite perClientSuite) OneClientCannotCrowdOthersOut(t *testing.T) {
	s := suite.newStore(t, NewFakeClock(Start))
	for i := range suite.max {
		if err := s.Create(ctx, peerSession("greedy", i)); err != nil {
			t.Fatalf("Create %d of %d for one client: %v", i+1, suite.max, err)
		}
	}
	overflowPeer(t, s, "greedy", suite.max, suite.max)
	overflowPeer(t, s, "greedy", suite.max+1, suite.max)
	for i := range suite.max {
		if err := s.Create(ctx, peerSession("other", i)); err != nil {
			t.Fatalf("Create %d for another client: %v", i+1, err)
		}
	}
	if n := len(peerSessionsHeld(t, s, "other", suite.max)); n != suite.max {
		t.Fatalf("the other client holds %d of its %d sessions", n, suite.max)
	}
	// No Peer: no per-client limit.
	for i := range suite.max + 1 {
		if err := s.Create(ctx, ports.SessionState{ID: fmt.Sprintf("anonymous-%d", i), Ready: true}); err != nil {
			t.Fatalf("Create %d without a Peer: %v", i+1, err)
		}
	}
}

func (suite perClientSuite) DeleteFreesAPlace(t *testing.T) {
	s := suite.newStore(t, NewFakeClock(Start))
	for i := range suite.max {
		if err := s.Create(ctx, peerSession("c", i)); err != nil {
			t.Fatal(err)
		}
	}
	overflowPeer(t, s, "c", suite.max, suite.max)
	ids := peerSessionsHeld(t, s, "c", suite.max+1)
	if len(ids) == 0 {
		t.Fatal("the client holds no session")
	}
	if err := s.Delete(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, peerSession("c", suite.max+1)); err != nil {
		t.Fatalf("Create after the client deleted one of its sessions = %v", err)
	}
	if _, err := s.Get(ctx, peerSession("c", suite.max+1).ID); err != nil {
		t.Fatalf("Get of the new session = %v", err)
	}
}

// peerSession is sessionState("<peer>-<i>") of the client peer.
func peerSession(peer string, i int) ports.SessionState {
	st := sessionState(fmt.Sprintf("%s-%d", peer, i))
	st.Peer = peer
	return st
}

// peerSessionsHeld returns the sessions of peer, of ids peer-0 ..
// peer-(n-1), that the store still holds.
func peerSessionsHeld(t *testing.T, s ports.SessionStore, peer string, n int) (ids []string) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf("%s-%d", peer, i)
		if _, err := s.Get(ctx, id); err == nil {
			ids = append(ids, id)
		} else if !errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatalf("Get %s: %v", id, err)
		}
	}
	return ids
}

// overflowPeer creates session i of peer, past its limit of max, and
// checks the outcome: refused as the port says, or made room for.
func overflowPeer(t *testing.T, s ports.SessionStore, peer string, i, max int) {
	t.Helper()
	err := s.Create(ctx, peerSession(peer, i))
	if err != nil && (!errors.Is(err, ports.ErrTooManySessionsForClient) || !errors.Is(err, ports.ErrTooManySessions)) {
		t.Fatalf("Create past the per-client limit = %v, want nil or an error wrapping ErrTooManySessionsForClient and ErrTooManySessions", err)
	}
	if n := len(peerSessionsHeld(t, s, peer, i+1)); n > max {
		t.Fatalf("client %s holds %d sessions, over the limit of %d", peer, n, max)
	}
}

// padded is a ready session of peer whose capabilities take pad bytes.
func padded(id, peer string, pad int) ports.SessionState {
	const head, tail = `{"experimental":{"pad":"`, `"}}`
	return ports.SessionState{ID: id, Peer: peer, Initialized: true, Ready: true, Revision: domain.Revision20251125,
		Capabilities: json.RawMessage(head + strings.Repeat("x", max(pad-len(head)-len(tail), 0)) + tail)}
}

// slack is what a store may count for a session besides its capabilities in
// TestSessionByteLimits: [ports.SessionState.Size]'s 256 bytes and the other
// strings, or the JSON of the state and the store's own keys.
const slack = 1 << 10

// TestSessionByteLimits checks a store that bounds the bytes its sessions
// hold (counted as [ports.SessionState.Size] does, or in a form of its own
// that counts a session's capabilities whole and adds at most 1 KiB) to
// perClient for one client (one non-empty Peer) and total for all: past a
// budget, Create and an Update that makes a session larger either refuse
// with an error wrapping [ports.ErrTooManySessionsForClient] (the client's
// budget; it wraps [ports.ErrTooManySessions]) or [ports.ErrTooManySessions]
// alone (the total), leaving the stored state as it was, or make room among
// the sessions of that client (or any, for the total), never the one
// updated. The clock (a [*FakeClock] starting at [Start]) does not move.
// perClient must be at least 16 KiB, and total at least 4*perClient; the
// store's count limits must leave room for total/4 KiB sessions, and at
// least 8 per client.
func TestSessionByteLimits(t *testing.T, perClient, total int, newStore func(t *testing.T, clock ports.Clock) ports.SessionStore) {
	if perClient < 16<<10 || total < 4*perClient {
		t.Fatalf("TestSessionByteLimits: perClient %d must be at least 16 KiB and total %d at least 4*perClient", perClient, total)
	}
	pad := perClient / 8 // 6 to 8 fit in a client's budget
	runSuite(t, sessionBytesSuite{perClient: perClient, total: total, newStore: newStore, pad: pad})
}

// sessionBytesSuite holds the subtests of [TestSessionByteLimits], one
// method each.
type sessionBytesSuite struct {
	perClient, total int
	newStore         sessionStoreMaker
	pad              int
}

func (suite sessionBytesSuite) ClientBudget(t *testing.T) {
	s := suite.newStore(t, NewFakeClock(Start))
	live := fillSessions(t, s, suite.pad, "greedy", suite.perClient, ports.ErrTooManySessionsForClient)
	// Another client is not touched.
	for i := range 3 {
		if err := s.Create(ctx, padded(fmt.Sprintf("other-%d", i), "other", suite.pad)); err != nil {
			t.Fatalf("Create for another client: %v", err)
		}
	}
	if got := sessionsHeld(t, s, live); len(got) != len(live) {
		t.Fatalf("another client's sessions took %d of the greedy one's", len(live)-len(got))
	}
	// A session larger than a client's whole budget is refused.
	err := s.Create(ctx, padded("huge", "third", suite.perClient+1))
	if !errors.Is(err, ports.ErrTooManySessionsForClient) {
		t.Fatalf("Create of a session larger than a client's budget = %v, want ErrTooManySessionsForClient", err)
	}
	if _, err := s.Get(ctx, "huge"); !errors.Is(err, ports.ErrSessionNotFound) {
		t.Fatalf("the refused session is stored: Get = %v", err)
	}
}

func (suite sessionBytesSuite) DeleteFreesBytes(t *testing.T) {
	s := suite.newStore(t, NewFakeClock(Start))
	live := fillSessions(t, s, suite.pad, "c", suite.perClient, ports.ErrTooManySessionsForClient)
	if err := s.Delete(ctx, live[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, padded("c-again", "c", suite.pad)); err != nil {
		t.Fatalf("Create after the client deleted a session = %v", err)
	}
}

func (suite sessionBytesSuite) UpdateCannotGrowPastBudget(t *testing.T) {
	s := suite.newStore(t, NewFakeClock(Start))
	live := fillSessions(t, s, suite.pad, "c", suite.perClient, ports.ErrTooManySessionsForClient)
	id := live[len(live)-1]
	before, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// Subscriptions of 2*pad bytes: past the budget whatever the room
	// left (less than one session of pad bytes and slack).
	grown := before
	for i := range 2 * suite.pad / 1024 {
		grown.Subscriptions = append(grown.Subscriptions, fmt.Sprintf("test://%04d/%s", i, strings.Repeat("u", 1000)))
	}
	err = s.Update(ctx, grown)
	if err == nil {
		// The store made room: among the client's other sessions.
		if got := sessionsHeld(t, s, live); !slices.Contains(got, id) || (len(got)+2)*suite.pad > suite.perClient {
			t.Fatalf("after an Update past the budget the client holds %v of %v", got, live)
		}
		return
	}
	if !errors.Is(err, ports.ErrTooManySessionsForClient) {
		t.Fatalf("Update past the client's budget = %v, want ErrTooManySessionsForClient", err)
	}
	after, err := s.Get(ctx, id)
	if err != nil {
		t.Fatalf("the session refused a larger state is gone: %v", err)
	}
	checkState(t, after, before)
	// Shrinking is never refused, nor is growing within the budget
	// once there is room.
	small := before
	small.Capabilities = json.RawMessage(`{}`)
	if err := s.Update(ctx, small); err != nil {
		t.Fatalf("Update to a smaller state = %v", err)
	}
	small.Subscriptions = []string{"test://one"}
	if err := s.Update(ctx, small); err != nil {
		t.Fatalf("Update within the budget = %v", err)
	}
	if got, err := s.Get(ctx, id); err != nil || !slices.Equal(got.Subscriptions, small.Subscriptions) {
		t.Fatalf("after the Updates: %v %v", got.Subscriptions, err)
	}
}

func (suite sessionBytesSuite) TotalBudget(t *testing.T) {
	s := suite.newStore(t, NewFakeClock(Start))
	// Each session its own client: only the total can refuse.
	var ids []string
	for i := range 2*suite.total/suite.pad + 2 {
		st := padded(fmt.Sprintf("s-%d", i), fmt.Sprintf("peer-%d", i), suite.pad)
		err := s.Create(ctx, st)
		if err != nil {
			if !errors.Is(err, ports.ErrTooManySessions) || errors.Is(err, ports.ErrTooManySessionsForClient) {
				t.Fatalf("Create past the total byte budget = %v, want ErrTooManySessions and not ErrTooManySessionsForClient", err)
			}
			break
		}
		ids = append(ids, st.ID)
		if i%8 == 0 {
			if live := sessionsHeld(t, s, ids); len(live) < len(ids) {
				break // room was made
			}
		}
	}
	live := sessionsHeld(t, s, ids)
	if len(live)*suite.pad > suite.total {
		t.Fatalf("the store holds %d sessions of %d bytes of capabilities: %d bytes, past the total budget of %d", len(live), suite.pad, len(live)*suite.pad, suite.total)
	}
	if (len(live)+1)*(suite.pad+slack) <= suite.total {
		t.Fatalf("the store refused a session of %d bytes with %d held, far within the total budget of %d", suite.pad, len(live), suite.total)
	}
	// Sessions without a Peer count against the total too.
	if err := s.Create(ctx, padded("anonymous", "", suite.pad)); err == nil {
		if live := sessionsHeld(t, s, append(ids, "anonymous")); (len(live))*suite.pad > suite.total {
			t.Fatalf("a session without a Peer took the store past its total budget")
		}
	} else if !errors.Is(err, ports.ErrTooManySessions) {
		t.Fatalf("Create without a Peer past the total = %v", err)
	}
}

// sessionsHeld returns the ids of the sessions of ids that the store still
// holds.
func sessionsHeld(t *testing.T, s ports.SessionStore, ids []string) (live []string) {
	t.Helper()
	for _, id := range ids {
		if _, err := s.Get(ctx, id); err == nil {
			live = append(live, id)
		} else if !errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatalf("Get %s: %v", id, err)
		}
	}
	return live
}

// fillSessions creates sessions of peer, of pad bytes each, until the store
// refuses one or makes room (drops one of them), and checks the refusal
// wraps want; it returns the ids the store holds.
func fillSessions(t *testing.T, s ports.SessionStore, pad int, peer string, limit int, want error) []string {
	t.Helper()
	var ids []string
	for i := range 2*limit/pad + 2 {
		st := padded(fmt.Sprintf("%s-%d", peer, i), peer, pad)
		if peer == "" {
			st.ID = fmt.Sprintf("anon-%d", i)
		}
		err := s.Create(ctx, st)
		if err != nil {
			if !errors.Is(err, want) || !errors.Is(err, ports.ErrTooManySessions) {
				t.Fatalf("Create past a byte budget = %v, want an error wrapping %v", err, want)
			}
			if want != ports.ErrTooManySessionsForClient && errors.Is(err, ports.ErrTooManySessionsForClient) {
				t.Fatalf("Create past the total byte budget = %v, which blames the client", err)
			}
			break
		}
		ids = append(ids, st.ID)
		if live := sessionsHeld(t, s, ids); len(live) < len(ids) {
			break // room was made
		}
	}
	live := sessionsHeld(t, s, ids)
	if len(live)*pad > limit {
		t.Fatalf("the store holds %d sessions of %d bytes of capabilities: %d bytes, past the budget of %d", len(live), pad, len(live)*pad, limit)
	}
	if (len(live)+1)*(pad+slack) <= limit {
		t.Fatalf("the store refused (or made room for) a session of %d bytes with %d held, far within the budget of %d", pad, len(live), limit)
	}
	return live
}
