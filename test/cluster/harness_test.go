// Package cluster runs the showcase server (examples/showcase) as several
// processes sharing one Redis, behind a round-robin reverse proxy with no
// sticky sessions, and checks that a client cannot tell it from one server:
// the requests of one session land on different instances and every answer
// is still the right one.
//
// The harness (startCluster) builds the showcase once, starts a
// redis-server (internal/redistest), the instances (-transport http -redis
// ...) and two proxies in front of them: haproxy (a real load balancer;
// the Debian package) and an in-process net/http/httputil.ReverseProxy.
// Both name the instance that served a response in the X-Cluster-Instance
// header, so that a test can count where the requests of one session went.
// Every test runs its scenario through both proxies (forEachProxy); a
// scenario that must pin requests to given instances uses Instance.URL,
// which bypasses the proxies.
//
// Without haproxy the haproxy half of each test skips, without
// redis-server the tests skip, without node (or test/e2e/node_modules) the
// TypeScript clients skip: each fails instead when CI is set (.ci/run
// installs all three), node also with E2E_REQUIRED=1 (make cluster).
// Features the instances do not share yet are listed in pending_test.go:
// their tests skip, saying why. See README.md.
package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/showcasebin"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

const (
	// defaultInstances is how many showcase processes a cluster runs.
	defaultInstances = 3
	// startTimeout bounds the start of one process (an instance or
	// haproxy): until it answers an MCP request.
	startTimeout = 30 * time.Second
	// stopTimeout bounds the exit of a process after SIGTERM; past it, it
	// is killed (and the test fails for an instance).
	stopTimeout = 15 * time.Second
	// startAttempts bounds the attempts to start haproxy on a free port
	// (another process may take the port between the probe and the bind).
	startAttempts = 5
	// killTimeout bounds the exit of a process after SIGKILL (the kernel
	// ends it at once; the bound only keeps a stuck test from hanging).
	killTimeout = 10 * time.Second
	// downTimeout bounds the wait for haproxy's health checks to mark a
	// killed instance down (a few check intervals: haproxyCheckInter).
	downTimeout = 10 * time.Second
)

// trustedProxies is the -trusted-proxy of instances started with
// clusterOptions.trustedProxy: both proxies connect from 127.0.0.1.
const trustedProxies = "127.0.0.1/32"

// instanceHeader is the response header both proxies set to the name of
// the instance that served the response (haproxy's srv_name).
const instanceHeader = "X-Cluster-Instance"

// TestMain runs the tests within showcasebin.Run, which makes the directory
// showcaseBinary builds the showcase into and removes it after them.
func TestMain(m *testing.M) { os.Exit(showcasebin.Run(m, "cluster")) }

// skipOrFail skips tb with msg for want of a part (haproxy, node), or
// fails it when required (CI installs every part: .ci/run).
func skipOrFail(tb testing.TB, required bool, msg string) {
	tb.Helper()
	if required {
		tb.Fatalf("%s (CI or E2E_REQUIRED is set)", msg)
	}
	tb.Skip(msg)
}

// ci: CI is set (as redistest does, haproxy is then required).
func ci() bool { return os.Getenv("CI") != "" }

// ---------------------------------------------------------------------------
// The showcase binary.

// showcaseBinary builds examples/showcase once per test binary. The
// instances are separate processes, so the test binary's -race says
// nothing about them: they are built without the race detector (three of
// them on a small machine would be slow), unless CLUSTER_RACE=1. The Node
// clients of test/e2e and their manifests are recorded as inputs too.
func showcaseBinary(tb testing.TB) string {
	tb.Helper()
	return showcasebin.Build(tb, showcasebin.Options{
		Race: os.Getenv("CLUSTER_RACE") == "1",
		ExtraInputs: []string{
			filepath.Join(e2eDir, "package.json"), filepath.Join(e2eDir, "package-lock.json"),
			filepath.Join(e2eDir, "clients", "*.mjs"),
		},
	})
}

// ---------------------------------------------------------------------------
// Processes.

// lockedBuffer is a bytes.Buffer safe for one writer and many readers.
type lockedBuffer = testtools.LockedBuffer

// process is a child process whose standard output and error are kept.
type process struct {
	name string
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
}

// startProcess starts bin with args; lines, when not nil, gets every line
// of its standard error as it comes (until the channel's buffer is full).
func startProcess(name, bin string, args []string, lines chan<- string) (*process, error) {
	p := &process{name: name, cmd: exec.Command(bin, args...), logs: &lockedBuffer{}, done: make(chan struct{})}
	testtools.DieWithTest(p.cmd)
	pr, pw := io.Pipe()
	p.cmd.Stdout = p.logs
	p.cmd.Stderr = io.MultiWriter(p.logs, pw)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if lines != nil {
				select {
				case lines <- sc.Text():
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		p.err = p.cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	return p, nil
}

// stop sends SIGTERM and waits stopTimeout for the exit, then kills. It
// returns the exit status, or an error saying it had to kill.
func (p *process) stop() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s had already exited: %v", p.name, p.err)
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not exit within %v of SIGTERM: killed", p.name, stopTimeout)
	}
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ---------------------------------------------------------------------------
// Instances.

// Instance is one showcase process serving Streamable HTTP.
type Instance struct {
	// Name is what the proxies put in X-Cluster-Instance: i0, i1, ...
	Name string
	// Addr is its host:port on 127.0.0.1.
	Addr string
	// URL is its MCP endpoint, http://Addr/mcp, reached directly (not
	// through a proxy): a test pins a request to this instance with it.
	URL string
	p   *process
	// killed is set by Kill: the instance is not stopped at the end.
	killed atomic.Bool
}

// Logs returns what the instance wrote to standard error so far.
func (in *Instance) Logs() string { return in.p.logs.String() }

// Kill kills the instance with SIGKILL, as a crash would (no shutdown:
// its connections are cut, its calls die with it, nothing is flushed), and
// waits until the process is gone. It is not stopped again at the end of
// the test. The proxies keep sending to it: use Cluster.Kill to take it
// out of them too.
func (in *Instance) Kill(tb testing.TB) {
	tb.Helper()
	if !in.killed.CompareAndSwap(false, true) {
		tb.Fatalf("instance %s killed twice", in.Name)
	}
	if err := in.p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		tb.Fatalf("SIGKILL to instance %s: %v", in.Name, err)
	}
	select {
	case <-in.p.done:
	case <-time.After(killTimeout):
		tb.Fatalf("instance %s still running %v after SIGKILL", in.Name, killTimeout)
	}
	var exit *exec.ExitError
	if !errors.As(in.p.err, &exit) {
		tb.Fatalf("instance %s ended with %v, want killed by SIGKILL", in.Name, in.p.err)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		tb.Fatalf("instance %s ended with %v, want killed by SIGKILL", in.Name, in.p.err)
	}
}

// Freeze stops the instance with SIGSTOP: it runs nothing more (writes
// nothing to its connections, which stay open) until it is killed (Kill:
// SIGKILL ends a stopped process too). What the other instances store in
// Redis meanwhile is what a crash leaves undelivered.
func (in *Instance) Freeze(tb testing.TB) {
	tb.Helper()
	if err := freeze(in.p.cmd.Process); err != nil {
		tb.Fatalf("SIGSTOP to instance %s: %v", in.Name, err)
	}
}

// startInstance starts one showcase serving Streamable HTTP on a free
// loopback port, with its sessions in Redis at redisAddr ("" keeps them in
// memory) and the further flags extra, and waits until it answers a
// stateless tools/list. It is stopped (SIGTERM; it must exit cleanly) when
// tb ends, unless it was killed (Kill).
func startInstance(tb testing.TB, name, redisAddr string, extra ...string) *Instance {
	tb.Helper()
	args := []string{"-transport", "http", "-addr", "127.0.0.1:0"}
	if redisAddr != "" {
		args = append(args, "-redis", "redis://"+redisAddr+"/0")
	}
	args = append(args, extra...)
	lines := make(chan string, 64)
	p, err := startProcess(name, showcaseBinary(tb), args, lines)
	if err != nil {
		tb.Fatal(err)
	}
	in := &Instance{Name: name, p: p}
	tb.Cleanup(func() {
		if in.killed.Load() {
			return
		}
		if err := p.stop(); err != nil {
			tb.Errorf("instance %s did not stop cleanly: %v\n%s", name, err, p.logs)
		}
		if strings.Contains(p.logs.String(), "DATA RACE") {
			tb.Errorf("instance %s reported a data race:\n%s", name, p.logs)
		}
	})
	deadline := time.After(startTimeout)
	for in.URL == "" {
		select {
		case line := <-lines:
			const served = "serving MCP over Streamable HTTP at "
			if i := strings.Index(line, served); i >= 0 {
				in.URL = strings.TrimSpace(line[i+len(served):])
			}
		case <-p.done:
			tb.Fatalf("instance %s exited: %v\n%s", name, p.err, p.logs)
		case <-deadline:
			tb.Fatalf("instance %s printed no URL within %v:\n%s", name, startTimeout, p.logs)
		}
	}
	in.Addr = strings.TrimSuffix(strings.TrimPrefix(in.URL, "http://"), "/mcp")
	if err := waitAnswers(in.URL, p); err != nil {
		tb.Fatalf("instance %s: %v\n%s", name, err, p.logs)
	}
	return in
}

// waitAnswers polls url with a stateless tools/list until it is answered
// 200, p exits or startTimeout passes.
func waitAnswers(url string, p *process) error {
	c := newClient(url, 1)
	defer c.hc.CloseIdleConnections()
	deadline := time.Now().Add(startTimeout)
	var last error
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("%s exited: %v", p.name, p.err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		r, err := c.stateless(ctx, `"probe"`, "tools/list", "", nil)
		cancel()
		if err == nil && r.Status == http.StatusOK {
			return nil
		}
		last = err
		if err == nil {
			last = fmt.Errorf("status %d: %s", r.Status, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s does not answer at %s within %v: %v", p.name, url, startTimeout, last)
}

// ---------------------------------------------------------------------------
// The cluster.

// clusterOptions configure startCluster. The zero value is the cluster of
// the tests: three instances on Redis, behind haproxy and the in-process
// proxy.
type clusterOptions struct {
	// instances is how many showcase processes run (default
	// defaultInstances).
	instances int
	// memory keeps each instance's sessions in its own memory (no Redis):
	// the single-server reference of the benchmark.
	memory bool
	// noHAProxy starts the in-process proxy only.
	noHAProxy bool
	// trustedProxy starts the instances with -trusted-proxy
	// trustedProxies: a client is counted by the X-Forwarded-For the
	// proxies set (both do), and the proxies' connections are exempt from
	// the per-address connection bound.
	trustedProxy bool
	// healthChecks has haproxy check its servers (haproxyChecks): a
	// killed instance is marked down and gets no more requests, and a
	// request whose connection to it fails meanwhile is sent to another.
	// It also gives the in-process proxy fresh connections (see
	// startGoProxy).
	healthChecks bool
	// redisCluster puts the instances on a Redis Cluster
	// (redistest.StartCluster: three masters, three replicas) rather than
	// one redis-server, with -redis-cluster.
	redisCluster bool
	// freshUpstream gives the in-process proxy a connection per request
	// (see startGoProxy), for scenarios whose clients cancel requests.
	freshUpstream bool
}

// Cluster is a running set of instances and the proxies in front of them.
type Cluster struct {
	// Redis is the redis-server the instances share (nil with memory or
	// redisCluster).
	Redis *redistest.Server
	// RedisCluster is the Redis Cluster they share (redisCluster).
	RedisCluster *redistest.Cluster
	// Instances are the showcase processes, i0 first.
	Instances []*Instance
	// Go is the in-process round-robin reverse proxy.
	Go *goProxy
	// HAProxy is haproxy, nil when it is not installed (missing says
	// why) or not asked for.
	HAProxy *haProxy
	missing string
}

// startCluster starts a cluster for tb; everything is stopped when tb ends
// (the proxies first, then the instances, then Redis).
func startCluster(tb testing.TB, o clusterOptions) *Cluster {
	tb.Helper()
	n := o.instances
	if n <= 0 {
		n = defaultInstances
	}
	c := &Cluster{}
	redisAddr := ""
	var extra []string
	switch {
	case o.redisCluster:
		c.RedisCluster = redistest.StartCluster(tb)
		extra = append(extra, "-redis-cluster", strings.Join(c.RedisCluster.Addrs, ","))
	case !o.memory:
		c.Redis = redistest.Start(tb)
		redisAddr = c.Redis.Addr
	}
	showcaseBinary(tb) // build before starting anything
	if o.trustedProxy {
		extra = append(extra, "-trusted-proxy", trustedProxies)
	}
	for i := range n {
		c.Instances = append(c.Instances, startInstance(tb, "i"+strconv.Itoa(i), redisAddr, extra...))
	}
	c.Go = startGoProxy(tb, c.Instances, o.healthChecks || o.freshUpstream)
	if !o.noHAProxy {
		c.HAProxy, c.missing = startHAProxy(tb, c.Instances, o.healthChecks)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			for _, in := range c.Instances {
				tb.Logf("--- log of instance %s ---\n%s", in.Name, in.Logs())
			}
		}
	})
	return c
}

// redisAddrs returns the redis-server the instances share, or the masters
// of their Redis Cluster.
func (c *Cluster) redisAddrs(tb testing.TB) []string {
	tb.Helper()
	if c.RedisCluster != nil {
		return c.RedisCluster.Masters(tb)
	}
	return []string{c.Redis.Addr}
}

// Kill kills the instance in (Instance.Kill) and takes it out of the
// proxies: the in-process proxy stops choosing it at once (as its health
// check would), and Kill waits until haproxy's own health checks mark it
// down (clusterOptions.healthChecks; without them haproxy would go on
// sending to it, and Kill fails the test). After Kill, no proxy sends a
// request to in.
func (c *Cluster) Kill(tb testing.TB, in *Instance) {
	tb.Helper()
	in.Kill(tb)
	c.Go.markDown(in.Name)
	if c.HAProxy != nil {
		c.HAProxy.waitDown(tb, in.Name)
	}
}

// instance returns the instance named name (an X-Cluster-Instance).
func (c *Cluster) instance(tb testing.TB, name string) *Instance {
	tb.Helper()
	for _, in := range c.Instances {
		if in.Name == name {
			return in
		}
	}
	tb.Fatalf("no instance %q", name)
	return nil
}

// proxy is a reverse proxy in front of the instances.
type proxy interface {
	// Name names it in subtest names: go, haproxy.
	Name() string
	// URL is its MCP endpoint.
	URL() string
	// Served returns how many requests it forwarded to each instance so
	// far, by instance name, as the proxy itself counted them.
	Served(tb testing.TB) map[string]int64
}

// forEachProxy runs f as a subtest through each proxy: the in-process one,
// then haproxy (skipped, or failed under CI, when haproxy is missing).
func forEachProxy(t *testing.T, c *Cluster, f func(t *testing.T, p proxy)) {
	t.Helper()
	t.Run("go", func(t *testing.T) { f(t, c.Go) })
	t.Run("haproxy", func(t *testing.T) {
		if c.HAProxy == nil {
			skipOrFail(t, ci(), c.missing)
		}
		f(t, c.HAProxy)
	})
}

// e2eDir is test/e2e, whose Node clients (clients/*.mjs), npm manifests
// and node_modules this package reuses.
const e2eDir = "../e2e"
