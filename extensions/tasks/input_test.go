package tasks_test

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/hexmcptest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

const nameSchema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`

// inputTools are tools that ask for input: ask (one question), two (two
// at once), deferred (asks, then Detach) and slow (reports progress,
// then waits for release or cancellation).
func inputTools(release <-chan struct{}, runs *atomic.Int32) []hexmcp.Tool {
	return []hexmcp.Tool{
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			res, err := app.RequestFrom(ctx).Elicit(ctx, "who", hexmcp.ElicitForm("Name?", stdjson.RawMessage(nameSchema)))
			if err != nil {
				return "", err
			}
			return "hello " + string(res.Content), nil
		}, hexmcp.WithName("ask")),
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			ans, err := app.RequestFrom(ctx).Ask(ctx,
				hexmcp.ElicitInput("a", hexmcp.ElicitForm("A?", stdjson.RawMessage(nameSchema))),
				hexmcp.ElicitInput("b", hexmcp.ElicitForm("B?", stdjson.RawMessage(nameSchema))))
			if err != nil {
				return "", err
			}
			a, _ := ans.Elicitation("a")
			b, _ := ans.Elicitation("b")
			return string(a.Content) + "+" + string(b.Content), nil
		}, hexmcp.WithName("two")),
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			res, err := app.RequestFrom(ctx).Elicit(ctx, "who", hexmcp.ElicitForm("Name?", stdjson.RawMessage(nameSchema)))
			if err != nil {
				return "", err
			}
			if err := tasks.Detach(ctx); err != nil {
				return "", err
			}
			return "task for " + string(res.Content), nil
		}, hexmcp.WithName("deferred")),
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			runs.Add(1)
			return slow(ctx, release)
		}, hexmcp.WithName("slow")),
	}
}

type instance struct {
	x   *tasks.Tasks
	srv *hexmcp.Server
}

// newInstance serves the input tools with a Tasks on store (one store
// for several instances stands for a shared one).
func newInstance(t *testing.T, store ports.TaskStore, lease time.Duration, release <-chan struct{}, runs *atomic.Int32) instance {
	t.Helper()
	x := tasks.New(tasks.Options{Store: store, Lease: lease,
		Tools:    map[string]tasks.Support{"ask": tasks.Optional, "two": tasks.Optional, "deferred": tasks.Required, "slow": tasks.Optional},
		Deferred: map[string]bool{"deferred": true}})
	t.Cleanup(func() {
		if err := x.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()}, Tools: inputTools(release, runs)})
	return instance{x, srv}
}

func get(t *testing.T, c *client.Session, id string) taskView {
	t.Helper()
	var v taskView
	if err := c.Call(context.Background(), "tasks/get", map[string]any{"taskId": id}, &v); err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	return v
}

// await polls until cond holds (bounded: 5 s).
func await(t *testing.T, c *client.Session, id, what string, cond func(taskView) bool) taskView {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v := get(t, c, id)
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %s not reached; last %+v", id, what, v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func start(t *testing.T, c *client.Session, tool string) string {
	t.Helper()
	var v taskView
	if err := c.Call(context.Background(), "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}, &v); err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	if v.ResultType != "task" || v.TaskID == "" {
		t.Fatalf("tools/call %s: %+v, want a CreateTaskResult", tool, v)
	}
	return v.TaskID
}

func update(t *testing.T, c *client.Session, id string, answers map[string]any) {
	t.Helper()
	var ack map[string]any
	if err := c.Call(context.Background(), "tasks/update", map[string]any{"taskId": id, "inputResponses": answers}, &ack); err != nil {
		t.Fatalf("tasks/update: %v", err)
	}
	for _, k := range []string{"taskId", "status", "inputRequests", "result", "error"} {
		if _, ok := ack[k]; ok {
			t.Fatalf("tasks/update ack %v carries %s", ack, k)
		}
	}
	if c.Revision() == domain.Revision20260728 && ack["resultType"] != "complete" {
		t.Fatalf("tasks/update ack %v", ack)
	}
}

func accept(name string) map[string]any {
	return map[string]any{"action": "accept", "content": map[string]any{"name": name}}
}

// connectAsk connects a stateless client that declared the extension
// and elicitation.
func connectAsk(t *testing.T, srv *hexmcp.Server) *client.Session {
	return hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Revision: domain.Revision20260728,
		Capabilities: map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{tasks.ID: map[string]any{}}}})
}

// answering connects a client that declared elicitation (and the
// extension, when ext) and accepts every elicitation with {"name": name},
// counting them in asked when not nil.
func answering(t *testing.T, srv *hexmcp.Server, rev domain.Revision, ext bool, name string, asked *int) *client.Session {
	caps := map[string]any{"elicitation": map[string]any{}}
	if ext {
		caps["extensions"] = map[string]any{tasks.ID: map[string]any{}}
	}
	return hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Revision: rev, Capabilities: caps,
		Elicitation: func(context.Context, domain.ElicitParams) (*domain.ElicitResult, error) {
			if asked != nil {
				*asked++
			}
			return &domain.ElicitResult{Action: domain.ElicitAccept, Content: stdjson.RawMessage(`{"name":"` + name + `"}`)}, nil
		}})
}

func text(v taskView) string {
	if v.Result == nil || len(v.Result.Content) == 0 {
		return ""
	}
	return v.Result.Content[0].Text
}

func TestTaskAsksForInput(t *testing.T) {
	in := newInstance(t, nil, 0, nil, new(atomic.Int32))
	c := connectAsk(t, in.srv)
	id := start(t, c, "ask")
	v := await(t, c, id, "input_required", func(v taskView) bool { return v.Status == "input_required" })
	var q struct {
		Method string `json:"method"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	if len(v.InputRequests) != 1 || stdjson.Unmarshal(v.InputRequests["who"], &q) != nil || q.Method != "elicitation/create" || q.Params.Message != "Name?" {
		t.Fatalf("inputRequests %s", v.InputRequests)
	}
	// An answer to a key the task does not ask is ignored.
	update(t, c, id, map[string]any{"other": accept("x")})
	if v := get(t, c, id); v.Status != "input_required" || len(v.InputRequests) != 1 {
		t.Fatalf("after an answer to another key: %+v", v)
	}
	err := c.Call(context.Background(), "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"who": "yes"}}, nil)
	if code := rpcCode(t, err); code != domain.CodeInvalidParams {
		t.Fatalf("an answer that is not an object: %d, want -32602", code)
	}
	update(t, c, id, map[string]any{"who": accept("Ada")})
	v = await(t, c, id, "completed", func(v taskView) bool { return v.Status == "completed" })
	if got := text(v); got != `hello {"name":"Ada"}` || v.InputRequests != nil {
		t.Fatalf("completed with %q, %+v", got, v)
	}
}

func TestTaskPartialAnswers(t *testing.T) {
	in := newInstance(t, nil, 0, nil, new(atomic.Int32))
	c := connectAsk(t, in.srv)
	id := start(t, c, "two")
	await(t, c, id, "two questions", func(v taskView) bool { return v.Status == "input_required" && len(v.InputRequests) == 2 })
	update(t, c, id, map[string]any{"a": accept("first")})
	v := get(t, c, id)
	if _, ok := v.InputRequests["b"]; v.Status != "input_required" || len(v.InputRequests) != 1 || !ok {
		t.Fatalf("after one answer of two: %+v", v)
	}
	update(t, c, id, map[string]any{"b": accept("second"), "a": accept("again")})
	v = await(t, c, id, "completed", func(v taskView) bool { return v.Status == "completed" })
	if got := text(v); got != `{"name":"first"}+{"name":"second"}` {
		t.Fatalf("completed with %q: the first answer must stand", got)
	}
}

func TestDeferredToolAsksBeforeTheTask(t *testing.T) {
	in := newInstance(t, nil, 0, nil, new(atomic.Int32))
	asked := 0
	c := answering(t, in.srv, domain.Revision20260728, true, "Alice", &asked)
	id := start(t, c, "deferred") // the client answered the first round itself
	if asked != 1 {
		t.Fatalf("the client was asked %d times before the task, want 1", asked)
	}
	v := await(t, c, id, "completed", func(v taskView) bool { return v.Status == "completed" })
	if got := text(v); got != `task for {"name":"Alice"}` {
		t.Fatalf("completed with %q", got)
	}
	// Without the extension a required deferred tool is refused.
	err := connect(t, in.srv, false).Call(context.Background(), "tools/call", map[string]any{"name": "deferred", "arguments": map[string]any{}}, nil)
	if code := rpcCode(t, err); code != domain.CodeMissingClientCapability {
		t.Fatalf("without the extension: %d", code)
	}
}

func TestProgressIsTheStatusMessage(t *testing.T) {
	release := make(chan struct{})
	in := newInstance(t, nil, 0, release, new(atomic.Int32))
	c := connect(t, in.srv, true)
	id := start(t, c, "slow")
	await(t, c, id, "the progress message", func(v taskView) bool { return v.StatusMessage == "half (1/2)" })
	close(release)
	if v := await(t, c, id, "completed", func(v taskView) bool { return v.Status == "completed" }); text(v) != "slow done" {
		t.Fatalf("completed with %q", text(v))
	}
}

func TestHandshakeEraDeclaresAtInitialize(t *testing.T) {
	in := newInstance(t, nil, 0, nil, new(atomic.Int32))
	c := hexmcptest.Connect(t, in.srv, hexmcptest.ClientOptions{Revision: domain.Revision20251125,
		Capabilities: map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{tasks.ID: map[string]any{}}}})
	id := start(t, c, "ask")
	// In a task the question goes to inputRequests, not to the client
	// as elicitation/create (a background run has no stream to ask on).
	await(t, c, id, "input_required", func(v taskView) bool { return v.Status == "input_required" })
	update(t, c, id, map[string]any{"who": accept("Bob")})
	if v := await(t, c, id, "completed", func(v taskView) bool { return v.Status == "completed" }); text(v) != `hello {"name":"Bob"}` {
		t.Fatalf("completed with %q", text(v))
	}
	// A client without the extension gets the call synchronously, its
	// question as a real elicitation/create.
	plain := answering(t, in.srv, domain.Revision20251125, false, "Sync", nil)
	res, err := plain.CallTool(context.Background(), "ask", map[string]any{})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != `hello {"name":"Sync"}` {
		t.Fatalf("without the extension: %+v, %v", res, err)
	}
}

// failingStore stands for an instance cut off from the shared store (or
// dead): once down, every call fails.
type failingStore struct {
	ports.TaskStore
	down atomic.Bool
}

var errDown = errors.New("store unreachable")

func (s *failingStore) Get(ctx context.Context, id, owner string) (ports.Task, error) {
	if s.down.Load() {
		return ports.Task{}, errDown
	}
	return s.TaskStore.Get(ctx, id, owner)
}

func (s *failingStore) Update(ctx context.Context, id, owner string, u ports.TaskUpdate) (ports.Task, error) {
	if s.down.Load() {
		return ports.Task{}, errDown
	}
	return s.TaskStore.Update(ctx, id, owner, u)
}

func (s *failingStore) Claim(ctx context.Context, id, owner string, c ports.TaskClaim) (ports.Task, error) {
	if s.down.Load() {
		return ports.Task{}, errDown
	}
	return s.TaskStore.Claim(ctx, id, owner, c)
}

func TestTwoInstancesShareTasks(t *testing.T) {
	shared := memory.NewTaskStore(memory.TaskStoreOptions{})
	release := make(chan struct{})
	var runs atomic.Int32
	a := newInstance(t, shared, 300*time.Millisecond, release, &runs)
	b := newInstance(t, shared, 300*time.Millisecond, release, &runs)
	ca, cb := connectAsk(t, a.srv), connectAsk(t, b.srv)

	t.Run("answered through the other", func(t *testing.T) {
		id := start(t, ca, "ask")
		await(t, cb, id, "input_required", func(v taskView) bool { return v.Status == "input_required" })
		update(t, cb, id, map[string]any{"who": accept("Eve")})
		if v := await(t, ca, id, "completed", func(v taskView) bool { return v.Status == "completed" }); text(v) != `hello {"name":"Eve"}` {
			t.Fatalf("completed with %q", text(v))
		}
	})
	t.Run("cancelled through the other", func(t *testing.T) {
		before := runs.Load()
		id := start(t, ca, "slow")
		await(t, cb, id, "running", func(v taskView) bool { return v.StatusMessage != "" })
		var ack map[string]any
		if err := cb.Call(context.Background(), "tasks/cancel", map[string]any{"taskId": id}, &ack); err != nil {
			t.Fatal(err)
		}
		// a's run ends by its context within a third of the lease: Wait
		// returns only then (release is never closed here).
		done := make(chan struct{})
		go func() { a.x.Wait(); close(done) }()
		testtools.Recv(t, done, 5*time.Second, "the run at the first instance was not stopped by a cancel through the second")
		if v := get(t, ca, id); v.Status != "cancelled" || runs.Load() != before+1 {
			t.Fatalf("after cancel: %+v, %d runs", v, runs.Load()-before)
		}
	})
	t.Run("released at shutdown, run again by the other", func(t *testing.T) {
		c := memory.NewTaskStore(memory.TaskStoreOptions{})
		r2 := make(chan struct{})
		var n atomic.Int32
		first := newInstance(t, c, time.Hour, r2, &n)
		second := newInstance(t, c, time.Hour, r2, &n)
		c1, c2 := connect(t, first.srv, true), connect(t, second.srv, true)
		id := start(t, c1, "slow")
		await(t, c1, id, "running", func(v taskView) bool { return v.StatusMessage != "" })
		if err := first.x.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The claim is released: the other instance's next tasks/get runs
		// the task again, long before the hour-long lease would end.
		await(t, c2, id, "run again", func(taskView) bool { return n.Load() == 2 })
		close(r2)
		if v := await(t, c2, id, "completed", func(v taskView) bool { return v.Status == "completed" }); text(v) != "slow done" {
			t.Fatalf("completed with %q", text(v))
		}
	})
	t.Run("taken over when its instance is gone", func(t *testing.T) {
		base := memory.NewTaskStore(memory.TaskStoreOptions{})
		cut := &failingStore{TaskStore: base}
		r3 := make(chan struct{})
		var n atomic.Int32
		dying := newInstance(t, cut, 300*time.Millisecond, r3, &n)
		alive := newInstance(t, base, 300*time.Millisecond, r3, &n)
		c1, c2 := connect(t, dying.srv, true), connect(t, alive.srv, true)
		id := start(t, c1, "slow")
		await(t, c2, id, "running", func(v taskView) bool { return v.StatusMessage != "" })
		cut.down.Store(true) // the first instance can no longer renew its claim
		await(t, c2, id, "taken over", func(taskView) bool { return n.Load() == 2 })
		close(r3)
		v := await(t, c2, id, "completed", func(v taskView) bool { return v.Status == "completed" })
		if text(v) != "slow done" || !strings.Contains(v.Status, "completed") {
			t.Fatalf("after the takeover: %+v", v)
		}
	})
	close(release)
}

// In the handshake era a deferred tool asks the client by a real
// elicitation/create before Detach; the answer goes into the task, which
// does not ask again.
func TestDeferredToolHandshakeEra(t *testing.T) {
	in := newInstance(t, nil, 0, nil, new(atomic.Int32))
	asked := 0
	c := answering(t, in.srv, domain.Revision20251125, true, "Hal", &asked)
	id := start(t, c, "deferred")
	v := await(t, c, id, "completed", func(v taskView) bool { return v.Status == "completed" || v.Status == "input_required" })
	if v.Status != "completed" || text(v) != `task for {"name":"Hal"}` || asked != 1 {
		t.Fatalf("task %+v after %d questions: the answer given before Detach must carry into the task", v, asked)
	}
}

// A task's log messages, which reach no client, go to the server's log:
// the extension's own logger when it has one, else the logger of the
// server it is registered with. So does the warning of a tool named in
// Options.Tools that the server does not serve.
func TestTaskLogsGoToTheServerLog(t *testing.T) {
	for _, own := range []bool{true, false} {
		rec := &testtools.LogRecorder{}
		opts := tasks.Options{Tools: map[string]tasks.Support{"chatty": tasks.Optional, "typo": tasks.Optional}}
		srvOpts := hexmcp.Options{}
		if own {
			opts.Logger = rec
		} else {
			srvOpts.Logger = rec
		}
		x := tasks.New(opts)
		t.Cleanup(func() { _ = x.Shutdown(context.Background()) })
		srvOpts.Extensions = []app.Extension{x.Extension()}
		srvOpts.Tools = []hexmcp.Tool{
			hexmcp.NewTool(func(ctx context.Context) (string, error) {
				if err := app.RequestFrom(ctx).Log(ctx, domain.LogWarning, "builder", "disk almost full"); err != nil {
					return "", err
				}
				return "logged", nil
			}, hexmcp.WithName("chatty")),
		}
		srv := hexmcptest.NewServer(t, srvOpts)
		c := connect(t, srv, true)
		id := start(t, c, "chatty")
		await(t, c, id, "completed", func(v taskView) bool { return v.Status == "completed" })
		if !rec.Has("a task's handler logged") || !rec.Has("does not serve") {
			t.Fatalf("own logger %v: server log %v: the task's log message or the warning is missing", own, rec.Messages())
		}
	}
}

// syncAsk calls ask and checks that it was answered synchronously (no
// task) with the name the client gives.
func syncAsk(t *testing.T, c *client.Session, name, what string) {
	t.Helper()
	var res struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := c.Call(context.Background(), "tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}}, &res); err != nil {
		t.Fatal(err)
	}
	if res.ResultType != "complete" || res.TaskID != "" || len(res.Content) != 1 || res.Content[0].Text != `hello {"name":"`+name+`"}` {
		t.Fatalf("%s: %+v, want the synchronous result", what, res)
	}
}

// noCreate is a store that cannot create tasks (Redis unreachable).
type noCreate struct{ ports.TaskStore }

func (noCreate) Create(context.Context, ports.Task) (ports.Task, error) {
	return ports.Task{}, errDown
}

// A task that cannot be created (the store full or unreachable) leaves the
// call synchronous; answers over the store's bound are -32602.
func TestStoreTroubles(t *testing.T) {
	in := newInstance(t, noCreate{memory.NewTaskStore(memory.TaskStoreOptions{})}, 0, nil, new(atomic.Int32))
	c := answering(t, in.srv, domain.Revision20260728, true, "Sync", nil)
	syncAsk(t, c, "Sync", "with a store that cannot create")

	small := newInstance(t, memory.NewTaskStore(memory.TaskStoreOptions{MaxTaskBytes: 400}), 0, nil, new(atomic.Int32))
	c = connectAsk(t, small.srv)
	id := start(t, c, "two")
	await(t, c, id, "input_required", func(v taskView) bool { return v.Status == "input_required" })
	err := c.Call(context.Background(), "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"a": accept(strings.Repeat("x", 1000))}}, nil)
	if code := rpcCode(t, err); code != domain.CodeInvalidParams {
		t.Fatalf("answers over the store's bound: %d, want -32602", code)
	}
	if v := get(t, c, id); v.Status != "input_required" || len(v.InputRequests) != 2 {
		t.Fatalf("after the refused answers: %+v", v)
	}
}

// Without a store of its own the extension takes the engine's shared one
// (app.Options.Shared.Tasks): two servers on one shared store serve each
// other's tasks.
func TestSharedStoreByDefault(t *testing.T) {
	shared := memory.NewTaskStore(memory.TaskStoreOptions{})
	newServer := func() *hexmcp.Server {
		x := tasks.New(tasks.Options{Tools: map[string]tasks.Support{"ask": tasks.Optional}})
		t.Cleanup(func() { _ = x.Shutdown(context.Background()) })
		return hexmcptest.NewServer(t, hexmcp.Options{Shared: ports.SharedState{Tasks: shared},
			Extensions: []app.Extension{x.Extension()}, Tools: inputTools(nil, new(atomic.Int32))})
	}
	a, b := connectAsk(t, newServer()), connectAsk(t, newServer())
	id := start(t, a, "ask")
	await(t, b, id, "input_required at the other server", func(v taskView) bool { return v.Status == "input_required" })
	update(t, b, id, map[string]any{"who": accept("Sam")})
	if v := await(t, a, id, "completed", func(v taskView) bool { return v.Status == "completed" }); text(v) != `hello {"name":"Sam"}` {
		t.Fatalf("completed with %q", text(v))
	}
}

// Past MaxRunning runs at once, a task-supporting call runs synchronously.
func TestMaxRunning(t *testing.T) {
	release := make(chan struct{})
	var runs atomic.Int32
	x := tasks.New(tasks.Options{MaxRunning: 1, Tools: map[string]tasks.Support{"slow": tasks.Optional, "ask": tasks.Optional}})
	t.Cleanup(func() { close(release); _ = x.Shutdown(context.Background()) })
	srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()}, Tools: inputTools(release, &runs)})
	c := answering(t, srv, domain.Revision20260728, true, "Now", nil)
	start(t, c, "slow") // the one run allowed
	syncAsk(t, c, "Now", "a call past MaxRunning")
}

// A progress message is bounded (1,024 bytes, cut at a character).
func TestProgressMessageBounded(t *testing.T) {
	x := tasks.New(tasks.Options{Tools: map[string]tasks.Support{"long": tasks.Optional}})
	t.Cleanup(func() { _ = x.Shutdown(context.Background()) })
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	srv := hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()}, Tools: []hexmcp.Tool{
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			if err := app.RequestFrom(ctx).ReportProgress(ctx, 1, 0, strings.Repeat("é", 2000)); err != nil {
				return "", err
			}
			select {
			case <-hold:
			case <-ctx.Done():
			}
			return "done", nil
		}, hexmcp.WithName("long")),
	}})
	c := connect(t, srv, true)
	id := start(t, c, "long")
	v := await(t, c, id, "the progress message", func(v taskView) bool { return v.StatusMessage != "" })
	if len(v.StatusMessage) > 1024 || !utf8.ValidString(v.StatusMessage) || !strings.HasPrefix(v.StatusMessage, "éé") {
		t.Fatalf("status message of %d bytes (valid UTF-8: %v)", len(v.StatusMessage), utf8.ValidString(v.StatusMessage))
	}
}

// A tool named in Options.Tools that the engine does not serve is warned
// of (a typo would leave it synchronous for good).
func TestUnknownToolWarned(t *testing.T) {
	rec := &testtools.LogRecorder{}
	x := tasks.New(tasks.Options{Logger: rec, Tools: map[string]tasks.Support{"biuld": tasks.Optional}})
	hexmcptest.NewServer(t, hexmcp.Options{Extensions: []app.Extension{x.Extension()},
		Tools: []hexmcp.Tool{hexmcp.NewTool(func() string { return "ok" }, hexmcp.WithName("build"))}})
	if !rec.Has("does not serve") {
		t.Fatalf("log %v: no warning for a tool the engine does not serve", rec.Messages())
	}
}

// corruptingStore returns the tasks it holds with input requests that do
// not decode once armed, as a store whose data was damaged would.
type corruptingStore struct {
	ports.TaskStore
	armed atomic.Bool
}

func (s *corruptingStore) Get(ctx context.Context, id, owner string) (ports.Task, error) {
	t, err := s.TaskStore.Get(ctx, id, owner)
	if err == nil && s.armed.Load() && t.Status == ports.TaskInputRequired {
		t.InputRequests = []byte(`["not", "an", "object"]`)
	}
	return t, err
}

// tasks/update of a task whose stored questions do not decode fails with
// an internal error (the details in the server's log) instead of taking
// the answers as answering nothing; the task still waits for its input.
func TestUpdateOfUndecodableQuestions(t *testing.T) {
	store := &corruptingStore{TaskStore: memory.NewTaskStore(memory.TaskStoreOptions{})}
	in := newInstance(t, store, 0, nil, new(atomic.Int32))
	c := connectAsk(t, in.srv)
	id := start(t, c, "ask")
	await(t, c, id, "input_required", func(v taskView) bool { return v.Status == "input_required" })
	store.armed.Store(true)
	err := c.Call(context.Background(), "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"who": accept("Ada")}}, nil)
	if code := rpcCode(t, err); code != domain.CodeInternalError {
		t.Fatalf("tasks/update of undecodable questions: %v, want %d", err, domain.CodeInternalError)
	}
	store.armed.Store(false)
	if v := get(t, c, id); v.Status != "input_required" {
		t.Fatalf("after the failed update the task is %+v, want input_required", v)
	}
}
