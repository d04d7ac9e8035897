package tasks_test

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/hexmcptest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// meetingStore holds the first two Gets of a task until both arrived, so
// that two tasks/cancel read the task before either changes it.
type meetingStore struct {
	ports.TaskStore
	armed   atomic.Bool
	arrived atomic.Int32
	both    chan struct{}
}

func (s *meetingStore) Get(ctx context.Context, id, owner string) (ports.Task, error) {
	t, err := s.TaskStore.Get(ctx, id, owner)
	if s.armed.Load() {
		switch s.arrived.Add(1) {
		case 1:
			select {
			case <-s.both:
			case <-time.After(10 * time.Second):
			}
		case 2:
			close(s.both)
		}
	}
	return t, err
}

// Two tasks/cancel of a running task that both read it running: only the
// one that made it cancelled sends the status notification.
func TestConcurrentCancelsNotifyOnce(t *testing.T) {
	store := &meetingStore{TaskStore: memory.NewTaskStore(memory.TaskStoreOptions{}), both: make(chan struct{})}
	x := tasks.New(tasks.Options{Store: store, Tools: map[string]tasks.Support{"job": tasks.Optional}})
	t.Cleanup(x.Wait)
	bus := memory.NewBus(memory.BusOptions{})
	cancelled := countStatus(t, bus, "cancelled")
	srv := hexmcptest.NewServer(t, hexmcp.Options{
		Bus:        bus,
		Extensions: []app.Extension{x.Extension()},
		Tools: []hexmcp.Tool{hexmcp.NewTool(func(ctx context.Context, in blockIn) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}, hexmcp.WithName("job"))},
	})
	c := connect(t, srv, true)
	created := call(t, c, "tools/call", map[string]any{"name": "job", "arguments": map[string]any{"block": true}})
	store.armed.Store(true)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { call(t, c, "tasks/cancel", map[string]any{"taskId": created.TaskID}) })
	}
	wg.Wait()
	if n := cancelled(srv); n != 1 {
		t.Fatalf("%d cancelled status notifications for one task, want 1", n)
	}
}

// countStatus counts the status notifications of tasks with the given
// status that the engines on bus publish. What it returns reads the count
// once the notifications srv published before it are out: the engine
// publishes in order, so once a marker notice it sends last is out, so
// are they.
func countStatus(t *testing.T, bus *memory.Bus, status string) func(srv *hexmcp.Server) int {
	t.Helper()
	var mu sync.Mutex
	count, marker := 0, make(chan struct{})
	stop := bus.Subscribe(func(n ports.Notice) {
		if n.Kind != ports.NoticeTopic {
			return
		}
		switch {
		case bytes.Contains(n.Data, []byte(`"marker"`)):
			close(marker)
		case bytes.Contains(n.Data, []byte(`"status":"`+status+`"`)):
			mu.Lock()
			count++
			mu.Unlock()
		}
	})
	t.Cleanup(stop)
	return func(srv *hexmcp.Server) int {
		t.Helper()
		if _, err := srv.Engine().NotifyTopic("taskIds", "marker", "notifications/tasks", []byte(`{"taskId":"marker"}`)); err != nil {
			t.Fatal(err)
		}
		testtools.Recv(t, marker, 10*time.Second, "the marker notice did not come")
		mu.Lock()
		defer mu.Unlock()
		return count
	}
}
