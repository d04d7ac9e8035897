package mcpredis_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// The Redis session store passes the contract of every session store,
// against a real redis-server; each subtest gets a prefix of its own.
func TestSessionStoreContract(t *testing.T) {
	srv := redistest.Start(t)
	n := 0
	sessionStoreContract(t, client(t, srv), func() string {
		n++
		return "t" + time.Now().Format("150405.000000") + "-" + string(rune('a'+n%26)) + ":"
	})
}

// sessionStoreContract runs every session store contract on stores of c,
// with the bounds each needs; each store's keys begin with a prefix() of
// its own.
func sessionStoreContract(t *testing.T, c redis.UniversalClient, prefix func() string) {
	newStore := func(opts mcpredis.SessionStoreOptions) func(t *testing.T, clock ports.Clock) ports.SessionStore {
		return func(t *testing.T, clock ports.Clock) ports.SessionStore {
			opts.Prefix = prefix()
			opts.Clock = clock
			return mcpredis.NewSessionStore(c, opts)
		}
	}
	porttest.TestSessionStore(t, newStore(mcpredis.SessionStoreOptions{}))
	porttest.TestSessionExpiry(t, 10*time.Minute, newStore(mcpredis.SessionStoreOptions{IdleTimeout: 10 * time.Minute, PendingTimeout: 10 * time.Minute}))
	porttest.TestSessionPending(t, 30*time.Second, 10*time.Minute, newStore(mcpredis.SessionStoreOptions{IdleTimeout: 10 * time.Minute, PendingTimeout: 30 * time.Second}))
	porttest.TestSessionPerClientLimit(t, 5, newStore(mcpredis.SessionStoreOptions{MaxSessionsPerClient: 5}))
	porttest.TestSessionByteLimits(t, 64<<10, 512<<10, newStore(mcpredis.SessionStoreOptions{MaxSessionBytesPerClient: 64 << 10, MaxSessionBytes: 512 << 10}))
}

// The named settings that turn a bound off mean no bound, never "refuse
// every session": UnlimitedSessionsPerClient lets one client hold up to
// MaxSessions, UnlimitedSessionBytes removes the byte budgets.
func TestSessionStoreUnlimitedSettings(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	store := mcpredis.NewSessionStore(client(t, srv), mcpredis.SessionStoreOptions{
		MaxSessions: 5, MaxSessionsPerClient: ports.UnlimitedSessionsPerClient,
		MaxSessionBytes: ports.UnlimitedSessionBytes, MaxSessionBytesPerClient: ports.UnlimitedSessionBytes,
	})
	for i := range 5 {
		st := ports.SessionState{ID: fmt.Sprintf("s%d", i), Peer: "ip:192.0.2.1", Capabilities: json.RawMessage(`{"x":"` + strings.Repeat("c", 300<<10) + `"}`)}
		if err := store.Create(ctx, st); err != nil {
			t.Fatalf("session %d of one client: %v", i, err)
		}
	}
	err := store.Create(ctx, ports.SessionState{ID: "s5", Peer: "ip:192.0.2.1"})
	if !errors.Is(err, ports.ErrTooManySessions) || errors.Is(err, ports.ErrTooManySessionsForClient) {
		t.Fatalf("past MaxSessions: %v, want ErrTooManySessions (the store's bound, not the client's)", err)
	}
}

// A Get of a session whose activity was written lately is one HMGET and
// runs no script; once a tenth of its idle timeout has passed, the script
// writes the activity again, and the session is still read whole.
func TestSessionGetReadsWithoutAScriptWhileFresh(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv)
	ctx := context.Background()
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	store := mcpredis.NewSessionStore(c, mcpredis.SessionStoreOptions{IdleTimeout: 10 * time.Minute, Clock: clock})
	want := ports.SessionState{ID: "s1", Peer: "ip:192.0.2.1", Initialized: true, Ready: true, Revision: "2025-11-25"}
	if err := store.Create(ctx, want); err != nil {
		t.Fatal(err)
	}
	scripts := func(m map[string]int) int { return m["evalsha"] + m["eval"] }
	get := func(when string) (hmgets, scriptRuns int) {
		t.Helper()
		before := commandCalls(t, c)
		got, err := store.Get(ctx, "s1")
		if err != nil {
			t.Fatalf("Get %s: %v", when, err)
		}
		if got.ID != want.ID || got.Peer != want.Peer || got.Revision != want.Revision || !got.Ready {
			t.Fatalf("Get %s = %+v, want %+v", when, got, want)
		}
		after := commandCalls(t, c)
		return after["hmget"] - before["hmget"], scripts(after) - scripts(before)
	}

	clock.Advance(time.Minute - time.Millisecond) // less than a tenth of 10 minutes
	if h, s := get("while fresh"); h != 1 || s != 0 {
		t.Errorf("Get while fresh: %d HMGET and %d script runs, want 1 and 0", h, s)
	}
	clock.Advance(time.Second) // past a tenth
	// (EVALSHA, and EVAL when this Redis has not seen the script yet)
	if _, s := get("past a tenth of the timeout"); s == 0 {
		t.Errorf("Get past a tenth of the timeout ran no script: the activity was not written")
	}
	if h, s := get("right after the activity was written"); h != 1 || s != 0 {
		t.Errorf("Get right after: %d HMGET and %d script runs, want 1 and 0", h, s)
	}
}

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
	porttest.TestTaskStore(t, func(t *testing.T, clock ports.Clock) ports.TaskStore {
		return mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: taskPrefix(), Clock: clock})
	})
	lim := porttest.TaskLimits{MaxTasks: 20, MaxTasksPerClient: 5, MaxTaskBytes: 6000, MaxBytesPerClient: 10_000, MaxBytes: 25_000, MaxStatusMessageBytes: 50}
	porttest.TestTaskLimits(t, lim, func(t *testing.T, clock ports.Clock) ports.TaskStore {
		return mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: taskPrefix(), Clock: clock, MaxTasks: lim.MaxTasks,
			MaxTasksPerClient: lim.MaxTasksPerClient, MaxTaskBytes: lim.MaxTaskBytes, MaxBytesPerClient: lim.MaxBytesPerClient,
			MaxBytes: lim.MaxBytes, MaxStatusMessageBytes: lim.MaxStatusMessageBytes})
	})
	t.Run("Shared", func(t *testing.T) {
		porttest.TestTaskStoreShared(t, func(t *testing.T, clock ports.Clock) (ports.TaskStore, ports.TaskStore) {
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
	porttest.TestTaskLimits(t, porttest.TaskLimits{MaxTasks: portlimits.DefaultMaxTasks, MaxTasksPerClient: portlimits.DefaultMaxTasksPerClient,
		MaxTaskBytes: portlimits.DefaultMaxTaskBytes, MaxBytesPerClient: portlimits.DefaultMaxTaskBytesPerClient, MaxBytes: portlimits.DefaultMaxTaskStoreBytes,
		MaxStatusMessageBytes: portlimits.DefaultMaxTaskStatusMessageBytes},
		func(t *testing.T, clock ports.Clock) ports.TaskStore {
			// 4 MiB payloads: a Timeout that waits, not the 1 s default
			return mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: taskPrefix(), Clock: clock, Timeout: bigPayloadTimeout})
		})
}

// bigPayloadTimeout is the Redis Timeout of the tests that move payloads
// of megabytes: the default bound (1 s) is for production round trips,
// and a machine loaded by other tests under -race took longer.
const bigPayloadTimeout = 30 * time.Second

// What tasks count in bytes stays exact when Redis collects a task's hash
// before the store drops it (its key TTL), and comes back to nothing once
// every task is gone: a client's share is given back, not leaked.
func TestTaskBytesWhenRedisCollects(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv)
	ctx := context.Background()
	clock := porttest.NewFakeClock(porttest.Start)
	p := taskPrefix()
	s := mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: p, Clock: clock, MaxTaskBytes: 6000, MaxBytesPerClient: 10_000, MaxBytes: 25_000})
	state := json.RawMessage(`"` + strings.Repeat("s", 4998) + `"`)
	task := func(ttl time.Duration) ports.Task {
		return ports.Task{Owner: "o", Client: "c", Status: ports.TaskWorking, TTL: ttl, State: state}
	}
	var short []ports.Task
	for range 2 {
		got, err := s.Create(ctx, task(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		short = append(short, got)
	}
	if _, err := s.Create(ctx, task(time.Hour)); !errors.Is(err, ports.ErrTooManyTasksForClient) {
		t.Fatalf("past the client's bytes: %v, want ErrTooManyTasksForClient", err)
	}
	// Redis collects both hashes, as their key TTL does once they expired.
	if err := c.Del(ctx, p+"task:"+short[0].ID, p+"task:"+short[1].ID).Err(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	var kept []ports.Task
	for range 2 {
		got, err := s.Create(ctx, task(time.Hour))
		if err != nil {
			t.Fatalf("the bytes of tasks Redis collected were not given back: %v", err)
		}
		kept = append(kept, got)
	}
	for _, k := range kept {
		if err := s.Delete(ctx, k.ID, "o"); err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range map[string]int64{p + "tbytes:all": 0, p + "tbytes": 0, p + "tsize": 0, p + "tlive": 0, p + "tclient:c": 0} {
		if n, err := c.Exists(ctx, key).Result(); err != nil || n != want {
			t.Errorf("after every task is gone, %s exists (%d, %v): the store keeps counting", key, n, err)
		}
	}
}
