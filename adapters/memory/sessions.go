package memory

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [SessionStoreOptions].
const (
	DefaultIdleTimeout = 30 * time.Minute
	DefaultMaxSessions = 10_000
)

// ErrDuplicateSession is wrapped by [SessionStore.Create]'s error for an id
// that names a live session.
var ErrDuplicateSession = errors.New("duplicate session id")

// SessionStoreOptions configures [NewSessionStore]. Zero fields take their
// defaults.
type SessionStoreOptions struct {
	// IdleTimeout is how long a session lives without activity (Create, Get
	// or Update); a session whose LastSeen is more than IdleTimeout ago is
	// expired. Default 30 minutes.
	IdleTimeout time.Duration
	// MaxSessions bounds the number of live sessions. Default 10,000.
	MaxSessions int
	// Clock tells the time. Default ports.SystemClock{}.
	Clock ports.Clock
}

// SessionStore is a [ports.SessionStore] kept in memory, for a server that
// runs as a single instance. It is safe for concurrent use and every
// operation is O(1) amortized: sessions are kept in order of LastSeen, so
// expired ones are found at the front and purged lazily, on access and on
// Create, or by [SessionStore.Sweep]. (A Create given a LastSeen older than
// other sessions' costs a walk back to its place.) It starts no goroutine.
//
// Use [NewSessionStore]; the zero value is not ready to use.
type SessionStore struct {
	idle  time.Duration
	max   int
	clock ports.Clock

	mu   sync.Mutex
	byID map[string]*list.Element // of *ports.SessionState
	lru  list.List                // of *ports.SessionState, oldest LastSeen first
}

var _ ports.SessionStore = (*SessionStore)(nil)

// NewSessionStore returns an empty store.
func NewSessionStore(opts SessionStoreOptions) *SessionStore {
	s := &SessionStore{
		idle:  opts.IdleTimeout,
		max:   opts.MaxSessions,
		clock: opts.Clock,
		byID:  make(map[string]*list.Element),
	}
	if s.idle <= 0 {
		s.idle = DefaultIdleTimeout
	}
	if s.max <= 0 {
		s.max = DefaultMaxSessions
	}
	if s.clock == nil {
		s.clock = ports.SystemClock{}
	}
	return s
}

// Create stores a new session. A zero Created or LastSeen is set to the
// clock's now. An id that names a live session is refused with an error
// wrapping [ErrDuplicateSession] (an expired one is replaced). When the
// store holds MaxSessions live sessions, after dropping the expired ones,
// Create is refused with an error wrapping [ports.ErrTooManySessions].
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
	defer s.mu.Unlock()
	s.purge(now)
	if e, ok := s.byID[st.ID]; ok {
		if !s.expired(e, now) {
			return fmt.Errorf("session %q: %w", st.ID, ErrDuplicateSession)
		}
		s.remove(e)
	}
	if len(s.byID) >= s.max {
		return fmt.Errorf("memory session store: %d sessions: %w", s.max, ports.ErrTooManySessions)
	}
	// Keep the list in LastSeen order: a new session is normally the most
	// recent, but its LastSeen may have been given.
	p := &st
	mark := s.lru.Back()
	for mark != nil && mark.Value.(*ports.SessionState).LastSeen.After(st.LastSeen) {
		mark = mark.Prev()
	}
	if mark == nil {
		s.byID[st.ID] = s.lru.PushFront(p)
	} else {
		s.byID[st.ID] = s.lru.InsertAfter(p, mark)
	}
	return nil
}

// Get returns a live session, or an error wrapping
// [ports.ErrSessionNotFound]. It counts as activity: LastSeen becomes the
// clock's now, in the store and in the state returned.
func (s *SessionStore) Get(_ context.Context, id string) (ports.SessionState, error) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.live(id, now)
	if err != nil {
		return ports.SessionState{}, err
	}
	p := e.Value.(*ports.SessionState)
	s.touch(e, now)
	return cloneState(*p), nil
}

// Update replaces the state of the live session st.ID, or returns an error
// wrapping [ports.ErrSessionNotFound]. It counts as activity: LastSeen
// becomes the clock's now. Created is kept from the stored state.
func (s *SessionStore) Update(_ context.Context, st ports.SessionState) error {
	now := s.clock.Now()
	st = cloneState(st)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.live(st.ID, now)
	if err != nil {
		return err
	}
	p := e.Value.(*ports.SessionState)
	st.Created = p.Created
	*p = st
	s.touch(e, now)
	return nil
}

// Delete ends a session; deleting an unknown one is not an error.
func (s *SessionStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byID[id]; ok {
		s.remove(e)
	}
	return nil
}

// Sweep drops the expired sessions now and returns how many it dropped.
// Calling it is optional: expired sessions are also dropped lazily.
func (s *SessionStore) Sweep() int {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.purge(now)
}

// Len returns the number of live sessions (it drops the expired ones).
func (s *SessionStore) Len() int {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(now)
	return len(s.byID)
}

// live finds the live session id, dropping it if it has expired. s.mu is
// held.
func (s *SessionStore) live(id string, now time.Time) (*list.Element, error) {
	e, ok := s.byID[id]
	if ok && s.expired(e, now) {
		s.remove(e)
		ok = false
	}
	if !ok {
		return nil, fmt.Errorf("session %q: %w", id, ports.ErrSessionNotFound)
	}
	return e, nil
}

// touch records activity on e. s.mu is held.
func (s *SessionStore) touch(e *list.Element, now time.Time) {
	p := e.Value.(*ports.SessionState)
	if now.After(p.LastSeen) {
		p.LastSeen = now
	}
	s.lru.MoveToBack(e)
}

func (s *SessionStore) expired(e *list.Element, now time.Time) bool {
	return now.Sub(e.Value.(*ports.SessionState).LastSeen) > s.idle
}

func (s *SessionStore) remove(e *list.Element) {
	delete(s.byID, e.Value.(*ports.SessionState).ID)
	s.lru.Remove(e)
}

// purge drops expired sessions from the front of the list (the oldest
// LastSeen) and returns how many. s.mu is held.
func (s *SessionStore) purge(now time.Time) int {
	n := 0
	for e := s.lru.Front(); e != nil && s.expired(e, now); e = s.lru.Front() {
		s.remove(e)
		n++
	}
	return n
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
