package porttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// TaskLimits are the limits a store under [TestTaskLimits] was configured
// with. Keep them small: the suite fills them.
type TaskLimits struct {
	// MaxTasks, MaxTasksPerClient: the live tasks of the store, and of
	// one client (MaxTasksPerClient < MaxTasks).
	MaxTasks, MaxTasksPerClient int
	// MaxTaskBytes bounds what one task keeps (InputRequests, Result,
	// Error and State together; at least 5 KiB for the suite).
	MaxTaskBytes int
	// MaxBytesPerClient, MaxBytes: what the live tasks of one client,
	// and of the store, keep together. For the suite, MaxBytesPerClient
	// is at least 9 KiB and MaxTasksPerClient tasks of 1 KiB (the least
	// a task counts) fit in it, MaxTasks of them fit in MaxBytes,
	// and MaxBytes is over 2 × MaxBytesPerClient.
	MaxBytesPerClient, MaxBytes int
	// MaxStatusMessageBytes bounds StatusMessage.
	MaxStatusMessageBytes int
}

// taskPayloads holds the payloads made, by size: large ones are made
// once.
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

// expiringTask is a working task of owner that expires in a minute.
func expiringTask(owner string) ports.Task {
	task := working(owner)
	task.TTL = time.Minute
	return task
}

// TestTaskLimits checks that a store configured with lim keeps to it: Create
// refuses past the limits until an expired task makes room, and payloads
// are bounded.
func TestTaskLimits(t *testing.T, lim TaskLimits, newStore func(t *testing.T, clock ports.Clock) ports.TaskStore) {
	runSuite(t, taskLimitsSuite{lim: lim, newStore: newStore})
}

// taskLimitsSuite holds the subtests of [TestTaskLimits], one method each.
type taskLimitsSuite struct {
	lim      TaskLimits
	newStore taskStoreMaker
}

func (suite taskLimitsSuite) PerClient(t *testing.T) {
	clock := newClock()
	s := suite.newStore(t, clock)
	mustCreate(t, s, expiringTask("a"))
	// A client's tasks count together, whoever owns each (its
	// sessions): an empty Client is the Owner.
	for i := range suite.lim.MaxTasksPerClient - 1 {
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
}

func (suite taskLimitsSuite) Total(t *testing.T) {
	clock := newClock()
	s := suite.newStore(t, clock)
	mustCreate(t, s, expiringTask("owner-0"))
	for i := 1; i < suite.lim.MaxTasks; i++ {
		mustCreate(t, s, working(fmt.Sprintf("owner-%d", i)))
	}
	_, err := s.Create(ctx, working("newcomer"))
	if !errors.Is(err, ports.ErrTooManyTasks) || errors.Is(err, ports.ErrTooManyTasksForClient) {
		t.Fatalf("Create in a full store: %v, want ErrTooManyTasks alone", err)
	}
	clock.Advance(time.Minute)
	mustCreate(t, s, working("newcomer"))
}

func (suite taskLimitsSuite) Payloads(t *testing.T) {
	s := suite.newStore(t, newClock())
	task := mustCreate(t, s, working("a"))
	if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskWorking, StatusMessage: strings.Repeat("m", suite.lim.MaxStatusMessageBytes+1)}); !errors.Is(err, ports.ErrTaskTooLarge) {
		t.Fatalf("status message over the limit: %v, want ErrTaskTooLarge", err)
	}
	if _, err := s.Cancel(ctx, task.ID, "a", strings.Repeat("m", suite.lim.MaxStatusMessageBytes+1)); !errors.Is(err, ports.ErrTaskTooLarge) {
		t.Fatalf("cancel message over the limit: %v, want ErrTaskTooLarge", err)
	}
	if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskInputRequired, InputRequests: taskPayload(suite.lim.MaxTaskBytes + 1)}); !errors.Is(err, ports.ErrTaskTooLarge) {
		t.Fatalf("input requests over the limit: %v, want ErrTaskTooLarge", err)
	}
	if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskCompleted, Result: taskPayload(suite.lim.MaxTaskBytes + 1)}); !errors.Is(err, ports.ErrTaskTooLarge) {
		t.Fatalf("result over the limit: %v, want ErrTaskTooLarge", err)
	}
	if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskWorking, State: taskPayload(suite.lim.MaxTaskBytes + 1)}); !errors.Is(err, ports.ErrTaskTooLarge) {
		t.Fatalf("state over the limit: %v, want ErrTaskTooLarge", err)
	}
	if _, err := s.Create(ctx, withState("a", "", suite.lim.MaxTaskBytes+1)); !errors.Is(err, ports.ErrTaskTooLarge) {
		t.Fatalf("Create with a state over the limit: %v, want ErrTaskTooLarge", err)
	}
	big := working("a")
	big.Status, big.InputRequests = ports.TaskInputRequired, taskPayload(suite.lim.MaxTaskBytes+1)
	if _, err := s.Create(ctx, big); !errors.Is(err, ports.ErrTaskTooLarge) {
		t.Fatalf("Create with input requests over the limit: %v, want ErrTaskTooLarge", err)
	}
	// The bound is on the task's payloads and state together: a kept
	// state counts with the input requests that come later.
	half := mustCreate(t, s, withState("a", "", suite.lim.MaxTaskBytes/2+1))
	if _, err := s.Update(ctx, half.ID, "a", ports.TaskUpdate{Status: ports.TaskInputRequired, InputRequests: taskPayload(suite.lim.MaxTaskBytes / 2)}); !errors.Is(err, ports.ErrTaskTooLarge) {
		t.Fatalf("input requests that, with the state kept, are over the limit: %v, want ErrTaskTooLarge", err)
	}
	mixed := working("a")
	mixed.Status, mixed.InputRequests, mixed.State = ports.TaskInputRequired, taskPayload(suite.lim.MaxTaskBytes/2), taskPayload(suite.lim.MaxTaskBytes/2+1)
	if _, err := s.Create(ctx, mixed); !errors.Is(err, ports.ErrTaskTooLarge) {
		t.Fatalf("Create with input requests and a state together over the limit: %v, want ErrTaskTooLarge", err)
	}
	if g := mustGet(t, s, task.ID, "a"); g.Status != ports.TaskWorking || g.StatusMessage != "starting" {
		t.Fatalf("after refused updates: %+v", g)
	}
	msg := strings.Repeat("m", suite.lim.MaxStatusMessageBytes)
	res := taskPayload(suite.lim.MaxTaskBytes)
	if _, err := s.Update(ctx, task.ID, "a", ports.TaskUpdate{Status: ports.TaskCompleted, StatusMessage: msg, Result: res}); err != nil {
		t.Fatalf("result and message at the limits: %v", err)
	}
	if g := mustGet(t, s, task.ID, "a"); !bytes.Equal(g.Result, res) || g.StatusMessage != msg {
		t.Fatalf("result at the limit read back: %d bytes", len(g.Result))
	}
}

func (suite taskLimitsSuite) BytesPerClient(t *testing.T) {
	clock := newClock()
	s := suite.newStore(t, clock)
	// One client fills its share exactly, with tasks of several
	// owners (its sessions).
	unit := min(suite.lim.MaxTaskBytes-2*portlimits.MinTaskBytes, suite.lim.MaxBytesPerClient/3)
	var sizes []int
	for left := suite.lim.MaxBytesPerClient; left > 0; {
		n := min(unit, left)
		if rest := left - n; rest > 0 && rest < portlimits.MinTaskBytes {
			n = left - portlimits.MinTaskBytes
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
	if _, err := s.Create(ctx, withState("more", "c", portlimits.MinTaskBytes)); !errors.Is(err, ports.ErrTooManyTasksForClient) {
		t.Fatalf("Create past the client's bytes: %v, want ErrTooManyTasksForClient", err)
	}
	// Another client is not bounded by it.
	other := mustCreate(t, s, withState("d", "", unit))
	// An update that grows a task past the client's share is refused,
	// whatever it grows (input requests, a result, a state); one that
	// leaves it at portlimits.MinTaskBytes never is.
	second := filled[1]
	grow := taskPayload(unit + portlimits.MinTaskBytes)
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
	// The failed task keeps portlimits.MinTaskBytes: room for a small one.
	mustCreate(t, s, withState("small", "c", portlimits.MinTaskBytes))
	if _, err := s.Update(ctx, other.ID, "d", ports.TaskUpdate{Status: ports.TaskWorking, State: grow}); err != nil {
		t.Fatalf("another client's task grows within its share: %v", err)
	}
	// An expired task gives its bytes back.
	late := withState("late", "c", unit-2*portlimits.MinTaskBytes+1)
	if _, err := s.Create(ctx, late); !errors.Is(err, ports.ErrTooManyTasksForClient) {
		t.Fatalf("Create past the client's bytes: %v, want ErrTooManyTasksForClient", err)
	}
	clock.Advance(time.Minute)
	mustCreate(t, s, late)
	_, err := s.Get(ctx, filled[0].ID, filled[0].Owner)
	taskNotFound(t, "an expired task", err)
}

func (suite taskLimitsSuite) BytesTotal(t *testing.T) {
	clock := newClock()
	s := suite.newStore(t, clock)
	size := min(suite.lim.MaxBytesPerClient/2, suite.lim.MaxTaskBytes)
	var short ports.Task
	for i, held := 0, 0; held+size <= suite.lim.MaxBytes; i++ {
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
}
