package memory_test

import (
	"testing"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// The in-memory task store passes the task store contract, with its
// defaults and with small limits.
func TestTaskStoreContract(t *testing.T) {
	porttest.TestTaskStore(t, func(t *testing.T, clock ports.Clock) ports.TaskStore {
		return memory.NewTaskStore(memory.TaskStoreOptions{Clock: clock})
	})
	lim := porttest.TaskLimits{MaxTasks: 20, MaxTasksPerClient: 5, MaxTaskBytes: 6000, MaxBytesPerClient: 10_000, MaxBytes: 25_000, MaxStatusMessageBytes: 50}
	porttest.TestTaskLimits(t, lim, func(t *testing.T, clock ports.Clock) ports.TaskStore {
		return memory.NewTaskStore(memory.TaskStoreOptions{Clock: clock, MaxTasks: lim.MaxTasks,
			MaxTasksPerClient: lim.MaxTasksPerClient, MaxTaskBytes: lim.MaxTaskBytes, MaxBytesPerClient: lim.MaxBytesPerClient,
			MaxBytes: lim.MaxBytes, MaxStatusMessageBytes: lim.MaxStatusMessageBytes})
	})
}

// The defaults are the documented ones: a store with no options keeps to
// them (one client's 1,000 tasks, 4 MiB a task, 16 MiB a client, 128 MiB in all).
func TestTaskStoreDefaults(t *testing.T) {
	porttest.TestTaskLimits(t, porttest.TaskLimits{MaxTasks: portlimits.DefaultMaxTasks, MaxTasksPerClient: portlimits.DefaultMaxTasksPerClient,
		MaxTaskBytes: portlimits.DefaultMaxTaskBytes, MaxBytesPerClient: portlimits.DefaultMaxTaskBytesPerClient, MaxBytes: portlimits.DefaultMaxTaskStoreBytes,
		MaxStatusMessageBytes: portlimits.DefaultMaxTaskStatusMessageBytes},
		func(t *testing.T, clock ports.Clock) ports.TaskStore {
			return memory.NewTaskStore(memory.TaskStoreOptions{Clock: clock})
		})
}

// Two handles on one in-memory store are one store.
func TestTaskStoreShared(t *testing.T) {
	porttest.TestTaskStoreShared(t, func(t *testing.T, clock ports.Clock) (ports.TaskStore, ports.TaskStore) {
		s := memory.NewTaskStore(memory.TaskStoreOptions{Clock: clock})
		return s, s
	})
}
