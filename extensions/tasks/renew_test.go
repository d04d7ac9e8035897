package tasks_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/hexmcptest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// A run's claim is renewed every third of its lease; a renewal without a
// new status message writes nothing the client sees, so it sends no status
// notification: a task that runs for many leases without reporting
// progress notifies its client of working once, when it was created.
func TestRenewalsDoNotNotify(t *testing.T) {
	x := tasks.New(tasks.Options{Lease: 600 * time.Millisecond, Tools: map[string]tasks.Support{"job": tasks.Optional}})
	t.Cleanup(x.Wait)
	bus := memory.NewBus(memory.BusOptions{})
	var mu sync.Mutex
	working, marker := 0, make(chan struct{})
	stop := bus.Subscribe(func(n ports.Notice) {
		if n.Kind != ports.NoticeTopic {
			return
		}
		switch {
		case bytes.Contains(n.Data, []byte(`"marker"`)):
			close(marker)
		case bytes.Contains(n.Data, []byte(`"status":"working"`)):
			mu.Lock()
			working++
			mu.Unlock()
		}
	})
	t.Cleanup(stop)
	release, started := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := hexmcptest.NewServer(t, hexmcp.Options{
		Bus:        bus,
		Extensions: []hexmcp.Extension{x.Extension()},
		Tools: []hexmcp.Tool{hexmcp.NewTool(func(ctx context.Context) (string, error) {
			once.Do(func() { close(started) })
			<-release
			return "done", nil
		}, hexmcp.WithName("job"))},
	})
	c := connect(t, srv, true)
	created := call(t, c, "tools/call", map[string]any{"name": "job"})
	if created.ResultType != "task" {
		t.Fatalf("tools/call answered %+v, want a task", created)
	}
	testtools.Recv(t, started, 10*time.Second, "the task did not start")
	// Two leases: six renewals.
	time.Sleep(1200 * time.Millisecond)
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for call(t, c, "tasks/get", map[string]any{"taskId": created.TaskID}).Status != "completed" {
		if time.Now().After(deadline) {
			t.Fatal("the task did not complete")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := srv.Engine().NotifyTopic("taskIds", "marker", "notifications/tasks", []byte(`{"taskId":"marker"}`)); err != nil {
		t.Fatal(err)
	}
	testtools.Recv(t, marker, 10*time.Second, "the marker notice did not come")
	mu.Lock()
	defer mu.Unlock()
	if working > 1 {
		t.Fatalf("%d working status notifications for a task that reported nothing while its claim was renewed, want at most 1", working)
	}
}
