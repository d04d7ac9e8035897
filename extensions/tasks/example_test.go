package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/extensions/tasks"
)

// A tool that may run as a task: a client that declares the extension gets
// a task handle at once and polls it with tasks/get.
func Example() {
	build := app.NewTool(func(ctx context.Context) (string, error) {
		rc := app.RequestFrom(ctx)
		for step := 1; step <= 3; step++ {
			time.Sleep(10 * time.Millisecond) // the long work
			if err := rc.ReportProgress(ctx, float64(step), 3, "building"); err != nil {
				return "", err
			}
		}
		return "build 42 passed", nil
	}, app.WithName("build"), app.WithDescription("Builds the project"))
	t := tasks.New(tasks.Options{Tools: map[string]tasks.Support{"build": tasks.Optional}})
	srv, err := hexmcp.New(hexmcp.Options{
		Info:       hexmcp.Implementation{Name: "ci", Version: "1.0.0"},
		Tools:      []app.Tool{build},
		Extensions: []app.Extension{t.Extension()},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	// A stateless (2026-07-28) client that declares the extension.
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	call := func(id int, method, params string) map[string]any {
		out := srv.Engine().HandleMessage(context.Background(), nil, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s,%s}}`, id, method, params, meta)), nil)
		var resp struct{ Result map[string]any }
		if err := json.Unmarshal(out, &resp); err != nil {
			log.Fatal(err)
		}
		return resp.Result
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
