package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// The SSE clients of the Go peers (go-sdk v1.8.0's SSEClientTransport,
// mcp-go v1.2.1's NewSSEMCPClient) against hexmcp's HTTP+SSE transport of
// 2024-11-05 (mcphttp.SSEHandler at /sse and /message): list, call,
// concurrent calls, and an elicitation answered by the client.

// sseInteropServer serves an engine with echo, double and ask_name over
// the HTTP+SSE transport on a loopback test server; it returns the
// stream's URL.
func sseInteropServer(t *testing.T) string {
	t.Helper()
	e, err := app.NewEngine(app.Options{Validator: jsonschema.New(), ToolRegistry: memory.NewRegistry(),
		Info: domain.Implementation{Name: "hexmcp-sse", Version: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	type textIn struct {
		Text string `json:"text"`
	}
	type numIn struct {
		N int `json:"n"`
	}
	type noIn struct{}
	err = e.AddTools(
		hexmcp.Func(func(_ context.Context, in textIn) (string, error) { return "echo: " + in.Text, nil }, hexmcp.WithName("echo")),
		hexmcp.Func(func(_ context.Context, in numIn) (string, error) { return fmt.Sprint(2 * in.N), nil }, hexmcp.WithName("double")),
		hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
			res, err := rc.Elicit(ctx, "user_name", hexmcp.ElicitForm("What is your name?",
				json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)))
			if err != nil {
				return "", err
			}
			var in struct {
				Name string `json:"name"`
			}
			if err := res.Decode(&in); err != nil {
				return "The user said " + string(res.Action) + ".", nil
			}
			return "Hello, " + in.Name + "!", nil
		}, hexmcp.WithName("ask_name")),
	)
	if err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{})
	mux := http.NewServeMux()
	mux.Handle(mcphttp.DefaultSSEPath, h)
	mux.Handle(mcphttp.DefaultSSEMessagePath, h)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		srv.Close()
		_ = e.Close()
	})
	return srv.URL + mcphttp.DefaultSSEPath
}

const sseConcurrentCalls = 32

// Each client runs at its default revision (2026-07-28, stateless requests
// on the stream: the engine serves both eras on a connection, and the
// elicitation is an input_required round) and pinned to 2025-11-25 (the
// handshake era: the elicitation is an elicitation/create request on the
// stream, answered by a POST).
var sseRevisions = []string{"", "2025-11-25"}

// eachSSERevision runs run in a subtest for each of sseRevisions.
func eachSSERevision(t *testing.T, run func(t *testing.T, rev string)) {
	for _, rev := range sseRevisions {
		t.Run("revision "+cmp.Or(rev, "default"), func(t *testing.T) { run(t, rev) })
	}
}

func TestSSEGoSDKClient(t *testing.T) {
	eachSSERevision(t, goSDKOverSSE)
}

func goSDKOverSSE(t *testing.T, rev string) {
	url := sseInteropServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "gosdk-sse", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Message != "What is your name?" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	var opts *mcp.ClientSessionOptions
	if rev != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: rev}
	}
	cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: url}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	got := cs.InitializeResult().ProtocolVersion
	t.Logf("go-sdk over SSE negotiated %s", got)
	if rev != "" && got != rev {
		t.Fatalf("negotiated %s, want %s", got, rev)
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 3 {
		t.Fatalf("tools/list: %d tools, want 3", len(tools.Tools))
	}
	text := func(res *mcp.CallToolResult, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || len(res.Content) == 0 {
			t.Fatalf("result %+v", res)
		}
		tc, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %+v", res.Content[0])
		}
		return tc.Text
	}
	if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})); got != "echo: hi" {
		t.Fatalf("echo: %q", got)
	}
	var wg sync.WaitGroup
	answers := make([]string, sseConcurrentCalls)
	errs := make([]error, sseConcurrentCalls)
	for i := range sseConcurrentCalls {
		wg.Go(func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "double", Arguments: map[string]any{"n": i}})
			if errs[i] = err; err == nil && len(res.Content) > 0 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					answers[i] = tc.Text
				}
			}
		})
	}
	wg.Wait()
	for i := range sseConcurrentCalls {
		if errs[i] != nil || answers[i] != fmt.Sprint(2*i) {
			t.Errorf("double %d at once with the others: %q %v", i, answers[i], errs[i])
		}
	}
	if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_name", Arguments: map[string]any{}})); got != "Hello, Ada!" {
		t.Fatalf("ask_name: %q", got)
	}
}

// mcpgoElicitor answers every elicitation with the name Ada.
type mcpgoElicitor struct{}

func (mcpgoElicitor) Elicit(_ context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	if req.Params.Message != "What is your name?" {
		return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseActionDecline}}, nil
	}
	return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{
		Action: mcpgo.ElicitationResponseActionAccept, Content: map[string]any{"name": "Ada"}}}, nil
}

func TestSSEMcpGoClient(t *testing.T) {
	eachSSERevision(t, mcpGoOverSSE)
}

func mcpGoOverSSE(t *testing.T, rev string) {
	url := sseInteropServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := mcpgoclient.NewSSEMCPClient(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The elicitation handler is an option of NewClient; the SSE client
	// takes the transport's.
	c = mcpgoclient.NewClient(c.GetTransport(), mcpgoclient.WithElicitationHandler(mcpgoElicitor{}))
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = cmp.Or(rev, mcpgo.LATEST_PROTOCOL_VERSION)
	init.Params.ClientInfo = mcpgo.Implementation{Name: "mcpgo-sse", Version: "1"}
	if rev == "" {
		init.Params.Capabilities.Elicitation = &mcpgo.ElicitationCapability{}
	}
	ir, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mcp-go over SSE negotiated %s", ir.ProtocolVersion)
	if rev != "" && ir.ProtocolVersion != rev {
		t.Fatalf("negotiated %s, want %s", ir.ProtocolVersion, rev)
	}

	tools, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 3 {
		t.Fatalf("tools/list: %d tools, want 3", len(tools.Tools))
	}
	call := func(name string, args map[string]any) (string, error) {
		req := mcpgo.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return "", err
		}
		if res.IsError || len(res.Content) == 0 {
			return "", fmt.Errorf("result %+v", res)
		}
		tc, ok := mcpgo.AsTextContent(res.Content[0])
		if !ok {
			return "", fmt.Errorf("content %+v", res.Content[0])
		}
		return tc.Text, nil
	}
	if got, err := call("echo", map[string]any{"text": "hi"}); err != nil || got != "echo: hi" {
		t.Fatalf("echo: %q %v", got, err)
	}
	var wg sync.WaitGroup
	got := make([]string, sseConcurrentCalls)
	errs := make([]error, sseConcurrentCalls)
	for i := range sseConcurrentCalls {
		wg.Go(func() { got[i], errs[i] = call("double", map[string]any{"n": i}) })
	}
	wg.Wait()
	for i := range sseConcurrentCalls {
		if errs[i] != nil || got[i] != fmt.Sprint(2*i) {
			t.Errorf("double %d at once with the others: %q %v", i, got[i], errs[i])
		}
	}
	if rev != "" {
		// mcp-go v1.2.1's SSE transport is not bidirectional (no
		// SetRequestHandler): it drops the requests of the server that
		// arrive on the stream, so a handshake-era elicitation cannot be
		// answered. At 2026-07-28 it is an input_required round instead.
		return
	}
	if got, err := call("ask_name", map[string]any{}); err != nil || got != "Hello, Ada!" {
		t.Fatalf("ask_name: %q %v", got, err)
	}
}
