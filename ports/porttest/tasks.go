package porttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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

// TestTaskStore checks the contract every task store keeps.
func TestTaskStore(t *testing.T, newStore func(t *testing.T, clock ports.Clock) ports.TaskStore) {
	t.Run("CreateGet", func(t *testing.T) {
		clock := newClock()
		s := newStore(t, clock)
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
	})

	t.Run("CreateRefusesMalformed", func(t *testing.T) {
		s := newStore(t, newClock())
		for name, task := range map[string]ports.Task{
			"completed":        {Owner: "a", Status: ports.TaskCompleted, Result: taskResult},
			"cancelled":        {Owner: "a", Status: ports.TaskCancelled},
			"unknown":          {Owner: "a", Status: "paused"},
			"empty":            {Owner: "a"},
			"taskResult":       {Owner: "a", Status: ports.TaskWorking, Result: taskResult},
			"no inputs":        {Owner: "a", Status: ports.TaskInputRequired},
			"stray taskInputs": {Owner: "a", Status: ports.TaskWorking, InputRequests: taskInputs},
			"error working":    {Owner: "a", Status: ports.TaskWorking, Error: rpcError},
		} {
			if _, err := s.Create(ctx, task); !errors.Is(err, ports.ErrInvalidTaskUpdate) {
				t.Errorf("%s: %v, want ErrInvalidTaskUpdate", name, err)
			}
		}
		if tasks, _, err := s.List(ctx, "a", "", 0); err != nil || len(tasks) != 0 {
			t.Fatalf("after refused creates: %d tasks, %v", len(tasks), err)
		}
	})

	t.Run("DefaultTTL", func(t *testing.T) {
		s := newStore(t, newClock())
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
	})

	t.Run("OwnerIsolation", func(t *testing.T) {
		s := newStore(t, newClock())
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
	})

	t.Run("Transitions", func(t *testing.T) {
		clock := newClock()
		s := newStore(t, clock)
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
	})

	t.Run("CancelSticks", func(t *testing.T) {
		clock := newClock()
		s := newStore(t, clock)
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
	})

	t.Run("Expiry", func(t *testing.T) {
		clock := newClock()
		s := newStore(t, clock)
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
	})

	t.Run("Delete", func(t *testing.T) {
		s := newStore(t, newClock())
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
	})

	t.Run("Copies", func(t *testing.T) {
		s := newStore(t, newClock())
		task := working("a")
		task.Status, task.InputRequests = ports.TaskInputRequired, bytes.Clone(taskInputs)
		got := mustCreate(t, s, task)
		task.InputRequests[2] = 'X'
		got.InputRequests[3] = 'Y'
		if back := mustGet(t, s, got.ID, "a"); !sameJSONText(back.InputRequests, taskInputs) {
			t.Fatalf("the store shares its bytes with callers: %s", back.InputRequests)
		}
	})

	t.Run("Pagination", func(t *testing.T) {
		clock := newClock()
		s := newStore(t, clock)
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
	})

	t.Run("PaginationUnderCreates", func(t *testing.T) {
		s := newStore(t, newClock())
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
	})

	t.Run("RacingEnds", func(t *testing.T) {
		s := newStore(t, newClock())
		for range 20 {
			task := mustCreate(t, s, working("a"))
			var wg sync.WaitGroup
			var mu sync.Mutex
			wins := map[ports.TaskStatus]int{}
			win := func(st ports.TaskStatus) { mu.Lock(); wins[st]++; mu.Unlock() }
			for range 3 {
				wg.Go(func() {
					if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskCompleted, Result: taskResult}); err == nil {
						win(ports.TaskCompleted)
					} else if !errors.Is(err, ports.ErrTaskTransition) {
						t.Errorf("racing Update: %v", err)
					}
				})
				wg.Go(func() {
					if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskFailed, Error: rpcError}); err == nil {
						win(ports.TaskFailed)
					} else if !errors.Is(err, ports.ErrTaskTransition) {
						t.Errorf("racing Update: %v", err)
					}
				})
				wg.Go(func() {
					if _, err := s.Cancel(ctx, task.ID, "a", "stop"); err != nil {
						t.Errorf("racing Cancel: %v", err)
					}
				})
				wg.Go(func() {
					if _, err := s.Get(ctx, task.ID, "a"); err != nil {
						t.Errorf("racing Get: %v", err)
					}
				})
			}
			wg.Wait()
			final := mustGet(t, s, task.ID, "a")
			if !final.Status.Terminal() {
				t.Fatalf("after the race: %+v", final)
			}
			if wins[ports.TaskCompleted]+wins[ports.TaskFailed] > 1 {
				t.Fatalf("more than one update ended the task: %v", wins)
			}
			switch final.Status {
			case ports.TaskCompleted:
				if wins[ports.TaskCompleted] != 1 || !sameJSONText(final.Result, taskResult) || final.Error != nil {
					t.Fatalf("completed: %+v, wins %v", final, wins)
				}
			case ports.TaskFailed:
				if wins[ports.TaskFailed] != 1 || !sameJSONText(final.Error, rpcError) || final.Result != nil {
					t.Fatalf("failed: %+v, wins %v", final, wins)
				}
			case ports.TaskCancelled:
				if len(wins) != 0 || final.Result != nil || final.Error != nil {
					t.Fatalf("cancelled: %+v, yet updates won: %v", final, wins)
				}
			}
		}
	})

	t.Run("StateAndVersion", func(t *testing.T) {
		s := newStore(t, newClock())
		in := working("a")
		in.State = json.RawMessage(`{"params":{"name":"build"}}`)
		task := mustCreate(t, s, in)
		if task.Version != 1 || !sameJSONText(task.State, in.State) {
			t.Fatalf("created: version %d, state %s; want 1 and %s", task.Version, task.State, in.State)
		}
		if g := mustGet(t, s, task.ID, "a"); g.Version != 1 || !sameJSONText(g.State, in.State) {
			t.Fatalf("read back: version %d, state %s", g.Version, g.State)
		}
		// nil State keeps it; every change counts.
		g, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskInputRequired, InputRequests: taskInputs})
		if err != nil || g.Version != 2 || !sameJSONText(g.State, in.State) {
			t.Fatalf("update keeping the state: %+v, %v", g, err)
		}
		// A conditional update at a stale version is refused and changes
		// nothing.
		_, err = s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskWorking, IfVersion: 1})
		if !errors.Is(err, ports.ErrTaskConflict) {
			t.Fatalf("update at a stale version: %v, want ErrTaskConflict", err)
		}
		if g := mustGet(t, s, task.ID, "a"); g.Version != 2 || g.Status != ports.TaskInputRequired {
			t.Fatalf("after the refused update: %+v", g)
		}
		st2 := json.RawMessage(`{"answers":{"k1":{}}}`)
		g, err = s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskWorking, State: st2, IfVersion: 2})
		if err != nil || g.Version != 3 || !sameJSONText(g.State, st2) || g.InputRequests != nil {
			t.Fatalf("update at the current version: %+v, %v", g, err)
		}
		// A terminal status drops the state.
		g, err = s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskCompleted, Result: taskResult, State: st2})
		if err != nil || g.Version != 4 || g.State != nil {
			t.Fatalf("completing: %+v, %v", g, err)
		}
		if g := mustGet(t, s, task.ID, "a"); g.State != nil || g.Version != 4 {
			t.Fatalf("completed task read back: state %s, version %d", g.State, g.Version)
		}
		// Cancel counts as a change and drops the state too; an idempotent
		// one changes nothing.
		other := mustCreate(t, s, in)
		c, err := s.Cancel(ctx, other.ID, "a", "stop")
		if err != nil || c.Version != 2 || c.State != nil {
			t.Fatalf("cancel: %+v, %v", c, err)
		}
		if c, err = s.Cancel(ctx, other.ID, "a", "again"); err != nil || c.Version != 2 {
			t.Fatalf("second cancel: %+v, %v", c, err)
		}
	})

	t.Run("Client", func(t *testing.T) {
		s := newStore(t, newClock())
		task := working("alice")
		task.Runner, task.LeaseUntil = "ignored", time.Now().Add(time.Hour)
		got := mustCreate(t, s, task)
		if got.Client != "alice" || got.Runner != "" || !got.LeaseUntil.IsZero() {
			t.Fatalf("created %+v: want Client the Owner, and no claim", got)
		}
		task.Client = "ip:192.0.2.1"
		got = mustCreate(t, s, task)
		if g := mustGet(t, s, got.ID, "alice"); got.Client != "ip:192.0.2.1" || g.Client != "ip:192.0.2.1" {
			t.Fatalf("created %+v, read back %+v: want the Client kept", got, g)
		}
		_, err := s.Get(ctx, got.ID, "ip:192.0.2.1")
		taskNotFound(t, "Get by the client, which is not the owner", err)
	})

	t.Run("Claims", func(t *testing.T) {
		clock := newClock()
		s := newStore(t, clock)
		in := working("a")
		in.State = json.RawMessage(`{"name":"build","arguments":{"n":1}}`)
		task := mustCreate(t, s, in)
		claim := func(runner string, lease time.Duration) (ports.Task, error) {
			return s.Claim(ctx, task.ID, "a", ports.TaskClaim{Runner: runner, Lease: lease})
		}
		got, err := claim("r1", 10*time.Second)
		if err != nil || got.Runner != "r1" || !got.LeaseUntil.Equal(clock.Now().Add(10*time.Second)) {
			t.Fatalf("first claim: %+v, %v", got, err)
		}
		// A claim changes neither the task's version nor its time, and
		// answers without the state.
		if got.Version != 1 || !got.UpdatedAt.Equal(task.UpdatedAt) || got.State != nil || got.Status != ports.TaskWorking || got.ID != task.ID {
			t.Fatalf("claimed: %+v", got)
		}
		if g := mustGet(t, s, task.ID, "a"); g.Runner != "r1" || !g.LeaseUntil.Equal(got.LeaseUntil) || !sameJSONText(g.State, in.State) || g.Version != 1 {
			t.Fatalf("read back after a claim: %+v", g)
		}
		_, err = claim("r2", 10*time.Second)
		if !errors.Is(err, ports.ErrTaskClaimed) || !errors.Is(err, ports.ErrTaskConflict) {
			t.Fatalf("claim of a task another runner holds: %v, want ErrTaskClaimed", err)
		}
		_, err = s.Claim(ctx, task.ID, "bob", ports.TaskClaim{Runner: "r1", Lease: time.Second})
		taskNotFound(t, "Claim by another owner", err)
		_, err = s.Claim(ctx, task.ID, "a", ports.TaskClaim{Lease: time.Second})
		if !errors.Is(err, ports.ErrInvalidTaskUpdate) {
			t.Fatalf("claim without a runner: %v, want ErrInvalidTaskUpdate", err)
		}
		// A renewal, with a status message: the message is a change.
		clock.Advance(5 * time.Second)
		msg := "half"
		got, err = s.Claim(ctx, task.ID, "a", ports.TaskClaim{Runner: "r1", Lease: 10 * time.Second, StatusMessage: &msg})
		if err != nil || got.Runner != "r1" || !got.LeaseUntil.Equal(clock.Now().Add(10*time.Second)) ||
			got.StatusMessage != "half" || got.Version != 2 || !got.UpdatedAt.Equal(clock.Now()) {
			t.Fatalf("renewal with a message: %+v, %v", got, err)
		}
		got, err = s.Claim(ctx, task.ID, "a", ports.TaskClaim{Runner: "r1", Lease: 10 * time.Second, StatusMessage: &msg})
		if err != nil || got.Version != 2 {
			t.Fatalf("renewal with the same message: %+v, %v", got, err)
		}
		long := strings.Repeat("m", 1<<20)
		if _, err := s.Claim(ctx, task.ID, "a", ports.TaskClaim{Runner: "r1", Lease: time.Second, StatusMessage: &long}); !errors.Is(err, ports.ErrTaskTooLarge) {
			t.Fatalf("claim with a message of 1 MiB: %v, want ErrTaskTooLarge", err)
		}
		// A conditional claim at a stale version is refused.
		if _, err := s.Claim(ctx, task.ID, "a", ports.TaskClaim{Runner: "r1", Lease: time.Second, IfVersion: 1}); !errors.Is(err, ports.ErrTaskConflict) {
			t.Fatalf("claim at a stale version: %v, want ErrTaskConflict", err)
		}
		// Once the claim has ended, another runner takes it over.
		clock.Advance(10 * time.Second)
		if got, err = claim("r2", 10*time.Second); err != nil || got.Runner != "r2" {
			t.Fatalf("takeover of an ended claim: %+v, %v", got, err)
		}
		// Updates conditional on the runner: the old runner's are refused.
		if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskCompleted, Result: taskResult, IfRunner: "r1"}); !errors.Is(err, ports.ErrTaskClaimed) {
			t.Fatalf("update by a runner that lost the claim: %v, want ErrTaskClaimed", err)
		}
		if g, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskWorking, StatusMessage: "on", IfRunner: "r2"}); err != nil || g.Runner != "r2" || !sameJSONText(g.State, in.State) {
			t.Fatalf("working update by the runner: %+v, %v (it keeps the claim and the state)", g, err)
		}
		// Release: only by the runner.
		if _, err := claim("r1", 0); !errors.Is(err, ports.ErrTaskClaimed) {
			t.Fatalf("release by another runner: %v, want ErrTaskClaimed", err)
		}
		if got, err = claim("r2", 0); err != nil || got.Runner != "" || !got.LeaseUntil.IsZero() {
			t.Fatalf("release: %+v, %v", got, err)
		}
		if got, err = claim("r1", time.Second); err != nil || got.Runner != "r1" {
			t.Fatalf("claim of a released task: %+v, %v", got, err)
		}
		// A status other than working drops the claim; a task not
		// working cannot be claimed.
		g, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskInputRequired, InputRequests: taskInputs, IfRunner: "r1"})
		if err != nil || g.Runner != "" || !g.LeaseUntil.IsZero() {
			t.Fatalf("to input_required: %+v, %v (the claim must go)", g, err)
		}
		var te *ports.TaskTransitionError
		if _, err := claim("r1", time.Second); !errors.As(err, &te) || te.From != ports.TaskInputRequired {
			t.Fatalf("claim of an input_required task: %v, want a TaskTransitionError", err)
		}
		if _, err := s.Cancel(ctx, task.ID, "a", "stop"); err != nil {
			t.Fatal(err)
		}
		if _, err := claim("r1", time.Second); !errors.As(err, &te) || te.From != ports.TaskCancelled {
			t.Fatalf("claim of a cancelled task: %v, want a TaskTransitionError", err)
		}
		_, err = s.Claim(ctx, "no-such-task", "a", ports.TaskClaim{Runner: "r1", Lease: time.Second})
		taskNotFound(t, "Claim of an unknown id", err)
	})

	t.Run("RacingClaims", func(t *testing.T) {
		s := newStore(t, newClock())
		task := mustCreate(t, s, working("a"))
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := map[string]bool{}
		for i := range 10 {
			wg.Go(func() {
				runner := "r" + strconv.Itoa(i)
				_, err := s.Claim(ctx, task.ID, "a", ports.TaskClaim{Runner: runner, Lease: time.Minute})
				switch {
				case err == nil:
					mu.Lock()
					won[runner] = true
					mu.Unlock()
				case !errors.Is(err, ports.ErrTaskClaimed):
					t.Errorf("racing claim: %v", err)
				}
			})
		}
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("%d runners claimed one task, want exactly 1", len(won))
		}
		if g := mustGet(t, s, task.ID, "a"); !won[g.Runner] {
			t.Fatalf("the task's runner %q did not win", g.Runner)
		}
	})

	t.Run("RacingConditional", func(t *testing.T) {
		s := newStore(t, newClock())
		task := mustCreate(t, s, working("a"))
		// Ten updaters read version 1 and race: exactly one wins.
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 10 {
			wg.Go(func() {
				st := json.RawMessage(`{"winner":` + strconv.Itoa(i) + `}`)
				_, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskWorking, State: st, IfVersion: 1})
				switch {
				case err == nil:
					mu.Lock()
					won++
					mu.Unlock()
				case !errors.Is(err, ports.ErrTaskConflict):
					t.Errorf("racing conditional update: %v", err)
				}
			})
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d conditional updates at version 1 won, want exactly 1", won)
		}
		if g := mustGet(t, s, task.ID, "a"); g.Version != 2 {
			t.Fatalf("version %d after one win, want 2", g.Version)
		}
	})

	t.Run("ConcurrentOwners", func(t *testing.T) {
		s := newStore(t, newClock())
		var wg sync.WaitGroup
		for g := range 8 {
			owner := fmt.Sprintf("owner-%d", g)
			wg.Go(func() {
				for range 10 {
					task, err := s.Create(ctx, working(owner))
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := s.Update(ctx, task.ID, owner, ports.TaskUpdate{Status: ports.TaskCompleted, Result: taskResult}); err != nil {
						t.Error(err)
					}
				}
				tasks, _, err := s.List(ctx, owner, "", 0)
				if err != nil || len(tasks) != 10 {
					t.Errorf("%s lists %d tasks, %v", owner, len(tasks), err)
				}
			})
		}
		wg.Wait()
	})
}

// TaskLimits are the limits a store under [TestTaskLimits] was configured with.
// Keep them small: the suite fills them.
type TaskLimits struct {
	// MaxTasks, MaxTasksPerClient: the live tasks of the store, and of
	// one client (MaxTasksPerClient < MaxTasks).
	MaxTasks, MaxTasksPerClient int
	// MaxTaskBytes bounds what one task keeps (InputRequests, Result,
	// Error and State together; at least 5 KiB for the suite).
	MaxTaskBytes int
	// MaxBytesPerClient, MaxBytes: what the live tasks of one client,
	// and of the store, keep together. For the suite, MaxBytesPerClient
	// is at least 9 KiB and MaxTasksPerClient tasks of
	// ports.MinTaskBytes fit in it, MaxTasks of them fit in MaxBytes,
	// and MaxBytes is over 2 × MaxBytesPerClient.
	MaxBytesPerClient, MaxBytes int
	// MaxStatusMessageBytes bounds StatusMessage.
	MaxStatusMessageBytes int
}

// taskPayloads holds the taskPayloads made, by size: large ones are made once.
var taskPayloads sync.Map

// payload is a JSON string of n bytes (callers must not change it).
func taskPayload(n int) json.RawMessage {
	if p, ok := taskPayloads.Load(n); ok {
		return p.(json.RawMessage)
	}
	p := json.RawMessage(`"` + strings.Repeat("x", n-2) + `"`)
	taskPayloads.Store(n, p)
	return p
}

// withState is a working task of owner, counted against client, that
// keeps a state of n bytes.
func withState(owner, client string, n int) ports.Task {
	t := working(owner)
	t.Client, t.State = client, taskPayload(n)
	return t
}

// TestTaskLimits checks that a store configured with lim keeps to it: Create
// refuses past the limits until an expired task makes room, and taskPayloads
// are bounded.
func TestTaskLimits(t *testing.T, lim TaskLimits, newStore func(t *testing.T, clock ports.Clock) ports.TaskStore) {
	t.Run("PerClient", func(t *testing.T) {
		clock := newClock()
		s := newStore(t, clock)
		short := working("a")
		short.TTL = time.Minute
		mustCreate(t, s, short)
		// A client's tasks count together, whoever owns each (its
		// sessions): an empty Client is the Owner.
		for i := range lim.MaxTasksPerClient - 1 {
			task := working(fmt.Sprintf("session-%d", i))
			task.Client = "a"
			mustCreate(t, s, task)
		}
		other := working("session-x")
		other.Client = "a"
		if _, err := s.Create(ctx, other); !errors.Is(err, ports.ErrTooManyTasksForClient) {
			t.Fatalf("Create past the client's limit: %v, want ErrTooManyTasksForClient", err)
		}
		if _, err := s.Create(ctx, working("a")); !errors.Is(err, ports.ErrTooManyTasksForClient) {
			t.Fatalf("Create past the client's limit: %v, want ErrTooManyTasksForClient", err)
		}
		mustCreate(t, s, working("b"))
		clock.Advance(time.Minute)
		mustCreate(t, s, working("a"))
		if _, err := s.Create(ctx, working("a")); !errors.Is(err, ports.ErrTooManyTasksForClient) {
			t.Fatalf("Create past the client's limit again: %v", err)
		}
	})
	t.Run("Total", func(t *testing.T) {
		clock := newClock()
		s := newStore(t, clock)
		short := working("owner-0")
		short.TTL = time.Minute
		mustCreate(t, s, short)
		for i := 1; i < lim.MaxTasks; i++ {
			mustCreate(t, s, working(fmt.Sprintf("owner-%d", i)))
		}
		_, err := s.Create(ctx, working("newcomer"))
		if !errors.Is(err, ports.ErrTooManyTasks) || errors.Is(err, ports.ErrTooManyTasksForClient) {
			t.Fatalf("Create in a full store: %v, want ErrTooManyTasks alone", err)
		}
		clock.Advance(time.Minute)
		mustCreate(t, s, working("newcomer"))
	})
	t.Run("Payloads", func(t *testing.T) {
		s := newStore(t, newClock())
		task := mustCreate(t, s, working("a"))
		if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskWorking, StatusMessage: strings.Repeat("m", lim.MaxStatusMessageBytes+1)}); !errors.Is(err, ports.ErrTaskTooLarge) {
			t.Fatalf("status message over the limit: %v, want ErrTaskTooLarge", err)
		}
		if _, err := s.Cancel(ctx, task.ID, "a", strings.Repeat("m", lim.MaxStatusMessageBytes+1)); !errors.Is(err, ports.ErrTaskTooLarge) {
			t.Fatalf("cancel message over the limit: %v, want ErrTaskTooLarge", err)
		}
		if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskInputRequired, InputRequests: taskPayload(lim.MaxTaskBytes + 1)}); !errors.Is(err, ports.ErrTaskTooLarge) {
			t.Fatalf("input requests over the limit: %v, want ErrTaskTooLarge", err)
		}
		if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskCompleted, Result: taskPayload(lim.MaxTaskBytes + 1)}); !errors.Is(err, ports.ErrTaskTooLarge) {
			t.Fatalf("result over the limit: %v, want ErrTaskTooLarge", err)
		}
		if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskWorking, State: taskPayload(lim.MaxTaskBytes + 1)}); !errors.Is(err, ports.ErrTaskTooLarge) {
			t.Fatalf("state over the limit: %v, want ErrTaskTooLarge", err)
		}
		if _, err := s.Create(ctx, withState("a", "", lim.MaxTaskBytes+1)); !errors.Is(err, ports.ErrTaskTooLarge) {
			t.Fatalf("Create with a state over the limit: %v, want ErrTaskTooLarge", err)
		}
		big := working("a")
		big.Status, big.InputRequests = ports.TaskInputRequired, taskPayload(lim.MaxTaskBytes+1)
		if _, err := s.Create(ctx, big); !errors.Is(err, ports.ErrTaskTooLarge) {
			t.Fatalf("Create with input requests over the limit: %v, want ErrTaskTooLarge", err)
		}
		// The bound is on the task's taskPayloads and state together: a kept
		// state counts with the input requests that come later.
		half := mustCreate(t, s, withState("a", "", lim.MaxTaskBytes/2+1))
		if _, err := s.Update(ctx, half.ID, "a", ports.TaskUpdate{Status: ports.TaskInputRequired, InputRequests: taskPayload(lim.MaxTaskBytes / 2)}); !errors.Is(err, ports.ErrTaskTooLarge) {
			t.Fatalf("input requests that, with the state kept, are over the limit: %v, want ErrTaskTooLarge", err)
		}
		mixed := working("a")
		mixed.Status, mixed.InputRequests, mixed.State = ports.TaskInputRequired, taskPayload(lim.MaxTaskBytes/2), taskPayload(lim.MaxTaskBytes/2+1)
		if _, err := s.Create(ctx, mixed); !errors.Is(err, ports.ErrTaskTooLarge) {
			t.Fatalf("Create with input requests and a state together over the limit: %v, want ErrTaskTooLarge", err)
		}
		if g := mustGet(t, s, task.ID, "a"); g.Status != ports.TaskWorking || g.StatusMessage != "starting" {
			t.Fatalf("after refused updates: %+v", g)
		}
		msg := strings.Repeat("m", lim.MaxStatusMessageBytes)
		res := taskPayload(lim.MaxTaskBytes)
		if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskCompleted, StatusMessage: msg, Result: res}); err != nil {
			t.Fatalf("result and message at the limits: %v", err)
		}
		if g := mustGet(t, s, task.ID, "a"); !bytes.Equal(g.Result, res) || g.StatusMessage != msg {
			t.Fatalf("result at the limit read back: %d bytes", len(g.Result))
		}
	})
	t.Run("BytesPerClient", func(t *testing.T) {
		clock := newClock()
		s := newStore(t, clock)
		// One client fills its share exactly, with tasks of several
		// owners (its sessions).
		unit := min(lim.MaxTaskBytes-2*ports.MinTaskBytes, lim.MaxBytesPerClient/3)
		var sizes []int
		for left := lim.MaxBytesPerClient; left > 0; {
			n := min(unit, left)
			if rest := left - n; rest > 0 && rest < ports.MinTaskBytes {
				n = left - ports.MinTaskBytes
			}
			sizes = append(sizes, n)
			left -= n
		}
		var filled []ports.Task
		for i, n := range sizes {
			task := withState(fmt.Sprintf("s%d", i), "c", n)
			if i == 0 {
				task.TTL = time.Minute
			}
			filled = append(filled, mustCreate(t, s, task))
		}
		if _, err := s.Create(ctx, withState("more", "c", ports.MinTaskBytes)); !errors.Is(err, ports.ErrTooManyTasksForClient) {
			t.Fatalf("Create past the client's bytes: %v, want ErrTooManyTasksForClient", err)
		}
		// Another client is not bounded by it.
		other := mustCreate(t, s, withState("d", "", unit))
		// An update that grows a task past the client's share is refused,
		// whatever it grows (input requests, a result, a state); one that
		// leaves it at ports.MinTaskBytes never is.
		second := filled[1]
		grow := taskPayload(unit + ports.MinTaskBytes)
		for _, u := range []ports.TaskUpdate{
			{Status: ports.TaskInputRequired, InputRequests: grow, State: json.RawMessage(`{}`)},
			{Status: ports.TaskCompleted, Result: grow},
			{Status: ports.TaskWorking, State: grow},
		} {
			if _, err := s.Update(ctx, second.ID, second.Owner, u); !errors.Is(err, ports.ErrTooManyTasksForClient) {
				t.Fatalf("growing a task past the client's bytes (%s): %v, want ErrTooManyTasksForClient", u.Status, err)
			}
		}
		if _, err := s.Update(ctx, second.ID, second.Owner, ports.TaskUpdate{Status: ports.TaskFailed, Error: rpcError}); err != nil {
			t.Fatalf("failing a task of a client at its share: %v", err)
		}
		// The failed task keeps ports.MinTaskBytes: room for a small one.
		mustCreate(t, s, withState("small", "c", ports.MinTaskBytes))
		if _, err := s.Update(ctx, other.ID, "d", ports.TaskUpdate{Status: ports.TaskWorking, State: grow}); err != nil {
			t.Fatalf("another client's task grows within its share: %v", err)
		}
		// An expired task gives its bytes back.
		late := withState("late", "c", unit-2*ports.MinTaskBytes+1)
		if _, err := s.Create(ctx, late); !errors.Is(err, ports.ErrTooManyTasksForClient) {
			t.Fatalf("Create past the client's bytes: %v, want ErrTooManyTasksForClient", err)
		}
		clock.Advance(time.Minute)
		mustCreate(t, s, late)
		_, err := s.Get(ctx, filled[0].ID, filled[0].Owner)
		taskNotFound(t, "an expired task", err)
	})
	t.Run("BytesTotal", func(t *testing.T) {
		clock := newClock()
		s := newStore(t, clock)
		size := min(lim.MaxBytesPerClient/2, lim.MaxTaskBytes)
		var short ports.Task
		for i, held := 0, 0; held+size <= lim.MaxBytes; i++ {
			task := withState(fmt.Sprintf("o%d", i), fmt.Sprintf("client-%d", i/2), size)
			if i == 0 {
				task.TTL = time.Minute
				short = mustCreate(t, s, task)
			} else {
				mustCreate(t, s, task)
			}
			held += size
		}
		_, err := s.Create(ctx, withState("newcomer", "", size))
		if !errors.Is(err, ports.ErrTooManyTasks) || errors.Is(err, ports.ErrTooManyTasksForClient) {
			t.Fatalf("Create past the store's bytes: %v, want ErrTooManyTasks alone", err)
		}
		clock.Advance(time.Minute)
		mustCreate(t, s, withState("newcomer", "", size))
		_, err = s.Get(ctx, short.ID, short.Owner)
		taskNotFound(t, "an expired task", err)
	})
}

// TestTaskStoreShared checks a store shared by instances: newStores returns two
// handles on one fresh backend (two instances of a server), with one
// clock.
func TestTaskStoreShared(t *testing.T, newStores func(t *testing.T, clock ports.Clock) (a, b ports.TaskStore)) {
	clock := newClock()
	a, b := newStores(t, clock)
	task := mustCreate(t, a, working("alice"))
	if g := mustGet(t, b, task.ID, "alice"); g.ID != task.ID || g.Status != ports.TaskWorking {
		t.Fatalf("the other instance reads %+v", g)
	}
	_, err := b.Get(ctx, task.ID, "bob")
	taskNotFound(t, "another owner through the other instance", err)
	if _, err := b.Update(ctx, task.ID, "alice", ports.TaskUpdate{Status: ports.TaskInputRequired, InputRequests: taskInputs}); err != nil {
		t.Fatal(err)
	}
	if g := mustGet(t, a, task.ID, "alice"); g.Status != ports.TaskInputRequired || !sameJSONText(g.InputRequests, taskInputs) {
		t.Fatalf("the first instance reads %+v", g)
	}
	if _, err := a.Cancel(ctx, task.ID, "alice", "stop"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Update(ctx, task.ID, "alice", ports.TaskUpdate{Status: ports.TaskCompleted, Result: taskResult}); !errors.Is(err, ports.ErrTaskTransition) {
		t.Fatalf("completing through one instance a task cancelled through the other: %v", err)
	}
	second := mustCreate(t, b, working("alice"))
	page, next, err := a.List(ctx, "alice", "", 1)
	if err != nil || len(page) != 1 || page[0].ID != task.ID || next == "" {
		t.Fatalf("first page through a: %v %q %v", page, next, err)
	}
	page, next, err = b.List(ctx, "alice", next, 1)
	if err != nil || len(page) != 1 || page[0].ID != second.ID {
		t.Fatalf("second page through b: %v %q %v", page, next, err)
	}
	// A claim made through one instance holds at the other.
	third := mustCreate(t, a, working("alice"))
	if _, err := a.Claim(ctx, third.ID, "alice", ports.TaskClaim{Runner: "ra", Lease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Claim(ctx, third.ID, "alice", ports.TaskClaim{Runner: "rb", Lease: time.Minute}); !errors.Is(err, ports.ErrTaskClaimed) {
		t.Fatalf("claim through the other instance of a task claimed through the first: %v, want ErrTaskClaimed", err)
	}
	if g := mustGet(t, b, third.ID, "alice"); g.Runner != "ra" {
		t.Fatalf("the other instance reads the runner %q", g.Runner)
	}
	if err := b.Delete(ctx, task.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	_, err = a.Get(ctx, task.ID, "alice")
	taskNotFound(t, "Get through a after Delete through b", err)
}
