//go:build unix

package mcpredis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/ports"
)

// With Redis frozen (SIGSTOP: connections open, nothing answered), every
// call of every part returns within the part's Timeout with an error
// wrapping context.DeadlineExceeded, whatever the client's options: here
// a client that never times out a read by itself (go-redis applies a
// context's deadline to its reads only with ContextTimeoutEnabled). The
// hang guard is a deadline for a call that never returns, not a measure
// of speed: the Timeout is 200 ms.
func TestFrozenRedisCallsEndAtTimeout(t *testing.T) {
	for name, contextTimeout := range map[string]bool{"ClientIgnoresDeadlines": false, "ContextTimeoutEnabled": true} {
		t.Run(name, func(t *testing.T) {
			srv := redistest.Start(t)
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: -1, WriteTimeout: -1, MaxRetries: -1, ContextTimeoutEnabled: contextTimeout})
			t.Cleanup(func() { c.Close() })
			frozenCalls(t, srv, c)
		})
	}
}

func frozenCalls(t *testing.T, srv *redistest.Server, c *redis.Client) {
	const timeout = 200 * time.Millisecond
	ctx := context.Background()
	prefix := "frozen:"
	sessions := mcpredis.NewSessionStore(c, mcpredis.SessionStoreOptions{Prefix: prefix, Timeout: timeout})
	events := mcpredis.NewEventStore(c, mcpredis.EventStoreOptions{Prefix: prefix, Timeout: timeout})
	t.Cleanup(func() { events.Close() })
	bus := mcpredis.NewBus(c, mcpredis.BusOptions{Prefix: prefix, Timeout: timeout})
	t.Cleanup(func() { bus.Close() })
	tasks := mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: prefix, Timeout: timeout})
	// Everything works, and the client holds connections, before Redis
	// freezes.
	if err := sessions.Create(ctx, ports.SessionState{ID: "s1", Initialized: true}); err != nil {
		t.Fatal(err)
	}
	id, err := events.Append(ctx, "stream", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(ctx, tick("warm")); err != nil {
		t.Fatal(err)
	}
	if _, err := tasks.Create(ctx, ports.Task{ID: "t1", Owner: "o", Status: ports.TaskWorking, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	srv.Freeze(t)
	calls := map[string]func() error{
		"SessionStore.Get": func() error { _, err := sessions.Get(ctx, "s1"); return err },
		"SessionStore.Create": func() error {
			return sessions.Create(ctx, ports.SessionState{ID: "s2", Initialized: true})
		},
		"SessionStore.Update": func() error { return sessions.Update(ctx, ports.SessionState{ID: "s1", Initialized: true}) },
		"SessionStore.Delete": func() error { return sessions.Delete(ctx, "s1") },
		"EventStore.Append":   func() error { _, err := events.Append(ctx, "stream", []byte("two")); return err },
		"EventStore.Replay": func() error {
			_, err := events.Replay(ctx, id, func(ports.Event) error { return nil })
			return err
		},
		"EventStore.DeleteStream": func() error { return events.DeleteStream(ctx, "stream") },
		"Bus.Publish":             func() error { return bus.Publish(ctx, tick("frozen")) },
		"StateKeys.Keys": func() error {
			_, err := mcpredis.NewStateKeys(c, mcpredis.StateKeysOptions{Prefix: prefix, Timeout: timeout}).Keys(ctx)
			return err
		},
		"StateKeys.Rotate": func() error {
			return mcpredis.NewStateKeys(c, mcpredis.StateKeysOptions{Prefix: prefix, Timeout: timeout}).Rotate(ctx)
		},
		"TaskStore.Get": func() error { _, err := tasks.Get(ctx, "t1", "o"); return err },
		"TaskStore.List": func() error {
			_, _, err := tasks.List(ctx, "o", "", 10)
			return err
		},
		"TaskStore.Delete": func() error { return tasks.Delete(ctx, "t1", "o") },
	}
	// all at once: a call that hangs holds up no other
	done := make(map[string]chan error, len(calls))
	for name, call := range calls {
		ch := make(chan error, 1)
		done[name] = ch
		go func() { ch <- call() }()
	}
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	for name, ch := range done {
		select {
		case err := <-ch:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s with Redis frozen: %v, want an error wrapping context.DeadlineExceeded", name, err)
			}
		case <-guard.Done():
			t.Errorf("%s with Redis frozen: no answer within %v; its Timeout is %v", name, hangGuard, timeout)
		}
	}
}
