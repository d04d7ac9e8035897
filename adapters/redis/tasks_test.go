package mcpredis_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/adapters/tasktest"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/ports"
)

var taskPrefixes atomic.Int64

func taskPrefix() string {
	return fmt.Sprintf("tasks%s-%d:", time.Now().Format("150405.000000"), taskPrefixes.Add(1))
}

// The Redis task store passes the task store contract against a real
// redis-server, with its defaults, with small limits, and through two
// clients (two instances) on one Redis; each store gets a prefix of its
// own.
func TestTaskStoreContract(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv)
	tasktest.Run(t, func(t *testing.T, clock ports.Clock) ports.TaskStore {
		return mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: taskPrefix(), Clock: clock})
	})
	lim := tasktest.Limits{MaxTasks: 20, MaxTasksPerOwner: 5, MaxPayloadBytes: 1000, MaxStatusMessageBytes: 50}
	tasktest.RunLimits(t, lim, func(t *testing.T, clock ports.Clock) ports.TaskStore {
		return mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: taskPrefix(), Clock: clock, MaxTasks: lim.MaxTasks,
			MaxTasksPerOwner: lim.MaxTasksPerOwner, MaxPayloadBytes: lim.MaxPayloadBytes, MaxStatusMessageBytes: lim.MaxStatusMessageBytes})
	})
	t.Run("Shared", func(t *testing.T) {
		tasktest.RunShared(t, func(t *testing.T, clock ports.Clock) (ports.TaskStore, ports.TaskStore) {
			p := taskPrefix()
			return mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: p, Clock: clock}),
				mcpredis.NewTaskStore(client(t, srv), mcpredis.TaskStoreOptions{Prefix: p, Clock: clock})
		})
	})
}

// The defaults are the documented ones: one owner's 1,000 tasks, payloads
// of 4 MiB.
func TestTaskStoreDefaults(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv)
	tasktest.RunLimits(t, tasktest.Limits{MaxTasks: mcpredis.DefaultMaxTasks, MaxTasksPerOwner: mcpredis.DefaultMaxTasksPerOwner,
		MaxPayloadBytes: mcpredis.DefaultMaxTaskPayloadBytes, MaxStatusMessageBytes: mcpredis.DefaultMaxTaskStatusMessageBytes},
		func(t *testing.T, clock ports.Clock) ports.TaskStore {
			return mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: taskPrefix(), Clock: clock})
		})
}
