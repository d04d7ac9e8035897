package memory

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

	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [TaskStoreOptions].
const (
	// DefaultMaxTasks bounds the live tasks of a store.
	DefaultMaxTasks = 10_000
	// DefaultMaxTasksPerOwner bounds the live tasks of one owner: 10% of
	// DefaultMaxTasks, so that one owner cannot fill the store.
	DefaultMaxTasksPerOwner = 1_000
	// DefaultMaxTaskPayloadBytes bounds each payload of a task (its
	// InputRequests, Result, Error): 4 MiB, the Streamable HTTP
	// transport's default message size.
	DefaultMaxTaskPayloadBytes = 4 << 20
	// DefaultMaxTaskStatusMessageBytes bounds a task's StatusMessage.
	DefaultMaxTaskStatusMessageBytes = 4 << 10
	// DefaultTaskTTL is the TTL of a task created without one.
	DefaultTaskTTL = time.Hour
	// DefaultMaxTaskTTL caps a task's TTL.
	DefaultMaxTaskTTL = 24 * time.Hour
	// DefaultMaxTaskPage bounds the tasks of one List page.
	DefaultMaxTaskPage = 100
)

// TaskStoreOptions configures [NewTaskStore]. Zero (or negative) fields
// take their defaults.
type TaskStoreOptions struct {
	// MaxTasks bounds the live tasks of the store (default
	// [DefaultMaxTasks]).
	MaxTasks int
	// MaxTasksPerOwner bounds the live tasks of one owner (default
	// [DefaultMaxTasksPerOwner]; never more than MaxTasks).
	MaxTasksPerOwner int
	// MaxPayloadBytes bounds each of a task's InputRequests, Result and
	// Error (default [DefaultMaxTaskPayloadBytes]).
	MaxPayloadBytes int
	// MaxStatusMessageBytes bounds a task's StatusMessage (default
	// [DefaultMaxTaskStatusMessageBytes]).
	MaxStatusMessageBytes int
	// DefaultTTL is the TTL of a task created with none (default
	// [DefaultTaskTTL]; never more than MaxTTL).
	DefaultTTL time.Duration
	// MaxTTL caps the TTL of every task (default [DefaultMaxTaskTTL]).
	MaxTTL time.Duration
	// MaxPage bounds the tasks of one List page (default
	// [DefaultMaxTaskPage]).
	MaxPage int
	// Clock tells the time (default the system clock).
	Clock ports.Clock
}

func positive[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// TaskStore is the in-memory [ports.TaskStore]: the tasks of one process.
// Expired tasks are dropped lazily: by the operation that finds one, and,
// when the store or an owner is at its limit, by Create, which then drops
// every expired task before it refuses.
type TaskStore struct {
	opts TaskStoreOptions

	mu      sync.Mutex
	seq     uint64
	tasks   map[string]*taskEntry
	byOwner map[string]map[string]*taskEntry
}

type taskEntry struct {
	t   ports.Task
	seq uint64
}

var _ ports.TaskStore = (*TaskStore)(nil)

// NewTaskStore returns an empty task store.
func NewTaskStore(opts TaskStoreOptions) *TaskStore {
	opts.MaxTasks = positive(opts.MaxTasks, DefaultMaxTasks)
	opts.MaxTasksPerOwner = min(positive(opts.MaxTasksPerOwner, DefaultMaxTasksPerOwner), opts.MaxTasks)
	opts.MaxPayloadBytes = positive(opts.MaxPayloadBytes, DefaultMaxTaskPayloadBytes)
	opts.MaxStatusMessageBytes = positive(opts.MaxStatusMessageBytes, DefaultMaxTaskStatusMessageBytes)
	opts.MaxTTL = positive(opts.MaxTTL, DefaultMaxTaskTTL)
	opts.DefaultTTL = min(positive(opts.DefaultTTL, DefaultTaskTTL), opts.MaxTTL)
	opts.MaxPage = positive(opts.MaxPage, DefaultMaxTaskPage)
	if opts.Clock == nil {
		opts.Clock = ports.SystemClock{}
	}
	return &TaskStore{opts: opts, tasks: map[string]*taskEntry{}, byOwner: map[string]map[string]*taskEntry{}}
}

func (s *TaskStore) now() time.Time { return s.opts.Clock.Now().UTC().Truncate(time.Millisecond) }

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

func (s *TaskStore) checkSizes(u ports.TaskUpdate) error {
	if err := CheckTaskSizes(s.opts.MaxStatusMessageBytes, s.opts.MaxPayloadBytes, u.StatusMessage, u.InputRequests, u.Result, u.Error, u.State); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	return nil
}

// CheckTaskSizes checks a task's status message against maxMessage bytes
// and each payload (InputRequests, Result, Error) against maxPayload
// bytes (State too); the error wraps [ports.ErrTaskTooLarge]. Every task store bounds
// tasks this way (mcpredis.TaskStore too).
func CheckTaskSizes(maxMessage, maxPayload int, message string, payloads ...[]byte) error {
	if len(message) > maxMessage {
		return fmt.Errorf("%w: status message of %d bytes, over %d", ports.ErrTaskTooLarge, len(message), maxMessage)
	}
	for _, p := range payloads {
		if len(p) > maxPayload {
			return fmt.Errorf("%w: payload of %d bytes, over %d", ports.ErrTaskTooLarge, len(p), maxPayload)
		}
	}
	return nil
}

// live returns the owner's unexpired task id, dropping it when expired.
// s.mu is held.
func (s *TaskStore) live(id, owner string, now time.Time) *taskEntry {
	e := s.tasks[id]
	if e == nil {
		return nil
	}
	if !now.Before(e.t.ExpiresAt()) {
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
}

// purge drops the expired tasks of m. s.mu is held.
func (s *TaskStore) purge(m map[string]*taskEntry, now time.Time) {
	for _, e := range m {
		if !now.Before(e.t.ExpiresAt()) {
			s.remove(e)
		}
	}
}

// Create stores a new task (see [ports.TaskStore.Create] and
// [TaskStoreOptions] for the limits).
func (s *TaskStore) Create(_ context.Context, t ports.Task) (ports.Task, error) {
	u := ports.TaskUpdate{Status: t.Status, StatusMessage: t.StatusMessage, InputRequests: t.InputRequests, Result: t.Result, Error: t.Error, State: t.State}
	if err := u.Check(); err != nil {
		return ports.Task{}, fmt.Errorf("memory: %w", err)
	}
	if t.Status.Terminal() {
		return ports.Task{}, fmt.Errorf("memory: %w: a new task cannot be %s", ports.ErrInvalidTaskUpdate, t.Status)
	}
	if err := s.checkSizes(u); err != nil {
		return ports.Task{}, err
	}
	if t.ID == "" {
		t.ID = rand.Text()
	}
	t.TTL = min(cmp.Or(max(t.TTL, 0), s.opts.DefaultTTL), s.opts.MaxTTL).Truncate(time.Millisecond)
	t.TTL = max(t.TTL, time.Millisecond)
	t.PollInterval = max(t.PollInterval, 0).Truncate(time.Millisecond)
	t = cloneTask(t)

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	t.CreatedAt, t.UpdatedAt, t.Version = now, now, 1
	if e := s.tasks[t.ID]; e != nil {
		if now.Before(e.t.ExpiresAt()) {
			return ports.Task{}, fmt.Errorf("memory: %w: %q", ports.ErrTaskExists, t.ID)
		}
		s.remove(e)
	}
	if len(s.tasks) >= s.opts.MaxTasks {
		s.purge(s.tasks, now)
		if len(s.tasks) >= s.opts.MaxTasks {
			return ports.Task{}, fmt.Errorf("memory: %w: the store holds %d", ports.ErrTooManyTasks, s.opts.MaxTasks)
		}
	}
	m := s.byOwner[t.Owner]
	if len(m) >= s.opts.MaxTasksPerOwner {
		s.purge(m, now)
		if m = s.byOwner[t.Owner]; len(m) >= s.opts.MaxTasksPerOwner {
			return ports.Task{}, fmt.Errorf("memory: %w: the owner holds %d", ports.ErrTooManyTasksForOwner, s.opts.MaxTasksPerOwner)
		}
	}
	if m == nil {
		m = map[string]*taskEntry{}
		s.byOwner[t.Owner] = m
	}
	s.seq++
	e := &taskEntry{t: t, seq: s.seq}
	s.tasks[t.ID] = e
	m[t.ID] = e
	return cloneTask(t), nil
}

// Get returns the owner's live task.
func (s *TaskStore) Get(_ context.Context, id, owner string) (ports.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.live(id, owner, s.now())
	if e == nil {
		return ports.Task{}, fmt.Errorf("memory: %w", ports.ErrTaskNotFound)
	}
	return cloneTask(e.t), nil
}

// Update applies u to the owner's live task.
func (s *TaskStore) Update(_ context.Context, id, owner string, u ports.TaskUpdate) (ports.Task, error) {
	if err := u.Check(); err != nil {
		return ports.Task{}, fmt.Errorf("memory: %w", err)
	}
	if err := s.checkSizes(u); err != nil {
		return ports.Task{}, err
	}
	u.InputRequests, u.Result, u.Error, u.State = cloneRaw(u.InputRequests), cloneRaw(u.Result), cloneRaw(u.Error), cloneRaw(u.State)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	e := s.live(id, owner, now)
	if e == nil {
		return ports.Task{}, fmt.Errorf("memory: %w", ports.ErrTaskNotFound)
	}
	if !ports.TaskTransitionAllowed(e.t.Status, u.Status) {
		return ports.Task{}, fmt.Errorf("memory: task %q: %w", id, &ports.TaskTransitionError{From: e.t.Status, To: u.Status})
	}
	if u.IfVersion > 0 && u.IfVersion != e.t.Version {
		return ports.Task{}, fmt.Errorf("memory: task %q at version %d, not %d: %w", id, e.t.Version, u.IfVersion, ports.ErrTaskConflict)
	}
	e.t.Status, e.t.StatusMessage, e.t.UpdatedAt = u.Status, u.StatusMessage, now
	e.t.InputRequests, e.t.Result, e.t.Error = u.InputRequests, u.Result, u.Error
	switch {
	case u.Status.Terminal():
		e.t.State = nil
	case u.State != nil:
		e.t.State = u.State
	}
	e.t.Version++
	return cloneTask(e.t), nil
}

// Cancel makes the owner's live task cancelled; a terminal one is returned
// as it is.
func (s *TaskStore) Cancel(_ context.Context, id, owner, message string) (ports.Task, error) {
	if err := s.checkSizes(ports.TaskUpdate{StatusMessage: message}); err != nil {
		return ports.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	e := s.live(id, owner, now)
	if e == nil {
		return ports.Task{}, fmt.Errorf("memory: %w", ports.ErrTaskNotFound)
	}
	if !e.t.Status.Terminal() {
		e.t.Status, e.t.StatusMessage, e.t.UpdatedAt = ports.TaskCancelled, message, now
		e.t.InputRequests, e.t.Result, e.t.Error, e.t.State = nil, nil, nil, nil
		e.t.Version++
	}
	return cloneTask(e.t), nil
}

// List returns a page of the owner's live tasks, oldest first. The cursor
// is the creation number of the last task of the previous page.
func (s *TaskStore) List(_ context.Context, owner, cursor string, limit int) ([]ports.Task, string, error) {
	var after uint64
	if cursor != "" {
		n, err := strconv.ParseUint(cursor, 10, 64)
		if err != nil {
			return nil, "", fmt.Errorf("memory: %w", ports.ErrInvalidTaskCursor)
		}
		after = n
	}
	if limit <= 0 || limit > s.opts.MaxPage {
		limit = s.opts.MaxPage
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var page []*taskEntry
	for _, e := range s.byOwner[owner] {
		if e.seq <= after {
			continue
		}
		if !now.Before(e.t.ExpiresAt()) {
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
