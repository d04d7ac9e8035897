package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// callTimeout bounds one request of the tests (not a timed
	// assertion: a hung request fails instead of hanging the test).
	callTimeout = 30 * time.Second
	// maxReported bounds the failures a test prints.
	maxReported = 10
)

// size reads a positive integer from the environment, or returns def.
func size(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// The call of the many-calls tests: calculate(add, a, 0.5), where a
// numbers the call, so that the answer a+0.5 can only be this call's.

// callKey names call c of session s; it is the request's JSON-RPC id.
func callKey(s, c int) string { return strconv.Itoa(s) + "/" + strconv.Itoa(c) }

// callOperand is the operand a of call c of session s (unique per call).
func callOperand(s, c, calls int) int { return s*calls + c + 1 }

func calcArgs(a int) map[string]any {
	return map[string]any{"a": a, "b": 0.5, "operation": "add"}
}

// calculate sends calculate(add, a, 0.5) with id key on the session and
// checks the reply (checkCalc).
func (s *session) calculate(ctx context.Context, key string, a int) (*reply, error) {
	r, err := s.call(ctx, key, "calculate", calcArgs(a))
	if err == nil {
		err = checkCalc(r, key, a)
	}
	return r, err
}

// calculateStateless is [session.calculate] as a stateless request of c.
func (c *client) calculateStateless(ctx context.Context, key string, a int) (*reply, error) {
	r, err := c.stateless(ctx, key, "tools/call", "calculate", map[string]any{"arguments": calcArgs(a)})
	if err == nil {
		err = checkCalc(r, key, a)
	}
	return r, err
}

// calculateN makes n checked calls through calc, call k with id
// callKey(0, k) and operand callOperand(0, k, n); a failure is fatal.
func calculateN(ctx context.Context, tb testing.TB, n int, calc func(ctx context.Context, key string, a int) (*reply, error)) {
	tb.Helper()
	for k := range n {
		if _, err := calc(ctx, callKey(0, k), callOperand(0, k, n)); err != nil {
			tb.Fatal(err)
		}
	}
}

// checkCalc checks the reply to calculate(add, a, 0.5) sent with id key:
// 200, the response names key, its only content is the text of a+0.5.
func checkCalc(r *reply, key string, a int) error {
	if r.Status != http.StatusOK || r.Message == nil {
		return fmt.Errorf("call %s: %v", key, r)
	}
	var m rpc
	if err := json.Unmarshal(r.Message, &m); err != nil {
		return fmt.Errorf("call %s: %w: %s", key, err, r.Message)
	}
	var id string
	if err := json.Unmarshal(m.ID, &id); err != nil || id != key {
		return fmt.Errorf("call %s answered with id %s: %s", key, m.ID, r.Message)
	}
	var res struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	if m.Result == nil || json.Unmarshal(m.Result, &res) != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" {
		return fmt.Errorf("call %s: want one text block, got %s", key, r.Message)
	}
	if got, err := strconv.ParseFloat(res.Content[0].Text, 64); err != nil || got != float64(a)+0.5 {
		return fmt.Errorf("call %s (a=%d): answered %q, want %v", key, a, res.Content[0].Text, float64(a)+0.5)
	}
	return nil
}

// tally records what many concurrent calls got.
type tally struct {
	mu         sync.Mutex
	answered   map[string]int           // call key -> right answers
	perSession map[int]map[string]int64 // session -> instance -> requests
	byInstance map[string]int64         // instance -> requests (X-Cluster-Instance)
	failures   int
	reported   []string
}

func newTally() *tally {
	return &tally{answered: map[string]int{}, perSession: map[int]map[string]int64{}, byInstance: map[string]int64{}}
}

// served records that a request of session s was served by the reply's
// instance.
func (t *tally) served(s int, r *reply) {
	if r == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perSession[s] == nil {
		t.perSession[s] = map[string]int64{}
	}
	t.perSession[s][r.Instance]++
	t.byInstance[r.Instance]++
}

func (t *tally) ok(key string) {
	t.mu.Lock()
	t.answered[key]++
	t.mu.Unlock()
}

func (t *tally) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures++
	if len(t.reported) < maxReported {
		t.reported = append(t.reported, err.Error())
	}
}

// many runs sessions × calls tool calls through p with workers
// concurrent clients, in era (revHandshake: one session per client,
// initialized, called, deleted; revStateless: plain stateless calls),
// and checks that every call got its own answer exactly once and that the
// requests of every session went to several instances.
func many(t *testing.T, p proxy, instances []*Instance, era string, sessions, calls, workers int) {
	c := newClient(p.URL(), workers)
	defer c.close()
	before := p.Served(t)
	tl := newTally()
	jobs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for s := range jobs {
				runSession(c, tl, era, s, calls)
			}
		})
	}
	for s := range sessions {
		jobs <- s
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)
	after := p.Served(t)

	if tl.failures > 0 {
		t.Fatalf("%d failures; the first:\n%s", tl.failures, strings.Join(tl.reported, "\n"))
	}
	for s := range sessions {
		for k := range calls {
			if n := tl.answered[callKey(s, k)]; n != 1 {
				t.Errorf("call %s answered %d times, want once", callKey(s, k), n)
			}
		}
	}
	if len(tl.answered) != sessions*calls {
		t.Errorf("%d calls answered, want %d", len(tl.answered), sessions*calls)
	}
	// Every instance served requests, as the responses say and as the
	// proxy counted.
	var total int64
	for _, in := range instances {
		n := tl.byInstance[in.Name]
		total += n
		if n == 0 {
			t.Errorf("instance %s served none of the requests (%v)", in.Name, tl.byInstance)
		}
		if d := after[in.Name] - before[in.Name]; d != n {
			t.Errorf("instance %s: the responses say it served %d requests, %s counted %d", in.Name, n, p.Name(), d)
		}
	}
	if tl.byInstance[""] != 0 || len(tl.byInstance) != len(instances) {
		t.Errorf("responses name instances %v, want %d instances", tl.byInstance, len(instances))
	}
	// No stickiness: each session's requests went to several instances.
	everywhere := 0
	for s, by := range tl.perSession {
		if len(by) < 2 {
			t.Errorf("session %d: all its requests went to %v", s, by)
		}
		if len(by) == len(instances) {
			everywhere++
		}
	}
	t.Logf("%s through %s: %d sessions × %d calls (%d requests) by %d clients in %v (%.0f calls/s); per instance %v; %d sessions used every instance",
		era, p.Name(), sessions, calls, total, workers, elapsed.Round(time.Millisecond),
		float64(sessions*calls)/elapsed.Seconds(), tl.byInstance, everywhere)
}

// runSession runs the calls of session s.
func runSession(c *client, tl *tally, era string, s, calls int) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout*time.Duration(calls+3))
	defer cancel()
	one := func(k int, send func(ctx context.Context, key string, args map[string]any) (*reply, error)) bool {
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		key, a := callKey(s, k), callOperand(s, k, calls)
		r, err := send(ctx, key, calcArgs(a))
		tl.served(s, r)
		if err == nil {
			err = checkCalc(r, key, a)
		}
		if err != nil {
			tl.fail(fmt.Errorf("session %d: %w", s, err))
			return false
		}
		tl.ok(key)
		return true
	}
	if era == revStateless {
		for k := range calls {
			one(k, func(ctx context.Context, key string, args map[string]any) (*reply, error) {
				return c.stateless(ctx, key, "tools/call", "calculate", map[string]any{"arguments": args})
			})
		}
		return
	}
	sess, replies, err := c.initialize(ctx, `{}`)
	for _, r := range replies {
		tl.served(s, r)
	}
	if err != nil {
		tl.fail(fmt.Errorf("session %d: %w", s, err))
		return
	}
	for k := range calls {
		if !one(k, func(ctx context.Context, key string, args map[string]any) (*reply, error) {
			return sess.call(ctx, key, "calculate", args)
		}) {
			break
		}
	}
	// Deleted, so that the sessions live at once stay within the
	// per-client bound (all come from one address, the proxy's).
	r, err := sess.end(ctx)
	tl.served(s, r)
	if err == nil && r.Status != http.StatusNoContent {
		err = fmt.Errorf("DELETE: %v", r)
	}
	if err != nil {
		tl.fail(fmt.Errorf("session %d: %w", s, err))
	}
}

// TestClusterManyCalls: 200 sessions × 50 tools/call (2025-11-25), then
// as many stateless calls (2026-07-28), by 32 concurrent clients, through
// each proxy; sizes CLUSTER_SESSIONS, CLUSTER_CALLS, CLUSTER_WORKERS.
func TestClusterManyCalls(t *testing.T) {
	sessions, calls, workers := size("CLUSTER_SESSIONS", 200), size("CLUSTER_CALLS", 50), size("CLUSTER_WORKERS", 32)
	c := startCluster(t, clusterOptions{})
	forEachProxy(t, c, func(t *testing.T, p proxy) {
		for _, era := range []string{revHandshake, revStateless} {
			t.Run(era, func(t *testing.T) { many(t, p, c.Instances, era, sessions, calls, workers) })
		}
	})
}

// TestClusterSessionEverywhere: one session, one request at a time
// through each proxy: round robin sends its requests to every instance in
// turn, each serves it (the session is in Redis), and a session deleted
// through one instance is gone on the others.
func TestClusterSessionEverywhere(t *testing.T) {
	c := startCluster(t, clusterOptions{})
	forEachProxy(t, c, func(t *testing.T, p proxy) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cl := newClient(p.URL(), 1)
		defer cl.close()
		sess, replies, err := cl.initialize(ctx, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]int{}
		for _, r := range replies {
			by[r.Instance]++
		}
		const calls = 2 * defaultInstances
		for k := range calls {
			r, err := sess.calculate(ctx, callKey(0, k), callOperand(0, k, calls))
			if err != nil {
				t.Fatal(err)
			}
			by[r.Instance]++
		}
		for _, in := range c.Instances {
			if by[in.Name] < 2 {
				t.Errorf("instance %s served %d of the session's %d requests (%v), want round robin", in.Name, by[in.Name], calls+2, by)
			}
		}
		// Deleted at the last instance, gone at every other.
		last := c.Instances[len(c.Instances)-1]
		if r, err := sess.at(last.URL).end(ctx); err != nil || r.Status != http.StatusNoContent {
			t.Fatalf("DELETE at %s: %v %v", last.Name, r, err)
		}
		for _, in := range c.Instances[:len(c.Instances)-1] {
			r, err := sess.at(in.URL).call(ctx, "after", "calculate", calcArgs(1))
			if err != nil || r.Status != http.StatusNotFound {
				t.Errorf("a session deleted at %s, called at %s: %v %v, want 404", last.Name, in.Name, r, err)
			}
		}
	})
}

// TestClusterSessionStateElsewhere: what a session asks for at one
// instance (logging/setLevel) holds at the others: logWork logs to the
// client at debug, info and warning; the client gets none before it set a
// level, and only the warning after it set "warning" at another instance.
func TestClusterSessionStateElsewhere(t *testing.T) {
	c := startCluster(t, clusterOptions{noHAProxy: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := newClient(c.Instances[0].URL, 1)
	defer cl.close()
	sess, _, err := cl.initialize(ctx, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	levels := func(in *Instance) []string {
		t.Helper()
		r, err := sess.at(in.URL).call(ctx, "log-"+in.Name, "logWork", map[string]any{})
		if err != nil || r.Status != http.StatusOK || r.Message == nil {
			t.Fatalf("logWork at %s: %v %v", in.Name, r, err)
		}
		var got []string
		for _, ev := range r.Events {
			var m struct {
				Method string `json:"method"`
				Params struct {
					Level string `json:"level"`
				} `json:"params"`
			}
			if json.Unmarshal(ev.Data, &m) == nil && m.Method == "notifications/message" {
				got = append(got, m.Params.Level)
			}
		}
		return got
	}
	if got := levels(c.Instances[0]); len(got) != 0 {
		t.Fatalf("logWork before logging/setLevel sent %v, want nothing", got)
	}
	set := c.Instances[1]
	r, err := sess.at(set.URL).request(ctx, "level", "logging/setLevel", map[string]any{"level": "warning"})
	if err != nil || r.Status != http.StatusOK {
		t.Fatalf("logging/setLevel at %s: %v %v", set.Name, r, err)
	}
	for _, in := range c.Instances {
		if got := levels(in); !slices.Equal(got, []string{"warning"}) {
			t.Errorf("logWork at %s after logging/setLevel warning at %s sent levels %v, want [warning]", in.Name, set.Name, got)
		}
	}
}
