package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// failoverGuard bounds the waits of the failover test for what must
// happen (the cluster's failover, service back): no timing requirement.
const failoverGuard = 90 * time.Second

// outcomes counts the answers of one worker of the failover test.
type outcomes struct {
	ok, unavailable atomic.Int64
}

// checkAnswer accepts r, the reply to calculate(add, a, 0.5) sent with id
// key, when it is the right answer (ok) or a 503 with Retry-After and a
// JSON-RPC error naming key (unavailable); anything else is an error.
func checkAnswer(r *reply, key string, a int) (ok bool, err error) {
	if r.Status != http.StatusServiceUnavailable {
		return true, checkCalc(r, key, a)
	}
	if r.Header.Get("Retry-After") == "" {
		return false, fmt.Errorf("call %s: 503 without Retry-After: %v", key, r)
	}
	var m rpc
	if err := json.Unmarshal(r.Message, &m); err != nil || m.Error == nil {
		return false, fmt.Errorf("call %s: 503 without a JSON-RPC error: %v", key, r)
	}
	var id string
	if err := json.Unmarshal(m.ID, &id); err != nil || id != key {
		return false, fmt.Errorf("call %s: 503 with the id %s: %v", key, m.ID, r)
	}
	return false, nil
}

// TestClusterRedisFailover: three instances on a Redis Cluster behind
// haproxy, under load of both eras (sessions, and stateless calls), while
// the master that holds the sessions is killed (SIGKILL). Every answer is
// the right one for its request, or a 503 with Retry-After and the
// request's id while the cluster replaces the master by its replica; once
// the cluster is whole again, every session is served again, without a
// restart of anything.
func TestClusterRedisFailover(t *testing.T) {
	c := startCluster(t, clusterOptions{redisCluster: true})
	if c.RedisCluster.External() {
		t.Skip("an external cluster's master is not killed")
	}
	var p proxy = c.Go
	if c.HAProxy != nil {
		p = c.HAProxy
	} else {
		skipOrFail(t, ci(), c.missing)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*failoverGuard)
	defer cancel()

	const sessions, stateless = 3, 2
	cl := newClient(p.URL(), sessions+stateless)
	defer cl.close()
	var ss []*session
	for range sessions {
		s, _, err := cl.initialize(ctx, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	counts := make([]*outcomes, sessions+stateless)
	errs := make(chan error, sessions+stateless)
	for w := range sessions + stateless {
		counts[w] = &outcomes{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; !stop.Load(); k++ {
				key, a := callKey(w, k), callOperand(w, k, 1_000_000)
				var r *reply
				var err error
				if w < sessions {
					r, err = ss[w].call(ctx, key, "calculate", calcArgs(a))
				} else {
					r, err = cl.stateless(ctx, key, "tools/call", "calculate", map[string]any{"arguments": calcArgs(a)})
				}
				var ok bool
				if err == nil {
					ok, err = checkAnswer(r, key, a)
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
				if ok {
					counts[w].ok.Add(1)
				} else {
					counts[w].unavailable.Add(1)
				}
				if w >= sessions {
					time.Sleep(2 * time.Millisecond) // a load, not a flood of a shared machine
				}
			}
		}()
	}
	// waitOK waits until every worker has had n right answers more than
	// it had at base.
	waitOK := func(what string, base []int64, n int64) {
		t.Helper()
		deadline := time.Now().Add(failoverGuard)
		for w := range counts {
			for counts[w].ok.Load() < base[w]+n {
				select {
				case err := <-errs:
					stop.Store(true)
					wg.Wait()
					t.Fatal(err)
				default:
				}
				if time.Now().After(deadline) {
					stop.Store(true)
					wg.Wait()
					t.Fatalf("%s: worker %d has %d right answers, %d 503s", what, w, counts[w].ok.Load(), counts[w].unavailable.Load())
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	snapshot := func() []int64 {
		out := make([]int64, len(counts))
		for w := range counts {
			out[w] = counts[w].ok.Load()
		}
		return out
	}
	waitOK("before the failover", make([]int64, len(counts)), 20)

	master := c.RedisCluster.MasterOf(t, "{hexmcp:sess}")
	// The sessions must be on the replica before their master dies: a
	// write the master has not replicated yet is lost with it (Redis
	// replicates asynchronously; README, "Behind a load balancer": such a
	// session's next request gets 404 and its client initializes again).
	// That is not what this test is about: WAIT until a replica has every
	// write so far (the sessions were made before the load began).
	rdb := redis.NewClient(&redis.Options{Addr: master})
	acked, err := rdb.Do(ctx, "WAIT", 1, int(failoverGuard/time.Millisecond)).Int()
	rdb.Close()
	if err != nil || acked < 1 {
		t.Fatalf("WAIT for a replica of %s: %d replicas, %v", master, acked, err)
	}
	t.Logf("killing the master of the sessions' slot, %s", master)
	c.RedisCluster.Kill(t, master)
	killed := time.Now()
	before := snapshot()
	c.RedisCluster.WaitHealthy(t, failoverGuard)
	t.Logf("the cluster is whole again; the sessions' master is %s", c.RedisCluster.MasterOf(t, "{hexmcp:sess}"))
	waitOK("after the failover", before, 1)
	t.Logf("every worker had a right answer again %v after the kill (logged, not asserted)", time.Since(killed).Round(100*time.Millisecond))
	waitOK("after the failover", before, 20)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range counts {
		t.Logf("worker %d (%s): %d right answers, %d 503s", w, map[bool]string{true: "session", false: "stateless"}[w < sessions],
			counts[w].ok.Load(), counts[w].unavailable.Load())
	}

	// Full service: every session answers every call.
	for i, s := range ss {
		for k := range 10 {
			key, a := "after/"+strconv.Itoa(i)+"/"+strconv.Itoa(k), k+1
			if _, err := s.calculate(ctx, key, a); err != nil {
				t.Fatalf("after the failover: %v", err)
			}
		}
	}
}
