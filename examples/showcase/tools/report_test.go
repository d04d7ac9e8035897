package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/hexmcptest"
)

// buildReport runs as a task for a client that declared the extension
// (its progress is the task's status message) and synchronously for any
// other.
func TestBuildReportAsTask(t *testing.T) {
	x := Tasks()
	t.Cleanup(func() { _ = x.Shutdown(context.Background()) })
	srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []hexmcp.Extension{x.Extension()}, Tools: []hexmcp.Tool{reportTool()}})
	c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Revision: hexmcp.Revision20260728,
		Capabilities: map[string]any{"extensions": map[string]any{tasks.ID: map[string]any{}}}})
	type task struct {
		ResultType, TaskID, Status, StatusMessage string
		Result                                    *struct{ Content []struct{ Text string } }
	}
	var created task
	if err := c.Call(context.Background(), "tools/call", map[string]any{"name": "buildReport", "arguments": map[string]any{"sections": 3, "stepMs": 50}}, &created); err != nil {
		t.Fatal(err)
	}
	if created.ResultType != "task" || created.TaskID == "" {
		t.Fatalf("created %+v", created)
	}
	deadline := time.Now().Add(10 * time.Second)
	sawProgress := false
	for {
		var v task
		if err := c.Call(context.Background(), "tasks/get", map[string]any{"taskId": created.TaskID}, &v); err != nil {
			t.Fatal(err)
		}
		sawProgress = sawProgress || strings.HasPrefix(v.StatusMessage, "section ")
		if v.Status == "completed" {
			if v.Result == nil || len(v.Result.Content) != 1 || v.Result.Content[0].Text != "Report ready: 3 sections" {
				t.Fatalf("completed with %+v", v.Result)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not completed: %+v", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !sawProgress {
		t.Error("no progress was seen in the task's status message")
	}
	plain := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Revision: hexmcp.Revision20260728})
	res, err := plain.CallTool(context.Background(), "buildReport", map[string]any{"sections": 1, "stepMs": 1})
	if err != nil || len(res.Content) != 1 || res.Content[0].Text != "Report ready: 1 sections" {
		t.Fatalf("synchronously: %+v, %v", res, err)
	}
}
