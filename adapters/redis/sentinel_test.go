package mcpredis_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// sentinelClient returns a go-redis failover client through the Sentinel
// of s, closed when t ends.
func sentinelClient(t *testing.T, s *redistest.Sentinel) *redis.Client {
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.SentinelMaster, SentinelAddrs: []string{s.Addr},
		DialTimeout: time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// Through Redis Sentinel (go-redis's failover client, which asks the
// Sentinel for the master): the session store passes its contract, and
// after the master dies and the Sentinel promotes its replica, a session
// created before is served again through the same client, and the bus
// delivers again.
func TestSentinel(t *testing.T) {
	s := redistest.StartSentinel(t)
	c := sentinelClient(t, s)
	n := 0
	porttest.TestSessionStore(t, func(t *testing.T, clock ports.Clock) ports.SessionStore {
		n++
		return mcpredis.NewSessionStore(c, mcpredis.SessionStoreOptions{Prefix: fmt.Sprintf("sent%d:", n), Clock: clock})
	})

	ctx := context.Background()
	store := mcpredis.NewSessionStore(c, mcpredis.SessionStoreOptions{Prefix: "failover:"})
	if err := store.Create(ctx, ports.SessionState{ID: "kept", Peer: "p", Ready: true}); err != nil {
		t.Fatal(err)
	}
	// the session is on the replica too before the master dies
	if n, err := c.Do(ctx, "WAIT", 1, 10_000).Int64(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}
	bus := mcpredis.NewBus(sentinelClient(t, s), mcpredis.BusOptions{Prefix: "failover:"})
	t.Cleanup(func() { bus.Close() })
	var rec recorder
	defer bus.Subscribe(rec.Add)()
	s.Master.Stop()
	s.WaitFailover(t, hangGuard)
	eventually(t, "the session served by the new master", func() bool {
		st, err := store.Get(ctx, "kept")
		if errors.Is(err, ports.ErrSessionNotFound) {
			t.Fatal("the session was lost in the failover")
		}
		return err == nil && st.ID == "kept"
	})
	k := 0
	eventually(t, "a notice delivered after the failover", func() bool {
		k++
		id := fmt.Sprintf("after-%d", k)
		_ = bus.Publish(ctx, tick(id))
		time.Sleep(100 * time.Millisecond)
		return rec.has(id)
	})
}
