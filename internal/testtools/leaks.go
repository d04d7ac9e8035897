package testtools

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/leakcheck"
)

// RunWithLeakCheck runs the tests of m, for a TestMain, and returns the
// exit code: 1 when goroutines whose stacks name one of marks (a package
// path, a function) are still running 5 seconds after the tests passed;
// their stacks go to standard error.
func RunWithLeakCheck(m *testing.M, marks ...string) int {
	code := m.Run()
	if code == 0 {
		if leaked := leakcheck.Wait(5*time.Second, marks); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked:\n%s\n", leaked)
			code = 1
		}
	}
	return code
}

// NoGoroutines fails t when goroutines whose stacks name one of marks (a
// package path, a function) are still running after 5 seconds: an
// adapter's test calls it once every subscription stopped and every bus
// was closed.
func NoGoroutines(t testing.TB, marks ...string) {
	t.Helper()
	if left := leakcheck.Wait(5*time.Second, marks); left != "" {
		t.Fatalf("goroutines left running:\n%s", left)
	}
}
