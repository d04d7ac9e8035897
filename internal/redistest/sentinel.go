package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/testtools"
)

// SentinelMaster is the name under which [StartSentinel]'s Sentinel
// watches its master.
const SentinelMaster = "hexmcp"

// Sentinel is a master, its replica and one Redis Sentinel watching them
// (quorum 1), each a redis-server on a free loopback port.
type Sentinel struct {
	// Master and Replica are the data nodes, as started (after a
	// failover the Replica is the master).
	Master, Replica *Server
	// Addr is the Sentinel's host:port.
	Addr string
	cmd  *exec.Cmd
}

// StartSentinel starts a master, its replica and a Sentinel for t (the
// Sentinel is redis-server --sentinel: no other package), and stops them
// when t ends. It waits until the replica holds the master's data and the
// Sentinel knows it. A master down for a second is failed over to the
// replica. Without redis-server the test is skipped, unless CI is set,
// where it fails.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	master := start(t, "--repl-diskless-sync-delay", "0")
	replica := start(t, "--repl-diskless-sync-delay", "0", "--replicaof", "127.0.0.1", strconv.Itoa(master.port))
	s := &Sentinel{Master: master, Replica: replica}
	bin, _ := exec.LookPath("redis-server")
	dir := t.TempDir()
	var last error
	for range 5 {
		port, err := testtools.FreePort()
		if err != nil {
			last = err
			continue
		}
		conf := filepath.Join(dir, "sentinel.conf")
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 1\n"+
			"sentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 10000\n",
			port, dir, SentinelMaster, master.port, SentinelMaster, SentinelMaster)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, conf, "--sentinel")
		testtools.DieWithTest(cmd)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		probe := &Server{Addr: addr}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if last = probe.ping(); last == nil {
				break
			}
		}
		if last == nil {
			s.Addr, s.cmd = addr, cmd
			break
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	if s.cmd == nil {
		t.Fatalf("starting redis-server --sentinel: %v", last)
	}
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		info, err := command(replica.Addr, "INFO", "replication")
		sen, err2 := command(s.Addr, "INFO", "sentinel")
		if err == nil && err2 == nil && strings.Contains(info, "master_link_status:up") && strings.Contains(sen, "slaves=1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica or the Sentinel is not ready: %q %v; %q %v", info, err, sen, err2)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s
}

// WaitFailover waits, up to timeout, until the Sentinel names the replica
// as the master (after the master was stopped); it fails t past it.
func (s *Sentinel) WaitFailover(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		info, err := command(s.Addr, "INFO", "sentinel")
		if err == nil && strings.Contains(info, "address="+s.Replica.Addr) && strings.Contains(info, "status=ok") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Sentinel did not fail over to %s: %q %v", s.Replica.Addr, info, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
