// Package redistest starts a real redis-server (Debian's package, or any on
// the PATH) for a test, on a free loopback port, with nothing persisted, and
// stops it when the test ends. Without redis-server the test is skipped,
// unless CI is set, where it fails: CI installs it (.ci/run).
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/testtools"
)

// Server is a running redis-server.
type Server struct {
	// Addr is its host:port on 127.0.0.1.
	Addr  string
	cmd   *exec.Cmd
	port  int
	dir   string
	extra []string // more arguments of redis-server
}

// Start starts a redis-server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t)
}

// start starts a redis-server with the arguments extra too.
func start(t testing.TB, extra ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed (CI installs it: .ci/run)")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server); CI runs this test")
	}
	s := &Server{dir: t.TempDir(), extra: extra}
	for attempt := 0; attempt < 5; attempt++ {
		if err = s.start(bin); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start(bin string) error {
	port, err := testtools.FreePort()
	if err != nil {
		return err
	}
	s.port = port
	s.Addr = "127.0.0.1:" + strconv.Itoa(port)
	s.cmd = exec.Command(bin, s.args()...)
	testtools.DieWithTest(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s.ping() == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	return fmt.Errorf("redis-server on %s did not answer PING", s.Addr)
}

// args are the arguments of the server's redis-server.
func (s *Server) args() []string {
	return append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--protected-mode", "yes"}, s.extra...)
}

// ping sends PING over RESP and expects +PONG.
func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// Stop kills the server (SIGKILL: nothing is persisted anyway).
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// Restart starts the server again on the same port (its data is gone),
// as after a crash; it fails t when it cannot.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	bin, _ := exec.LookPath("redis-server")
	s.cmd = exec.Command(bin, s.args()...)
	testtools.DieWithTest(s.cmd)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if s.ping() == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("redis-server did not come back on %s", s.Addr)
}
