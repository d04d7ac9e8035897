package redistest

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv marks the run of the test binary that starts a server and dies
// without stopping it.
const childEnv = "HEXMCP_REDISTEST_CHILD"

// A test binary that dies (killed by go test's timeout, say) takes its
// redis-server with it: none is left running, holding a port, for the
// next run.
func TestServerDiesWithTheTest(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		s := Start(t)
		os.Stdout.WriteString("pid " + strconv.Itoa(s.cmd.Process.Pid) + "\n")
		os.Exit(3) // no cleanup: as a test binary killed by its timeout
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithTheTest$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, _ := cmd.Output()
	var pid int
	for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); {
		if p, ok := strings.CutPrefix(sc.Text(), "pid "); ok {
			pid, _ = strconv.Atoi(p)
		}
	}
	if pid == 0 {
		t.Fatalf("the child started no server:\n%s", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("redis-server %d outlived the test binary that started it", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether process pid runs: it exists and is no zombie (a
// container's init may be slow to reap, or never reap, what it inherits).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command's name, which is in parentheses.
	_, rest, ok := strings.Cut(string(stat), ") ")
	return ok && !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
