package tasks_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/hexmcptest"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// A run's claim is renewed every third of its lease; a renewal without a
// new status message writes nothing the client sees, so it sends no status
// notification: a task that runs for many leases without reporting
// progress notifies its client of working once, when it was created.
func TestRenewalsDoNotNotify(t *testing.T) {
	x := tasks.New(tasks.Options{Lease: 600 * time.Millisecond, Tools: map[string]tasks.Support{"job": tasks.Optional}})
	t.Cleanup(x.Wait)
	bus := memory.NewBus(memory.BusOptions{})
	working := countStatus(t, bus, "working")
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
	if n := working(srv); n > 1 {
		t.Fatalf("%d working status notifications for a task that reported nothing while its claim was renewed, want at most 1", n)
	}
}
