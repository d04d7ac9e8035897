package portlimits

import (
	"cmp"
	"fmt"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// The limits every [ports.TaskStore] of the SDK (the in-memory one and
// mcpredis's) takes by default: what [TaskLimits.WithDefaults] gives a
// zero field.
const (
	// DefaultMaxTasks bounds the live tasks of a store.
	DefaultMaxTasks = 10_000
	// DefaultMaxTasksPerClient bounds the live tasks of one client: 10%
	// of DefaultMaxTasks, so that one client cannot fill the store.
	DefaultMaxTasksPerClient = 1_000
	// DefaultMaxTaskBytes bounds what one task keeps (its InputRequests,
	// Result, Error and State together, see [TaskBytes]): 4 MiB, the
	// Streamable HTTP transport's default message size.
	DefaultMaxTaskBytes = 4 << 20
	// DefaultMaxTaskBytesPerClient bounds what the live tasks of one
	// client keep together, whatever their status: 16 MiB, an eighth of
	// DefaultMaxTaskStoreBytes, so that one client cannot fill the store.
	DefaultMaxTaskBytesPerClient = 16 << 20
	// DefaultMaxTaskStoreBytes bounds what the live tasks of the store
	// keep together.
	DefaultMaxTaskStoreBytes = 128 << 20
	// DefaultMaxTaskStatusMessageBytes bounds a task's StatusMessage.
	DefaultMaxTaskStatusMessageBytes = 4 << 10
	// DefaultTaskTTL is the TTL of a task created without one.
	DefaultTaskTTL = time.Hour
	// DefaultMaxTaskTTL caps a task's TTL.
	DefaultMaxTaskTTL = 24 * time.Hour
	// DefaultMaxTaskPage bounds the tasks of one List page.
	DefaultMaxTaskPage = 100
)

// TaskLimits are the bounds a [ports.TaskStore] keeps to (see its documentation
// for what a store does at each). The SDK's task stores take them from
// their options and apply [TaskLimits.WithDefaults], so that they bound
// tasks alike.
type TaskLimits struct {
	// MaxTasks, MaxTasksPerClient: live tasks, in all and of one client
	// ([ports.Task.Client]).
	MaxTasks, MaxTasksPerClient int
	// MaxTaskBytes, MaxBytesPerClient, MaxBytes: what tasks keep
	// ([Bytes]), one task, one client's, all.
	MaxTaskBytes, MaxBytesPerClient, MaxBytes int
	// MaxStatusMessageBytes: a task's status message.
	MaxStatusMessageBytes int
	// DefaultTTL is the TTL of a task created with none; MaxTTL caps the
	// TTL of every task.
	DefaultTTL, MaxTTL time.Duration
	// MaxPage bounds the tasks of one List page.
	MaxPage int
}

// Positive returns v, or def when v is zero or negative: the rule by which
// the stores' options take their defaults.
func Positive[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// WithDefaults returns l with its zero (or negative) fields set to their
// defaults (DefaultMaxTasks, …), and the bounds made consistent:
// MaxTasksPerClient at most MaxTasks; MaxTaskBytes at most MaxBytes;
// MaxBytesPerClient at least MaxTaskBytes and at most MaxBytes; DefaultTTL
// at most MaxTTL.
func (l TaskLimits) WithDefaults() TaskLimits {
	d := TaskLimits{
		MaxTasks:              Positive(l.MaxTasks, DefaultMaxTasks),
		MaxTaskBytes:          Positive(l.MaxTaskBytes, DefaultMaxTaskBytes),
		MaxBytes:              Positive(l.MaxBytes, DefaultMaxTaskStoreBytes),
		MaxStatusMessageBytes: Positive(l.MaxStatusMessageBytes, DefaultMaxTaskStatusMessageBytes),
		MaxTTL:                Positive(l.MaxTTL, DefaultMaxTaskTTL),
		MaxPage:               Positive(l.MaxPage, DefaultMaxTaskPage),
	}
	d.MaxTasksPerClient = min(Positive(l.MaxTasksPerClient, DefaultMaxTasksPerClient), d.MaxTasks)
	d.MaxTaskBytes = min(d.MaxTaskBytes, d.MaxBytes)
	d.MaxBytesPerClient = min(max(Positive(l.MaxBytesPerClient, DefaultMaxTaskBytesPerClient), d.MaxTaskBytes), d.MaxBytes)
	d.DefaultTTL = min(Positive(l.DefaultTTL, DefaultTaskTTL), d.MaxTTL)
	return d
}

// TTL is the TTL a store gives a task created with ttl: DefaultTTL for
// none (zero or negative), at most MaxTTL, in whole milliseconds and at
// least one. l has its defaults ([TaskLimits.WithDefaults]).
func (l TaskLimits) TTL(ttl time.Duration) time.Duration {
	ttl = min(cmp.Or(max(ttl, 0), l.DefaultTTL), l.MaxTTL).Truncate(time.Millisecond)
	return max(ttl, time.Millisecond)
}

// Page is the number of tasks a List page holds when limit are asked
// for: MaxPage for none (zero or negative) or more than MaxPage. l has its
// defaults ([TaskLimits.WithDefaults]).
func (l TaskLimits) Page(limit int) int {
	if limit <= 0 || limit > l.MaxPage {
		return l.MaxPage
	}
	return limit
}

// CheckSizes checks a task's status message against
// MaxStatusMessageBytes, and its payloads and state, their lengths
// together, against MaxTaskBytes; the error wraps [ports.ErrTaskTooLarge]. Every
// task store of the SDK bounds tasks this way.
func (l TaskLimits) CheckSizes(message string, payloads ...[]byte) error {
	if len(message) > l.MaxStatusMessageBytes {
		return fmt.Errorf("hexmcp: %w: status message of %d bytes, over %d", ports.ErrTaskTooLarge, len(message), l.MaxStatusMessageBytes)
	}
	n := 0
	for _, p := range payloads {
		n += len(p)
	}
	if n > l.MaxTaskBytes {
		return fmt.Errorf("hexmcp: %w: %d bytes of payloads and state, over %d", ports.ErrTaskTooLarge, n, l.MaxTaskBytes)
	}
	return nil
}

// CheckNew checks a task a store is asked to create: its status and
// payloads as [ports.TaskUpdate.Check] checks an update's, a status that
// is not terminal (an error wrapping [ports.ErrInvalidTaskUpdate] that
// begins with prefix, the store's), and its sizes ([TaskLimits.CheckSizes]).
// Every task store of the SDK checks a new task this way.
func (l TaskLimits) CheckNew(prefix string, t ports.Task) error {
	u := ports.TaskUpdate{Status: t.Status, StatusMessage: t.StatusMessage, InputRequests: t.InputRequests, Result: t.Result, Error: t.Error, State: t.State}
	if err := u.Check(); err != nil {
		return err
	}
	if t.Status.Terminal() {
		return fmt.Errorf("%s: %w: a new task cannot be %s", prefix, ports.ErrInvalidTaskUpdate, t.Status)
	}
	return l.CheckSizes(t.StatusMessage, t.InputRequests, t.State)
}
