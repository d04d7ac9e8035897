package showcasebin

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/internal/testtools"
)

// Serve runs the showcase binary bin with -transport transport (http or
// ws) on a free loopback port and returns the URL it says it serves MCP at
// ("http://127.0.0.1:PORT/mcp", "ws://127.0.0.1:PORT/ws"). Its standard
// error goes to log, line by line with a "showcase: " prefix, when log is
// not nil. The process is killed when tb ends; tb fails when it exits
// before serving or ctx ends first.
func Serve(ctx context.Context, tb testing.TB, bin, transport string, log io.Writer) string {
	tb.Helper()
	_, u := Start(ctx, tb, bin, transport, log)
	return u
}

// Start is [Serve] that also returns the process, for a test that watches
// it (its /proc entry, say).
func Start(ctx context.Context, tb testing.TB, bin, transport string, log io.Writer) (*exec.Cmd, string) {
	tb.Helper()
	cmd := exec.Command(bin, "-transport", transport, "-addr", "127.0.0.1:0")
	testtools.DieWithTest(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		defer close(found)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if log != nil {
				fmt.Fprintln(log, "showcase: "+line)
			}
			if _, u, ok := strings.Cut(line, "serving MCP over "); ok {
				if _, u, ok = strings.Cut(u, " at "); ok {
					select {
					case found <- u:
					default:
					}
				}
			}
		}
	}()
	select {
	case u, ok := <-found:
		if !ok {
			tb.Fatal("the showcase exited before serving")
		}
		return cmd, u
	case <-ctx.Done():
		tb.Fatalf("the showcase did not start: %v", ctx.Err())
	}
	return cmd, ""
}
