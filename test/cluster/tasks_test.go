package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// tasksExtension is the tasks extension's identifier.
const tasksExtension = "io.modelcontextprotocol/tasks"

// taskView is what the tests read of a task (CreateTaskResult or
// tasks/get's DetailedTask).
type taskView struct {
	ResultType    string `json:"resultType"`
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	Result        *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
}

// taskCall sends a stateless request whose client declared the tasks
// extension, to url, and decodes its result.
func taskCall(ctx context.Context, c *client, id any, method string, params map[string]any) (taskView, *reply, error) {
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    revStateless,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}},
	}}
	for k, v := range params {
		p[k] = v
	}
	hdr := map[string]string{"MCP-Protocol-Version": revStateless, "Mcp-Method": method}
	switch {
	case method == "tools/call":
		hdr["Mcp-Name"] = fmt.Sprint(params["name"])
	case strings.HasPrefix(method, "tasks/"):
		hdr["Mcp-Name"] = fmt.Sprint(params["taskId"])
	}
	r, err := c.do(ctx, http.MethodPost, request(id, method, p), hdr)
	if err != nil {
		return taskView{}, nil, err
	}
	var m rpc
	if r.Status != http.StatusOK || json.Unmarshal(r.Message, &m) != nil || m.Error != nil || m.Result == nil {
		return taskView{}, r, fmt.Errorf("%s: %v", method, r)
	}
	var v taskView
	if err := json.Unmarshal(m.Result, &v); err != nil {
		return taskView{}, r, fmt.Errorf("%s: %w", method, err)
	}
	return v, r, nil
}

// TestClusterTaskSurvivesItsInstance starts buildReport as a task at one
// instance, polls it through the others, kills (SIGKILL) the instance
// running it, and collects the result through another: the task's claim
// expires (the showcase's lease, 5 s) and the next tasks/get runs it
// again. A task started at one instance and cancelled through another is
// cancelled (the run at its instance stopping is extensions/tasks'
// TestTwoInstancesShareTasks).
func TestClusterTaskSurvivesItsInstance(t *testing.T) {
	c := startCluster(t, clusterOptions{noHAProxy: true})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	starter, other, third := c.Instances[0], c.Instances[1], c.Instances[2]
	cl := newClient(starter.URL, 2)
	defer cl.close()

	created, _, err := taskCall(ctx, cl, 1, "tools/call", map[string]any{"name": "buildReport", "arguments": map[string]any{"sections": 8, "stepMs": 500}})
	if err != nil {
		t.Fatal(err)
	}
	if created.ResultType != "task" || created.TaskID == "" || created.Status != "working" {
		t.Fatalf("tools/call buildReport: %+v, want a CreateTaskResult", created)
	}
	id := created.TaskID
	poll := func(at *Instance, what string, cond func(taskView) bool) taskView {
		t.Helper()
		deadline := time.Now().Add(40 * time.Second)
		for {
			v, r, err := taskCall(ctx, cl.at(at.URL), 2, "tasks/get", map[string]any{"taskId": id})
			if err != nil {
				t.Fatalf("tasks/get at %s: %v (%v)", at.Name, err, r)
			}
			if cond(v) {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("task %s: %s not seen at %s; last %+v", id, what, at.Name, v)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Another instance sees the progress the first one writes.
	v := poll(other, "progress", func(v taskView) bool { return strings.HasPrefix(v.StatusMessage, "section ") })
	t.Logf("before the kill, at %s: %+v", other.Name, v)
	c.Kill(t, starter)
	killed := time.Now()
	// Polled at the third instance: it takes the task over once the claim
	// has expired, and runs it to its end.
	done := poll(third, "completed", func(v taskView) bool { return v.Status == "completed" })
	t.Logf("completed %v after the kill", time.Since(killed).Round(time.Millisecond))
	if done.Result == nil || len(done.Result.Content) != 1 || done.Result.Content[0].Text != "Report ready: 8 sections" {
		t.Fatalf("completed with %+v", done.Result)
	}
	if got := poll(other, "completed", func(v taskView) bool { return v.Status == "completed" }); got.Result == nil {
		t.Fatalf("the other instance reads %+v", got)
	}

	// Cancelled through another instance: the run stops at its own.
	second, _, err := taskCall(ctx, cl.at(other.URL), 3, "tools/call", map[string]any{"name": "buildReport", "arguments": map[string]any{"sections": 50, "stepMs": 1000}})
	if err != nil || second.TaskID == "" {
		t.Fatalf("second task: %+v, %v", second, err)
	}
	id = second.TaskID
	poll(third, "progress", func(v taskView) bool { return strings.HasPrefix(v.StatusMessage, "section ") })
	if _, r, err := taskCall(ctx, cl.at(third.URL), 4, "tasks/cancel", map[string]any{"taskId": id}); err != nil {
		t.Fatalf("tasks/cancel: %v (%v)", err, r)
	}
	// Cancelled for good: the instance running it cannot end it otherwise
	// (a terminal task never changes), whenever its run notices.
	v = poll(other, "cancelled", func(v taskView) bool { return v.Status == "cancelled" })
	if v.Result != nil {
		t.Fatalf("a cancelled task with a result: %+v", v)
	}
}
