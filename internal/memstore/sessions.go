package memstore

import (
	"cmp"
	"container/list"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [SessionStoreOptions] of the in-memory store's own (the
// limits every session store shares, DefaultMaxSessions and the rest, are
// in portlimits: [portlimits.DefaultSessionIdleTimeout] and those after it).
const (
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
// never does: it takes the default. ([ports.UnlimitedSessionsPerClient]
// and [ports.UnlimitedSessionBytes] are the others.)
const (
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
// [ports.UnlimitedSessionsPerClient], [ports.UnlimitedSessionBytes],
// [NoPendingTimeout], [NeverEvict]).
//
// A session is pending until its state is Ready (the client sent
// notifications/initialized), then ready. Activity (Create, Get, Update)
// sets its LastSeen.
type SessionStoreOptions struct {
	// IdleTimeout is how long a ready session lives without activity: one
	// whose LastSeen is more than IdleTimeout ago is expired. Default 30 minutes.
	IdleTimeout time.Duration
	// PendingTimeout is how long a pending session lives without activity.
	// Default 30 s;
	// NoPendingTimeout: as long as a ready one. It is never longer than
	// IdleTimeout.
	PendingTimeout time.Duration
	// MaxSessions bounds the number of live sessions. Default 10,000.
	MaxSessions int
	// MaxSessionsPerClient bounds the number of live sessions of one
	// client (one non-empty SessionState.Peer; sessions without a Peer
	// count only against MaxSessions). Default 100;
	// [ports.UnlimitedSessionsPerClient]: no bound but MaxSessions.
	MaxSessionsPerClient int
	// MaxSessionBytes bounds the bytes the live sessions hold together, as
	// [ports.SessionState.Size] counts them. Default 64 MiB; [ports.UnlimitedSessionBytes]: no
	// bound.
	MaxSessionBytes int
	// MaxSessionBytesPerClient bounds the bytes of the live sessions of one
	// client (one non-empty SessionState.Peer). Default 1 MiB;
	// [ports.UnlimitedSessionBytes]: no bound but MaxSessionBytes. A
	// session larger than it alone is refused.
	MaxSessionBytesPerClient int
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
// When a limit is reached (MaxSessionsPerClient or
// MaxSessionBytesPerClient for the new session's Peer, else MaxSessions or
// MaxSessionBytes), Create makes room by evicting, among the sessions of
// that client (or all sessions), the pending ones seen least recently that
// have been idle for MinPendingIdleForEviction, then the ready ones seen
// least recently that have been idle for MinIdleForEviction, as many as
// the new session needs; only when they are not enough is the new session
// refused (and nothing evicted for it at that limit). So one client that
// opens session after session only ever replaces its own, and a full store
// replaces abandoned sessions rather than lock new clients out. An Update
// that makes a session larger (its subscriptions) makes room the same way,
// never evicting the session updated, or is refused. It implements
// [ports.SessionRemovalNotifier].
//
// Use [NewSessionStore]; the zero value is not ready to use.
type SessionStore struct {
	idle, pendingIdle       time.Duration
	minIdle, minPendingIdle time.Duration // negative: never evict
	max, maxPerClient       int           // maxPerClient <= 0: unlimited
	maxBytes, maxBytesPer   int           // <= 0: unlimited
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
	size int // st.Size()
	all  *list.Element
	peer *list.Element // nil without a Peer
}

// sessionLists are sessions in order of LastSeen, oldest first, the
// pending and the ready ones apart, and the bytes they hold.
type sessionLists struct {
	pending, ready list.List // of *sessionEntry
	bytes          int       // the sum of their sizes
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
		idle:           portlimits.Positive(opts.IdleTimeout, portlimits.DefaultSessionIdleTimeout),
		pendingIdle:    opts.PendingTimeout,
		minIdle:        cmp.Or(opts.MinIdleForEviction, DefaultMinIdleForEviction),
		minPendingIdle: cmp.Or(opts.MinPendingIdleForEviction, DefaultMinPendingIdleForEviction),
		max:            portlimits.Positive(opts.MaxSessions, portlimits.DefaultMaxSessions),
		maxPerClient:   cmp.Or(opts.MaxSessionsPerClient, portlimits.DefaultMaxSessionsPerClient),
		maxBytes:       cmp.Or(opts.MaxSessionBytes, portlimits.DefaultMaxSessionBytes),
		maxBytesPer:    cmp.Or(opts.MaxSessionBytesPerClient, portlimits.DefaultMaxSessionBytesPerClient),
		clock:          opts.Clock,
		byID:           make(map[string]*sessionEntry),
		peers:          make(map[string]*sessionLists),
	}
	switch {
	case s.pendingIdle == 0:
		s.pendingIdle = portlimits.DefaultSessionPendingTimeout
	case s.pendingIdle < 0:
		s.pendingIdle = s.idle
	}
	s.pendingIdle = min(s.pendingIdle, s.idle)
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
// MaxSessionsPerClient sessions or its sessions would hold more than
// MaxSessionBytesPerClient bytes, or [ports.ErrTooManySessions] when the
// store holds MaxSessions or its sessions would hold more than
// MaxSessionBytes.
func (s *SessionStore) Create(_ context.Context, st ports.SessionState) error {
	if st.ID == "" {
		return errors.New("hexmcp: memory session store: empty session id")
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
			return fmt.Errorf("hexmcp: memory session store: session %q: %w", st.ID, ErrDuplicateSession)
		}
		s.remove(e) // replaced: not reported
	}
	size := st.Size()
	if err := s.makeRoom(nil, st.Peer, 1, size, now, &gone); err != nil {
		return err
	}
	e := &sessionEntry{st: st, size: size}
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
// state. A larger state than the stored one makes room past a byte budget
// as Create does (never evicting this session), or is refused with an
// error wrapping [ports.ErrTooManySessionsForClient] or
// [ports.ErrTooManySessions], the stored state left as it was.
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
	size := st.Size()
	if grow := size - e.size; grow > 0 {
		if err := s.makeRoom(e, st.Peer, 0, grow, now, &gone); err != nil {
			return err
		}
	}
	if st.Ready == e.st.Ready {
		s.resize(e, size)
		e.st = st
		s.touch(e, now)
		return nil
	}
	// From pending to ready (or back): into the other lists.
	s.unlink(e)
	e.st, e.size = st, size
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
	dropped, _ := s.sweep()
	return dropped
}

// Len returns the number of live sessions (it drops the expired ones).
func (s *SessionStore) Len() int {
	_, live := s.sweep()
	return live
}

// sweep drops the expired sessions now; it returns how many it dropped and
// how many live on.
func (s *SessionStore) sweep() (dropped, live int) {
	now := s.clock.Now()
	s.mu.Lock()
	var gone []string
	defer func() { s.unlockNotify(gone) }()
	s.purge(now, &gone)
	return len(gone), len(s.byID)
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
		return nil, fmt.Errorf("hexmcp: memory session store: session %q: %w", id, ports.ErrSessionNotFound)
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

// makeRoom makes room for n more sessions (1 for Create, 0 for Update)
// and size more bytes, of peer, at the per-client limits and then at the
// store's, by evicting sessions other than keep (see [SessionStore]), or
// returns the error that refuses them. s.mu is held.
func (s *SessionStore) makeRoom(keep *sessionEntry, peer string, n, size int, now time.Time, gone *[]string) error {
	if peer != "" {
		p := s.peers[peer]
		held, count := 0, 0
		if p != nil {
			held, count = p.bytes, p.len()
		}
		needN, needB := 0, 0
		if s.maxPerClient > 0 {
			needN = count + n - s.maxPerClient
		}
		if s.maxBytesPer > 0 {
			needB = held + size - s.maxBytesPer
		}
		if needN > 0 || needB > 0 {
			if s.maxBytesPer > 0 && size > s.maxBytesPer {
				return fmt.Errorf("hexmcp: memory session store: client %q: %d bytes more for one session, past the %d its sessions may hold: %w", peer, size, s.maxBytesPer, ports.ErrTooManySessionsForClient)
			}
			vs := s.victims(p, now, needN, needB, keep)
			if vs == nil {
				if needN > 0 {
					return fmt.Errorf("hexmcp: memory session store: client %q holds %d sessions: %w", peer, s.maxPerClient, ports.ErrTooManySessionsForClient)
				}
				return fmt.Errorf("hexmcp: memory session store: client %q: its sessions would hold %d bytes, past %d: %w", peer, held+size, s.maxBytesPer, ports.ErrTooManySessionsForClient)
			}
			s.evict(vs, gone)
		}
	}
	needN, needB := len(s.byID)+n-s.max, 0
	if s.maxBytes > 0 {
		needB = s.all.bytes + size - s.maxBytes
	}
	if needN > 0 || needB > 0 {
		if s.maxBytes > 0 && size > s.maxBytes {
			return fmt.Errorf("hexmcp: memory session store: %d bytes more for one session, past the %d the sessions may hold: %w", size, s.maxBytes, ports.ErrTooManySessions)
		}
		vs := s.victims(&s.all, now, needN, needB, keep)
		if vs == nil {
			if needN > 0 {
				return fmt.Errorf("hexmcp: memory session store: %d sessions: %w", s.max, ports.ErrTooManySessions)
			}
			return fmt.Errorf("hexmcp: memory session store: the sessions would hold %d bytes, past %d: %w", s.all.bytes+size, s.maxBytes, ports.ErrTooManySessions)
		}
		s.evict(vs, gone)
	}
	return nil
}

// evict removes the sessions vs and adds their ids to gone. s.mu is held.
func (s *SessionStore) evict(vs []*sessionEntry, gone *[]string) {
	for _, v := range vs {
		s.remove(v)
		*gone = append(*gone, v.st.ID)
	}
}

// victims returns the sessions of l (nil: none) that may be evicted to
// free n places and size bytes, other than keep, or nil when those that
// may go are not enough: the pending ones seen least recently that have
// been idle for minPendingIdle, then the ready ones seen least recently
// that have been idle for minIdle. s.mu is held.
func (s *SessionStore) victims(l *sessionLists, now time.Time, n, size int, keep *sessionEntry) []*sessionEntry {
	if l == nil {
		return nil
	}
	var vs []*sessionEntry
	freed := 0
	enough := func() bool { return len(vs) >= n && freed >= size }
	for _, k := range []struct {
		l       *list.List
		minIdle time.Duration
	}{{&l.pending, s.minPendingIdle}, {&l.ready, s.minIdle}} {
		if k.minIdle < 0 {
			continue
		}
		for f := k.l.Front(); f != nil && !enough(); f = f.Next() {
			e := f.Value.(*sessionEntry)
			if now.Sub(e.st.LastSeen) < k.minIdle {
				break // the later ones were seen more recently still
			}
			if e != keep {
				vs = append(vs, e)
				freed += e.size
			}
		}
	}
	if !enough() {
		return nil
	}
	return vs
}

// link puts e in the lists of its kind, at its place by LastSeen. s.mu is
// held.
func (s *SessionStore) link(e *sessionEntry) {
	e.all = insertByLastSeen(s.all.of(e.st.Ready), e)
	s.all.bytes += e.size
	if e.st.Peer == "" {
		return
	}
	p := s.peers[e.st.Peer]
	if p == nil {
		p = new(sessionLists)
		s.peers[e.st.Peer] = p
	}
	e.peer = insertByLastSeen(p.of(e.st.Ready), e)
	p.bytes += e.size
}

// resize records that e now holds size bytes. s.mu is held.
func (s *SessionStore) resize(e *sessionEntry, size int) {
	s.all.bytes += size - e.size
	if e.peer != nil {
		s.peers[e.st.Peer].bytes += size - e.size
	}
	e.size = size
}

// unlink takes e out of its lists (not out of byID). s.mu is held.
func (s *SessionStore) unlink(e *sessionEntry) {
	s.all.of(e.st.Ready).Remove(e.all)
	s.all.bytes -= e.size
	if e.peer == nil {
		return
	}
	p := s.peers[e.st.Peer]
	p.of(e.st.Ready).Remove(e.peer)
	p.bytes -= e.size
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
