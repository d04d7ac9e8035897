package memory

import "github.com/hexmcp/hexmcp/internal/memstore"

// The bus and the session, event and task stores are implemented in
// internal/memstore, below the adapters, so that other adapters can use
// them as their defaults (the Streamable HTTP handler's stores, the tasks
// extension's store, the local delivery of mcpredis.Bus) without importing
// this package. The names here are theirs: a *memory.SessionStore is a
// *memstore.SessionStore, and so on. Their methods are documented there.

// Bus is a [ports.NotificationBus] (and a [ports.AddressedBus]) in memory:
// it carries notices between the engines of one process, for a server that
// runs as several instances in one process (tests, or one process serving
// several listeners). Instances share a bus by sharing the value; a
// single-instance server needs no bus at all. Publish never blocks: each
// subscription has a goroutine and a bounded queue of its own, and a
// notice that finds the queue full is dropped for that subscriber and
// counted (Dropped). Use [NewBus]; the zero value is not ready to use.
type Bus = memstore.Bus

// BusOptions configures [NewBus]. Zero (or negative) fields take their
// defaults (MaxNoticeBytes 4 MiB, MaxQueued 1,024 notices, MaxQueuedBytes
// 16 MiB): no field turns a bound off.
type BusOptions = memstore.BusOptions

// NewBus returns an empty bus.
func NewBus(opts BusOptions) *Bus { return memstore.NewBus(opts) }

// SessionStore is a [ports.SessionStore] (and a
// [ports.SessionRemovalNotifier]) kept in memory, for a server that runs as
// a single instance. Every operation is O(1) amortized and it starts no
// goroutine: expired sessions are dropped lazily, or by Sweep. At a limit,
// Create makes room by evicting sessions that have been idle long enough
// (of the same client first, see [SessionStoreOptions]) and refuses the
// session only when none can go. Use [NewSessionStore]; the zero value is
// not ready to use.
type SessionStore = memstore.SessionStore

// SessionStoreOptions configures [NewSessionStore]. Zero fields take their
// defaults (MaxSessions 10,000, MaxSessionsPerClient 100, …,
// [DefaultMinIdleForEviction], 5 seconds);
// turning a limit off takes an explicit setting
// ([ports.UnlimitedSessionsPerClient], [ports.UnlimitedSessionBytes],
// [NoPendingTimeout], [NeverEvict]).
type SessionStoreOptions = memstore.SessionStoreOptions

// NewSessionStore returns an empty store.
func NewSessionStore(opts SessionStoreOptions) *SessionStore {
	return memstore.NewSessionStore(opts)
}

// Defaults of [SessionStoreOptions] of the in-memory store's own (the
// limits every session store shares are in ports).
const (
	// DefaultMinIdleForEviction is how long a ready session must have been
	// idle before Create may evict it to make room: twice the Streamable
	// HTTP transport's default keep-alive (30 s), so that a session with an
	// open GET stream, or one whose client pings it, is never evicted.
	DefaultMinIdleForEviction = memstore.DefaultMinIdleForEviction
	// DefaultMinPendingIdleForEviction is how long a pending session must
	// have been idle before Create may evict it to make room (5 s): far
	// longer than the round trip between the initialize response and
	// notifications/initialized.
	defaultMinPendingIdleForEviction = memstore.DefaultMinPendingIdleForEviction
)

// Settings of [SessionStoreOptions] that turn a safety off.
const (
	// NoPendingTimeout, as PendingTimeout, lets a pending session live as
	// long as a ready one (IdleTimeout).
	NoPendingTimeout = memstore.NoPendingTimeout
	// NeverEvict, as MinIdleForEviction or MinPendingIdleForEviction, keeps
	// sessions of that kind (ready or pending) from ever being evicted.
	NeverEvict = memstore.NeverEvict
)

// ErrDuplicateSession is wrapped by [SessionStore]'s Create error for an id
// that names a live session.
var ErrDuplicateSession = memstore.ErrDuplicateSession

// EventStore is a [ports.EventStore] kept in memory, for a server that runs
// as a single instance: bounded in events, streams and bytes (see
// [EventStoreOptions]), safe for concurrent use, and it starts no
// goroutine. Its event ids name its instance, so ids of another store (one
// from before a restart) are unknown. Use [NewEventStore]; the zero value
// is not ready to use.
type EventStore = memstore.EventStore

// EventStoreOptions configures [NewEventStore]. Zero (or negative) fields
// take their defaults (MaxBytes 64 MiB, MaxEventsPerStream 1,000,
// …): no field turns a bound
// off. The byte budgets count each kept event as len(data) +
// 128 bytes; past one, the oldest events under it are dropped
// first.
type EventStoreOptions = memstore.EventStoreOptions

// NewEventStore returns an empty store.
func NewEventStore(opts EventStoreOptions) *EventStore { return memstore.NewEventStore(opts) }

// DefaultMaxEventBytes bounds the bytes of all the events an in-memory
// event store keeps: 64 MiB. (Its other defaults are every event store's.)
const defaultMaxEventBytes = memstore.DefaultMaxEventBytes

// TaskStore is the in-memory [ports.TaskStore]: the tasks of one process,
// bounded as [ports.TaskStore] says. Expired tasks are dropped lazily.
type TaskStore = memstore.TaskStore

// TaskStoreOptions configures [NewTaskStore]. Zero (or negative) fields
// take their defaults (MaxTasks 10,000, MaxTasksPerClient 1,000, …).
type TaskStoreOptions = memstore.TaskStoreOptions

// NewTaskStore returns an empty task store.
func NewTaskStore(opts TaskStoreOptions) *TaskStore { return memstore.NewTaskStore(opts) }
