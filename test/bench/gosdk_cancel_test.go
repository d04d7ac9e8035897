package bench

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
)

// TestGoSDKClientSurvivesCancel: the official Go SDK's client (go-sdk
// v1.8.0) speaks 2026-07-28 by default; after a cancelled call it posts a
// bare notifications/cancelled (no Mcp-Session-Id, no MCP-Protocol-Version,
// no _meta), and takes any error status as the end of its session. hexmcp
// accepts that notification (202) and ignores it, so the next call works.
// (Before, the 400 it got made every later call fail.)
func TestGoSDKClientSurvivesCancel(t *testing.T) {
	e, err := app.NewEngine(app.Options{Validator: jsonschema.New(), ToolRegistry: memory.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	type noIn struct{}
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	err = e.AddTools(
		hexmcp.Func(func(ctx context.Context, _ noIn) (string, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-release:
				return "released", nil
			}
		}, hexmcp.WithName("block")),
		hexmcp.Func(func(context.Context, noIn) (string, error) { return "pong", nil }, hexmcp.WithName("quick")),
	)
	if err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(e, mcphttp.Options{})
	srv := httptest.NewServer(h) // 127.0.0.1
	t.Cleanup(func() { h.CloseStreams(); srv.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "gosdk-cancel", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}

	callCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
		done <- err
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the blocking tool did not start")
	}
	stop()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call returned %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the cancelled call did not return")
	}

	for i := range 3 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "quick", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("call %d after the cancel: %v", i, err)
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "pong" || res.IsError {
			t.Fatalf("call %d after the cancel: %+v", i, res)
		}
	}
}
