package tasks_test

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/hexmcptest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// A task whose state in the store is not one the extension wrote (another
// version's, or damaged) is refused where it is read: an answer to it is
// an error, and a run it needs fails the task; nothing runs a tool named
// "" nor answers as if the state were empty.
func TestUnusableStateRefused(t *testing.T) {
	store := &recordingStore{TaskStore: memory.NewTaskStore(memory.TaskStoreOptions{})}
	in := newInstance(t, store, 0, nil, new(atomic.Int32))
	c := connectAsk(t, in.srv)
	spoil := func(id string, status ports.TaskStatus) {
		t.Helper()
		task := store.stored(t, id)
		u := ports.TaskUpdate{Status: status, State: stdjson.RawMessage(`{"answers":{}}`)}
		if status == ports.TaskInputRequired {
			u.InputRequests = task.InputRequests
		}
		if _, err := store.TaskStore.Update(context.Background(), id, task.Owner, u); err != nil {
			t.Fatal(err)
		}
	}

	id := start(t, c, "ask")
	await(t, c, id, "input_required", func(v taskView) bool { return v.Status == "input_required" })
	spoil(id, ports.TaskInputRequired)
	err := c.Call(context.Background(), "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"who": accept("Ada")}}, nil)
	if code := rpcCode(t, err); code != domain.CodeInternalError {
		t.Fatalf("an answer to a task with an unusable state: %d, want -32603", code)
	}

	// A working task nobody runs: the tasks/get that would run it again
	// fails it instead.
	id = start(t, c, "ask")
	await(t, c, id, "input_required", func(v taskView) bool { return v.Status == "input_required" })
	spoil(id, ports.TaskWorking)
	if v := await(t, c, id, "failed", func(v taskView) bool { return v.Status == "failed" }); v.Status != "failed" {
		t.Fatalf("a task with an unusable state: %+v, want failed", v)
	}
}

// refusingStore refuses every new task with err.
type refusingStore struct {
	ports.TaskStore
	err error
}

func (s refusingStore) Create(context.Context, ports.Task) (ports.Task, error) {
	return ports.Task{}, s.err
}

// A task the store refuses for the client's share or for its size is the
// client's doing, logged at debug level; a store that fails is the
// server's trouble, a warning. Either way the call runs synchronously.
func TestRefusedTaskLogLevel(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		warn bool
	}{
		{"the client's share", ports.ErrTooManyTasksForClient, false},
		{"the whole store", ports.ErrTooManyTasks, false},
		{"a task too large", ports.ErrTaskTooLarge, false},
		{"the store down", errors.New("connection refused"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf testtools.LockedBuffer
			x := tasks.New(tasks.Options{Store: refusingStore{memory.NewTaskStore(memory.TaskStoreOptions{}), c.err},
				Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})),
				Tools:  map[string]tasks.Support{"job": tasks.Optional}})
			t.Cleanup(func() { _ = x.Shutdown(context.Background()) })
			srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()},
				Tools: []hexmcp.Tool{hexmcp.NewTool(func(context.Context) (string, error) { return "done", nil }, hexmcp.WithName("job"))}})
			var v taskView
			if err := connect(t, srv, true).Call(context.Background(), "tools/call", map[string]any{"name": "job", "arguments": map[string]any{}}, &v); err != nil {
				t.Fatal(err)
			}
			if v.ResultType != "complete" || fmt.Sprint(v.Content) != "[map[text:done type:text]]" {
				t.Fatalf("a call whose task was refused: %+v, want its synchronous result", v)
			}
			if warned := strings.Contains(buf.String(), "a task cannot be created"); warned != c.warn {
				t.Fatalf("logged at info or above: %q; want the refusal there %v", buf.String(), c.warn)
			}
		})
	}
}

// Shutdown releases the claims of its runs without a warning, and leaves
// the task working and claimed by nobody, for another instance to run.
func TestShutdownReleasesQuietly(t *testing.T) {
	rec := &testtools.LogRecorder{}
	store := &recordingStore{TaskStore: memory.NewTaskStore(memory.TaskStoreOptions{})}
	release := make(chan struct{})
	defer close(release)
	x := tasks.New(tasks.Options{Store: store, Logger: rec, Tools: map[string]tasks.Support{"slow": tasks.Optional}})
	srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()}, Tools: inputTools(release, new(atomic.Int32))})
	id := start(t, connect(t, srv, true), "slow")
	if err := x.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rec.Has("releasing a task failed") {
		t.Errorf("server log %q: a release that worked was logged as failed", rec.Messages())
	}
	if task := store.stored(t, id); task.Status != ports.TaskWorking || task.Runner != "" {
		t.Errorf("after Shutdown the task is %s, run by %q; want working and unclaimed", task.Status, task.Runner)
	}
}
