package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// redisCount is what a redis-server ran while the tests watched.
type redisCount struct {
	// Sent are the commands clients sent: each one round trip (EVALSHA
	// of a script is one; the tests' own marker is not counted).
	Sent int
	// InScripts are the commands Lua scripts ran (no round trip).
	InScripts int
	// Commands are the sent commands by name (lower case), for messages.
	Commands map[string]int
}

// monitorMark is the ECHO that ends a count: Redis runs commands one at a
// time, so once MONITOR shows it, it has shown everything before it.
const monitorMark = "hexmcp-cluster-mark"

// countRedis runs during and counts what the redis-server at addr ran
// meanwhile, with MONITOR (which slows Redis: never while timing).
func countRedis(tb testing.TB, addr string, during func()) redisCount {
	tb.Helper()
	mon, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	defer mon.Close()
	_ = mon.SetDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReaderSize(mon, 1<<20)
	if _, err := io.WriteString(mon, "MONITOR\r\n"); err != nil {
		tb.Fatal(err)
	}
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+OK") {
		tb.Fatalf("MONITOR: %q %v", line, err)
	}
	during()
	mark, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	defer mark.Close()
	_ = mark.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(mark, "ECHO "+monitorMark+"\r\n"); err != nil {
		tb.Fatal(err)
	}
	if _, err := bufio.NewReader(mark).ReadString('\n'); err != nil {
		tb.Fatal(err)
	}
	c := redisCount{Commands: map[string]int{}}
	for {
		// +1700000000.123456 [0 127.0.0.1:5000] "evalsha" "…" …, or
		// [0 lua] for a command a script ran.
		line, err := br.ReadString('\n')
		if err != nil {
			tb.Fatalf("reading MONITOR: %v", err)
		}
		if strings.Contains(line, monitorMark) {
			return c
		}
		who, cmd, ok := strings.Cut(line, "] ")
		if !ok {
			continue
		}
		if strings.HasSuffix(who, " lua") {
			c.InScripts++
			continue
		}
		c.Sent++
		name, _, _ := strings.Cut(cmd, " ")
		c.Commands[strings.ToLower(strings.Trim(name, "\"\r\n"))]++
	}
}

// perCall divides a count by n calls.
func (c redisCount) perCall(n int) (sent, inScripts float64) {
	return float64(c.Sent) / float64(n), float64(c.InScripts) / float64(n)
}

func (c redisCount) String() string {
	return fmt.Sprintf("%d sent %v, %d in scripts", c.Sent, c.Commands, c.InScripts)
}

// roundTripCalls is how many calls a Redis count is taken over.
const roundTripCalls = 60

// sessionRedisCost counts the Redis commands of a session's life through
// url, in the steady state: its setup (initialize,
// notifications/initialized), n tools/call, its end (DELETE). A first
// session goes through the same steps uncounted: it opens each
// instance's connection to Redis (HELLO) and loads the scripts into Redis
// (EVAL after EVALSHA's NOSCRIPT), which happen once.
func sessionRedisCost(tb testing.TB, redisAddr, url string, n int) (setup, calls, end redisCount) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := newClient(url, 1)
	defer cl.close()
	warm, _, err := cl.initialize(ctx, `{}`)
	if err != nil {
		tb.Fatal(err)
	}
	for k := range 2 * defaultInstances {
		if _, err := warm.call(ctx, callKey(0, k), "calculate", calcArgs(k)); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := warm.end(ctx); err != nil {
		tb.Fatal(err)
	}
	var sess *session
	setup = countRedis(tb, redisAddr, func() {
		if sess, _, err = cl.initialize(ctx, `{}`); err != nil {
			tb.Fatal(err)
		}
	})
	calls = countRedis(tb, redisAddr, func() {
		for k := range n {
			key, a := callKey(0, k), callOperand(0, k, n)
			r, err := sess.call(ctx, key, "calculate", calcArgs(a))
			if err == nil {
				err = checkCalc(r, key, a)
			}
			if err != nil {
				tb.Fatal(err)
			}
		}
	})
	end = countRedis(tb, redisAddr, func() {
		if r, err := sess.end(ctx); err != nil || r.Status != http.StatusNoContent {
			tb.Fatalf("DELETE: %v %v", r, err)
		}
	})
	return setup, calls, end
}

// statelessRedisCost counts the Redis commands of n stateless calls
// through url.
func statelessRedisCost(tb testing.TB, redisAddr, url string, n int) redisCount {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := newClient(url, 1)
	defer cl.close()
	return countRedis(tb, redisAddr, func() {
		for k := range n {
			key, a := callKey(0, k), callOperand(0, k, n)
			r, err := cl.stateless(ctx, key, "tools/call", "calculate", map[string]any{"arguments": calcArgs(a)})
			if err == nil {
				err = checkCalc(r, key, a)
			}
			if err != nil {
				tb.Fatal(err)
			}
		}
	})
}

// TestClusterRedisRoundTrips: what Redis does for the cluster, counted
// with MONITOR: a session's tools/call costs at most one round trip (the
// session store's read, one script), a stateless call none.
func TestClusterRedisRoundTrips(t *testing.T) {
	c := startCluster(t, clusterOptions{noHAProxy: true})
	setup, calls, end := sessionRedisCost(t, c.Redis.Addr, c.Go.URL(), roundTripCalls)
	t.Logf("session setup (initialize, notifications/initialized): %v", setup)
	t.Logf("%d session calls: %v", roundTripCalls, calls)
	t.Logf("session end (DELETE): %v", end)
	if sent, _ := calls.perCall(roundTripCalls); sent > 1 {
		t.Errorf("a session's tools/call costs %.2f Redis round trips, want at most 1: %v", sent, calls)
	}
	stateless := statelessRedisCost(t, c.Redis.Addr, c.Go.URL(), roundTripCalls)
	t.Logf("%d stateless calls: %v", roundTripCalls, stateless)
	if stateless.Sent != 0 || stateless.InScripts != 0 {
		t.Errorf("stateless calls used Redis: %v, want nothing", stateless)
	}
}
