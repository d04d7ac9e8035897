package hexmcptest_test

import (
	"os"
	"testing"

	"github.com/hexmcp/hexmcp/internal/testtools"
)

// TestMain fails the run when goroutines of the kit or of the servers it
// runs (connections, HTTP handlers, the clients' readers and handlers)
// outlive the tests: every Client must clean up after itself.
func TestMain(m *testing.M) {
	os.Exit(testtools.RunWithLeakCheck(m, "hexmcp/hexmcptest.", "hexmcp/app.", "hexmcp/adapters/", "net/http.(*conn).serve"))
}
