package tasks_test

import (
	"context"
	stdjson "encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/ports"
)

type dataIn struct {
	Data string `json:"data,omitempty"`
}

// wireTools are the tools of the wire tests: job (answers at once),
// hold (asks the client a question: input_required, kept for its TTL)
// and slow (reports progress, then waits for release or cancellation),
// each taking any data.
func wireTools(release <-chan struct{}) []hexmcp.Tool {
	return []hexmcp.Tool{
		hexmcp.NewTool(func(context.Context, dataIn) (string, error) { return "done", nil }, hexmcp.WithName("job")),
		hexmcp.NewTool(func(ctx context.Context, _ dataIn) (string, error) {
			res, err := app.RequestFrom(ctx).Elicit(ctx, "who", hexmcp.ElicitForm("Name?", stdjson.RawMessage(nameSchema)))
			if err != nil {
				return "", err
			}
			return "hello " + string(res.Content), nil
		}, hexmcp.WithName("hold")),
		hexmcp.NewTool(func(ctx context.Context, _ dataIn) (string, error) { return slow(ctx, release) }, hexmcp.WithName("slow")),
	}
}

// slow is the body of the tools "slow": it reports progress (1 of 2,
// "half"), then answers "slow done" once release is closed, or fails when
// ctx ends first.
func slow(ctx context.Context, release <-chan struct{}) (string, error) {
	if err := app.RequestFrom(ctx).ReportProgress(ctx, 1, 2, "half"); err != nil {
		return "", err
	}
	select {
	case <-release:
		return "slow done", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// recordingStore records what the extension hands a store: the tasks it
// creates, and the largest state an Update carries.
type recordingStore struct {
	ports.TaskStore
	mu       sync.Mutex
	created  map[string]ports.Task
	maxState int
}

func (s *recordingStore) Create(ctx context.Context, t ports.Task) (ports.Task, error) {
	got, err := s.TaskStore.Create(ctx, t)
	if err == nil {
		s.mu.Lock()
		if s.created == nil {
			s.created = map[string]ports.Task{}
		}
		s.created[got.ID] = got
		s.mu.Unlock()
	}
	return got, err
}

func (s *recordingStore) Update(ctx context.Context, id, owner string, u ports.TaskUpdate) (ports.Task, error) {
	s.mu.Lock()
	s.maxState = max(s.maxState, len(u.State))
	s.mu.Unlock()
	return s.TaskStore.Update(ctx, id, owner, u)
}

// stored reads a task the extension created as the store keeps it.
func (s *recordingStore) stored(t *testing.T, id string) ports.Task {
	t.Helper()
	s.mu.Lock()
	c, ok := s.created[id]
	s.mu.Unlock()
	if !ok {
		t.Fatalf("task %s was not created through the store", id)
	}
	got, err := s.TaskStore.Get(context.Background(), id, c.Owner)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A task keeps what a rerun needs, not the client's _meta: a call padded
// with 1 MiB of _meta leaves a small state in the store, and its progress
// and the renewals of its claim write no state.
func TestTaskStateKeepsNoMeta(t *testing.T) {
	rec := &recordingStore{TaskStore: memory.NewTaskStore(memory.TaskStoreOptions{})}
	release := make(chan struct{})
	x := tasks.New(tasks.Options{Store: rec, Lease: 60 * time.Millisecond, Tools: map[string]tasks.Support{"slow": tasks.Optional}})
	t.Cleanup(func() { close(release); _ = x.Shutdown(context.Background()) })
	srv := hexmcptestServer(t, x, hexmcp.Visibility{}, wireTools(release))
	w := newWire(t, serveHTTP(t, srv, nil), "127.0.0.2")
	a := w.call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}, "_meta": map[string]any{"pad": strings.Repeat("x", 1<<20)}})
	if !isTask(t, a) {
		t.Fatalf("tools/call: %s", a.result)
	}
	id := a.task().TaskID
	// The progress message is written by the run's supervisor, which
	// renews the claim as well.
	w.await(id, "the progress message", func(v taskView) bool { return v.StatusMessage != "" })
	if st := rec.stored(t, id).State; len(st) > 4<<10 {
		t.Fatalf("the store keeps %d bytes of state for a call of no arguments: the client's _meta", len(st))
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.maxState > 4<<10 {
		t.Fatalf("an update wrote %d bytes of state while the task ran (progress, claim renewals)", rec.maxState)
	}
}

// netInput is how many bytes Redis has received.
func netInput(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_net_input_bytes:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("INFO stats without total_net_input_bytes")
	return 0
}

// On Redis a task keeps its arguments (a rerun needs them) and not the
// client's _meta, and renewing its claim sends Redis a few bytes, not the
// task's state: a task with 512 KiB of arguments, claimed for 60 ms and
// renewed every 20 ms, costs Redis a few KiB over half a second.
func TestRedisTaskRenewalSendsNoState(t *testing.T) {
	rs := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { c.Close() })
	release := make(chan struct{})
	x := tasks.New(tasks.Options{Store: mcpredis.NewTaskStore(c, mcpredis.TaskStoreOptions{Prefix: "renew:"}), Lease: 60 * time.Millisecond,
		Tools: map[string]tasks.Support{"slow": tasks.Optional}})
	t.Cleanup(func() { close(release); _ = x.Shutdown(context.Background()) })
	srv := hexmcptestServer(t, x, hexmcp.Visibility{}, wireTools(release))
	w := newWire(t, serveHTTP(t, srv, nil), "127.0.0.2")
	const argBytes = 512 << 10
	a := w.call("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"data": strings.Repeat("d", argBytes)},
		"_meta": map[string]any{"pad": strings.Repeat("x", 1<<20)}})
	if !isTask(t, a) {
		t.Fatalf("tools/call: %s", a.result)
	}
	id := a.task().TaskID
	w.await(id, "the progress message", func(v taskView) bool { return v.StatusMessage != "" })

	fields, err := c.HGetAll(context.Background(), "renew:task:"+id).Result()
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, v := range fields {
		kept += len(v)
	}
	if kept < argBytes || kept > argBytes+16<<10 {
		t.Fatalf("Redis keeps %d bytes of a task with %d bytes of arguments and 1 MiB of _meta", kept, argBytes)
	}

	before := netInput(t, c)
	time.Sleep(500 * time.Millisecond) // about 25 renewals
	if got := netInput(t, c) - before; got > 64<<10 {
		t.Fatalf("Redis received %d bytes while the task ran for half a second: its renewals send its state", got)
	}
}

// hexmcptestServer serves tools with the extension x and the visibility
// vis.
func hexmcptestServer(t *testing.T, x *tasks.Tasks, vis hexmcp.Visibility, tools []hexmcp.Tool) *hexmcp.Server {
	t.Helper()
	srv, err := hexmcp.New(hexmcp.Options{Extensions: []app.Extension{x.Extension()}, Tools: tools, Visibility: vis})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// The tasks of one client are bounded in bytes, whatever their status: a
// client whose tasks wait for input with 3 MiB of arguments each holds at
// most the store's per-client share (16 MiB by default); its further
// calls run synchronously, and another client still gets tasks.
func TestTaskBytesBoundedPerClient(t *testing.T) {
	x := tasks.New(tasks.Options{Tools: map[string]tasks.Support{"hold": tasks.Optional}})
	t.Cleanup(func() { _ = x.Shutdown(context.Background()) })
	url := serveHTTP(t, hexmcptestServer(t, x, hexmcp.Visibility{}, wireTools(nil)), nil)
	w := newWire(t, url, "127.0.0.2")
	data := strings.Repeat("x", 3<<20)
	held := 0
	for range 8 {
		a := w.callTool("hold", map[string]any{"data": data})
		if isTask(t, a) {
			held++
			w.await(a.task().TaskID, "input_required", func(v taskView) bool { return v.Status == "input_required" })
		}
	}
	if held*(3<<20) > 16<<20 {
		t.Fatalf("one client holds %d tasks of 3 MiB each", held)
	}
	if !isTask(t, newWire(t, url, "127.0.0.3").callTool("hold", map[string]any{"data": data})) {
		t.Fatal("another client gets no task")
	}
}

// Owners and quotas are clients: stateless clients from different
// addresses neither share a quota nor see each other's tasks, and one
// address's sessions share one quota (each session still sees only its
// own tasks).
func TestTaskOwnersAreClients(t *testing.T) {
	store := memory.NewTaskStore(memory.TaskStoreOptions{MaxTasks: 50, MaxTasksPerClient: 3})
	x := tasks.New(tasks.Options{Store: store, Tools: map[string]tasks.Support{"job": tasks.Optional}})
	t.Cleanup(func() { _ = x.Shutdown(context.Background()) })
	url := serveHTTP(t, hexmcptestServer(t, x, hexmcp.Visibility{}, wireTools(nil)), nil)

	a, b := newWire(t, url, "127.0.0.2"), newWire(t, url, "127.0.0.3")
	var first string
	for i := range 3 {
		ans := a.callTool("job", nil)
		if !isTask(t, ans) {
			t.Fatalf("call %d of the first client: %s, want a task", i, ans.result)
		}
		if first == "" {
			first = ans.task().TaskID
		}
	}
	if isTask(t, a.callTool("job", nil)) {
		t.Fatal("a client got a task past its quota")
	}
	if ans := b.callTool("job", nil); !isTask(t, ans) {
		t.Fatalf("a client from another address got %s, not a task: it shares a stranger's quota", ans.result)
	}
	if ans := b.getTask(first); ans.code() != domain.CodeInvalidParams {
		t.Fatalf("tasks/get of another client's task: %+v %s, want -32602", ans.err, ans.result)
	}
	if ans := b.call("tasks/cancel", map[string]any{"taskId": first}); ans.code() != domain.CodeInvalidParams {
		t.Fatalf("tasks/cancel of another client's task: %+v %s, want -32602", ans.err, ans.result)
	}
	if ans := a.getTask(first); ans.err != nil || ans.task().TaskID != first {
		t.Fatalf("tasks/get of its own task: %+v %s", ans.err, ans.result)
	}

	// One address, three sessions: one quota; each session sees its own
	// tasks only.
	type made struct {
		by *wire
		id string
	}
	var sessions []*wire
	var held []made
	for range 3 {
		s := newWire(t, url, "127.0.0.4")
		s.open()
		sessions = append(sessions, s)
		for range 2 {
			if ans := s.callTool("job", nil); isTask(t, ans) {
				held = append(held, made{s, ans.task().TaskID})
			}
		}
	}
	if len(held) > 3 {
		t.Fatalf("one address holds %d tasks through three sessions, past its quota of 3", len(held))
	}
	for _, m := range held {
		for _, s := range sessions {
			if ans := s.getTask(m.id); (s == m.by) != (ans.err == nil) {
				t.Fatalf("tasks/get through its session (%v): %+v %s", s == m.by, ans.err, ans.result)
			}
		}
	}
}

// A tool is looked up as the caller sees it before a task is made: a
// hidden task tool is unknown (-32602), as any unknown name, whether or
// not the client declared the extension; a tool whose scopes the caller
// lacks is refused with the step-up challenge (403), or unknown under
// HideUnauthorized.
func TestTaskToolLookedUpFirst(t *testing.T) {
	const prm = "https://mcp.example/.well-known/oauth-protected-resource/mcp"
	tokens := mcphttp.StaticTokens{
		"reader": {Subject: "r", Scopes: []string{"files:read"}},
		"writer": {Subject: "w", Scopes: []string{"files:read", "files:write"}},
	}
	quick := func(name string, opts ...hexmcp.ToolOption) hexmcp.Tool {
		return hexmcp.NewTool(func() string { return name + " done" }, append(opts, hexmcp.WithName(name))...)
	}
	for _, hide := range []bool{false, true} {
		t.Run("HideUnauthorized="+strconv.FormatBool(hide), func(t *testing.T) {
			vis := hexmcp.Visibility{Tool: func(_ context.Context, _ *hexmcp.Viewer, tool *domain.Tool) bool {
				return tool.Name != "secret" && tool.Name != "secretRequired"
			}}
			if hide {
				vis = hexmcp.HideUnauthorized(vis)
			}
			x := tasks.New(tasks.Options{Tools: map[string]tasks.Support{"secret": tasks.Optional, "secretRequired": tasks.Required, "write": tasks.Optional}})
			t.Cleanup(func() { _ = x.Shutdown(context.Background()) })
			srv := hexmcptestServer(t, x, vis, []hexmcp.Tool{quick("secret"), quick("secretRequired"), quick("write", hexmcp.WithScopes("files:write"))})
			url := serveHTTP(t, srv, mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{ResourceMetadataURL: prm, Logger: slog.New(slog.DiscardHandler)}))

			reader := newWire(t, url, "127.0.0.2")
			reader.token = "reader"
			plain := newWire(t, url, "127.0.0.2")
			plain.token, plain.declare = "reader", false
			unknown := reader.callTool("nosuch", nil)
			if unknown.code() != domain.CodeInvalidParams || unknown.err.Message != "Unknown tool: nosuch" {
				t.Fatalf("unknown tool: %d %+v", unknown.status, unknown.err)
			}
			for _, c := range []struct {
				w    *wire
				name string
			}{{reader, "secret"}, {reader, "secretRequired"}, {plain, "secretRequired"}} {
				got := c.w.callTool(c.name, nil)
				if got.status != unknown.status || got.code() != domain.CodeInvalidParams || got.err.Message != "Unknown tool: "+c.name {
					t.Fatalf("hidden task tool %s (extension declared: %v): %d %+v %s, want it answered as unknown", c.name, c.w.declare, got.status, got.err, got.result)
				}
			}
			got := reader.callTool("write", nil)
			switch {
			case hide && (got.code() != domain.CodeInvalidParams || got.err.Message != "Unknown tool: write"):
				t.Fatalf("scoped task tool hidden from a reader: %d %+v %s, want it unknown", got.status, got.err, got.result)
			case !hide && (got.status != http.StatusForbidden || !strings.Contains(got.header.Get("WWW-Authenticate"), `error="insufficient_scope"`) ||
				!strings.Contains(got.header.Get("WWW-Authenticate"), `scope="files:write"`)):
				t.Fatalf("scoped task tool called by a reader: %d %q %+v %s, want 403 with the scope challenge", got.status, got.header.Get("WWW-Authenticate"), got.err, got.result)
			}
			writer := newWire(t, url, "127.0.0.2")
			writer.token = "writer"
			if !isTask(t, writer.callTool("write", nil)) {
				t.Fatal("the scoped tool called with its scope is no task")
			}
		})
	}
}

// What the runs of a process hold is bounded in bytes (their params and
// the client capabilities they run with): a client that pads its
// clientCapabilities with 1 MiB gets tasks until the runs hold
// MaxRunningBytes, then its calls run synchronously.
func TestRunningBytesBounded(t *testing.T) {
	release := make(chan struct{})
	x := tasks.New(tasks.Options{MaxRunningBytes: 100 << 10, Tools: map[string]tasks.Support{"slow": tasks.Optional, "job": tasks.Optional}})
	t.Cleanup(func() { close(release); _ = x.Shutdown(context.Background()) })
	url := serveHTTP(t, hexmcptestServer(t, x, hexmcp.Visibility{}, wireTools(release)), nil)
	w := newWire(t, url, "127.0.0.2")
	// 40 KiB of capabilities: within what the engine keeps of a client's
	// declarations (app.DefaultMaxClientDeclarationBytes).
	pad := strings.Repeat("x", 40<<10)
	call := func(tool string) answer {
		return w.call("tools/call", map[string]any{"name": tool, "arguments": map[string]any{},
			"_meta": map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
				"extensions": map[string]any{tasks.ID: map[string]any{}}, "pad": pad}}})
	}
	for i := range 2 {
		if a := call("slow"); !isTask(t, a) {
			t.Fatalf("call %d: %s, want a task", i, a.result)
		}
	}
	// The two runs (until release) hold over 80 KiB: a third is past the
	// 100 KiB bound.
	if a := call("job"); a.err != nil || a.task().ResultType != "complete" {
		t.Fatalf("a call past the bound: %+v %s, want it answered synchronously", a.err, a.result)
	}
}
