package mcphttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// post sends one MCP message the way a client does and returns the
// response's status, its Mcp-Session-Id and the text of the first content
// block of its result (or the error message).
func post(url, body string, headers map[string]string) (status int, session, text string) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	testtools.MCPHeaders(req, headers)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err.Error()
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Result struct {
			Content []struct{ Text string }
		}
		Error struct{ Message string }
	}
	_ = json.Unmarshal(raw, &r)
	text = r.Error.Message
	if len(r.Result.Content) > 0 {
		text = r.Result.Content[0].Text
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), text
}

// The handler serves both protocol eras on one URL. A real program runs it
// on a Server bound to the loopback interface:
//
//	srv := mcphttp.NewServer("127.0.0.1:8080", mux, mcphttp.ServerOptions{})
//	if err := srv.Start(ctx); err != nil { ... }
//	defer srv.Shutdown(shutdownCtx)
func ExampleNewHandler() {
	engine, _ := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	defer engine.Close()
	type GreetInput struct {
		Name string `json:"name"`
	}
	_ = engine.AddTool(hexmcp.Func(func(ctx context.Context, in GreetInput) (string, error) {
		return "Hello, " + in.Name, nil
	}, hexmcp.WithName("greet")))

	mux := http.NewServeMux()
	mux.Handle("/mcp", mcphttp.NewHandler(engine, mcphttp.Options{}))
	srv := httptest.NewServer(mux) // 127.0.0.1, a free port
	defer srv.Close()
	url := srv.URL + "/mcp"

	// A 2026-07-28 client: every request names its version, no session.
	status, _, text := post(url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},
		"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "greet"})
	fmt.Println("stateless:", status, text)

	// A 2025-11-25 client: initialize, then the session id on every request.
	_, sid, _ := post(url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	session := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	post(url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	status, _, text = post(url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Grace"}}}`, session)
	fmt.Println("session:", status, text)
	// Output:
	// stateless: 200 Hello, Ada
	// session: 200 Hello, Grace
}

// RequireBearer authenticates requests; tools read who is calling from the
// request context.
func ExampleRequireBearer() {
	engine, _ := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	defer engine.Close()
	type NoInput struct{}
	_ = engine.AddTool(hexmcp.Func(func(ctx context.Context, _ NoInput) (string, error) {
		p := app.RequestFrom(ctx).Transport().Principal
		if p == nil {
			return "nobody", nil
		}
		return "you are " + p.Subject, nil
	}, hexmcp.WithName("whoami")))

	auth := mcphttp.StaticTokens{"s3cret": {Subject: "alice", Scopes: []string{"mcp"}}}
	h := mcphttp.RequireBearer(auth, mcphttp.AuthOptions{
		ResourceMetadataURL: "https://mcp.example.com/.well-known/oauth-protected-resource",
	})(mcphttp.NewHandler(engine, mcphttp.Options{}))
	srv := httptest.NewServer(h)
	defer srv.Close()

	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},
		"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	headers := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "whoami"}
	status, _, _ := post(srv.URL, call, headers)
	fmt.Println("without a token:", status)
	headers["Authorization"] = "Bearer s3cret"
	status, _, text := post(srv.URL, call, headers)
	fmt.Println("with a token:", status, text)
	// Output:
	// without a token: 401
	// with a token: 200 you are alice
}

// A Server listens, serves in the background and shuts down gracefully.
func ExampleServer() {
	engine, _ := app.NewEngine(app.Options{Validator: jsonschema.New(), ToolRegistry: memory.NewRegistry()})
	defer engine.Close()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcphttp.NewHandler(engine, mcphttp.Options{}))

	srv := mcphttp.NewServer("127.0.0.1:0", mux, mcphttp.ServerOptions{})
	if err := srv.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	status, _, text := post("http://"+srv.Addr()+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{
		"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
	fmt.Println(status, text == "")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		engine.Abort() // the deadline passed: stop what is left
	}
	fmt.Println("stopped")
	// Output:
	// 200 true
	// stopped
}

var _ ports.Authenticator = mcphttp.StaticTokens(nil)
