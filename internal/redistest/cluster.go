package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/testtools"
)

// Cluster is a running Redis Cluster of real redis-server processes in
// cluster mode, on free loopback ports: three masters and three replicas
// (one each), made by redis-cli --cluster create.
type Cluster struct {
	// Addrs are the host:port of every node (the first three were made
	// masters, each of the last three a replica), as seed nodes.
	Addrs    []string
	dir      string
	external bool // not started here (ExternalClusterEnv)
	mu       sync.Mutex
	nodes    map[string]*exec.Cmd
}

// NodeTimeout is the cluster-node-timeout of a [StartCluster] cluster:
// a master that does not answer for that long is failed over to its
// replica (a few seconds later: the replica's election).
const NodeTimeout = 2 * time.Second

// ExternalClusterEnv names the environment variable that gives
// [StartCluster] the seed nodes (host:port,host:port,...) of a cluster
// already running, to test against it instead of starting one: its nodes
// are never stopped nor killed (a test that kills one is skipped), and
// the tests write keys under prefixes of their own.
const ExternalClusterEnv = "HEXMCP_REDIS_CLUSTER"

// StartCluster starts a cluster of six nodes for t and stops it when t
// ends. It waits until every node tells "cluster_state:ok" and knows six
// nodes. Without redis-server or redis-cli the test is skipped, unless CI
// is set, where it fails: CI installs them (.ci/run). With
// ExternalClusterEnv set, it returns that cluster instead.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	if seeds := os.Getenv(ExternalClusterEnv); seeds != "" {
		c := &Cluster{Addrs: strings.Split(seeds, ","), external: true}
		for _, addr := range c.Addrs {
			if info, err := command(addr, "CLUSTER", "INFO"); err != nil || !strings.Contains(info, "cluster_state:ok") {
				t.Fatalf("%s: cluster node %s is not ready: %q %v", ExternalClusterEnv, addr, info, err)
			}
		}
		return c
	}
	bin, err := exec.LookPath("redis-server")
	cli, err2 := exec.LookPath("redis-cli")
	if err != nil || err2 != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server and redis-cli are not installed (CI installs them: .ci/run)")
		}
		t.Skip("redis-server or redis-cli is not installed (apt-get install redis-server redis-tools); CI runs this test")
	}
	c := &Cluster{dir: t.TempDir(), nodes: make(map[string]*exec.Cmd)}
	t.Cleanup(c.Stop)
	for len(c.Addrs) < 6 {
		addr, err := c.startNode(bin)
		if err != nil {
			t.Fatalf("starting a cluster node: %v", err)
		}
		c.Addrs = append(c.Addrs, addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, addr := range c.Addrs {
		for {
			info, err := command(addr, "CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:6") &&
				strings.Contains(info, "cluster_slots_ok:16384") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s is not ready: %q %v", addr, info, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Every replica holds its master's data: only then can it replace it.
	for _, addr := range c.Addrs {
		for {
			info, err := command(addr, "INFO", "replication")
			if err == nil && (strings.Contains(info, "role:master") || strings.Contains(info, "master_link_status:up")) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s has not synced with its master: %q %v", addr, info, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return c
}

// startNode starts one node on a free port whose cluster bus port (the
// port + 10000) is free too.
func (c *Cluster) startNode(bin string) (string, error) {
	var last error
	for attempt := 0; attempt < 20; attempt++ {
		port, err := clusterPort()
		if err != nil {
			last = err
			continue
		}
		p := strconv.Itoa(port)
		cmd := exec.Command(bin, "--port", p, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", c.dir, "--protected-mode", "yes", "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes-"+p+".conf", "--cluster-node-timeout", strconv.Itoa(int(NodeTimeout.Milliseconds())),
			// a replica syncs at once (not 5 s later), so that it can
			// take over as soon as the cluster is up
			"--repl-diskless-sync-delay", "0")
		testtools.DieWithTest(cmd)
		if err := cmd.Start(); err != nil {
			return "", err
		}
		addr := "127.0.0.1:" + p
		s := &Server{Addr: addr}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if last = s.ping(); last == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if last == nil {
			c.mu.Lock()
			c.nodes[addr] = cmd
			c.mu.Unlock()
			return addr, nil
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	return "", fmt.Errorf("no node answered PING: %w", last)
}

// clusterPort returns a free loopback port below 55536 whose bus port is
// free too.
func clusterPort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		if port >= 55536 {
			l.Close()
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		l.Close()
		if err != nil {
			continue
		}
		bus.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free port pair")
}

// Stop kills every node (SIGKILL: nothing is persisted anyway).
func (c *Cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for addr, cmd := range c.nodes {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		delete(c.nodes, addr)
	}
}

// Kill kills the node at addr with SIGKILL, as a crash; it stays down.
func (c *Cluster) Kill(t testing.TB, addr string) {
	t.Helper()
	if c.external {
		t.Skipf("%s: the nodes of an external cluster are not killed", ExternalClusterEnv)
	}
	c.mu.Lock()
	cmd := c.nodes[addr]
	delete(c.nodes, addr)
	c.mu.Unlock()
	if cmd == nil {
		t.Fatalf("redistest: no running cluster node %s", addr)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// MasterOf returns the address of the master that serves key's slot now,
// as the first running node that answers tells it (CLUSTER KEYSLOT, then
// CLUSTER NODES); it fails t when none does.
func (c *Cluster) MasterOf(t testing.TB, key string) string {
	t.Helper()
	for _, addr := range c.Running() {
		slotText, err := command(addr, "CLUSTER", "KEYSLOT", key)
		if err != nil {
			continue
		}
		slot, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(slotText), ":"))
		if err != nil {
			continue
		}
		nodes, err := command(addr, "CLUSTER", "NODES")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(nodes, "\n") {
			f := strings.Fields(line)
			if len(f) < 9 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
				continue
			}
			for _, r := range f[8:] {
				lo, hi, found := strings.Cut(r, "-")
				if !found {
					hi = lo
				}
				l, err1 := strconv.Atoi(lo)
				h, err2 := strconv.Atoi(hi)
				if err1 == nil && err2 == nil && l <= slot && slot <= h {
					return strings.Split(f[1], "@")[0]
				}
			}
		}
	}
	t.Fatalf("redistest: no master serves %q", key)
	return ""
}

// Running returns the addresses of the nodes that were not killed.
func (c *Cluster) Running() []string {
	if c.external {
		return c.Addrs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, a := range c.Addrs {
		if c.nodes[a] != nil {
			out = append(out, a)
		}
	}
	return out
}

// WaitHealthy waits, up to timeout, until every running node tells
// "cluster_state:ok" and serves every slot with running masters (after a
// kill: the killed master's replica took over its slots); it fails t past
// it.
func (c *Cluster) WaitHealthy(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	running := map[string]bool{}
	for _, addr := range c.Running() {
		running[addr] = true
	}
	for _, addr := range c.Running() {
		for {
			info, err := command(addr, "CLUSTER", "INFO")
			var nodes string
			if err == nil {
				nodes, err = command(addr, "CLUSTER", "NODES")
			}
			if err == nil && strings.Contains(info, "cluster_state:ok") && slotsOn(nodes, running) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s is not healthy: %q %v", addr, info, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// slotsOn reports whether every node that CLUSTER NODES (nodes) shows
// serving slots is running.
func slotsOn(nodes string, running map[string]bool) bool {
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) >= 9 && !running[strings.Split(f[1], "@")[0]] {
			return false
		}
	}
	return true
}

// command sends one command in RESP to addr and returns its reply's text:
// a bulk string's bytes, or a simple string or integer line with its
// type byte.
func command(addr string, args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "-"):
		return "", fmt.Errorf("hexmcp: redis: %s", line[1:])
	case strings.HasPrefix(line, "$"):
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", fmt.Errorf("hexmcp: redis: reply %q", line)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return line, nil
}

// Masters returns the addresses of the running masters, as the first
// running node tells them (CLUSTER NODES).
func (c *Cluster) Masters(t testing.TB) []string {
	t.Helper()
	for _, addr := range c.Running() {
		nodes, err := command(addr, "CLUSTER", "NODES")
		if err != nil {
			continue
		}
		var out []string
		for _, line := range strings.Split(nodes, "\n") {
			f := strings.Fields(line)
			if len(f) >= 9 && strings.Contains(f[2], "master") && !strings.Contains(f[2], "fail") {
				out = append(out, strings.Split(f[1], "@")[0])
			}
		}
		return out
	}
	t.Fatal("redistest: no cluster node answers")
	return nil
}

// External reports whether the cluster was given by ExternalClusterEnv
// rather than started here.
func (c *Cluster) External() bool { return c.external }
