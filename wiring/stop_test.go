package wiring_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/wiring"
)

// A call that would never end by itself (one waiting for a client's
// answer that never comes) is cancelled at the stop deadline, and the
// application's stop succeeds: that is the stop on schedule, not a
// failure (a SIGTERM exits 0).
func TestStopCutsCallsOnSchedule(t *testing.T) {
	started := make(chan struct{})
	ended := make(chan error, 1)
	hang := hexmcp.NewTool(func(ctx context.Context) (string, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return "", ctx.Err()
	}, hexmcp.WithName("hang"))
	var srv *mcphttp.Server
	a := fx.New(wiring.Core, wiring.HTTP, wiring.HTTPServer, wiring.Listen("127.0.0.1:0"), wiring.Tools(hang),
		fx.Populate(&srv), fx.NopLogger, fx.StopTimeout(3*time.Second))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	go func() {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hang","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest("POST", "http://"+srv.Addr()+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "hang")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	testtools.Recv(t, started, 10*time.Second, "the call did not start")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	begin := time.Now()
	if err := a.Stop(ctx); err != nil {
		t.Fatalf("Stop with a call cut at the deadline: %v, want nil", err)
	}
	if took := time.Since(begin); took > 3*time.Second {
		t.Fatalf("Stop took %v, past fx's deadline", took)
	}
	if err := testtools.Recv(t, ended, time.Second, "the hanging call was not cancelled"); err == nil {
		t.Fatal("the call's context ended without an error")
	}
}
