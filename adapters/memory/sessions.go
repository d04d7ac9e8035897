package memory

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [SessionStoreOptions].
const (
	// DefaultIdleTimeout is how long a ready session lives without
	// activity.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultMaxSessions bounds the live sessions of a store.
	DefaultMaxSessions = 10_000
	// DefaultPendingTimeout is how long a pending session (one whose
	// client has not sent notifications/initialized) lives without
	// activity. A client that completes the handshake sends the
	// notification right after the initialize response, one round trip
	// later; 30 s leaves room for the slowest network and a client that
	// stalls briefly, and a session that never completes its handshake
	// holds its place for seconds rather than for the idle timeout.
	DefaultPendingTimeout = 30 * time.Second
	// DefaultMaxSessionsPerClient bounds the live sessions of one client
	// (one SessionState.Peer). An MCP client uses one session per server
	// connection; 100 leaves room for many client applications (or users
	// behind one address) at once, and for a client that opens a session
	// every second without ending any: by its 100th, its oldest unused one
	// has been idle for over DefaultMinIdleForEviction and makes room. One
	// client fills at most 1% of DefaultMaxSessions.
	DefaultMaxSessionsPerClient = 100
	// DefaultMinIdleForEviction is how long a ready session must have been
	// idle before Create may evict it to make room: twice the Streamable
	// HTTP transport's default keep-alive (30 s), so that a session with an
	// open GET stream, or one whose client pings it, is never evicted.
	DefaultMinIdleForEviction = time.Minute
	// DefaultMinPendingIdleForEviction is how long a pending session must
	// have been idle before Create may evict it to make room: far longer
	// than the round trip between the initialize response and
	// notifications/initialized, so that a client in the middle of its
	// handshake does not lose its session to another's.
	DefaultMinPendingIdleForEviction = 5 * time.Second
)

// Settings of [SessionStoreOptions] that turn a safety off. A zero field
// never does: it takes the default.
const (
	// UnlimitedSessionsPerClient, as MaxSessionsPerClient, lets one client
	// hold up to MaxSessions sessions.
	UnlimitedSessionsPerClient = -1
	// NoPendingTimeout, as PendingTimeout, lets a pending session live as
	// long as a ready one (IdleTimeout).
	NoPendingTimeout time.Duration = -1
	// NeverEvict, as MinIdleForEviction or MinPendingIdleForEviction, keeps
	// sessions of that kind (ready or pending) from ever being evicted: a
	// Create at a limit that cannot evict the other kind is refused.
	NeverEvict time.Duration = -1
)

// ErrDuplicateSession is wrapped by [SessionStore.Create]'s error for an id
// that names a live session.
var ErrDuplicateSession = errors.New("duplicate session id")

// SessionStoreOptions configures [NewSessionStore]. Zero fields take their
// defaults; turning a limit off takes an explicit setting (see
// [UnlimitedSessionsPerClient], [NoPendingTimeout], [NeverEvict]).
//
// A session is pending until its state is Ready (the client sent
// notifications/initialized), then ready. Activity (Create, Get, Update)
// sets its LastSeen.
type SessionStoreOptions struct {
	// IdleTimeout is how long a ready session lives without activity: one
	// whose LastSeen is more than IdleTimeout ago is expired. Default 30
	// minutes.
	IdleTimeout time.Duration
	// PendingTimeout is how long a pending session lives without activity.
	// Default 30 s ([DefaultPendingTimeout]); NoPendingTimeout: as long as
	// a ready one. It is never longer than IdleTimeout.
	PendingTimeout time.Duration
	// MaxSessions bounds the number of live sessions. Default 10,000.
	MaxSessions int
	// MaxSessionsPerClient bounds the number of live sessions of one
	// client (one non-empty SessionState.Peer; sessions without a Peer
	// count only against MaxSessions). Default 100
	// ([DefaultMaxSessionsPerClient]); UnlimitedSessionsPerClient: no
	// bound but MaxSessions.
	MaxSessionsPerClient int
	// MinIdleForEviction is how long a ready session must have been idle
	// for Create to evict it when a limit is reached. Default 1 minute
	// ([DefaultMinIdleForEviction]); NeverEvict: never.
	MinIdleForEviction time.Duration
	// MinPendingIdleForEviction is how long a pending session must have
	// been idle for Create to evict it when a limit is reached. Default 5 s
	// ([DefaultMinPendingIdleForEviction]); NeverEvict: never.
	MinPendingIdleForEviction time.Duration
	// Clock tells the time. Default ports.SystemClock{}.
	Clock ports.Clock
}

// SessionStore is a [ports.SessionStore] kept in memory, for a server that
// runs as a single instance. It is safe for concurrent use and every
// operation is O(1) amortized: sessions are kept in order of LastSeen, the
// pending and the ready ones apart, in total and per client, so expired
// ones are found at the front and purged lazily, on access and on Create,
// or by [SessionStore.Sweep]. (A Create given a LastSeen older than other
// sessions' costs a walk back to its place.) It starts no goroutine.
//
// When a limit is reached (MaxSessionsPerClient for the new session's
// Peer, else MaxSessions), Create makes room by evicting, among the
// sessions of that client (or all sessions), the pending one seen least
// recently if it has been idle for MinPendingIdleForEviction, else the
// ready one seen least recently if it has been idle for
// MinIdleForEviction; only when neither may go is the new session refused.
// So one client that opens session after session only ever replaces its
// own, and a full store replaces abandoned sessions rather than lock new
// clients out. It implements [ports.SessionRemovalNotifier].
//
// Use [NewSessionStore]; the zero value is not ready to use.
type SessionStore struct {
	idle, pendingIdle       time.Duration
	minIdle, minPendingIdle time.Duration // negative: never evict
	max, maxPerClient       int           // maxPerClient <= 0: unlimited
	clock                   ports.Clock
	mu                      sync.Mutex
	byID                    map[string]*sessionEntry
	all                     sessionLists
	peers                   map[string]*sessionLists
	watchers                map[uint64]func(id string)
	nextWatcher             uint64
}

// sessionEntry is one stored session, linked in the lists of all sessions
// and of its client's (when it has a Peer), those of its kind: pending or
// ready.
type sessionEntry struct {
	st   ports.SessionState
	all  *list.Element
	peer *list.Element // nil without a Peer
}

// sessionLists are sessions in order of LastSeen, oldest first, the
// pending and the ready ones apart.
type sessionLists struct {
	pending, ready list.List // of *sessionEntry
}

func (l *sessionLists) of(ready bool) *list.List {
	if ready {
		return &l.ready
	}
	return &l.pending
}

func (l *sessionLists) len() int { return l.pending.Len() + l.ready.Len() }

var (
	_ ports.SessionStore           = (*SessionStore)(nil)
	_ ports.SessionRemovalNotifier = (*SessionStore)(nil)
)

// NewSessionStore returns an empty store.
func NewSessionStore(opts SessionStoreOptions) *SessionStore {
	s := &SessionStore{
		idle:           opts.IdleTimeout,
		pendingIdle:    opts.PendingTimeout,
		minIdle:        opts.MinIdleForEviction,
		minPendingIdle: opts.MinPendingIdleForEviction,
		max:            opts.MaxSessions,
		maxPerClient:   opts.MaxSessionsPerClient,
		clock:          opts.Clock,
		byID:           make(map[string]*sessionEntry),
		peers:          make(map[string]*sessionLists),
	}
	if s.idle <= 0 {
		s.idle = DefaultIdleTimeout
	}
	switch {
	case s.pendingIdle == 0:
		s.pendingIdle = DefaultPendingTimeout
	case s.pendingIdle < 0:
		s.pendingIdle = s.idle
	}
	s.pendingIdle = min(s.pendingIdle, s.idle)
	if s.minIdle == 0 {
		s.minIdle = DefaultMinIdleForEviction
	}
	if s.minPendingIdle == 0 {
		s.minPendingIdle = DefaultMinPendingIdleForEviction
	}
	if s.max <= 0 {
		s.max = DefaultMaxSessions
	}
	if s.maxPerClient == 0 {
		s.maxPerClient = DefaultMaxSessionsPerClient
	}
	if s.clock == nil {
		s.clock = ports.SystemClock{}
	}
	return s
}

// Create stores a new session. A zero Created or LastSeen is set to the
// clock's now. An id that names a live session is refused with an error
// wrapping [ErrDuplicateSession] (an expired one is replaced). After
// dropping the expired sessions, Create makes room at a limit as the
// [SessionStore] documentation says, or refuses the session: with an error
// wrapping [ports.ErrTooManySessionsForClient] when its Peer holds
// MaxSessionsPerClient sessions, or [ports.ErrTooManySessions] when the
// store holds MaxSessions.
func (s *SessionStore) Create(_ context.Context, st ports.SessionState) error {
	if st.ID == "" {
		return errors.New("memory session store: empty session id")
	}
	now := s.clock.Now()
	if st.Created.IsZero() {
		st.Created = now
	}
	if st.LastSeen.IsZero() {
		st.LastSeen = now
	}
	st = cloneState(st)

	s.mu.Lock()
	var gone []string
	defer func() { s.unlockNotify(gone) }()
	s.purge(now, &gone)
	if e, ok := s.byID[st.ID]; ok {
		if !s.expired(e, now) {
			return fmt.Errorf("session %q: %w", st.ID, ErrDuplicateSession)
		}
		s.remove(e) // replaced: not reported
	}
	if p := s.peers[st.Peer]; st.Peer != "" && s.maxPerClient > 0 && p != nil && p.len() >= s.maxPerClient {
		v := s.victim(p, now)
		if v == nil {
			return fmt.Errorf("memory session store: client %q holds %d sessions: %w", st.Peer, s.maxPerClient, ports.ErrTooManySessionsForClient)
		}
		s.remove(v)
		gone = append(gone, v.st.ID)
	}
	if len(s.byID) >= s.max {
		v := s.victim(&s.all, now)
		if v == nil {
			return fmt.Errorf("memory session store: %d sessions: %w", s.max, ports.ErrTooManySessions)
		}
		s.remove(v)
		gone = append(gone, v.st.ID)
	}
	e := &sessionEntry{st: st}
	s.byID[st.ID] = e
	s.link(e)
	// An expired session of this id that the purge dropped was replaced,
	// not removed: the id names a live session.
	gone = slices.DeleteFunc(gone, func(id string) bool { return id == st.ID })
	return nil
}

// Get returns a live session, or an error wrapping
// [ports.ErrSessionNotFound]. It counts as activity: LastSeen becomes the
// clock's now, in the store and in the state returned.
func (s *SessionStore) Get(_ context.Context, id string) (ports.SessionState, error) {
	now := s.clock.Now()
	s.mu.Lock()
	var gone []string
	defer func() { s.unlockNotify(gone) }()
	e, err := s.live(id, now, &gone)
	if err != nil {
		return ports.SessionState{}, err
	}
	s.touch(e, now)
	return cloneState(e.st), nil
}

// Update replaces the state of the live session st.ID, or returns an error
// wrapping [ports.ErrSessionNotFound]. It counts as activity: LastSeen
// becomes the clock's now. Created and Peer are kept from the stored
// state.
func (s *SessionStore) Update(_ context.Context, st ports.SessionState) error {
	now := s.clock.Now()
	st = cloneState(st)
	s.mu.Lock()
	var gone []string
	defer func() { s.unlockNotify(gone) }()
	e, err := s.live(st.ID, now, &gone)
	if err != nil {
		return err
	}
	st.Created, st.Peer = e.st.Created, e.st.Peer
	if st.Ready == e.st.Ready {
		e.st = st
		s.touch(e, now)
		return nil
	}
	// From pending to ready (or back): into the other lists.
	s.unlink(e)
	e.st = st
	if now.After(e.st.LastSeen) {
		e.st.LastSeen = now
	}
	s.link(e)
	return nil
}

// Delete ends a session; deleting an unknown one is not an error.
func (s *SessionStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	var gone []string
	defer func() { s.unlockNotify(gone) }()
	if e, ok := s.byID[id]; ok {
		s.remove(e)
		gone = append(gone, id)
	}
	return nil
}

// OnRemoved registers fn, called with the id of every session that leaves
// the store (expired, evicted or deleted), after the store call that
// removed it has released the store's lock, in that call's goroutine.
// Expired sessions are found lazily (see [SessionStore]), so fn hears of
// them at the next Create, Sweep or Len, or at an access to them. The
// returned function unregisters fn.
func (s *SessionStore) OnRemoved(fn func(id string)) (unregister func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchers == nil {
		s.watchers = make(map[uint64]func(string))
	}
	n := s.nextWatcher
	s.nextWatcher++
	s.watchers[n] = fn
	return func() {
		s.mu.Lock()
		delete(s.watchers, n)
		s.mu.Unlock()
	}
}

// Sweep drops the expired sessions now and returns how many it dropped.
// Calling it is optional: expired sessions are also dropped lazily.
func (s *SessionStore) Sweep() int {
	now := s.clock.Now()
	s.mu.Lock()
	var gone []string
	defer func() { s.unlockNotify(gone) }()
	s.purge(now, &gone)
	return len(gone)
}

// Len returns the number of live sessions (it drops the expired ones).
func (s *SessionStore) Len() int {
	now := s.clock.Now()
	s.mu.Lock()
	var gone []string
	defer func() { s.unlockNotify(gone) }()
	s.purge(now, &gone)
	return len(s.byID)
}

// unlockNotify releases s.mu and then tells the watchers which sessions
// left the store.
func (s *SessionStore) unlockNotify(gone []string) {
	var fns []func(string)
	if len(gone) > 0 && len(s.watchers) > 0 {
		fns = slices.Collect(maps.Values(s.watchers))
	}
	s.mu.Unlock()
	for _, id := range gone {
		for _, fn := range fns {
			fn(id)
		}
	}
}

// live finds the live session id, dropping it if it has expired. s.mu is
// held.
func (s *SessionStore) live(id string, now time.Time, gone *[]string) (*sessionEntry, error) {
	e, ok := s.byID[id]
	if ok && s.expired(e, now) {
		s.remove(e)
		*gone = append(*gone, id)
		ok = false
	}
	if !ok {
		return nil, fmt.Errorf("session %q: %w", id, ports.ErrSessionNotFound)
	}
	return e, nil
}

// touch records activity on e. s.mu is held.
func (s *SessionStore) touch(e *sessionEntry, now time.Time) {
	if now.After(e.st.LastSeen) {
		e.st.LastSeen = now
	}
	s.all.of(e.st.Ready).MoveToBack(e.all)
	if e.peer != nil {
		s.peers[e.st.Peer].of(e.st.Ready).MoveToBack(e.peer)
	}
}

func (s *SessionStore) expired(e *sessionEntry, now time.Time) bool {
	timeout := s.idle
	if !e.st.Ready {
		timeout = s.pendingIdle
	}
	return now.Sub(e.st.LastSeen) > timeout
}

// victim returns the session of l that Create may evict to make room, or
// nil: the pending one seen least recently, if it has been idle long
// enough, else the ready one seen least recently, if it has. s.mu is held.
func (s *SessionStore) victim(l *sessionLists, now time.Time) *sessionEntry {
	if f := l.pending.Front(); f != nil && s.minPendingIdle >= 0 {
		if e := f.Value.(*sessionEntry); now.Sub(e.st.LastSeen) >= s.minPendingIdle {
			return e
		}
	}
	if f := l.ready.Front(); f != nil && s.minIdle >= 0 {
		if e := f.Value.(*sessionEntry); now.Sub(e.st.LastSeen) >= s.minIdle {
			return e
		}
	}
	return nil
}

// link puts e in the lists of its kind, at its place by LastSeen. s.mu is
// held.
func (s *SessionStore) link(e *sessionEntry) {
	e.all = insertByLastSeen(s.all.of(e.st.Ready), e)
	if e.st.Peer == "" {
		return
	}
	p := s.peers[e.st.Peer]
	if p == nil {
		p = new(sessionLists)
		s.peers[e.st.Peer] = p
	}
	e.peer = insertByLastSeen(p.of(e.st.Ready), e)
}

// unlink takes e out of its lists (not out of byID). s.mu is held.
func (s *SessionStore) unlink(e *sessionEntry) {
	s.all.of(e.st.Ready).Remove(e.all)
	if e.peer == nil {
		return
	}
	p := s.peers[e.st.Peer]
	p.of(e.st.Ready).Remove(e.peer)
	if p.len() == 0 {
		delete(s.peers, e.st.Peer)
	}
	e.peer = nil
}

func (s *SessionStore) remove(e *sessionEntry) {
	delete(s.byID, e.st.ID)
	s.unlink(e)
}

// insertByLastSeen inserts e into l, which is in LastSeen order: a new
// session is normally the most recent, but its LastSeen may have been
// given.
func insertByLastSeen(l *list.List, e *sessionEntry) *list.Element {
	mark := l.Back()
	for mark != nil && mark.Value.(*sessionEntry).st.LastSeen.After(e.st.LastSeen) {
		mark = mark.Prev()
	}
	if mark == nil {
		return l.PushFront(e)
	}
	return l.InsertAfter(e, mark)
}

// purge drops expired sessions from the fronts of the lists (the oldest
// LastSeen) and adds their ids to gone. s.mu is held.
func (s *SessionStore) purge(now time.Time, gone *[]string) {
	for _, l := range []*list.List{&s.all.pending, &s.all.ready} {
		for f := l.Front(); f != nil; f = l.Front() {
			e := f.Value.(*sessionEntry)
			if !s.expired(e, now) {
				break
			}
			s.remove(e)
			*gone = append(*gone, e.st.ID)
		}
	}
}

// cloneState copies the slices of st, so that neither the caller nor the
// store sees the other's later changes.
func cloneState(st ports.SessionState) ports.SessionState {
	st.Capabilities = slices.Clone(st.Capabilities)
	st.Subscriptions = slices.Clone(st.Subscriptions)
	if st.Client.Icons != nil {
		icons := make([]domain.Icon, len(st.Client.Icons))
		for i, ic := range st.Client.Icons {
			ic.Sizes = slices.Clone(ic.Sizes)
			icons[i] = ic
		}
		st.Client.Icons = icons
	}
	return st
}
