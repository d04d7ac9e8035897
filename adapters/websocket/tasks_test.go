package websocket

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/extensions/skills"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// The extensions over a WebSocket, in both eras: ask_name runs as a task,
// its question shows on tasks/get, tasks/update answers it, and the result
// is collected with tasks/get; skills/list lists the Skills extension's
// skill.

func tasksEngine(t *testing.T, tools ...decl.Tool) *app.Engine {
	t.Helper()
	if len(tools) == 0 {
		tools = []decl.Tool{testtools.AskName()}
	}
	x := tasks.New(tasks.Options{Tools: map[string]tasks.Support{"ask_name": tasks.Optional}})
	sk, err := skills.New(skills.Options{Skills: []skills.Skill{{Name: "greeting", Description: "Greet people by name", Body: "# Greeting\n"}}})
	if err != nil {
		t.Fatal(err)
	}
	e := testtools.NewEngine(t, app.Options{ResourceRegistry: memory.NewResourceRegistry(), Extensions: []app.Extension{x.Extension(), sk}})
	if err := e.AddTools(tools...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// taskFields are the members of a task, in a result or a notification.
type taskFields struct {
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	Result        *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
}

type wsTask struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		ResultType string `json:"resultType"`
		taskFields
	} `json:"result"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func recvTask(t *testing.T, c *gws.Conn) wsTask {
	t.Helper()
	data := readFrame(t, c)
	var m wsTask
	if err := json.Unmarshal(data, &m); err != nil || m.Result == nil {
		t.Fatalf("not a result: %s", data)
	}
	return m
}

func TestTasksOverWebSocket(t *testing.T) {
	const caps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	for _, era := range []string{"handshake", "stateless"} {
		t.Run(era, func(t *testing.T) {
			_, srv := serve(t, tasksEngine(t), Options{})
			c := dial(t, srv)
			meta := ""
			if era == "handshake" {
				crInitialize(t, c, caps)
			} else {
				meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
			}
			id := 0
			req := func(method, params string) wsTask {
				id++
				send(t, c, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"`+method+`","params":{`+params+meta+`}}`)
				return recvTask(t, c)
			}
			id++
			send(t, c, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"skills/list","params":{`+strings.TrimPrefix(meta, ",")+`}}`)
			_ = c.SetReadDeadline(time.Now().Add(testDeadline))
			if _, data, err := c.ReadMessage(); err != nil || !strings.Contains(string(data), `"name":"greeting"`) {
				t.Fatalf("skills/list: %s, %v", data, err)
			}
			created := req("tools/call", `"name":"ask_name","arguments":{}`)
			if created.Result.ResultType != "task" || created.Result.TaskID == "" {
				t.Fatalf("tools/call: %+v", created.Result)
			}
			task := strconv.Quote(created.Result.TaskID)
			poll := func(status string) wsTask {
				t.Helper()
				deadline := time.Now().Add(5 * time.Second)
				for {
					m := req("tasks/get", `"taskId":`+task)
					if m.Result.Status == status {
						return m
					}
					if time.Now().After(deadline) {
						t.Fatalf("status %q not reached: %+v", status, m.Result)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			asked := poll("input_required")
			if _, ok := asked.Result.InputRequests["user_name"]; !ok {
				t.Fatalf("inputRequests %v", asked.Result.InputRequests)
			}
			req("tasks/update", `"taskId":`+task+`,"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}}`)
			done := poll("completed")
			if r := done.Result.Result; r == nil || len(r.Content) != 1 || r.Content[0].Text != "Hello, Ada!" {
				t.Fatalf("completed with %+v", r)
			}
		})
	}
}

// gatedAskName is ask_name (testtools.AskName) whose every run first
// waits for a token from proceed.
func gatedAskName(proceed <-chan struct{}) decl.Tool {
	return decl.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		select {
		case <-proceed:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		res, err := rc.Elicit(ctx, "user_name", handlerapi.ElicitForm("What is your name?", json.RawMessage(testtools.NameSchema)))
		if err != nil {
			return "", err
		}
		var in struct {
			Name string `json:"name"`
		}
		if err := res.Decode(&in); err != nil {
			return "", err
		}
		return "Hello, " + in.Name + "!", nil
	}, decl.WithName("ask_name"))
}

// A listen stream that lists a task's id is told of its changes
// (notifications/tasks, the task as tasks/get would answer); a client
// that did not declare the extension may not listen to tasks (-32021).
//
// Each run of the task waits for the test (proceed), so that one change
// at a time is told: a listen stream keeps the newest notification of a
// task while an older one waits to be written (a task that goes working,
// then completed, at once may be told completed alone), and a
// notification written by the stream may reach the client after the
// response to a tasks/get that read the same change. (The test once let
// the task run freely and read tasks/get to learn its state: it then saw
// the input_required notification after the answer, 30 runs in 200 under
// CPU load.)
func TestTaskNotificationsOverWebSocket(t *testing.T) {
	const caps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	proceed := make(chan struct{})
	_, srv := serve(t, tasksEngine(t, gatedAskName(proceed)), Options{})
	letRun := func() {
		t.Helper()
		select {
		case proceed <- struct{}{}:
		case <-time.After(testDeadline):
			t.Fatal("no run of the task waits")
		}
	}
	c := dial(t, srv)
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_name","arguments":{},`+meta+`}}`)
	created := recvTask(t, c)
	task := strconv.Quote(created.Result.TaskID)

	type message struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			taskFields
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	read := func() message {
		t.Helper()
		data := readFrame(t, c)
		var m message
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		return m
	}
	// Without the extension: refused.
	send(t, c, `{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"taskIds":[`+task+`]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if m := read(); m.Error == nil || m.Error.Code != -32021 {
		t.Fatalf("listen without the extension: %+v", m)
	}
	send(t, c, `{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"notifications":{"taskIds":[`+task+`,"not-a-task"]},`+meta+`}}`)
	ack := read()
	if ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message of the stream: %+v", ack)
	}
	// The stream listens: the task asks for the name, and the stream is
	// told (input_required, with the question).
	letRun()
	if m := read(); m.Method != "notifications/tasks" || m.Params.Status != "input_required" || m.Params.InputRequests["user_name"] == nil {
		t.Fatalf("first message after the ack: %+v, want notifications/tasks of input_required with the question", m)
	}
	// The answer makes the task working (told), and its run completes it
	// (told, with the result).
	send(t, c, `{"jsonrpc":"2.0","id":5,"method":"tasks/update","params":{"taskId":`+task+`,"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}},`+meta+`}}`)
	var statuses []string
	for len(statuses) < 2 {
		m := read()
		if m.Method != "notifications/tasks" {
			if string(m.ID) != "5" || m.Error != nil {
				t.Fatalf("tasks/update: %+v", m)
			}
			continue
		}
		if m.Params.TaskID != created.Result.TaskID || string(m.Params.Meta["io.modelcontextprotocol/subscriptionId"]) != "3" {
			t.Fatalf("notification %+v", m)
		}
		statuses = append(statuses, m.Params.Status)
		switch m.Params.Status {
		case "working":
			letRun()
		case "completed":
			if r := m.Params.Result; r == nil || len(r.Content) != 1 || r.Content[0].Text != "Hello, Ada!" {
				t.Fatalf("completed notification without the result: %+v", m.Params)
			}
		}
	}
	if strings.Join(statuses, " ") != "working completed" {
		t.Fatalf("statuses %v after the answer: want working, then completed", statuses)
	}
}

// A WebSocket client's tasks are its own: a connection from another
// address neither sees nor cancels them (each connection once had the
// same owner, with no session id).
func TestTaskOwnersOverWebSocket(t *testing.T) {
	const caps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	_, srv := serve(t, tasksEngine(t), Options{})
	a := mustDialFrom(t, srv, "127.0.0.2")
	b := mustDialFrom(t, srv, "127.0.0.3")
	send(t, a, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_name","arguments":{},`+meta+`}}`)
	created := recvTask(t, a)
	if created.Result.ResultType != "task" {
		t.Fatalf("tools/call: %+v", created.Result)
	}
	task := strconv.Quote(created.Result.TaskID)
	for i, method := range []string{"tasks/get", "tasks/cancel"} {
		send(t, b, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+2)+`,"method":"`+method+`","params":{"taskId":`+task+`,`+meta+`}}`)
		data := readFrame(t, b)
		var m wsTask
		if err := json.Unmarshal(data, &m); err != nil || m.Error == nil || m.Error.Code != -32602 {
			t.Fatalf("%s of another client's task: %s, want -32602", method, data)
		}
	}
	send(t, a, `{"jsonrpc":"2.0","id":9,"method":"tasks/get","params":{"taskId":`+task+`,`+meta+`}}`)
	if got := recvTask(t, a); got.Result.TaskID != created.Result.TaskID || got.Result.Status == "cancelled" {
		t.Fatalf("tasks/get of its own task: %+v", got.Result)
	}
}
