package memstore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// TaskStoreOptions configures [NewTaskStore]. Zero (or negative) fields
// take their defaults.
type TaskStoreOptions struct {
	// MaxTasks bounds the live tasks of the store (default
	// 10,000).
	MaxTasks int
	// MaxTasksPerClient bounds the live tasks of one client
	// ([ports.Task.Client]; default 1,000; never
	// more than MaxTasks).
	MaxTasksPerClient int
	// MaxTaskBytes bounds what one task keeps, its InputRequests,
	// Result, Error and State together (default 4 MiB).
	MaxTaskBytes int
	// MaxBytesPerClient bounds what the live tasks of one client keep
	// together (default 16 MiB; never less than
	// MaxTaskBytes nor more than MaxBytes).
	MaxBytesPerClient int
	// MaxBytes bounds what the live tasks of the store keep together
	// (default 128 MiB).
	MaxBytes int
	// MaxStatusMessageBytes bounds a task's StatusMessage (default
	// 4 KiB).
	MaxStatusMessageBytes int
	// DefaultTTL is the TTL of a task created with none (default
	// 1 hour; never more than MaxTTL).
	DefaultTTL time.Duration
	// MaxTTL caps the TTL of every task (default 24 hours).
	MaxTTL time.Duration
	// MaxPage bounds the tasks of one List page (default
	// 100).
	MaxPage int
	// Clock tells the time (default the system clock).
	Clock ports.Clock
}

// limits are the limits opts configures, defaults applied.
func (opts TaskStoreOptions) limits() portlimits.TaskLimits {
	return portlimits.TaskLimits{
		MaxTasks: opts.MaxTasks, MaxTasksPerClient: opts.MaxTasksPerClient,
		MaxTaskBytes: opts.MaxTaskBytes, MaxBytesPerClient: opts.MaxBytesPerClient, MaxBytes: opts.MaxBytes,
		MaxStatusMessageBytes: opts.MaxStatusMessageBytes,
		DefaultTTL:            opts.DefaultTTL, MaxTTL: opts.MaxTTL, MaxPage: opts.MaxPage,
	}.WithDefaults()
}

// TaskStore is the in-memory [ports.TaskStore]: the tasks of one process.
// Expired tasks are dropped lazily: by the operation that finds one, and,
// when the store or a client is at a limit, by Create (and an Update
// that grows a task), which then drops the expired tasks before it
// refuses.
type TaskStore struct {
	clock ports.Clock
	lim   portlimits.TaskLimits

	mu       sync.Mutex
	seq      uint64
	tasks    map[string]*taskEntry
	byOwner  map[string]map[string]*taskEntry
	byClient map[string]*clientTasks
	bytes    int // what every task counts together
}

type taskEntry struct {
	t     ports.Task
	seq   uint64
	bytes int // what t counts (portlimits.Bytes)
}

// clientTasks are the live tasks of one client and what they count.
type clientTasks struct {
	tasks map[string]*taskEntry
	bytes int
}

var _ ports.TaskStore = (*TaskStore)(nil)

// NewTaskStore returns an empty task store.
func NewTaskStore(opts TaskStoreOptions) *TaskStore {
	clock := opts.Clock
	if clock == nil {
		clock = ports.SystemClock{}
	}
	return &TaskStore{clock: clock, lim: opts.limits(), tasks: map[string]*taskEntry{},
		byOwner: map[string]map[string]*taskEntry{}, byClient: map[string]*clientTasks{}}
}

func (s *TaskStore) now() time.Time { return s.clock.Now().UTC().Truncate(time.Millisecond) }

func cloneRaw(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

func cloneTask(t ports.Task) ports.Task {
	t.InputRequests, t.Result, t.Error, t.State = cloneRaw(t.InputRequests), cloneRaw(t.Result), cloneRaw(t.Error), cloneRaw(t.State)
	return t
}

// bare is t without its payloads and state (what Claim returns).
func bare(t ports.Task) ports.Task {
	t.InputRequests, t.Result, t.Error, t.State = nil, nil, nil, nil
	return t
}

// live returns the owner's unexpired task id, dropping it when expired.
// s.mu is held.
func (s *TaskStore) live(id, owner string, now time.Time) *taskEntry {
	e := s.tasks[id]
	if e == nil {
		return nil
	}
	if !now.Before(portlimits.ExpiresAt(e.t)) {
		s.remove(e)
		return nil
	}
	if e.t.Owner != owner {
		return nil
	}
	return e
}

// remove drops e. s.mu is held.
func (s *TaskStore) remove(e *taskEntry) {
	delete(s.tasks, e.t.ID)
	if m := s.byOwner[e.t.Owner]; m != nil {
		delete(m, e.t.ID)
		if len(m) == 0 {
			delete(s.byOwner, e.t.Owner)
		}
	}
	if c := s.byClient[e.t.Client]; c != nil {
		delete(c.tasks, e.t.ID)
		c.bytes -= e.bytes
		if len(c.tasks) == 0 {
			delete(s.byClient, e.t.Client)
		}
	}
	s.bytes -= e.bytes
}

// purge drops the expired tasks of m. s.mu is held.
func (s *TaskStore) purge(m map[string]*taskEntry, now time.Time) {
	for _, e := range m {
		if !now.Before(portlimits.ExpiresAt(e.t)) {
			s.remove(e)
		}
	}
}

// room checks that client may hold grow more bytes (and, when one is
// added, one more task), dropping expired tasks first when it may not.
// s.mu is held.
func (s *TaskStore) room(client string, grow int, adding bool, now time.Time) error {
	full := func() error {
		c := s.byClient[client]
		switch {
		case adding && len(s.tasks) >= s.lim.MaxTasks:
			return fmt.Errorf("hexmcp: memory task store: %w: the store holds %d", ports.ErrTooManyTasks, s.lim.MaxTasks)
		case adding && c != nil && len(c.tasks) >= s.lim.MaxTasksPerClient:
			return fmt.Errorf("hexmcp: memory task store: %w: the client holds %d", ports.ErrTooManyTasksForClient, s.lim.MaxTasksPerClient)
		case grow > 0 && c != nil && c.bytes+grow > s.lim.MaxBytesPerClient:
			return fmt.Errorf("hexmcp: memory task store: %w: the client's tasks keep %d bytes, %d more is over %d", ports.ErrTooManyTasksForClient, c.bytes, grow, s.lim.MaxBytesPerClient)
		case grow > 0 && s.bytes+grow > s.lim.MaxBytes:
			return fmt.Errorf("hexmcp: memory task store: %w: the store's tasks keep %d bytes, %d more is over %d", ports.ErrTooManyTasks, s.bytes, grow, s.lim.MaxBytes)
		}
		return nil
	}
	if full() == nil {
		return nil
	}
	if c := s.byClient[client]; c != nil {
		s.purge(c.tasks, now)
	}
	if full() == nil {
		return nil
	}
	s.purge(s.tasks, now)
	return full()
}

// Create stores a new task (see [ports.TaskStore.Create] and
// [TaskStoreOptions] for the limits).
func (s *TaskStore) Create(_ context.Context, t ports.Task) (ports.Task, error) {
	if err := s.lim.CheckNew("hexmcp: memory task store", t); err != nil {
		return ports.Task{}, err
	}
	if t.ID == "" {
		t.ID = rand.Text()
	}
	t.Client = cmp.Or(t.Client, t.Owner)
	t.Runner, t.LeaseUntil = "", time.Time{}
	t.TTL = s.lim.TTL(t.TTL)
	t.PollInterval = max(t.PollInterval, 0).Truncate(time.Millisecond)
	t = cloneTask(t)
	n := portlimits.Bytes(t)

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	t.CreatedAt, t.UpdatedAt, t.Version = now, now, 1
	if e := s.tasks[t.ID]; e != nil {
		if now.Before(portlimits.ExpiresAt(e.t)) {
			return ports.Task{}, fmt.Errorf("hexmcp: memory task store: %w: %q", ports.ErrTaskExists, t.ID)
		}
		s.remove(e)
	}
	if err := s.room(t.Client, n, true, now); err != nil {
		return ports.Task{}, err
	}
	m := s.byOwner[t.Owner]
	if m == nil {
		m = map[string]*taskEntry{}
		s.byOwner[t.Owner] = m
	}
	c := s.byClient[t.Client]
	if c == nil {
		c = &clientTasks{tasks: map[string]*taskEntry{}}
		s.byClient[t.Client] = c
	}
	s.seq++
	e := &taskEntry{t: t, seq: s.seq, bytes: n}
	s.tasks[t.ID] = e
	m[t.ID] = e
	c.tasks[t.ID] = e
	c.bytes += n
	s.bytes += n
	return cloneTask(t), nil
}

// Get returns the owner's live task.
func (s *TaskStore) Get(_ context.Context, id, owner string) (ports.Task, error) {
	return s.withLive(id, owner, func(e *taskEntry, _ time.Time) (ports.Task, error) {
		return cloneTask(e.t), nil
	})
}

// withLive runs f, under s.mu, on the owner's live task and the time it
// found it live; without such a task it returns ErrTaskNotFound.
func (s *TaskStore) withLive(id, owner string, f func(e *taskEntry, now time.Time) (ports.Task, error)) (ports.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	e := s.live(id, owner, now)
	if e == nil {
		return ports.Task{}, fmt.Errorf("hexmcp: memory task store: %w", ports.ErrTaskNotFound)
	}
	return f(e, now)
}

// Update applies u to the owner's live task.
func (s *TaskStore) Update(_ context.Context, id, owner string, u ports.TaskUpdate) (ports.Task, error) {
	if err := u.Check(); err != nil {
		return ports.Task{}, err
	}
	if err := s.lim.CheckSizes(u.StatusMessage, u.InputRequests, u.Result, u.Error, u.State); err != nil {
		return ports.Task{}, err
	}
	u.InputRequests, u.Result, u.Error, u.State = cloneRaw(u.InputRequests), cloneRaw(u.Result), cloneRaw(u.Error), cloneRaw(u.State)
	return s.withLive(id, owner, func(e *taskEntry, now time.Time) (ports.Task, error) {
		if !portlimits.TaskTransitionAllowed(e.t.Status, u.Status) {
			return ports.Task{}, fmt.Errorf("hexmcp: memory task store: task %q: %w", id, &ports.TaskTransitionError{From: e.t.Status, To: u.Status})
		}
		if u.IfVersion > 0 && u.IfVersion != e.t.Version {
			return ports.Task{}, fmt.Errorf("hexmcp: memory task store: task %q at version %d, not %d: %w", id, e.t.Version, u.IfVersion, ports.ErrTaskConflict)
		}
		if u.IfRunner != "" && u.IfRunner != e.t.Runner {
			return ports.Task{}, fmt.Errorf("hexmcp: memory task store: task %q: %w", id, ports.ErrTaskClaimed)
		}
		state := e.t.State
		switch {
		case u.Status.Terminal():
			state = nil
		case u.State != nil:
			state = u.State
		}
		if err := s.lim.CheckSizes("", u.InputRequests, u.Result, u.Error, state); err != nil {
			return ports.Task{}, err
		}
		n := portlimits.TaskBytes(u.InputRequests, u.Result, u.Error, state)
		if grow := n - e.bytes; grow > 0 {
			if err := s.room(e.t.Client, grow, false, now); err != nil {
				return ports.Task{}, err
			}
		}
		e.t.Status, e.t.StatusMessage, e.t.UpdatedAt = u.Status, u.StatusMessage, now
		e.t.InputRequests, e.t.Result, e.t.Error, e.t.State = u.InputRequests, u.Result, u.Error, state
		if u.Status != ports.TaskWorking {
			e.t.Runner, e.t.LeaseUntil = "", time.Time{}
		}
		s.recount(e, n)
		e.t.Version++
		return cloneTask(e.t), nil
	})
}

// recount makes e count n bytes. s.mu is held.
func (s *TaskStore) recount(e *taskEntry, n int) {
	d := n - e.bytes
	e.bytes = n
	s.bytes += d
	if c := s.byClient[e.t.Client]; c != nil {
		c.bytes += d
	}
}

// Claim changes the claim on the owner's working task (see
// [ports.TaskStore.Claim]).
func (s *TaskStore) Claim(_ context.Context, id, owner string, c ports.TaskClaim) (ports.Task, error) {
	if c.Runner == "" {
		return ports.Task{}, fmt.Errorf("hexmcp: memory task store: %w: a claim names its runner", ports.ErrInvalidTaskUpdate)
	}
	if c.StatusMessage != nil {
		if err := s.lim.CheckSizes(*c.StatusMessage); err != nil {
			return ports.Task{}, err
		}
	}
	return s.withLive(id, owner, func(e *taskEntry, now time.Time) (ports.Task, error) {
		if e.t.Status != ports.TaskWorking {
			return ports.Task{}, fmt.Errorf("hexmcp: memory task store: task %q: %w", id, &ports.TaskTransitionError{From: e.t.Status, To: ports.TaskWorking})
		}
		if c.IfVersion > 0 && c.IfVersion != e.t.Version {
			return ports.Task{}, fmt.Errorf("hexmcp: memory task store: task %q at version %d, not %d: %w", id, e.t.Version, c.IfVersion, ports.ErrTaskConflict)
		}
		held := e.t.Runner != "" && now.Before(e.t.LeaseUntil)
		switch {
		case c.Lease > 0 && held && e.t.Runner != c.Runner, c.Lease <= 0 && e.t.Runner != c.Runner:
			return ports.Task{}, fmt.Errorf("hexmcp: memory task store: task %q: %w", id, ports.ErrTaskClaimed)
		case c.Lease > 0:
			e.t.Runner, e.t.LeaseUntil = c.Runner, now.Add(c.Lease.Truncate(time.Millisecond))
		default:
			e.t.Runner, e.t.LeaseUntil = "", time.Time{}
		}
		if c.StatusMessage != nil && *c.StatusMessage != e.t.StatusMessage {
			e.t.StatusMessage, e.t.UpdatedAt = *c.StatusMessage, now
			e.t.Version++
		}
		return bare(e.t), nil
	})
}

// Cancel makes the owner's live task cancelled; a terminal one is returned
// as it is.
func (s *TaskStore) Cancel(_ context.Context, id, owner, message string) (ports.Task, error) {
	if err := s.lim.CheckSizes(message); err != nil {
		return ports.Task{}, err
	}
	return s.withLive(id, owner, func(e *taskEntry, now time.Time) (ports.Task, error) {
		if !e.t.Status.Terminal() {
			e.t.Status, e.t.StatusMessage, e.t.UpdatedAt = ports.TaskCancelled, message, now
			e.t.InputRequests, e.t.Result, e.t.Error, e.t.State = nil, nil, nil, nil
			e.t.Runner, e.t.LeaseUntil = "", time.Time{}
			s.recount(e, portlimits.MinTaskBytes)
			e.t.Version++
		}
		return cloneTask(e.t), nil
	})
}

// List returns a page of the owner's live tasks, oldest first. The cursor
// is the creation number of the last task of the previous page.
func (s *TaskStore) List(_ context.Context, owner, cursor string, limit int) ([]ports.Task, string, error) {
	var after uint64
	if cursor != "" {
		n, err := strconv.ParseUint(cursor, 10, 64)
		if err != nil {
			return nil, "", fmt.Errorf("hexmcp: memory task store: %w", ports.ErrInvalidTaskCursor)
		}
		after = n
	}
	limit = s.lim.Page(limit)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var page []*taskEntry
	for _, e := range s.byOwner[owner] {
		if e.seq <= after {
			continue
		}
		if !now.Before(portlimits.ExpiresAt(e.t)) {
			s.remove(e)
			continue
		}
		page = append(page, e)
	}
	slices.SortFunc(page, func(a, b *taskEntry) int { return cmp.Compare(a.seq, b.seq) })
	next := ""
	if len(page) > limit {
		page = page[:limit]
		next = strconv.FormatUint(page[limit-1].seq, 10)
	}
	tasks := make([]ports.Task, len(page))
	for i, e := range page {
		tasks[i] = cloneTask(e.t)
	}
	return tasks, next, nil
}

// Delete drops the owner's task.
func (s *TaskStore) Delete(_ context.Context, id, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.live(id, owner, s.now()); e != nil {
		s.remove(e)
	}
	return nil
}
