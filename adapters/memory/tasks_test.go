package memory_test

import (
	"testing"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/adapters/tasktest"
	"github.com/hexmcp/hexmcp/ports"
)

// The in-memory task store passes the task store contract, with its
// defaults and with small limits.
func TestTaskStoreContract(t *testing.T) {
	tasktest.Run(t, func(t *testing.T, clock ports.Clock) ports.TaskStore {
		return memory.NewTaskStore(memory.TaskStoreOptions{Clock: clock})
	})
	lim := tasktest.Limits{MaxTasks: 20, MaxTasksPerOwner: 5, MaxPayloadBytes: 1000, MaxStatusMessageBytes: 50}
	tasktest.RunLimits(t, lim, func(t *testing.T, clock ports.Clock) ports.TaskStore {
		return memory.NewTaskStore(memory.TaskStoreOptions{Clock: clock, MaxTasks: lim.MaxTasks,
			MaxTasksPerOwner: lim.MaxTasksPerOwner, MaxPayloadBytes: lim.MaxPayloadBytes, MaxStatusMessageBytes: lim.MaxStatusMessageBytes})
	})
}

// The defaults are the documented ones: a store with no options keeps to
// them (one owner's 1,000 tasks, payloads of 4 MiB).
func TestTaskStoreDefaults(t *testing.T) {
	tasktest.RunLimits(t, tasktest.Limits{MaxTasks: memory.DefaultMaxTasks, MaxTasksPerOwner: memory.DefaultMaxTasksPerOwner,
		MaxPayloadBytes: memory.DefaultMaxTaskPayloadBytes, MaxStatusMessageBytes: memory.DefaultMaxTaskStatusMessageBytes},
		func(t *testing.T, clock ports.Clock) ports.TaskStore {
			return memory.NewTaskStore(memory.TaskStoreOptions{Clock: clock})
		})
}

// Two handles on one in-memory store are one store.
func TestTaskStoreShared(t *testing.T) {
	tasktest.RunShared(t, func(t *testing.T, clock ports.Clock) (ports.TaskStore, ports.TaskStore) {
		s := memory.NewTaskStore(memory.TaskStoreOptions{Clock: clock})
		return s, s
	})
}
