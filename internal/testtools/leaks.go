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
