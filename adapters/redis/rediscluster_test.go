package mcpredis_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// clusterClient returns a go-redis cluster client on the seed nodes of rc,
// closed when t ends.
func clusterClient(t *testing.T, rc *redistest.Cluster) *redis.ClusterClient {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: rc.Addrs, DialTimeout: time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// Every store passes its contract on a real Redis Cluster (three masters,
// three replicas), through go-redis's cluster client: each store keeps the
// keys its scripts touch together under one hash tag, and the bus and the
// event store's watchers use sharded Pub/Sub.
func TestClusterContracts(t *testing.T) {
	rc := redistest.StartCluster(t)
	c := clusterClient(t, rc)
	n := 0
	fresh := func(kind string) string {
		n++
		return fmt.Sprintf("c%s%d-%s:", time.Now().Format("150405.000000"), n, kind)
	}
	t.Run("Sessions", func(t *testing.T) {
		sessionStoreContract(t, c, func() string { return fresh("s") })
	})
	t.Run("Events", func(t *testing.T) {
		eventStoreContract(t, c, func() string { return fresh("e") })
		porttest.TestEventStoreShared(t, func(t *testing.T) (a, b ports.EventStore) {
			opts := mcpredis.EventStoreOptions{Prefix: fresh("e")}
			return events(t, c, opts), events(t, clusterClient(t, rc), opts)
		})
	})
	t.Run("Watch", func(t *testing.T) {
		p := fresh("w")
		s := events(t, c, mcpredis.EventStoreOptions{Prefix: p})
		other := events(t, clusterClient(t, rc), mcpredis.EventStoreOptions{Prefix: p})
		wake, stop := other.Watch("sess/1")
		defer stop()
		waitWake(t, "the subscription's confirmation", wake)
		drain(wake)
		if _, err := s.Append(t.Context(), "sess/1", []byte("x")); err != nil {
			t.Fatal(err)
		}
		waitWake(t, "an append through another client", wake)
	})
	t.Run("StateKeys", func(t *testing.T) {
		porttest.TestStateKeys(t, func(t *testing.T) []ports.StateKeys {
			opts := mcpredis.StateKeysOptions{Prefix: fresh("k"), CacheFor: time.Nanosecond}
			return []ports.StateKeys{mcpredis.NewStateKeys(c, opts), mcpredis.NewStateKeys(clusterClient(t, rc), opts)}
		})
	})
	t.Run("Tasks", func(t *testing.T) {
		porttest.TestTaskStore(t, func(t *testing.T, clock ports.Clock) ports.TaskStore {
			return mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: fresh("t"), Clock: clock})
		})
		lim := porttest.TaskLimits{MaxTasks: 20, MaxTasksPerClient: 5, MaxTaskBytes: 6000, MaxBytesPerClient: 10_000, MaxBytes: 25_000, MaxStatusMessageBytes: 50}
		porttest.TestTaskLimits(t, lim, func(t *testing.T, clock ports.Clock) ports.TaskStore {
			return mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: fresh("t"), Clock: clock, MaxTasks: lim.MaxTasks,
				MaxTasksPerClient: lim.MaxTasksPerClient, MaxTaskBytes: lim.MaxTaskBytes, MaxBytesPerClient: lim.MaxBytesPerClient,
				MaxBytes: lim.MaxBytes, MaxStatusMessageBytes: lim.MaxStatusMessageBytes})
		})
		porttest.TestTaskStoreShared(t, func(t *testing.T, clock ports.Clock) (ports.TaskStore, ports.TaskStore) {
			p := fresh("t")
			return mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: p, Clock: clock}),
				mcpredis.NewTaskStore(clusterClient(t, rc), mcpredis.TaskStoreOptions{Prefix: p, Clock: clock})
		})
	})
	t.Run("RateLimiter", func(t *testing.T) {
		a, b := limiterPair(t, c, clusterClient(t, rc))
		checkSharedRateLimit(t, a, b)
	})
	t.Run("Sharded", func(t *testing.T) {
		// The bus and the watchers subscribe with SSUBSCRIBE, on the master
		// of their tag's slot, and nothing with SUBSCRIBE.
		p := fresh("p")
		b := mcpredis.NewBus(c, mcpredis.BusOptions{Prefix: p})
		defer b.Close()
		defer b.Subscribe(func(ports.Notice) {})()
		s := events(t, c, mcpredis.EventStoreOptions{Prefix: p})
		wake, stop := s.Watch("x/1")
		defer stop()
		waitWake(t, "the subscription's confirmation", wake)
		var mu sync.Mutex
		var sharded, plain []string
		err := c.ForEachMaster(t.Context(), func(ctx context.Context, n *redis.Client) error {
			sh, err := n.PubSubShardChannels(ctx, "*").Result()
			if err != nil {
				return err
			}
			pl, err := n.PubSubChannels(ctx, "*").Result()
			mu.Lock()
			defer mu.Unlock()
			sharded, plain = append(sharded, sh...), append(plain, pl...)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"{" + p + "bus}bus", "{" + p + "ev}ev:x/1"}
		for _, ch := range want {
			if !slices.Contains(sharded, ch) {
				t.Errorf("sharded channels %q lack %q", sharded, ch)
			}
		}
		if len(plain) != 0 {
			t.Errorf("plain channels subscribed: %q", plain)
		}
	})
	t.Run("Bus", func(t *testing.T) {
		newBus := func(t *testing.T) []*mcpredis.Bus {
			t.Cleanup(func() { testtools.NoGoroutines(t, busGoroutines...) })
			opts := mcpredis.BusOptions{Prefix: fresh("b")}
			bs := []*mcpredis.Bus{mcpredis.NewBus(c, opts), mcpredis.NewBus(clusterClient(t, rc), opts)}
			for _, b := range bs {
				t.Cleanup(func() { b.Close() })
			}
			return bs
		}
		porttest.TestBus(t, func(t *testing.T) []ports.NotificationBus { return ports2(newBus(t)) })
		porttest.TestAddressedBus(t, func(t *testing.T) []ports.AddressedBus {
			bs := newBus(t)
			return []ports.AddressedBus{bs[0], bs[1]}
		})
		t.Run("SmallerLimit", func(t *testing.T) {
			porttest.TestBusSizeLimit(t, 4096, func(t *testing.T) []ports.NotificationBus {
				opts := mcpredis.BusOptions{Prefix: fresh("b"), MaxNoticeBytes: 4096}
				bs := []*mcpredis.Bus{mcpredis.NewBus(c, opts), mcpredis.NewBus(clusterClient(t, rc), opts)}
				for _, b := range bs {
					t.Cleanup(func() { b.Close() })
				}
				return ports2(bs)
			})
		})
	})
}

// The master of the bus's slot dies: once its replica took over, the
// subscriptions of a Bus whose client sends nothing else receive again,
// without a restart, and so does an event store's watcher.
func TestClusterBusFailover(t *testing.T) {
	rc := redistest.StartCluster(t)
	if rc.External() {
		t.Skip("an external cluster's master is not killed")
	}
	// a prefix whose bus and events are on one master: it is killed once
	// (a second kill, of the replica that replaced it, would leave its
	// slots unserved)
	prefix := ""
	for i := 0; prefix == ""; i++ {
		p := fmt.Sprintf("fo%d:", i)
		if rc.MasterOf(t, "{"+p+"bus}") == rc.MasterOf(t, "{"+p+"ev}") {
			prefix = p
		}
	}
	sub := mcpredis.NewBus(clusterClient(t, rc), mcpredis.BusOptions{Prefix: prefix})
	t.Cleanup(func() { sub.Close() })
	pub := mcpredis.NewBus(clusterClient(t, rc), mcpredis.BusOptions{Prefix: prefix})
	t.Cleanup(func() { pub.Close() })
	var rec recorder
	stop := sub.Subscribe(rec.Add)
	defer stop()
	watcher := events(t, clusterClient(t, rc), mcpredis.EventStoreOptions{Prefix: prefix})
	appender := events(t, clusterClient(t, rc), mcpredis.EventStoreOptions{Prefix: prefix})
	wake, stopWatch := watcher.Watch("s/1")
	defer stopWatch()
	waitWake(t, "the subscription's confirmation", wake)

	ctx := t.Context()
	// delivered publishes notices until one arrives (the bus delivers at
	// most once: those published while the link is down are lost).
	delivered := func(what string) {
		t.Helper()
		n := 0
		eventually(t, what, func() bool {
			n++
			id := fmt.Sprintf("%s-%d", what, n)
			_ = pub.Publish(ctx, tick(id))
			time.Sleep(100 * time.Millisecond)
			return rec.has(id)
		})
	}
	appended := func(what string) {
		t.Helper()
		eventually(t, what, func() bool {
			drain(wake)
			_, _ = appender.Append(ctx, "s/1", []byte("x"))
			select {
			case <-wake:
				return true
			case <-time.After(100 * time.Millisecond):
				return false
			}
		})
	}
	delivered("before")
	appended("an append before")
	master := rc.MasterOf(t, "{"+prefix+"bus}")
	t.Logf("killing %s, the master of the bus's and the events' slots", master)
	rc.Kill(t, master)
	rc.WaitHealthy(t, hangGuard)
	delivered("after the failover")
	appended("an append after the failover")
}
