package hexmcptest_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run when goroutines of the kit or of the servers it
// runs (connections, HTTP handlers, the clients' readers and handlers)
// outlive the tests: every Client must clean up after itself.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := waitNoLeaks(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

func waitNoLeaks(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		leaked := leakedGoroutines()
		if leaked == "" || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func leakedGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "TestMain") || strings.Contains(g, "waitNoLeaks") {
			continue
		}
		for _, mark := range []string{"hexmcp/hexmcptest.", "hexmcp/app.", "hexmcp/adapters/", "net/http.(*conn).serve"} {
			if strings.Contains(g, mark) {
				out = append(out, g)
				break
			}
		}
	}
	return strings.Join(out, "\n\n")
}
