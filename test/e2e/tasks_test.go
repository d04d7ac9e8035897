package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// The buildReport calls of clients/tasks.mjs (TASK_ARGS, CANCEL_ARGS,
// PLAIN_ARGS there) and the texts they write.
const (
	tasksTaskSections  = 4
	tasksPlainSections = 2
	tasksExtensionID   = "io.modelcontextprotocol/tasks"
)

// tasksDocument is what clients/tasks.mjs prints.
type tasksDocument struct {
	ProtocolVersion     string    `json:"protocolVersion"`
	SessionError        *jsError  `json:"sessionError"`
	SessionErrors       []jsError `json:"sessionErrors"`
	CloseError          *jsError  `json:"closeError"`
	SessionCapabilities *struct {
		Execution    bool `json:"execution"`
		Cancellation bool `json:"cancellation"`
	} `json:"sessionCapabilities"`
	Task      *taskRun    `json:"task"`
	Cancelled *taskRun    `json:"cancelled"`
	Wire      []wireEntry `json:"wire"`
	Plain     *plainRun   `json:"plain"`
}

// jsError is an error the script caught (ext-tasks or the SDK threw).
type jsError struct {
	Name    string          `json:"name"`
	Message string          `json:"message"`
	Code    *int            `json:"code"`
	Data    json.RawMessage `json:"data"`
	Cause   string          `json:"cause"`
}

func (e *jsError) String() string {
	if e == nil {
		return "<nil>"
	}
	s := e.Name + ": " + e.Message
	if e.Code != nil {
		s += fmt.Sprintf(" (code %d)", *e.Code)
	}
	if e.Cause != "" {
		s += " (cause: " + e.Cause + ")"
	}
	return s
}

// taskView is an ext-tasks TaskView, as the script keeps it.
type taskView struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
}

// taskRun is one session.callTool of the script and what became of it.
type taskRun struct {
	Kind   string `json:"kind"` // "task" or "immediate"
	TaskID string `json:"taskId"`
	Events []struct {
		Type   string    `json:"type"`
		Task   *taskView `json:"task"`
		Status string    `json:"status"`
	} `json:"events"`
	Outcome *struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
		Error  *jsError        `json:"error"`
	} `json:"outcome"`
	Text               *string   `json:"text"`
	ResultError        *jsError  `json:"resultError"`
	Error              *jsError  `json:"error"`
	CancelAcknowledged bool      `json:"cancelAcknowledged"`
	CancelError        *jsError  `json:"cancelError"`
	Snapshot           *taskView `json:"snapshot"`
	SnapshotError      *jsError  `json:"snapshotError"`
}

// wireEntry is one JSON-RPC message the script's request coordinator sent
// or received, with the HTTP exchange of a request.
type wireEntry struct {
	Direction string `json:"direction"`
	Message   struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	} `json:"message"`
	HTTP map[string]any `json:"http"`
}

// plainRun is the call of the client without the extension.
type plainRun struct {
	Result        json.RawMessage `json:"result"`
	Error         *rpcError       `json:"error"`
	ClientError   *jsError        `json:"clientError"`
	WireExchanges int             `json:"wireExchanges"`
	Request       struct {
		Params json.RawMessage `json:"params"`
	} `json:"request"`
	Text *string `json:"text"`
}

// wireExchange is a request of the wire and its response.
type wireExchange struct {
	req, resp *wireEntry
}

// exchanges pairs the wire's requests with their responses, in send order.
func (d tasksDocument) exchanges() []wireExchange {
	byID := map[string]*wireEntry{}
	for i := range d.Wire {
		w := &d.Wire[i]
		if w.Direction == "received" && w.Message.Method == "" {
			byID[string(w.Message.ID)] = w
		}
	}
	var out []wireExchange
	for i := range d.Wire {
		w := &d.Wire[i]
		if w.Direction == "sent" && w.Message.Method != "" {
			out = append(out, wireExchange{req: w, resp: byID[string(w.Message.ID)]})
		}
	}
	return out
}

// forTask are the exchanges of method about taskID (params.taskId, or, for
// tools/call, the taskId of its result).
func (d tasksDocument) forTask(method, taskID string) []wireExchange {
	var out []wireExchange
	for _, x := range d.exchanges() {
		if x.req.Message.Method != method {
			continue
		}
		src := x.req.Message.Params
		if method == "tools/call" {
			if x.resp == nil {
				continue
			}
			src = x.resp.Message.Result
		}
		var p struct {
			TaskID string `json:"taskId"`
		}
		if json.Unmarshal(src, &p) == nil && p.TaskID == taskID {
			out = append(out, x)
		}
	}
	return out
}

// wireTask is the task members of a CreateTaskResult or a tasks/get result.
type wireTask struct {
	ResultType    string          `json:"resultType"`
	TaskID        string          `json:"taskId"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"statusMessage"`
	Result        json.RawMessage `json:"result"`
	Error         json.RawMessage `json:"error"`
}

func decodeWireTask(t *testing.T, x wireExchange) wireTask {
	t.Helper()
	if x.resp == nil {
		t.Fatalf("%s %s: no response on the wire", x.req.Message.Method, x.req.Message.Params)
	}
	if x.resp.Message.Error != nil {
		t.Fatalf("%s %s: error %+v, want a result", x.req.Message.Method, x.req.Message.Params, *x.resp.Message.Error)
	}
	var w wireTask
	if err := json.Unmarshal(x.resp.Message.Result, &w); err != nil {
		t.Fatalf("%s: result %s: %v", x.req.Message.Method, x.resp.Message.Result, err)
	}
	return w
}

// declaresTasks reports whether request params carry the extension in
// _meta clientCapabilities.
func declaresTasks(params json.RawMessage) bool {
	var p struct {
		Meta struct {
			Caps struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p.Meta.Caps.Extensions[tasksExtensionID]
	return ok
}

// resultText is the first text block of a CallToolResult.
func resultText(raw json.RawMessage) (string, bool) {
	var r struct {
		Content []content `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return "", false
	}
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text, true
		}
	}
	return "", false
}

// TestHTTPTasksExtTasks drives the showcase's tasks extension over
// Streamable HTTP at 2026-07-28 with the official TypeScript tasks client
// (@modelcontextprotocol/ext-tasks on @modelcontextprotocol/client): a
// buildReport call becomes a task, settled through tasks/get; a long one is
// cancelled with tasks/cancel; a client without the extension is answered
// synchronously.
func TestHTTPTasksExtTasks(t *testing.T) {
	r := runClientOver(t, "tasks", "http", "")
	var d tasksDocument
	if err := json.Unmarshal(r.raw, &d); err != nil {
		t.Fatalf("the tasks document: %v\n%s", err, r.raw)
	}
	if d.ProtocolVersion != "2026-07-28" {
		t.Errorf("negotiated protocolVersion = %q, want 2026-07-28", d.ProtocolVersion)
	}
	if d.SessionError != nil {
		t.Fatalf("createTaskSessionFromClient threw: %v\nstderr:\n%s", d.SessionError, r.stderr)
	}
	for _, e := range d.SessionErrors {
		t.Errorf("the task session reported an error: %v", &e)
	}
	if d.CloseError != nil {
		t.Errorf("session.close threw: %v", d.CloseError)
	}
	if c := d.SessionCapabilities; c == nil || !c.Execution || !c.Cancellation {
		t.Errorf("session capabilities = %+v, want execution and cancellation (the server's extensions[%q])", c, tasksExtensionID)
	}
	// Every request ext-tasks sent carried the extension and was answered
	// with a result.
	for _, x := range d.exchanges() {
		if !declaresTasks(x.req.Message.Params) {
			t.Errorf("%s %s: the request does not declare the extension in _meta clientCapabilities", x.req.Message.Method, x.req.Message.Params)
		}
		if x.resp == nil {
			t.Errorf("%s %s: no response on the wire", x.req.Message.Method, x.req.Message.Params)
		} else if x.resp.Message.Error != nil {
			t.Errorf("%s %s: error %+v", x.req.Message.Method, x.req.Message.Params, *x.resp.Message.Error)
		}
	}
	t.Run("task", func(t *testing.T) { checkTaskRun(t, d) })
	t.Run("cancel", func(t *testing.T) { checkCancelRun(t, d) })
	t.Run("plain", func(t *testing.T) { checkPlainRun(t, d) })
}

// wantTask returns run, the document's run called name, once it is there
// and became a task.
func wantTask(t *testing.T, run *taskRun, name string) *taskRun {
	t.Helper()
	if run == nil {
		t.Fatalf("the document has no %s run", name)
	}
	if run.Error != nil {
		t.Fatalf("session.callTool threw: %v", run.Error)
	}
	if run.Kind != "task" || run.TaskID == "" {
		t.Fatalf("execution kind %q, task id %q: want a task (the server answered synchronously?)", run.Kind, run.TaskID)
	}
	return run
}

// checkTaskRun: buildReport {sections:4} became a task (a CreateTaskResult,
// not a result), polled to completed with the report as its result.
func checkTaskRun(t *testing.T, d tasksDocument) {
	run := wantTask(t, d.Task, "task")
	calls := d.forTask("tools/call", run.TaskID)
	if len(calls) != 1 {
		t.Fatalf("%d tools/call answered with task %s on the wire, want 1", len(calls), run.TaskID)
	}
	created := decodeWireTask(t, calls[0])
	if created.ResultType != "task" || created.Status != "working" || created.Result != nil {
		t.Errorf("tools/call result %s, want a CreateTaskResult (resultType \"task\", status working, no result)", calls[0].resp.Message.Result)
	}
	var statuses []string
	for _, e := range run.Events {
		if e.Task != nil {
			statuses = append(statuses, e.Task.Status+" "+e.Task.StatusMessage)
		}
	}
	t.Logf("task %s: ext-tasks observed %q", run.TaskID, statuses)

	gets := d.forTask("tasks/get", run.TaskID)
	if len(gets) == 0 {
		t.Fatalf("no tasks/get of task %s on the wire", run.TaskID)
	}
	last := decodeWireTask(t, gets[len(gets)-1])
	if last.ResultType != "complete" || last.Status != "completed" {
		t.Errorf("last tasks/get result %s, want resultType complete, status completed", gets[len(gets)-1].resp.Message.Result)
	}
	want := fmt.Sprintf("Report ready: %d sections", tasksTaskSections)
	if txt, ok := resultText(last.Result); !ok || txt != want {
		t.Errorf("tasks/get result.result = %s, want the text %q", last.Result, want)
	}
	if run.Outcome == nil || run.Outcome.Status != "completed" {
		t.Fatalf("outcome %+v, want completed", run.Outcome)
	}
	if run.ResultError != nil || run.Text == nil || *run.Text != want {
		got := "(none)"
		if run.Text != nil {
			got = strconv.Quote(*run.Text)
		}
		t.Errorf("resultFromTaskOutcome text %s (error %v), want %q", got, run.ResultError, want)
	}
}

// checkCancelRun: buildReport {sections:50} became a task, cancelled by the
// session (tasks/cancel acknowledged), and the server shows it cancelled.
func checkCancelRun(t *testing.T, d tasksDocument) {
	run := wantTask(t, d.Cancelled, "cancelled")
	if calls := d.forTask("tools/call", run.TaskID); len(calls) != 1 || decodeWireTask(t, calls[0]).ResultType != "task" {
		t.Errorf("want one tools/call answered with the CreateTaskResult of %s on the wire", run.TaskID)
	}
	if run.CancelError != nil || !run.CancelAcknowledged {
		t.Fatalf("session.cancelTask: acknowledged %v, error %v", run.CancelAcknowledged, run.CancelError)
	}
	cancels := d.forTask("tasks/cancel", run.TaskID)
	if len(cancels) != 1 {
		t.Fatalf("%d tasks/cancel of %s on the wire, want 1", len(cancels), run.TaskID)
	}
	ack := decodeWireTask(t, cancels[0])
	if ack.ResultType != "complete" || ack.TaskID != "" || ack.Status != "" {
		t.Errorf("tasks/cancel result %s, want an empty acknowledgement (resultType complete)", cancels[0].resp.Message.Result)
	}
	if h := cancels[0].req.HTTP; h["mcp-name"] != run.TaskID || h["mcp-method"] != "tasks/cancel" || h["status"] != float64(200) {
		t.Errorf("tasks/cancel HTTP wireExchange %v, want Mcp-Method tasks/cancel, Mcp-Name %s, status 200", h, run.TaskID)
	}
	if run.Outcome == nil || run.Outcome.Status != "cancelled" {
		t.Errorf("outcome %+v, want cancelled", run.Outcome)
	}
	if run.SnapshotError != nil || run.Snapshot == nil || run.Snapshot.Status != "cancelled" {
		t.Errorf("tasks/get after the cancel: %+v (error %v), want status cancelled", run.Snapshot, run.SnapshotError)
	}
	gets := d.forTask("tasks/get", run.TaskID)
	if len(gets) == 0 {
		t.Fatalf("no tasks/get of %s on the wire", run.TaskID)
	}
	for _, g := range gets {
		if w := decodeWireTask(t, g); w.Status == "completed" || w.Result != nil {
			t.Errorf("tasks/get of the cancelled task = %s, want it never completed", g.resp.Message.Result)
		}
	}
	if last := decodeWireTask(t, gets[len(gets)-1]); last.ResultType != "complete" || last.Status != "cancelled" {
		t.Errorf("last tasks/get result %s, want resultType complete, status cancelled", gets[len(gets)-1].resp.Message.Result)
	}
	if h := gets[len(gets)-1].req.HTTP; h["mcp-name"] != run.TaskID || h["mcp-method"] != "tasks/get" {
		t.Errorf("tasks/get HTTP wireExchange %v, want Mcp-Method tasks/get, Mcp-Name %s", h, run.TaskID)
	}
}

// checkPlainRun: a client without the extension gets buildReport's result
// at once.
func checkPlainRun(t *testing.T, d tasksDocument) {
	p := d.Plain
	if p == nil {
		t.Fatal("the document has no plain call")
	}
	if declaresTasks(p.Request.Params) {
		t.Fatalf("the plain call declared the extension: %s", p.Request.Params)
	}
	if p.Error != nil || p.ClientError != nil || p.Result == nil {
		t.Fatalf("plain call: result %s, error %+v, client error %v", p.Result, p.Error, p.ClientError)
	}
	if p.WireExchanges != 1 {
		t.Errorf("plain call: %d tools/call on the wire, want 1", p.WireExchanges)
	}
	var res struct {
		ResultType string  `json:"resultType"`
		TaskID     *string `json:"taskId"`
	}
	if err := json.Unmarshal(p.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.ResultType != "complete" || res.TaskID != nil {
		t.Errorf("plain call result %s, want resultType complete and no task", p.Result)
	}
	want := fmt.Sprintf("Report ready: %d sections", tasksPlainSections)
	if txt, ok := resultText(p.Result); !ok || txt != want {
		t.Errorf("plain call result %s, want the text %q", p.Result, want)
	}
	if strings.Contains(string(p.Result), `"task"`) {
		t.Errorf("plain call result %s mentions a task", p.Result)
	}
}
