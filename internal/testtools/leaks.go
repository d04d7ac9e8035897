package testtools

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// RunWithLeakCheck runs the tests of m, for a TestMain, and returns the
// exit code: 1 when goroutines whose stacks name one of marks (a package
// path, a function) are still running 5 seconds after the tests passed;
// their stacks go to standard error.
func RunWithLeakCheck(m *testing.M, marks ...string) int {
	code := m.Run()
	if code == 0 {
		if leaked := waitNoLeaks(5*time.Second, marks); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked:\n%s\n", leaked)
			code = 1
		}
	}
	return code
}

func waitNoLeaks(d time.Duration, marks []string) string {
	deadline := time.Now().Add(d)
	for {
		leaked := leakedGoroutines(marks)
		if leaked == "" || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// NoGoroutines fails t when goroutines whose stacks name one of marks (a
// package path, a function) are still running after 5 seconds: an
// adapter's test calls it once every subscription stopped and every bus
// was closed.
func NoGoroutines(t testing.TB, marks ...string) {
	t.Helper()
	if left := waitNoLeaks(5*time.Second, marks); left != "" {
		t.Fatalf("goroutines left running:\n%s", left)
	}
}

func leakedGoroutines(marks []string) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "RunWithLeakCheck") || strings.Contains(g, "testtools.waitNoLeaks") {
			continue
		}
		for _, mark := range marks {
			if strings.Contains(g, mark) {
				out = append(out, g)
				break
			}
		}
	}
	return strings.Join(out, "\n\n")
}
