package porttest

import (
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

func (suite taskStoreSuite) RacingEnds(t *testing.T) {
	s := suite.newStore(t, newClock())
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
}

func (suite taskStoreSuite) StateAndVersion(t *testing.T) {
	s := suite.newStore(t, newClock())
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
}

func (suite taskStoreSuite) Client(t *testing.T) {
	s := suite.newStore(t, newClock())
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
}

func (suite taskStoreSuite) Claims(t *testing.T) {
	clock := newClock()
	s := suite.newStore(t, clock)
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
}

func (suite taskStoreSuite) RacingClaims(t *testing.T) {
	s := suite.newStore(t, newClock())
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
}

func (suite taskStoreSuite) RacingConditional(t *testing.T) {
	s := suite.newStore(t, newClock())
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
}

func (suite taskStoreSuite) ConcurrentOwners(t *testing.T) {
	s := suite.newStore(t, newClock())
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
}

// TestTaskStoreShared checks a store shared by instances: newStores returns
// two handles on one fresh backend (two instances of a server), with one
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
