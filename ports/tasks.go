package ports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// TaskStatus is the state of a [Task], as the tasks extension names it.
type TaskStatus string

// The statuses of a task. Working and InputRequired are live; Completed,
// Failed and Cancelled are terminal: a terminal task never changes again.
const (
	// TaskWorking: the request is being processed.
	TaskWorking TaskStatus = "working"
	// TaskInputRequired: the request waits for input from the client
	// (Task.InputRequests holds what it asks for).
	TaskInputRequired TaskStatus = "input_required"
	// TaskCompleted: the request ended with a result (Task.Result), which
	// may be a tool's own error (isError: true).
	TaskCompleted TaskStatus = "completed"
	// TaskFailed: the request ended with a protocol error (Task.Error).
	TaskFailed TaskStatus = "failed"
	// TaskCancelled: the request was cancelled before it ended.
	TaskCancelled TaskStatus = "cancelled"
)

// Terminal reports whether s is a terminal status (completed, failed,
// cancelled).
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Valid reports whether s is one of the five statuses.
func (s TaskStatus) Valid() bool {
	return s == TaskWorking || s == TaskInputRequired || s.Terminal()
}

// Task is a request run as a task (the tasks extension: a tools/call the
// server answers with a task handle, then polled with tasks/get and
// cancelled with tasks/cancel). The store keeps it until CreatedAt + TTL,
// whatever its status: the extension lets a server drop a task after its
// TTL and forbids dropping it sooner.
type Task struct {
	// ID is the task id (taskId), minted by the store at Create when
	// empty: 128 random bits, so that it cannot be guessed.
	ID string
	// Owner is who may see the task (the tasks extension: the
	// authenticated principal's subject, else the session, else the
	// client's address). Every operation but Create takes the owner, and
	// another owner's task is not found.
	Owner string
	// Client is who the task counts against for the store's per-client
	// bounds (in tasks and in bytes): one client across its sessions and
	// connections (the tasks extension: the request's
	// app.Request.ClientKey). Empty at Create: the Owner, which Create
	// then sets it to.
	Client string
	// Status is the task's status.
	Status TaskStatus
	// StatusMessage describes the status for people (statusMessage);
	// optional, bounded by the store.
	StatusMessage string
	// CreatedAt is set by the store at Create (createdAt), UpdatedAt at
	// every change (lastUpdatedAt); both at millisecond precision.
	CreatedAt, UpdatedAt time.Time
	// TTL is how long the task is kept from CreatedAt (ttlMs). Zero at
	// Create takes the store's default; the store caps it at its maximum,
	// and Create returns the TTL it kept, which is what a server reports.
	TTL time.Duration
	// PollInterval is the suggested delay between polls (pollIntervalMs);
	// zero: none suggested.
	PollInterval time.Duration
	// InputRequests is what an input_required task asks the client for:
	// the JSON object of the extension's inputRequests (keyed by
	// server-minted ids). Only an input_required task has it.
	InputRequests json.RawMessage
	// Result is the JSON-RPC result a completed task ended with (for a
	// tool, its CallToolResult). Only a completed task has it.
	Result json.RawMessage
	// Error is the JSON-RPC error object (code, message, data) a failed
	// task ended with. Only a failed task has it.
	Error json.RawMessage
	// State is the server's own data about a live task (what it needs to
	// run it again: the tool and its arguments, the answers collected so
	// far), never sent to the client. It counts with the payloads; a
	// terminal status drops it.
	State json.RawMessage
	// Runner names who runs a working task (an instance of the server)
	// and LeaseUntil when its claim ends, by the store's clock (at
	// millisecond precision); empty and zero while nobody runs it. The
	// store keeps the claim apart from the rest of the task:
	// [TaskStore.Claim] changes it alone, and any status but working
	// drops it.
	Runner     string
	LeaseUntil time.Time
	// Version counts the task's changes: 1 at Create, one more at every
	// Update or Cancel that changes it. [TaskUpdate.IfVersion] makes an
	// update conditional on it.
	Version int64
}

// TaskUpdate is a change of a live task: its new status and what comes
// with it. A terminal status and its Result or Error are written together,
// so that no reader sees a completed task without its result.
type TaskUpdate struct {
	// Status is the new status (it may be the task's current one).
	Status TaskStatus
	// StatusMessage replaces the task's message ("" clears it).
	StatusMessage string
	// InputRequests replaces the task's input requests; only with
	// TaskInputRequired, which requires it.
	InputRequests json.RawMessage
	// Result is the result; only with TaskCompleted, which requires it.
	Result json.RawMessage
	// Error is the JSON-RPC error; only with TaskFailed, which requires
	// it.
	Error json.RawMessage
	// State replaces the task's server-side state ([Task.State]) when not
	// nil; nil keeps it. A terminal status drops it whatever State says.
	State json.RawMessage
	// IfVersion, when positive, makes the update conditional: it applies
	// only while the task's Version is IfVersion, and is refused with an
	// error wrapping ErrTaskConflict otherwise (another instance changed
	// the task since it was read). Zero applies it whatever the version.
	IfVersion int64
	// IfRunner, when not empty, makes the update conditional on the
	// claim: it applies only while IfRunner is the task's Runner, and is
	// refused with an error wrapping ErrTaskClaimed otherwise (the run
	// that writes its end no longer owns the task).
	IfRunner string
}

// TaskClaim is what [TaskStore.Claim] does to a working task's claim.
type TaskClaim struct {
	// Runner names who claims the task (an instance of the server).
	Runner string
	// Lease is how long the claim lasts from now, by the store's clock;
	// zero or negative releases Runner's claim instead.
	Lease time.Duration
	// StatusMessage, when not nil, replaces the task's status message
	// (a change of it counts as a change of the task: UpdatedAt and
	// Version move).
	StatusMessage *string
	// IfVersion, when positive, makes the claim conditional on the
	// task's Version, as [TaskUpdate.IfVersion] does.
	IfVersion int64
}

// Check reports whether u is well formed: a valid status, and exactly the
// payload that status takes (an error wrapping ErrInvalidTaskUpdate
// otherwise). Stores call it; a caller may call it first.
func (u TaskUpdate) Check() error {
	if !u.Status.Valid() {
		return fmt.Errorf("hexmcp: %w: unknown status %q", ErrInvalidTaskUpdate, u.Status)
	}
	has := func(b json.RawMessage) bool { return len(b) > 0 }
	if has(u.InputRequests) != (u.Status == TaskInputRequired) {
		return fmt.Errorf("hexmcp: %w: inputRequests go with input_required, and only with it", ErrInvalidTaskUpdate)
	}
	if has(u.Result) != (u.Status == TaskCompleted) {
		return fmt.Errorf("hexmcp: %w: a result goes with completed, and only with it", ErrInvalidTaskUpdate)
	}
	if has(u.Error) != (u.Status == TaskFailed) {
		return fmt.Errorf("hexmcp: %w: an error goes with failed, and only with it", ErrInvalidTaskUpdate)
	}
	return nil
}

// TaskStore keeps tasks, so that a task started through one instance of a
// server is polled, cancelled and collected through any other.
// Implementations must be safe for concurrent use and bounded, after
// dropping expired tasks: in tasks, in total and per client
// ([Task.Client]); in bytes (InputRequests, Result, Error and State
// together, at least 1 KiB a task), per task (an error wrapping ErrTaskTooLarge), per
// client (ErrTooManyTasksForClient) and in total (ErrTooManyTasks); and a
// StatusMessage apart (ErrTaskTooLarge). Create refuses past them, and so
// does an Update that makes a task count more bytes than the client's or
// the store's share leaves room for. An expired task (now ≥ CreatedAt +
// TTL by the store's clock) is not found, by every operation.
//
// Status notifications (notifications/tasks) need no store support: the
// instance that changes a task publishes it on the notification bus
// ([Bus]), which carries it to the listen streams of every instance.
type TaskStore interface {
	// Create stores a new task and returns it as kept: its ID (minted
	// when empty), CreatedAt and UpdatedAt (now), TTL (defaulted,
	// capped), Client (the Owner when empty), Version (1), and no claim
	// (Runner and LeaseUntil are ignored: see Claim). Its Status must be
	// working or input_required (with InputRequests), its Result and
	// Error empty; its State is kept (bounded with the payloads). An
	// error wrapping ErrTooManyTasksForClient or ErrTooManyTasks refuses
	// it for the limits, ErrTaskTooLarge for its size; ErrTaskExists for
	// an id a live task holds.
	Create(ctx context.Context, t Task) (Task, error)
	// Get returns the task, or an error wrapping ErrTaskNotFound for an
	// unknown, expired or deleted task or another owner's.
	Get(ctx context.Context, id, owner string) (Task, error)
	// Update applies u to a live task (compare-and-set on its status: a live
	// task, working or input_required, may take any status, its own
	// included; a terminal one none, not even its own) and returns the task as it now is. A
	// terminal task is refused with an error wrapping ErrTaskTransition
	// (the error's [TaskTransitionError] says its status), a malformed
	// update with one wrapping ErrInvalidTaskUpdate, a conditional one
	// (u.IfVersion) of a task changed meanwhile with one wrapping
	// ErrTaskConflict, one of a task another runner holds (u.IfRunner)
	// with ErrTaskClaimed, one over the byte bounds with ErrTaskTooLarge,
	// ErrTooManyTasksForClient or ErrTooManyTasks. A status other than
	// working drops the task's claim.
	Update(ctx context.Context, id, owner string, u TaskUpdate) (Task, error)
	// Claim changes the claim on the owner's working task, and its
	// status message when c.StatusMessage is not nil, and nothing else:
	// it neither reads nor writes the task's payloads or state, so that
	// renewing a claim costs a few bytes whatever the task holds. With a
	// positive c.Lease it gives c.Runner the task until now + c.Lease
	// when nobody holds it (no runner, or the claim has ended) or
	// c.Runner does already (a renewal); otherwise it releases c.Runner's
	// claim. It returns the task without its payloads and state. A task
	// not working is refused with an error wrapping ErrTaskTransition, one
	// another runner holds (or, to release, that c.Runner does not hold)
	// with ErrTaskClaimed, a conditional claim (c.IfVersion) of a task
	// changed meanwhile with ErrTaskConflict, a status message over the
	// bound with ErrTaskTooLarge, a claim without a runner with
	// ErrInvalidTaskUpdate.
	Claim(ctx context.Context, id, owner string, c TaskClaim) (Task, error)
	// Cancel makes a live task cancelled, with message as its status
	// message, and returns it. It is idempotent: a task already terminal
	// is returned as it is, without an error (its Status tells whether it
	// is cancelled); code that must refuse to cancel a terminal task uses
	// Update with TaskCancelled.
	Cancel(ctx context.Context, id, owner, message string) (Task, error)
	// List returns the owner's live tasks, oldest first, at most limit of
	// them (limit ≤ 0 or over the store's maximum page takes that
	// maximum), from cursor ("" for the first page), and the cursor of
	// the next page ("" after the last). Paging is stable: a task that
	// lives through the whole listing is listed exactly once, whatever is
	// created or dropped meanwhile. A cursor the store did not hand out
	// is an error wrapping ErrInvalidTaskCursor.
	List(ctx context.Context, owner, cursor string, limit int) (tasks []Task, next string, err error)
	// Delete drops a task; an unknown one (or another owner's) is not an
	// error.
	Delete(ctx context.Context, id, owner string) error
}

// Errors of the task store.
var (
	// ErrTaskNotFound: no live task of the owner has the id.
	ErrTaskNotFound = errors.New("task not found")
	// ErrTaskExists: Create was given the id of a live task.
	ErrTaskExists = errors.New("task exists already")
	// ErrTaskTransition: the update would change a terminal task.
	ErrTaskTransition = errors.New("task status transition not allowed")
	// ErrInvalidTaskUpdate: an update or a new task is malformed (see
	// [TaskUpdate.Check]).
	ErrInvalidTaskUpdate = errors.New("invalid task update")
	// ErrTaskTooLarge: a payload of the task is over the store's bound.
	ErrTaskTooLarge = errors.New("task payload too large")
	// ErrTaskConflict: a conditional update (TaskUpdate.IfVersion) found
	// the task changed since it was read.
	ErrTaskConflict = errors.New("task changed concurrently")
	// ErrTaskClaimed: another runner holds the task's claim
	// (TaskUpdate.IfRunner, TaskStore.Claim). It wraps ErrTaskConflict.
	ErrTaskClaimed = fmt.Errorf("%w: claimed by another runner", ErrTaskConflict)
	// ErrInvalidTaskCursor: List was given a cursor it did not hand out.
	ErrInvalidTaskCursor = errors.New("invalid task cursor")
	// ErrTooManyTasks: the store is full, in tasks or in bytes (or, see
	// ErrTooManyTasksForClient, which wraps it, the client's share is).
	ErrTooManyTasks = errors.New("too many tasks")
	// ErrTooManyTasksForClient: the client ([Task.Client]) holds as many
	// tasks, or bytes of tasks, as one client may. It wraps
	// ErrTooManyTasks.
	ErrTooManyTasksForClient = fmt.Errorf("%w for one client", ErrTooManyTasks)
)

// TaskTransitionError is the error of a refused transition: the task's
// status and the one asked for. It wraps ErrTaskTransition.
type TaskTransitionError struct {
	From, To TaskStatus
}

// Error names both statuses.
func (e *TaskTransitionError) Error() string {
	return fmt.Sprintf("%v: %s to %s", ErrTaskTransition, e.From, e.To)
}

// Unwrap returns ErrTaskTransition.
func (e *TaskTransitionError) Unwrap() error { return ErrTaskTransition }
