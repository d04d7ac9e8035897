package tasks_test

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/hexmcptest"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

type blockIn struct {
	Block bool `json:"block"`
}

// setup serves the extension with four tools: sync (never a task), job
// (optional; blocks until cancelled when block is true), fail (required;
// a tool error) and boom (optional; panics).
func setup(t *testing.T) (*tasks.Tasks, *hexmcp.Server) {
	t.Helper()
	x := tasks.New(tasks.Options{Tools: map[string]tasks.Support{
		"job": tasks.Optional, "fail": tasks.Required, "boom": tasks.Optional,
	}})
	t.Cleanup(x.Wait)
	srv := hexmcptest.NewServer(t, hexmcp.Options{
		Extensions: []app.Extension{x.Extension()},
		Tools: []hexmcp.Tool{
			hexmcp.NewTool(func() string { return "sync" }, hexmcp.WithName("sync")),
			hexmcp.NewTool(func(ctx context.Context, in blockIn) (string, error) {
				if in.Block {
					<-ctx.Done()
					return "", ctx.Err()
				}
				return "done", nil
			}, hexmcp.WithName("job")),
			hexmcp.NewTool(func() (string, error) { return "", hexmcp.NewToolError("it failed") }, hexmcp.WithName("fail")),
			hexmcp.NewTool(func() (string, error) { panic("boom") }, hexmcp.WithName("boom")),
		},
	})
	return x, srv
}

func connect(t *testing.T, srv *hexmcp.Server, declare bool) *client.Session {
	caps := map[string]any{}
	if declare {
		caps["extensions"] = map[string]any{tasks.ID: map[string]any{}}
	}
	return hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Revision: domain.Revision20260728, Capabilities: caps})
}

// taskView is a task, or a result, as the tests look at it.
type taskView struct {
	ResultType    string                        `json:"resultType"`
	TaskID        string                        `json:"taskId"`
	Status        string                        `json:"status"`
	StatusMessage string                        `json:"statusMessage"`
	InputRequests map[string]stdjson.RawMessage `json:"inputRequests"`
	CreatedAt     string                        `json:"createdAt"`
	LastUpdatedAt string                        `json:"lastUpdatedAt"`
	TTLMs         *int64                        `json:"ttlMs"`
	Result        *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Content []any                         `json:"content"`
	Meta    map[string]stdjson.RawMessage `json:"_meta"`
}

func call(t *testing.T, c *client.Session, method string, params map[string]any) taskView {
	t.Helper()
	var d taskView
	if err := c.Call(context.Background(), method, params, &d); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return d
}

func rpcCode(t *testing.T, err error) int {
	t.Helper()
	var re *client.RPCError
	if !errors.As(err, &re) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	return re.Code
}

func TestTaskCompletes(t *testing.T) {
	x, srv := setup(t)
	c := connect(t, srv, true)
	created := call(t, c, "tools/call", map[string]any{"name": "job", "arguments": map[string]any{"block": false}})
	if created.ResultType != "task" || created.TaskID == "" || created.Status != "working" || created.CreatedAt == "" || created.LastUpdatedAt == "" || created.TTLMs == nil || *created.TTLMs <= 0 {
		t.Fatalf("CreateTaskResult = %+v", created)
	}
	if created.Result != nil || created.Content != nil {
		t.Fatalf("CreateTaskResult carries a result: %+v", created)
	}
	// Like every 2026-07-28 result, it names the server in _meta.
	if _, ok := created.Meta["io.modelcontextprotocol/serverInfo"]; !ok {
		t.Fatalf("CreateTaskResult _meta %v: no serverInfo", created.Meta)
	}
	x.Wait()
	got := call(t, c, "tasks/get", map[string]any{"taskId": created.TaskID})
	if got.TaskID != created.TaskID || got.Status != "completed" || got.Result == nil || got.Result.IsError || len(got.Result.Content) != 1 || got.Result.Content[0].Text != "done" {
		t.Fatalf("tasks/get = %+v, result %+v", got, got.Result)
	}
	// Terminal: cancel is an idempotent empty ack, the task stays completed.
	var ack map[string]any
	if err := c.Call(context.Background(), "tasks/cancel", map[string]any{"taskId": created.TaskID}, &ack); err != nil {
		t.Fatal(err)
	}
	if _, ok := ack["taskId"]; ok || ack["resultType"] != "complete" {
		t.Fatalf("cancel ack = %v", ack)
	}
	ack = nil
	if err := c.Call(context.Background(), "tasks/update", map[string]any{"taskId": created.TaskID, "inputResponses": map[string]any{"k": map[string]any{}}}, &ack); err != nil {
		t.Fatal(err)
	}
	if _, ok := ack["status"]; ok || ack["resultType"] != "complete" {
		t.Fatalf("update ack = %v", ack)
	}
	if got := call(t, c, "tasks/get", map[string]any{"taskId": created.TaskID}); got.Status != "completed" {
		t.Fatalf("after cancel: %+v", got)
	}
}

func TestTaskCancelled(t *testing.T) {
	x, srv := setup(t)
	c := connect(t, srv, true)
	created := call(t, c, "tools/call", map[string]any{"name": "job", "arguments": map[string]any{"block": true}})
	call(t, c, "tasks/cancel", map[string]any{"taskId": created.TaskID})
	x.Wait() // returns only if the run's context was cancelled
	if got := call(t, c, "tasks/get", map[string]any{"taskId": created.TaskID}); got.Status != "cancelled" || got.Result != nil {
		t.Fatalf("tasks/get = %+v", got)
	}
}

func TestToolErrorAndProtocolError(t *testing.T) {
	x, srv := setup(t)
	c := connect(t, srv, true)
	fail := call(t, c, "tools/call", map[string]any{"name": "fail", "arguments": map[string]any{}})
	boom := call(t, c, "tools/call", map[string]any{"name": "boom", "arguments": map[string]any{}})
	x.Wait()
	if got := call(t, c, "tasks/get", map[string]any{"taskId": fail.TaskID}); got.Status != "completed" || got.Result == nil || !got.Result.IsError {
		t.Fatalf("tool error: %+v", got)
	}
	got := call(t, c, "tasks/get", map[string]any{"taskId": boom.TaskID})
	if got.Status != "failed" || got.Error == nil || got.Error.Code != domain.CodeInternalError || got.Result != nil {
		t.Fatalf("protocol error: %+v", got)
	}
}

func TestSyncAndGating(t *testing.T) {
	_, srv := setup(t)
	with, without := connect(t, srv, true), connect(t, srv, false)
	for _, c := range []*client.Session{with, without} {
		if got := call(t, c, "tools/call", map[string]any{"name": "sync", "arguments": map[string]any{}}); got.ResultType != "complete" || got.TaskID != "" {
			t.Fatalf("sync tool: %+v", got)
		}
	}
	if got := call(t, without, "tools/call", map[string]any{"name": "job", "arguments": map[string]any{"block": false}}); got.ResultType != "complete" || got.TaskID != "" || len(got.Content) != 1 {
		t.Fatalf("optional tool without the extension: %+v", got)
	}
	err := without.Call(context.Background(), "tools/call", map[string]any{"name": "fail", "arguments": map[string]any{}}, nil)
	if code := rpcCode(t, err); code != domain.CodeMissingClientCapability {
		t.Fatalf("required tool without the extension: %d", code)
	}
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		err := without.Call(context.Background(), m, map[string]any{"taskId": "x"}, nil)
		if code := rpcCode(t, err); code != domain.CodeMissingClientCapability {
			t.Fatalf("%s without the extension: %d", m, code)
		}
		err = with.Call(context.Background(), m, map[string]any{"taskId": "unknown"}, nil)
		if code := rpcCode(t, err); code != domain.CodeInvalidParams {
			t.Fatalf("%s of an unknown task: %d", m, code)
		}
		err = with.Call(context.Background(), m, map[string]any{}, nil)
		if code := rpcCode(t, err); code != domain.CodeInvalidParams {
			t.Fatalf("%s without taskId: %d", m, code)
		}
	}
}

func TestMcpNameMustMatchTaskID(t *testing.T) {
	x := tasks.New(tasks.Options{})
	reached := 0
	h := x.Extension().Middleware(func(context.Context, *app.Request) (stdjson.RawMessage, error) {
		reached++
		return stdjson.RawMessage(`{}`), nil
	})
	params := []byte(`{"taskId":"t1"}`)
	caps := []byte(`{"extensions":{"` + tasks.ID + `":{}}}`)
	for _, tc := range []struct {
		header map[string][]string
		code   int // 0: passed on
	}{
		{nil, 0},
		{map[string][]string{"Mcp-Name": {"t1"}}, 0},
		{map[string][]string{"Mcp-Name": {"other"}}, domain.CodeHeaderMismatch},
		{map[string][]string{"Mcp-Name": {"t1", "t1"}}, domain.CodeHeaderMismatch},
	} {
		before := reached
		_, err := h(context.Background(), &app.Request{Method: "tasks/get", Params: params, ClientCapabilities: caps, Transport: hexmcp.TransportInfo{Header: tc.header}})
		var pe *domain.ProtocolError
		switch {
		case tc.code == 0 && (err != nil || reached != before+1):
			t.Errorf("%v: err %v, not passed on", tc.header, err)
		case tc.code != 0 && (!errors.As(err, &pe) || pe.Code != tc.code || reached != before):
			t.Errorf("%v: err %v, want %d", tc.header, err, tc.code)
		}
	}
}

// A taskId longer than MaxTaskIDBytes is unknown, whatever it is.
func TestLongTaskIDUnknown(t *testing.T) {
	_, srv := setup(t)
	c := connect(t, srv, true)
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		err := c.Call(context.Background(), m, map[string]any{"taskId": strings.Repeat("x", tasks.MaxTaskIDBytes+1), "inputResponses": map[string]any{}}, nil)
		if code := rpcCode(t, err); code != domain.CodeInvalidParams {
			t.Fatalf("%s with a long taskId: %d, want -32602", m, code)
		}
	}
}

// A task whose tool fails with a protocol error keeps that error as its
// error object: the code, the message, and the data only when there is
// some (no "data": null). The status notifications of its run go out
// without a warning in the server's log.
func TestProtocolErrorKeptWithItsData(t *testing.T) {
	rec := &testtools.LogRecorder{}
	x := tasks.New(tasks.Options{Logger: rec, Tools: map[string]tasks.Support{"refuse": tasks.Required, "bare": tasks.Required}})
	t.Cleanup(x.Wait)
	srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()}, Tools: []hexmcp.Tool{
		hexmcp.NewTool(func() (string, error) {
			return "", domain.NewProtocolError(-32042, "Refused by policy", map[string]any{"why": "policy"})
		}, hexmcp.WithName("refuse")),
		hexmcp.NewTool(func() (string, error) { return "", domain.NewProtocolError(-32043, "Bare refusal", nil) }, hexmcp.WithName("bare")),
	}})
	c := connect(t, srv, true)
	refused := call(t, c, "tools/call", map[string]any{"name": "refuse", "arguments": map[string]any{}})
	bare := call(t, c, "tools/call", map[string]any{"name": "bare", "arguments": map[string]any{}})
	x.Wait()
	for _, tc := range []struct{ id, want string }{
		{refused.TaskID, `{"code":-32042,"data":{"why":"policy"},"message":"Refused by policy"}`},
		{bare.TaskID, `{"code":-32043,"message":"Bare refusal"}`},
	} {
		var got struct {
			Status string             `json:"status"`
			Error  stdjson.RawMessage `json:"error"`
		}
		if err := c.Call(context.Background(), "tasks/get", map[string]any{"taskId": tc.id}, &got); err != nil {
			t.Fatal(err)
		}
		if got.Status != "failed" || string(got.Error) != tc.want {
			t.Errorf("task %s: %s %s, want failed with %s", tc.id, got.Status, got.Error, tc.want)
		}
	}
	if rec.Has("a status notification was not sent") {
		t.Errorf("server log %v: a notification that went out was reported as not sent", rec.Messages())
	}
}
