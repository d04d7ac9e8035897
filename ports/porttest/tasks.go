package porttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

func mustCreate(t *testing.T, s ports.TaskStore, task ports.Task) ports.Task {
	t.Helper()
	got, err := s.Create(ctx, task)
	if err != nil {
		t.Fatalf("Create(%+v): %v", task, err)
	}
	return got
}

func mustGet(t *testing.T, s ports.TaskStore, id, owner string) ports.Task {
	t.Helper()
	got, err := s.Get(ctx, id, owner)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", id, owner, err)
	}
	return got
}

func taskNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ports.ErrTaskNotFound) {
		t.Fatalf("%s: error %v, want ErrTaskNotFound", what, err)
	}
}

func sameJSONText(a, b []byte) bool { return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b)) }

func working(owner string) ports.Task {
	return ports.Task{Owner: owner, Status: ports.TaskWorking, StatusMessage: "starting", TTL: time.Hour, PollInterval: 2 * time.Second}
}

var (
	taskResult = json.RawMessage(`{"content":[{"type":"text","text":"done"}],"isError":false}`)
	rpcError   = json.RawMessage(`{"code":-32603,"message":"boom"}`)
	taskInputs = json.RawMessage(`{"k1":{"method":"elicitation/create","params":{"message":"sure?"}}}`)
)

// TestTaskStore checks the contract every task store keeps, on stores
// newStore makes fresh for each subtest, which tell the time by the clock
// they are handed (a [*FakeClock] starting at [Start]).
func TestTaskStore(t *testing.T, newStore func(t *testing.T, clock ports.Clock) ports.TaskStore) {
	runSuite(t, taskStoreSuite{newStore: newStore})
}

// taskStoreSuite holds the subtests of [TestTaskStore], one method each.
type taskStoreSuite struct {
	newStore taskStoreMaker
}

func (suite taskStoreSuite) CreateGet(t *testing.T) {
	clock := newClock()
	s := suite.newStore(t, clock)
	in := working("alice")
	got := mustCreate(t, s, in)
	if got.ID == "" || len(got.ID) < 16 {
		t.Fatalf("minted id %q: want at least 16 characters", got.ID)
	}
	now := clock.Now()
	if !got.CreatedAt.Equal(now) || !got.UpdatedAt.Equal(now) {
		t.Fatalf("times %v %v, want %v", got.CreatedAt, got.UpdatedAt, now)
	}
	if got.Owner != "alice" || got.Status != ports.TaskWorking || got.StatusMessage != "starting" ||
		got.TTL != time.Hour || got.PollInterval != 2*time.Second || got.Result != nil || got.Error != nil {
		t.Fatalf("created %+v", got)
	}
	back := mustGet(t, s, got.ID, "alice")
	if back.ID != got.ID || !back.CreatedAt.Equal(got.CreatedAt) || !back.UpdatedAt.Equal(got.UpdatedAt) ||
		back.Owner != got.Owner || back.Status != got.Status || back.StatusMessage != got.StatusMessage ||
		back.TTL != got.TTL || back.PollInterval != got.PollInterval {
		t.Fatalf("Get %+v, created %+v", back, got)
	}
	other := mustCreate(t, s, working("alice"))
	if other.ID == got.ID {
		t.Fatalf("two tasks got the id %q", got.ID)
	}

	named := working("alice")
	named.ID = "my-task"
	named.Status, named.InputRequests = ports.TaskInputRequired, taskInputs
	if g := mustCreate(t, s, named); g.ID != "my-task" || !sameJSONText(g.InputRequests, taskInputs) {
		t.Fatalf("named task %+v", g)
	}
	if g := mustGet(t, s, "my-task", "alice"); g.Status != ports.TaskInputRequired || !sameJSONText(g.InputRequests, taskInputs) {
		t.Fatalf("named task read back %+v", g)
	}
	if _, err := s.Create(ctx, named); !errors.Is(err, ports.ErrTaskExists) {
		t.Fatalf("duplicate id: %v, want ErrTaskExists", err)
	}
}

func (suite taskStoreSuite) CreateRefusesMalformed(t *testing.T) {
	s := suite.newStore(t, newClock())
	for name, task := range map[string]ports.Task{
		"completed":     {Owner: "a", Status: ports.TaskCompleted, Result: taskResult},
		"cancelled":     {Owner: "a", Status: ports.TaskCancelled},
		"unknown":       {Owner: "a", Status: "paused"},
		"empty":         {Owner: "a"},
		"result":        {Owner: "a", Status: ports.TaskWorking, Result: taskResult},
		"no inputs":     {Owner: "a", Status: ports.TaskInputRequired},
		"stray inputs":  {Owner: "a", Status: ports.TaskWorking, InputRequests: taskInputs},
		"error working": {Owner: "a", Status: ports.TaskWorking, Error: rpcError},
	} {
		if _, err := s.Create(ctx, task); !errors.Is(err, ports.ErrInvalidTaskUpdate) {
			t.Errorf("%s: %v, want ErrInvalidTaskUpdate", name, err)
		}
	}
	if tasks, _, err := s.List(ctx, "a", "", 0); err != nil || len(tasks) != 0 {
		t.Fatalf("after refused creates: %d tasks, %v", len(tasks), err)
	}
}

func (suite taskStoreSuite) DefaultTTL(t *testing.T) {
	s := suite.newStore(t, newClock())
	task := working("a")
	task.TTL = 0
	got := mustCreate(t, s, task)
	if got.TTL <= 0 {
		t.Fatalf("TTL %v: a store keeps a task for a positive TTL", got.TTL)
	}
	if g := mustGet(t, s, got.ID, "a"); g.TTL != got.TTL {
		t.Fatalf("TTL read back %v, created %v", g.TTL, got.TTL)
	}
	task.TTL = 10_000 * time.Hour
	huge := mustCreate(t, s, task)
	if huge.TTL <= 0 || huge.TTL > task.TTL {
		t.Fatalf("TTL %v for a request of %v", huge.TTL, task.TTL)
	}
	if g := mustGet(t, s, huge.ID, "a"); g.TTL != huge.TTL {
		t.Fatalf("capped TTL read back %v, created %v", g.TTL, huge.TTL)
	}
}

func (suite taskStoreSuite) OwnerIsolation(t *testing.T) {
	s := suite.newStore(t, newClock())
	a := mustCreate(t, s, working("alice"))
	_, err := s.Get(ctx, a.ID, "bob")
	taskNotFound(t, "Get by another owner", err)
	_, err = s.Get(ctx, a.ID, "")
	taskNotFound(t, "Get by no owner", err)
	_, err = s.Update(ctx, a.ID, "bob", ports.TaskUpdate{Status: ports.TaskCompleted, Result: taskResult})
	taskNotFound(t, "Update by another owner", err)
	_, err = s.Cancel(ctx, a.ID, "bob", "")
	taskNotFound(t, "Cancel by another owner", err)
	if err := s.Delete(ctx, a.ID, "bob"); err != nil {
		t.Fatalf("Delete by another owner: %v", err)
	}
	if tasks, next, err := s.List(ctx, "bob", "", 0); err != nil || len(tasks) != 0 || next != "" {
		t.Fatalf("List by another owner: %v %q %v", tasks, next, err)
	}
	if g := mustGet(t, s, a.ID, "alice"); g.Status != ports.TaskWorking {
		t.Fatalf("the owner's task after another's attempts: %+v", g)
	}
	_, err = s.Get(ctx, "no-such-task", "alice")
	taskNotFound(t, "Get of an unknown id", err)
}

func (suite taskStoreSuite) Transitions(t *testing.T) {
	clock := newClock()
	s := suite.newStore(t, clock)
	task := mustCreate(t, s, working("a"))
	clock.Advance(time.Second)
	got, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskInputRequired, StatusMessage: "asking", InputRequests: taskInputs})
	if err != nil || got.Status != ports.TaskInputRequired || !sameJSONText(got.InputRequests, taskInputs) || got.StatusMessage != "asking" {
		t.Fatalf("to input_required: %+v %v", got, err)
	}
	if !got.UpdatedAt.Equal(clock.Now()) || !got.CreatedAt.Equal(task.CreatedAt) {
		t.Fatalf("times after an update: created %v updated %v, now %v", got.CreatedAt, got.UpdatedAt, clock.Now())
	}
	got, err = s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskWorking, StatusMessage: "resumed"})
	if err != nil || got.Status != ports.TaskWorking || got.InputRequests != nil {
		t.Fatalf("back to working: %+v %v", got, err)
	}
	got, err = s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskWorking, StatusMessage: "50%"})
	if err != nil || got.StatusMessage != "50%" {
		t.Fatalf("working to working: %+v %v", got, err)
	}
	if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskCompleted}); !errors.Is(err, ports.ErrInvalidTaskUpdate) {
		t.Fatalf("completed without a result: %v", err)
	}
	if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskFailed, Result: taskResult}); !errors.Is(err, ports.ErrInvalidTaskUpdate) {
		t.Fatalf("failed with a result: %v", err)
	}
	clock.Advance(time.Second)
	got, err = s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskCompleted, Result: taskResult})
	if err != nil || got.Status != ports.TaskCompleted || !sameJSONText(got.Result, taskResult) || got.Error != nil {
		t.Fatalf("to completed: %+v %v", got, err)
	}
	back := mustGet(t, s, task.ID, "a")
	if back.Status != ports.TaskCompleted || !sameJSONText(back.Result, taskResult) || !back.UpdatedAt.Equal(clock.Now()) {
		t.Fatalf("completed read back: %+v", back)
	}
	for _, u := range []ports.TaskUpdate{
		{Status: ports.TaskWorking},
		{Status: ports.TaskCompleted, Result: taskResult},
		{Status: ports.TaskFailed, Error: rpcError},
		{Status: ports.TaskCancelled},
	} {
		_, err := s.Update(ctx, task.ID, "a", u)
		var te *ports.TaskTransitionError
		if !errors.Is(err, ports.ErrTaskTransition) || !errors.As(err, &te) || te.From != ports.TaskCompleted || te.To != u.Status {
			t.Fatalf("completed to %s: %v, want a TaskTransitionError from completed", u.Status, err)
		}
	}
	c, err := s.Cancel(ctx, task.ID, "a", "too late")
	if err != nil || c.Status != ports.TaskCompleted || !sameJSONText(c.Result, taskResult) {
		t.Fatalf("Cancel of a completed task: %+v %v, want it unchanged", c, err)
	}

	f := mustCreate(t, s, working("a"))
	got, err = s.Update(ctx, f.ID, "a", ports.TaskUpdate{Status: ports.TaskFailed, StatusMessage: "crashed", Error: rpcError})
	if err != nil || got.Status != ports.TaskFailed || !sameJSONText(got.Error, rpcError) || got.Result != nil {
		t.Fatalf("to failed: %+v %v", got, err)
	}
	if back := mustGet(t, s, f.ID, "a"); !sameJSONText(back.Error, rpcError) || back.StatusMessage != "crashed" {
		t.Fatalf("failed read back: %+v", back)
	}
}

func (suite taskStoreSuite) CancelSticks(t *testing.T) {
	clock := newClock()
	s := suite.newStore(t, clock)
	task := working("a")
	task.Status, task.InputRequests = ports.TaskInputRequired, taskInputs
	task = mustCreate(t, s, task)
	clock.Advance(time.Millisecond)
	got, err := s.Cancel(ctx, task.ID, "a", "the user cancelled")
	if err != nil || got.Status != ports.TaskCancelled || got.StatusMessage != "the user cancelled" || got.InputRequests != nil || !got.UpdatedAt.Equal(clock.Now()) {
		t.Fatalf("Cancel: %+v %v", got, err)
	}
	if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskCompleted, Result: taskResult}); !errors.Is(err, ports.ErrTaskTransition) {
		t.Fatalf("completing a cancelled task: %v, want ErrTaskTransition", err)
	}
	again, err := s.Cancel(ctx, task.ID, "a", "twice")
	if err != nil || again.Status != ports.TaskCancelled || again.StatusMessage != "the user cancelled" {
		t.Fatalf("second Cancel: %+v %v, want the task unchanged", again, err)
	}
	if back := mustGet(t, s, task.ID, "a"); back.Status != ports.TaskCancelled || back.Result != nil {
		t.Fatalf("cancelled read back: %+v", back)
	}
	_, err = s.Cancel(ctx, "no-such-task", "a", "")
	taskNotFound(t, "Cancel of an unknown id", err)
}

func (suite taskStoreSuite) Expiry(t *testing.T) {
	clock := newClock()
	s := suite.newStore(t, clock)
	task := working("a")
	task.TTL = 10 * time.Minute
	done := mustCreate(t, s, task)
	task = mustCreate(t, s, task)
	if _, err := s.Update(ctx, done.ID, "a", ports.TaskUpdate{Status: ports.TaskCompleted, Result: taskResult}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10*time.Minute - time.Millisecond)
	mustGet(t, s, task.ID, "a")
	mustGet(t, s, done.ID, "a")
	if tasks, _, err := s.List(ctx, "a", "", 0); err != nil || len(tasks) != 2 {
		t.Fatalf("List before expiry: %d tasks, %v", len(tasks), err)
	}
	clock.Advance(time.Millisecond)
	_, err := s.Get(ctx, task.ID, "a")
	taskNotFound(t, "Get at the TTL", err)
	_, err = s.Get(ctx, done.ID, "a")
	taskNotFound(t, "Get of a completed task at its TTL (counted from creation)", err)
	_, err = s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskWorking})
	taskNotFound(t, "Update at the TTL", err)
	_, err = s.Cancel(ctx, task.ID, "a", "")
	taskNotFound(t, "Cancel at the TTL", err)
	if tasks, _, err := s.List(ctx, "a", "", 0); err != nil || len(tasks) != 0 {
		t.Fatalf("List after expiry: %d tasks, %v", len(tasks), err)
	}
	again := working("a")
	again.ID = task.ID
	if _, err := s.Create(ctx, again); err != nil {
		t.Fatalf("Create with the id of an expired task: %v", err)
	}
}

func (suite taskStoreSuite) Delete(t *testing.T) {
	s := suite.newStore(t, newClock())
	task := mustCreate(t, s, working("a"))
	if err := s.Delete(ctx, task.ID, "a"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx, task.ID, "a")
	taskNotFound(t, "Get after Delete", err)
	if err := s.Delete(ctx, task.ID, "a"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if tasks, _, err := s.List(ctx, "a", "", 0); err != nil || len(tasks) != 0 {
		t.Fatalf("List after Delete: %d tasks, %v", len(tasks), err)
	}
}

func (suite taskStoreSuite) Copies(t *testing.T) {
	s := suite.newStore(t, newClock())
	task := working("a")
	task.Status, task.InputRequests = ports.TaskInputRequired, bytes.Clone(taskInputs)
	got := mustCreate(t, s, task)
	task.InputRequests[2] = 'X'
	got.InputRequests[3] = 'Y'
	if back := mustGet(t, s, got.ID, "a"); !sameJSONText(back.InputRequests, taskInputs) {
		t.Fatalf("the store shares its bytes with callers: %s", back.InputRequests)
	}
}

func (suite taskStoreSuite) Pagination(t *testing.T) {
	clock := newClock()
	s := suite.newStore(t, clock)
	var ids []string
	for range 25 {
		ids = append(ids, mustCreate(t, s, working("a")).ID)
		clock.Advance(time.Millisecond)
	}
	mustCreate(t, s, working("b"))
	var seen []string
	cursor, pages := "", 0
	for {
		tasks, next, err := s.List(ctx, "a", cursor, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) > 10 {
			t.Fatalf("page of %d tasks, limit 10", len(tasks))
		}
		for _, task := range tasks {
			if task.Owner != "a" {
				t.Fatalf("List of a holds %+v", task)
			}
			seen = append(seen, task.ID)
		}
		pages++
		if next == "" {
			break
		}
		if pages > 10 {
			t.Fatal("List does not end")
		}
		cursor = next
	}
	if strings.Join(seen, ",") != strings.Join(ids, ",") {
		t.Fatalf("listed %v, want %v (oldest first)", seen, ids)
	}
	if pages != 3 {
		t.Fatalf("%d pages of 25 tasks by 10", pages)
	}
	if _, _, err := s.List(ctx, "a", "not a cursor!", 10); !errors.Is(err, ports.ErrInvalidTaskCursor) {
		t.Fatalf("List from a made-up cursor: %v, want ErrInvalidTaskCursor", err)
	}
	all, next, err := s.List(ctx, "a", "", 0)
	if err != nil || len(all) == 0 || (len(all) < 25 && next == "") {
		t.Fatalf("List with no limit: %d tasks, next %q, %v", len(all), next, err)
	}
}

func (suite taskStoreSuite) PaginationUnderCreates(t *testing.T) {
	s := suite.newStore(t, newClock())
	before := map[string]bool{}
	for range 30 {
		before[mustCreate(t, s, working("a")).ID] = true
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 200 {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Create(ctx, working("a")); err != nil {
				t.Error(err)
				return
			}
		}
	})
	seen := map[string]int{}
	cursor := ""
	for {
		tasks, next, err := s.List(ctx, "a", cursor, 7)
		if err != nil {
			t.Error(err)
			break
		}
		for _, task := range tasks {
			seen[task.ID]++
		}
		if next == "" {
			break
		}
		cursor = next
	}
	close(stop)
	wg.Wait()
	for id, n := range seen {
		if n != 1 {
			t.Errorf("task %s listed %d times", id, n)
		}
	}
	for id := range before {
		if seen[id] != 1 {
			t.Errorf("task %s, created before the listing, was not listed", id)
		}
	}
}

// taskStoreMaker makes a fresh task store that tells the time by clock.
type taskStoreMaker = func(t *testing.T, clock ports.Clock) ports.TaskStore
