package tasks_test

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/hexmcptest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// countingStore counts the calls a store gets.
type countingStore struct {
	ports.TaskStore
	calls atomic.Int32
}

func (s *countingStore) Get(ctx context.Context, id, owner string) (ports.Task, error) {
	s.calls.Add(1)
	return s.TaskStore.Get(ctx, id, owner)
}

func (s *countingStore) Update(ctx context.Context, id, owner string, u ports.TaskUpdate) (ports.Task, error) {
	s.calls.Add(1)
	return s.TaskStore.Update(ctx, id, owner, u)
}

func (s *countingStore) Cancel(ctx context.Context, id, owner, msg string) (ports.Task, error) {
	s.calls.Add(1)
	return s.TaskStore.Cancel(ctx, id, owner, msg)
}

func (s *countingStore) Claim(ctx context.Context, id, owner string, c ports.TaskClaim) (ports.Task, error) {
	s.calls.Add(1)
	return s.TaskStore.Claim(ctx, id, owner, c)
}

// A tasks/* request without a taskId is told so, and one whose taskId is
// longer than MaxTaskIDBytes is unknown; neither is looked up in the
// store.
func TestBadTaskIDNotLookedUp(t *testing.T) {
	store := &countingStore{TaskStore: memory.NewTaskStore(memory.TaskStoreOptions{})}
	x := tasks.New(tasks.Options{Store: store})
	t.Cleanup(x.Wait)
	srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()}})
	c := connect(t, srv, true)
	answers := map[string]any{"k": map[string]any{}}
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		for _, tc := range []struct {
			params map[string]any
			want   string
		}{
			{map[string]any{"inputResponses": answers}, "Invalid params: taskId must be a non-empty string"},
			{map[string]any{"taskId": "", "inputResponses": answers}, "Invalid params: taskId must be a non-empty string"},
			{map[string]any{"taskId": strings.Repeat("x", tasks.MaxTaskIDBytes+1), "inputResponses": answers}, "Invalid params: unknown taskId"},
		} {
			err := c.Call(context.Background(), m, tc.params, nil)
			var re *client.RPCError
			if !errors.As(err, &re) || re.Code != domain.CodeInvalidParams || re.Message != tc.want {
				t.Errorf("%s %v: %v, want -32602 %q", m, tc.params["taskId"], err, tc.want)
			}
		}
	}
	if n := store.calls.Load(); n != 0 {
		t.Fatalf("the store was asked %d times about taskIds that name no task", n)
	}
}

// conflictingStore stands for a task that changes between every read and
// conditional update of tasks/cancel (a claim renewed each time, say): it
// refuses every conditional cancellation with ErrTaskConflict.
type conflictingStore struct {
	ports.TaskStore
	conditional atomic.Int32 // the conditional cancellations refused
	cancels     atomic.Int32 // the unconditional ones
}

func (s *conflictingStore) Update(ctx context.Context, id, owner string, u ports.TaskUpdate) (ports.Task, error) {
	if u.Status == ports.TaskCancelled && u.IfVersion != 0 {
		s.conditional.Add(1)
		return ports.Task{}, ports.ErrTaskConflict
	}
	return s.TaskStore.Update(ctx, id, owner, u)
}

func (s *conflictingStore) Cancel(ctx context.Context, id, owner, msg string) (ports.Task, error) {
	s.cancels.Add(1)
	return s.TaskStore.Cancel(ctx, id, owner, msg)
}

// tasks/cancel of a task that changed at every look reads it again a
// bounded number of times (8), then cancels it unconditionally: the task
// is cancelled and its run stopped.
func TestCancelOfATaskChangingAtEveryLook(t *testing.T) {
	store := &conflictingStore{TaskStore: memory.NewTaskStore(memory.TaskStoreOptions{})}
	x := tasks.New(tasks.Options{Store: store, Tools: map[string]tasks.Support{"job": tasks.Optional}})
	t.Cleanup(x.Wait)
	srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()},
		Tools: []hexmcp.Tool{hexmcp.NewTool(func(ctx context.Context) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}, hexmcp.WithName("job"))}})
	c := connect(t, srv, true)
	id := start(t, c, "job")
	call(t, c, "tasks/cancel", map[string]any{"taskId": id})
	if n := store.conditional.Load(); n < 2 || n > 1+8 {
		t.Fatalf("tasks/cancel tried %d conditional cancellations of a task that changed at every look, want a first one and at most 8 more", n)
	}
	if n := store.cancels.Load(); n != 1 {
		t.Fatalf("%d unconditional cancellations, want 1", n)
	}
	x.Wait() // returns only once the run was stopped
	if v := get(t, c, id); v.Status != "cancelled" {
		t.Fatalf("after tasks/cancel: %+v", v)
	}
}

// listenServer serves the tool "step", which waits for go, reports
// progress (1 of 2, "half"), then waits for release (or cancellation)
// and answers "stepped".
func listenServer(t *testing.T, goOn, release <-chan struct{}) (*tasks.Tasks, *hexmcp.Server) {
	t.Helper()
	x := tasks.New(tasks.Options{Tools: map[string]tasks.Support{"step": tasks.Optional}})
	t.Cleanup(func() { _ = x.Shutdown(context.Background()) })
	srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()},
		Tools: []hexmcp.Tool{hexmcp.NewTool(func(ctx context.Context) (string, error) {
			select {
			case <-goOn:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			if err := app.RequestFrom(ctx).ReportProgress(ctx, 1, 2, "half"); err != nil {
				return "", err
			}
			select {
			case <-release:
				return "stepped", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}, hexmcp.WithName("step"))}})
	return x, srv
}

// connectListening connects a stateless client that declared the
// extension (when declare) and returns the notifications/tasks it is
// sent, decoded, in order.
func connectListening(t *testing.T, srv *hexmcp.Server, declare bool) (*client.Session, <-chan taskView) {
	t.Helper()
	notes := make(chan taskView, 64)
	c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Revision: domain.Revision20260728, Tasks: declare,
		OnNotification: func(n client.Notification) {
			if n.Method != "notifications/tasks" {
				return
			}
			var v taskView
			if err := stdjson.Unmarshal(n.Params, &v); err != nil {
				v.Status = "undecodable: " + err.Error()
			}
			select {
			case notes <- v:
			default: // the test reads far fewer
			}
		}})
	return c, notes
}

// A subscriptions/listen of taskIds is for a client that declared the
// extension (else -32021) and listens to the client's own tasks among the
// ids: an id that names no task is left out of the acknowledgment, not an
// error.
func TestListenAcceptsOwnTasks(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	_, srv := listenServer(t, release, release)
	c, _ := connectListening(t, srv, true)
	id := start(t, c, "step")
	sub, err := c.Subscribe(t.Context(), client.Subscriptions{TaskIDs: []string{"not-a-task", id}})
	if err != nil {
		t.Fatalf("listen to its own task and an unknown one: %v", err)
	}
	defer sub.Close()
	if got := sub.Acknowledged.TaskIDs; len(got) != 1 || got[0] != id {
		t.Fatalf("acknowledged taskIds %v, want [%s]", got, id)
	}

	plain, _ := connectListening(t, srv, false)
	_, err = plain.Subscribe(t.Context(), client.Subscriptions{TaskIDs: []string{id}})
	if code := rpcCode(t, err); code != domain.CodeMissingClientCapability {
		t.Fatalf("listen without the extension: %d, want -32021", code)
	}
}

// A progress report that changes the status message is told to the
// listen streams of the task (notifications/tasks, still working).
func TestProgressNotified(t *testing.T) {
	goOn, release := make(chan struct{}), make(chan struct{})
	x, srv := listenServer(t, goOn, release)
	c, notes := connectListening(t, srv, true)
	id := start(t, c, "step")
	sub, err := c.Subscribe(t.Context(), client.Subscriptions{TaskIDs: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	close(goOn)
	// The task changes nothing else until release: the stream's next
	// notification is the progress (a stream coalesces the notices of a
	// task that wait, so the progress is awaited before the completion).
	v := testtools.Recv(t, notes, 10*time.Second, "the progress message was not notified")
	if v.TaskID != id || v.Status != "working" || v.StatusMessage != "half (1/2)" {
		t.Fatalf("notified of %+v, want task %s working with the progress message", v, id)
	}
	close(release)
	x.Wait()
	if v := testtools.Recv(t, notes, 10*time.Second, "the completion was not notified"); v.TaskID != id || v.Status != "completed" {
		t.Fatalf("notified of %+v, want task %s completed", v, id)
	}
}

// The last answer of tasks/update runs the task again at once, at the
// instance it reached: the task completes without a tasks/get.
func TestLastAnswerRunsTheTask(t *testing.T) {
	rec := &recordingStore{TaskStore: memory.NewTaskStore(memory.TaskStoreOptions{})}
	in := newInstance(t, rec, 0, nil, new(atomic.Int32))
	c := connectAsk(t, in.srv)
	id := start(t, c, "ask")
	await(t, c, id, "input_required", func(v taskView) bool { return v.Status == "input_required" })
	update(t, c, id, map[string]any{"who": accept("Ada")})
	in.x.Wait() // the run the answer started, if any, has ended
	if got := rec.stored(t, id); got.Status != ports.TaskCompleted {
		t.Fatalf("after the last answer, before any tasks/get, the task is %s, want completed", got.Status)
	}
}

// flakyClaims fails every Claim once armed (the store unreachable), and
// reports, at the second failure, whether the first was logged by then.
type flakyClaims struct {
	ports.TaskStore
	armed    atomic.Bool
	failures atomic.Int32
	rec      *testtools.LogRecorder
	logged   chan bool
}

func (s *flakyClaims) Claim(ctx context.Context, id, owner string, c ports.TaskClaim) (ports.Task, error) {
	if !s.armed.Load() {
		return s.TaskStore.Claim(ctx, id, owner, c)
	}
	if s.failures.Add(1) == 2 {
		s.logged <- s.rec.Has("renewing a task's claim failed")
	}
	return ports.Task{}, errDown
}

// A renewal of a run's claim that fails (the store unreachable) is
// logged, and tried again at the next tick.
func TestFailedRenewalLogged(t *testing.T) {
	rec := &testtools.LogRecorder{}
	store := &flakyClaims{TaskStore: memory.NewTaskStore(memory.TaskStoreOptions{}), rec: rec, logged: make(chan bool, 1)}
	release := make(chan struct{})
	x := tasks.New(tasks.Options{Store: store, Logger: rec, Lease: 30 * time.Millisecond, Tools: map[string]tasks.Support{"job": tasks.Optional}})
	var once sync.Once
	stop := func() { once.Do(func() { close(release) }) }
	t.Cleanup(func() { stop(); x.Wait() })
	srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()},
		Tools: []hexmcp.Tool{hexmcp.NewTool(func(ctx context.Context) (string, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return "done", nil
		}, hexmcp.WithName("job"))}})
	c := connect(t, srv, true)
	start(t, c, "job") // claimed at creation
	store.armed.Store(true)
	if !testtools.Recv(t, store.logged, 10*time.Second, "the claim was not renewed twice") {
		t.Fatalf("server log %v: a failed renewal was not logged", rec.Messages())
	}
	stop()
}

// A task's DetailedTask carries result, error and inputRequests only
// when it has them: none while it works, its questions while it waits for
// input, its result once completed.
func TestDetailedTaskOmitsWhatItHasNot(t *testing.T) {
	release := make(chan struct{})
	in := newInstance(t, nil, 0, release, new(atomic.Int32))
	c := connectAsk(t, in.srv)
	raw := func(id string) map[string]stdjson.RawMessage {
		t.Helper()
		var m map[string]stdjson.RawMessage
		if err := c.Call(context.Background(), "tasks/get", map[string]any{"taskId": id}, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	check := func(what string, m map[string]stdjson.RawMessage, has ...string) {
		t.Helper()
		for _, k := range []string{"result", "error", "inputRequests"} {
			_, ok := m[k]
			want := false
			for _, h := range has {
				want = want || h == k
			}
			if ok != want {
				t.Errorf("%s: %q present %v, want %v (task %s)", what, k, ok, want, m["status"])
			}
		}
	}
	working := start(t, c, "slow")
	await(t, c, working, "the progress message", func(v taskView) bool { return v.StatusMessage != "" })
	check("working", raw(working))

	asking := start(t, c, "ask")
	await(t, c, asking, "input_required", func(v taskView) bool { return v.Status == "input_required" })
	check("input_required", raw(asking), "inputRequests")

	close(release)
	await(t, c, working, "completed", func(v taskView) bool { return v.Status == "completed" })
	check("completed", raw(working), "result")
}

// MaxRunning's default, as documented (1,024 runs at once), is what
// Options' zero value gives: 1,024 calls become tasks that run at once,
// the next one is answered synchronously.
func TestMaxRunningDefault(t *testing.T) {
	release := make(chan struct{})
	x := tasks.New(tasks.Options{
		// A store that keeps more than 1,024 tasks of one client.
		Store: memory.NewTaskStore(memory.TaskStoreOptions{MaxTasks: 4096, MaxTasksPerClient: 4096}),
		Tools: map[string]tasks.Support{"hold": tasks.Optional, "job": tasks.Optional}})
	t.Cleanup(func() { close(release); _ = x.Shutdown(context.Background()) })
	srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()}, Tools: []hexmcp.Tool{
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return "held", nil
		}, hexmcp.WithName("hold")),
		hexmcp.NewTool(func() string { return "done" }, hexmcp.WithName("job")),
	}})
	c := connect(t, srv, true)
	for i := range 1024 {
		if v := call(t, c, "tools/call", map[string]any{"name": "hold", "arguments": map[string]any{}}); v.ResultType != "task" {
			t.Fatalf("call %d: resultType %q, want a task", i+1, v.ResultType)
		}
	}
	if v := call(t, c, "tools/call", map[string]any{"name": "job", "arguments": map[string]any{}}); v.ResultType != "complete" || len(v.Content) != 1 {
		t.Fatalf("call 1,025: resultType %q, taskId %q, want it answered synchronously", v.ResultType, v.TaskID)
	}
}
