package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/extensions/tasks"
)

// A tool that may run as a task: a client that declares the extension gets
// a task handle at once and polls it with tasks/get.
func Example() {
	build := hexmcp.NewTool(func(ctx context.Context) (string, error) {
		rc := hexmcp.RequestFrom(ctx)
		for step := 1; step <= 3; step++ {
			time.Sleep(10 * time.Millisecond) // the long work
			if err := rc.ReportProgress(ctx, float64(step), 3, "building"); err != nil {
				return "", err
			}
		}
		return "build 42 passed", nil
	}, hexmcp.WithName("build"), hexmcp.WithDescription("Builds the project"))
	t := tasks.New(tasks.Options{Tools: map[string]tasks.Support{"build": tasks.Optional}})
	srv, err := hexmcp.New(hexmcp.Options{
		Info:       hexmcp.Implementation{Name: "ci", Version: "1.0.0"},
		Tools:      []hexmcp.Tool{build},
		Extensions: []hexmcp.Extension{t.Extension()},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	// Served over Streamable HTTP, to a stateless (2026-07-28) client that
	// declares the extension.
	web := httptest.NewServer(srv.HTTPHandler(mcphttp.Options{}))
	defer web.Close()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	call := func(id int, method, params string) map[string]any {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s,%s}}`, id, method, params, meta)
		req, _ := http.NewRequest(http.MethodPost, web.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if method == "tools/call" {
			req.Header.Set("Mcp-Name", "build")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Result map[string]any
			Error  any
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			log.Fatal(err)
		}
		if out.Error != nil {
			log.Fatalf("%s: %v", method, out.Error)
		}
		return out.Result
	}
	created := call(1, "tools/call", `"name":"build","arguments":{}`)
	fmt.Println(created["resultType"], created["status"])
	for {
		task := call(2, "tasks/get", fmt.Sprintf(`"taskId":%q`, created["taskId"]))
		if task["status"] == "completed" {
			content := task["result"].(map[string]any)["content"].([]any)
			fmt.Println(task["status"], content[0].(map[string]any)["text"])
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Output:
	// task working
	// completed build 42 passed
}
