package cluster

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/redistest"
)

// BenchmarkCluster measures tools/call (calculate) throughput, calls/s,
// with the same client and concurrency (CLUSTER_WORKERS, default 32) in
// both eras (a session per client at 2025-11-25; stateless at 2026-07-28)
// against:
//
//   - 1-memory: one instance keeping its sessions in memory, reached
//     directly (the single server);
//   - 1-memory-proxy: the same through the in-process proxy (what the
//     proxy costs);
//   - 3-redis-proxy: three instances sharing one Redis behind the
//     in-process proxy (what sharing costs);
//   - 3-redis-haproxy: the same behind haproxy, when it is installed.
//
// On Redis it also reports redis-cmds/call, the round trips to Redis per
// call in the steady state (EVALSHA of a script is one), and
// redis-script-cmds/call, the commands the scripts ran (counted apart
// with MONITOR, never while timing). Every process shares the machine:
// compare the figures with each other, not with another machine's.
func BenchmarkCluster(b *testing.B) {
	workers := size("CLUSTER_WORKERS", 32)
	single := startCluster(b, clusterOptions{instances: 1, memory: true, noHAProxy: true})
	three := startCluster(b, clusterOptions{})
	targets := []struct {
		name  string
		url   string
		redis *redistest.Server
	}{
		{"1-memory", single.Instances[0].URL, nil},
		{"1-memory-proxy", single.Go.URL(), nil},
		{"3-redis-proxy", three.Go.URL(), three.Redis},
	}
	if three.HAProxy != nil {
		targets = append(targets, struct {
			name  string
			url   string
			redis *redistest.Server
		}{"3-redis-haproxy", three.HAProxy.URL(), three.Redis})
	}
	for _, era := range []string{revHandshake, revStateless} {
		for _, tg := range targets {
			var counted *redisCount // once per sub-benchmark, not per b.N round
			b.Run(era+"/"+tg.name, func(b *testing.B) {
				benchCalls(b, tg.url, era, workers)
				if tg.redis == nil {
					return
				}
				if counted == nil {
					var rc redisCount
					if era == revHandshake {
						_, rc, _ = sessionRedisCost(b, []string{tg.redis.Addr}, tg.url, roundTripCalls)
					} else {
						rc = statelessRedisCost(b, []string{tg.redis.Addr}, tg.url, roundTripCalls)
					}
					counted = &rc
				}
				sent, inScripts := counted.perCall(roundTripCalls)
				b.ReportMetric(sent, "redis-cmds/call")
				b.ReportMetric(inScripts, "redis-script-cmds/call")
			})
		}
	}
}

// benchCalls makes b.N checked calls to url with workers concurrent
// clients and reports calls/s.
func benchCalls(b *testing.B, url, era string, workers int) {
	b.Helper()
	cl := newClient(url, workers)
	defer cl.close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sessions := make([]*session, workers)
	if era == revHandshake {
		for w := range sessions {
			s, _, err := cl.initialize(ctx, `{}`)
			if err != nil {
				b.Fatal(err)
			}
			sessions[w] = s
		}
		defer func() {
			for _, s := range sessions {
				if r, err := s.end(ctx); err != nil || r.Status != http.StatusNoContent {
					b.Errorf("DELETE: %v %v", r, err)
				}
			}
		}()
	}
	var next, failed atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				key, a := callKey(w, i), i+1
				calc := cl.calculateStateless
				if s := sessions[w]; s != nil {
					calc = s.calculate
				}
				if _, err := calc(ctx, key, a); err != nil {
					failed.Add(1)
					first.CompareAndSwap(nil, fmt.Sprint(err))
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d calls failed; the first: %v", n, b.N, first.Load())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}
