package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
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

// countRedis runs during and counts what the redis-servers at addrs (one
// node, or a cluster's masters) ran meanwhile, with MONITOR (which slows
// Redis: never while timing).
func countRedis(tb testing.TB, addrs []string, during func()) redisCount {
	tb.Helper()
	readers := make([]*bufio.Reader, len(addrs))
	for i, addr := range addrs {
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
		readers[i] = br
	}
	during()
	c := redisCount{Commands: map[string]int{}}
	for i, addr := range addrs {
		c.add(tb, addr, readers[i])
	}
	return c
}

// add counts what br, a MONITOR of addr, shows up to now.
func (c *redisCount) add(tb testing.TB, addr string, br *bufio.Reader) {
	tb.Helper()
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
	for {
		// +1700000000.123456 [0 127.0.0.1:5000] "evalsha" "…" …, or
		// [0 lua] for a command a script ran.
		line, err := br.ReadString('\n')
		if err != nil {
			tb.Fatalf("reading MONITOR: %v", err)
		}
		if strings.Contains(line, monitorMark) {
			return
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
func sessionRedisCost(tb testing.TB, redisAddr []string, url string, n int) (setup, calls, end redisCount) {
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
		calculateN(ctx, tb, n, sess.calculate)
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
func statelessRedisCost(tb testing.TB, redisAddr []string, url string, n int) redisCount {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := newClient(url, 1)
	defer cl.close()
	return countRedis(tb, redisAddr, func() {
		calculateN(ctx, tb, n, cl.calculateStateless)
	})
}

// redisUse is what redis-servers spent on calls, from INFO (without
// MONITOR): the time of the commands clients sent (a script's time is its
// EVALSHA's, which includes the commands it ran), and the bytes Redis read
// and wrote.
type redisUse struct {
	usec    float64 // the commands' time (INFO commandstats)
	cpu     float64 // the process's CPU time, µs (used_cpu_user + used_cpu_sys: network I/O included)
	in, out int64
}

func (u redisUse) String() string {
	return fmt.Sprintf("%.1f µs of Redis command time, %.1f µs of Redis CPU, %d B in, %d B out", u.usec, u.cpu, u.in, u.out)
}

// perCall divides u by n calls.
func (u redisUse) perCall(n int) redisUse {
	return redisUse{usec: u.usec / float64(n), cpu: u.cpu / float64(n), in: u.in / int64(n), out: u.out / int64(n)}
}

// measureRedis runs during and returns what the redis-servers at addrs
// spent meanwhile (less what the INFO commands themselves cost, measured
// the same way without calls).
func measureRedis(tb testing.TB, addrs []string, during func()) redisUse {
	tb.Helper()
	take := func() redisUse {
		var u redisUse
		for _, addr := range addrs {
			info := redisInfo(tb, addr)
			for k, v := range info {
				// cmdstat_evalsha:calls=1,usec=27,... and the scripts'
				// commands under the same names: those a script ran are
				// in its EVALSHA's time already, so only the commands
				// the tests saw clients send (countRedis) are summed.
				name, ok := strings.CutPrefix(k, "cmdstat_")
				if !ok || !clientCommands[name] {
					continue
				}
				for _, f := range strings.Split(v, ",") {
					if us, ok := strings.CutPrefix(f, "usec="); ok {
						x, _ := strconv.ParseFloat(us, 64)
						u.usec += x
					}
				}
			}
			for _, k := range []string{"used_cpu_user", "used_cpu_sys"} {
				x, _ := strconv.ParseFloat(info[k], 64)
				u.cpu += x * 1e6
			}
			in, _ := strconv.ParseInt(info["total_net_input_bytes"], 10, 64)
			out, _ := strconv.ParseInt(info["total_net_output_bytes"], 10, 64)
			u.in += in
			u.out += out
		}
		return u
	}
	sub := func(a, b redisUse) redisUse {
		return redisUse{a.usec - b.usec, a.cpu - b.cpu, a.in - b.in, a.out - b.out}
	}
	t0 := take()
	t1 := take()
	overhead := sub(t1, t0)
	during()
	t2 := take()
	return sub(sub(t2, t1), overhead)
}

// clientCommands are the commands a session call sends: an HMGET, or a
// script (an HMGET a script runs would be counted twice, but a session
// call that runs a script runs no HMGET of its own).
var clientCommands = map[string]bool{"evalsha": true, "eval": true, "hmget": true}

// redisInfo returns the fields of INFO ALL at addr.
func redisInfo(tb testing.TB, addr string) map[string]string {
	tb.Helper()
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, "INFO ALL\r\n"); err != nil {
		tb.Fatal(err)
	}
	br := bufio.NewReader(conn)
	head, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		tb.Fatalf("INFO: %q %v", head, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	body := make([]byte, n+2)
	if _, err := io.ReadFull(br, body); err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(body), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}

// sessionCalls makes n calls of a new session through url (not counted:
// its setup and end).
func sessionCalls(tb testing.TB, url string, n int, during func(run func())) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := newClient(url, 1)
	defer cl.close()
	sess, _, err := cl.initialize(ctx, `{}`)
	if err != nil {
		tb.Fatal(err)
	}
	during(func() {
		calculateN(ctx, tb, n, sess.calculate)
	})
	if _, err := sess.end(ctx); err != nil {
		tb.Fatal(err)
	}
}

// roundTrips checks, with MONITOR, that a session's tools/call costs at
// most one round trip (the session store's read, one script), a stateless
// call none, and logs what Redis spent per session call (measured apart,
// without MONITOR).
func roundTrips(t *testing.T, c *Cluster) {
	addrs := c.redisAddrs(t)
	setup, calls, end := sessionRedisCost(t, addrs, c.Go.URL(), roundTripCalls)
	t.Logf("session setup (initialize, notifications/initialized): %v", setup)
	t.Logf("%d session calls: %v", roundTripCalls, calls)
	t.Logf("session end (DELETE): %v", end)
	if sent, _ := calls.perCall(roundTripCalls); sent > 1 {
		t.Errorf("a session's tools/call costs %.2f Redis round trips, want at most 1: %v", sent, calls)
	}
	// The lookup writes the session's activity once a tenth of its idle
	// timeout (3 minutes by default) has passed, not within these calls
	// (bounded by a minute).
	if calls.InScripts != 0 || calls.Commands["hmget"] != roundTripCalls {
		t.Errorf("a session's tools/call is not one HMGET: %v", calls)
	}
	stateless := statelessRedisCost(t, addrs, c.Go.URL(), roundTripCalls)
	t.Logf("%d stateless calls: %v", roundTripCalls, stateless)
	if stateless.Sent != 0 || stateless.InScripts != 0 {
		t.Errorf("stateless calls used Redis: %v, want nothing", stateless)
	}
	const measured = 500
	sessionCalls(t, c.Go.URL(), measured, func(run func()) {
		use := measureRedis(t, addrs, run)
		t.Logf("per session call, over %d: %v", measured, use.perCall(measured))
	})
}

// TestClusterRedisRoundTrips: what Redis does for the cluster, counted
// with MONITOR (see roundTrips), on one redis-server.
func TestClusterRedisRoundTrips(t *testing.T) {
	roundTrips(t, startCluster(t, clusterOptions{noHAProxy: true}))
}

// TestClusterRedisClusterRoundTrips is TestClusterRedisRoundTrips with
// the instances on a Redis Cluster (three masters, three replicas),
// counted on its masters.
func TestClusterRedisClusterRoundTrips(t *testing.T) {
	roundTrips(t, startCluster(t, clusterOptions{noHAProxy: true, redisCluster: true}))
}
