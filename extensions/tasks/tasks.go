// Package tasks serves the MCP tasks extension (SEP-2663,
// "io.modelcontextprotocol/tasks"): a tools/call of a task-supporting tool
// from a client that declared the extension is answered at once with a
// CreateTaskResult while the tool runs in the background; the client polls
// it with tasks/get (the result or error inlined once terminal), answers
// its questions with tasks/update and stops it with tasks/cancel. Tasks
// live in a [ports.TaskStore]: on a shared store (mcpredis.NewTaskStore)
// every instance of a server serves every task.
//
//	t := tasks.New(tasks.Options{Tools: map[string]tasks.Support{"build": tasks.Optional}})
//	srv, err := hexmcp.New(hexmcp.Options{..., Extensions: []hexmcp.Extension{t.Extension()}})
//
// A handler needs no change to run as a task: it is the same function,
// run in the background with its own context (cancelled by tasks/cancel).
// What it asks the client ([app.RequestContext.Ask], Elicit, …) the task
// puts in its inputRequests (status input_required); when tasks/update has
// brought every answer, the handler runs again from the start with the
// answers, as a stateless-era handler does on the client's retry, at
// whichever instance the last answer reached. Its progress reports
// ([app.RequestContext.ReportProgress]) become the task's status message;
// its log messages ([app.RequestContext.Log]), which the extension has no
// channel for, go to the server's log ([Options.Logger]) with the task's
// id.
// A handler that asks the client before it decides to go on as a task
// (the spec's "multi round-trip requests before task creation") is listed
// in [Options.Deferred] and calls [Detach] at that point.
//
// A working task is claimed by the instance running it for
// [Options.Lease], renewed while it runs ([ports.TaskStore.Claim]: a few
// bytes, the task's state neither read nor written). If that instance
// dies, the next tasks/get of the task at another instance finds the
// claim expired and runs the handler again from the start: a task is run
// at least once, so its handler must be safe to run again (as a handler
// asking for input already is). What the store keeps to run it again is
// the tool's name, its arguments and the answers collected (and the
// call's requestState), never the rest of the request (its _meta); a run
// holds no bytes of the request it came from.
//
// A task belongs to its client: the authenticated principal, else the
// session, else the client's address (app.Request.ClientKey); any other
// client's tasks/get, tasks/update, tasks/cancel and listen find no such
// task. It counts against the store's per-client bounds (tasks and bytes,
// whatever its status, for its TTL) by the client across its sessions
// and connections, so that no client fills the store; past a bound the
// call runs synchronously, which the extension allows.
//
// A task-supporting tool is looked up as its caller sees it before a task
// is made ([app.Engine.CheckToolCall]): a hidden tool is unknown (-32602),
// a tool whose scopes the caller lacks is refused with the scope
// challenge, exactly as without the extension.
//
// A subscriptions/listen stream that lists a task in
// notifications.taskIds is sent notifications/tasks (the DetailedTask
// tasks/get would answer) at every change of status or status message,
// from whichever instance makes it.
//
// Not yet: tasks for requests other than tools/call.
package tasks

import (
	"cmp"
	"context"
	"crypto/rand"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/deflog"
	"github.com/hexmcp/hexmcp/internal/memstore"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// ID is the extension's identifier.
const ID = "io.modelcontextprotocol/tasks"

// Support says whether a tool may run as a task.
type Support int

const (
	// Forbidden (the zero value): the tool always runs synchronously.
	Forbidden Support = iota
	// Optional: the tool runs as a task when the client declared the
	// extension on the request, synchronously otherwise.
	Optional
	// Required: the tool runs only as a task; a client that did not
	// declare the extension is answered -32021.
	Required
)

// Defaults of [Options].
const (
	// defaultMaxRunning bounds the tasks one Tasks runs at once.
	defaultMaxRunning = 1024
	// defaultMaxRunningBytes bounds what the runs of one Tasks hold
	// together: their params (the tool's arguments and answers) and the
	// client capabilities they run with.
	defaultMaxRunningBytes = 64 << 20
	// defaultLease is how long an instance's claim on a working task
	// lasts unless renewed (it is renewed every third of it).
	defaultLease = 15 * time.Second
	// maxStatusMessage bounds the status message made of a progress
	// report, in bytes.
	maxStatusMessage = 1024
	// progressEvery bounds how often progress is written to the store.
	progressEvery = 250 * time.Millisecond
	// conflictRetries bounds the retries of a conditional update that
	// lost a race.
	conflictRetries = 8
	// MaxTaskIDBytes bounds the taskId of a request: a longer one is
	// unknown (-32602) without a store lookup.
	MaxTaskIDBytes = 256
)

// Options configures [New]. Zero fields take their defaults.
type Options struct {
	// Store keeps the tasks; nil: the engine's shared task store
	// (app.Options.Shared.Tasks: mcpredis.Share makes one on Redis), else
	// a memory.NewTaskStore with its defaults (the tasks of this process
	// only).
	Store ports.TaskStore
	// Tools says which tools may run as tasks, by name; a tool absent is
	// Forbidden.
	Tools map[string]Support
	// Deferred names tools of Tools whose handler decides when the call
	// becomes a task: the call runs synchronously (asking the client for
	// input by input_required results, as any call does) until the
	// handler calls [Detach], from where it goes on as a task.
	Deferred map[string]bool
	// TTL is the TTL asked for each task (0: the store's default, which
	// also caps it).
	TTL time.Duration
	// PollInterval is the suggested poll interval (pollIntervalMs);
	// 0: none suggested.
	PollInterval time.Duration
	// MaxRunning bounds the tasks running at once in this process
	// (default 1024); past it a task-supporting call runs
	// synchronously instead, which the extension allows.
	MaxRunning int
	// MaxRunningBytes bounds, in bytes, what the tasks running at once in
	// this process hold: each run its params (the tool's name, arguments
	// and answers) and the client capabilities it runs with
	// (default 64 MiB). Past it a task-supporting call runs
	// synchronously instead, and a task ready to run again waits for a
	// later tasks/get.
	MaxRunningBytes int
	// Lease is how long this instance's claim on a task it runs lasts
	// without renewal (default 15 seconds); it renews the claim every third of
	// it, and checks then whether the task was cancelled through another
	// instance. Another instance runs a working task again once its claim
	// has expired.
	Lease time.Duration
	// Logger receives what goes wrong in the background (a store that
	// cannot be written) and what task handlers log; nil: the logger of
	// the server the extension is registered with (hexmcp.Options.Logger),
	// or slog's text format on standard error before it is registered.
	Logger ports.Logger
}

// Tasks serves the extension: register its [Tasks.Extension] with the
// engine.
type Tasks struct {
	opts     Options
	log      ports.Logger
	instance string // names this process in the claims it makes

	engine atomic.Pointer[app.Engine] // for notifications/tasks

	storeMu sync.Mutex // guards opts.Store, decided at attach or first use

	mu           sync.Mutex
	running      map[string]*run // task id → its run here
	runningBytes int             // what the runs hold (runBytes)
	closed       bool
	wg           sync.WaitGroup
}

// run is one background run of a task.
type run struct {
	cancel   context.CancelCauseFunc
	progress chan string // the latest status message, at most one waiting
	bytes    int         // what it holds (runBytes)
}

// runBytes is what a run of req holds: its params and the client
// capabilities it runs with.
func runBytes(req *app.Request) int { return len(req.Params) + len(req.ClientCapabilities) }

// New returns the extension configured by opts.
func New(opts Options) *Tasks {
	opts.MaxRunning = cmp.Or(max(opts.MaxRunning, 0), defaultMaxRunning)
	opts.MaxRunningBytes = cmp.Or(max(opts.MaxRunningBytes, 0), defaultMaxRunningBytes)
	opts.Lease = cmp.Or(max(opts.Lease, 0), defaultLease)
	t := &Tasks{opts: opts, log: opts.Logger, instance: rand.Text(), running: make(map[string]*run)}
	if t.log == nil {
		t.log = deflog.New()
	}
	return t
}

// Wait blocks until every background run has ended (for tests).
func (t *Tasks) Wait() { t.wg.Wait() }

// Shutdown stops the background runs: no new task starts here, every run
// is cancelled and its claim released, so that another instance runs the
// task again at its next tasks/get; it waits for the runs to end until
// ctx is done.
func (t *Tasks) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	t.closed = true
	for _, r := range t.running {
		r.cancel(errShutdown)
	}
	t.mu.Unlock()
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("hexmcp: tasks: shutdown: %w", ctx.Err())
	}
}

// Close is Shutdown with a 10 s bound; the engine calls it from its
// Close.
func (t *Tasks) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return t.Shutdown(ctx)
}

// Extension returns the extension to put in app.Options.Extensions: the
// capability, the methods tasks/get, tasks/update and tasks/cancel, the
// middleware that runs task-supporting tools as tasks, and Close.
func (t *Tasks) Extension() app.Extension {
	return app.Extension{
		ID:       ID,
		Settings: map[string]any{},
		Methods: []app.ExtensionMethod{
			// Each reads (and may write) the store: apart from the
			// connection's reader.
			{Name: "tasks/get", Call: true, Serve: t.serveGet},
			{Name: "tasks/cancel", Call: true, Serve: t.serveCancel},
			{Name: "tasks/update", Call: true, Serve: t.serveUpdate},
		},
		Middleware: t.middleware,
		Close:      t.Close,
		Attach:     t.attach,
		Listen:     []app.ListenTopic{{Name: "taskIds", Accept: t.acceptListen}},
	}
}

// attach keeps the engine (for notifications/tasks) and, when Options
// named no store, takes the engine's shared one (NewEngine attaches before
// any request).
func (t *Tasks) attach(e *app.Engine) {
	t.engine.Store(e)
	if t.opts.Logger == nil {
		t.log = e.Logger()
	}
	for name, sup := range t.opts.Tools {
		if _, ok := e.LookupTool(name); !ok && sup != Forbidden {
			// Tools may be added later: a warning, not an error.
			t.log.LogAttrs(context.Background(), slog.LevelWarn, "hexmcp: tasks: Options.Tools names a tool the engine does not serve (yet)", slog.Any("tool", name))
		}
	}
	t.storeMu.Lock()
	defer t.storeMu.Unlock()
	if t.opts.Store == nil {
		t.opts.Store = e.Shared().Tasks
	}
}

// store is the task store: Options.Store, the engine's shared one, or one
// in memory (made at the first need).
func (t *Tasks) store() ports.TaskStore {
	t.storeMu.Lock()
	defer t.storeMu.Unlock()
	if t.opts.Store == nil {
		t.opts.Store = memstore.NewTaskStore(memstore.TaskStoreOptions{})
	}
	return t.opts.Store
}

// acceptListen admits the taskIds of a subscriptions/listen request: -32021
// from a client that did not declare the extension; of the ids, those of
// the client's own live tasks.
func (t *Tasks) acceptListen(ctx context.Context, req *app.Request, ids []string) ([]string, error) {
	if !declared(req) {
		return nil, missingCapability()
	}
	own := owner(req)
	var keep []string
	for _, id := range ids {
		if _, err := t.store().Get(ctx, id, own); err == nil {
			keep = append(keep, id)
		} else if !errors.Is(err, ports.ErrTaskNotFound) {
			return nil, fmt.Errorf("hexmcp: tasks: reading a task to listen to: %w", err)
		}
	}
	return keep, nil
}

// notify sends notifications/tasks with the task as it now is (the
// DetailedTask tasks/get would answer) to the listen streams, on every
// instance, that listen to it.
func (t *Tasks) notify(ctx context.Context, task ports.Task) {
	e := t.engine.Load()
	if e == nil {
		return
	}
	b, err := encodeTask(task, "", true)
	if err == nil {
		_, err = e.NotifyTopic("taskIds", task.ID, "notifications/tasks", b)
	}
	if err != nil {
		t.log.LogAttrs(ctx, slog.LevelWarn, "hexmcp: tasks: a status notification was not sent", slog.Any("task", task.ID), slog.Any("error", err))
	}
}

// The causes of a run's end, and errNotClaimed: the task is gone, has
// ended, or another run (here or at another instance) runs it.
var (
	errShutdown   = errors.New("hexmcp: tasks: the server is shutting down")
	errCancelled  = errors.New("hexmcp: tasks: cancelled by the client")
	errNotClaimed = errors.New("hexmcp: tasks: this instance no longer runs the task")
)

// state is what the store keeps of a live task for the server
// (ports.Task.State): what a run of the call needs, and nothing of the
// client's _meta. Who runs the task, until when, is the store's claim
// (ports.Task.Runner), kept and renewed apart.
type state struct {
	// Name and Arguments are the tools/call's.
	Name      string             `json:"name"`
	Arguments stdjson.RawMessage `json:"arguments,omitempty"`
	// Answers are the client's answers the call has: those of its
	// inputResponses, those it had before it became a task (Detach), and
	// those tasks/update brought.
	Answers map[string]stdjson.RawMessage `json:"answers,omitempty"`
	// RequestState is the call's requestState, as the client sent it
	// (the answers of its earlier rounds, signed).
	RequestState stdjson.RawMessage `json:"requestState,omitempty"`
}

// newState is the state of a task made of the tools/call req, with the
// answers it had before it became a task. Params the engine accepted
// decode.
func newState(req *app.Request, answers map[string]stdjson.RawMessage) (state, error) {
	var p struct {
		Name           string                        `json:"name"`
		Arguments      stdjson.RawMessage            `json:"arguments"`
		InputResponses map[string]stdjson.RawMessage `json:"inputResponses"`
		RequestState   stdjson.RawMessage            `json:"requestState"`
	}
	if err := stdjson.Unmarshal(req.Params, &p); err != nil {
		return state{}, fmt.Errorf("hexmcp: tasks: the call's params do not decode: %w", err)
	}
	st := state{Name: p.Name, Arguments: p.Arguments, Answers: p.InputResponses, RequestState: p.RequestState}
	if len(answers) > 0 && st.Answers == nil {
		st.Answers = make(map[string]stdjson.RawMessage, len(answers))
	}
	maps.Copy(st.Answers, answers)
	return st, nil
}

func decodeState(task ports.Task) (state, error) {
	var st state
	if err := stdjson.Unmarshal(task.State, &st); err != nil || st.Name == "" {
		return state{}, fmt.Errorf("hexmcp: tasks: task %s has no usable state", task.ID)
	}
	return st, nil
}

func (st state) encode() stdjson.RawMessage {
	b, _ := stdjson.Marshal(st) // strings and raw JSON always encode
	return b
}

// callParams are the params of a run of the task: its tool, arguments,
// every answer collected so far (inputResponses) and requestState.
func (st state) callParams() (stdjson.RawMessage, error) {
	p := map[string]any{"name": st.Name}
	if len(st.Arguments) > 0 {
		p["arguments"] = st.Arguments
	}
	if len(st.Answers) > 0 {
		p["inputResponses"] = st.Answers
	}
	if len(st.RequestState) > 0 {
		p["requestState"] = st.RequestState
	}
	b, err := stdjson.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("hexmcp: tasks: encoding a run's params: %w", err)
	}
	return b, nil
}

type ctxKey int

const (
	ownerKey ctxKey = iota
	resumeKey
	detachKey
)

// resumeFunc starts a run of a task at this instance, from the request
// that found it ready (its tasks/update or tasks/get).
type resumeFunc func(task ports.Task, st state)

// owner is who a request's tasks belong to (who may see them): the
// authenticated principal's subject, else the session (a session id is a
// secret of its client), else the client the transport names
// (app.Request.ClientKey: the peer's address), else "sid:" (stdio: one
// client). Two stateless clients, or two WebSocket connections, from
// different addresses never share an owner.
func owner(req *app.Request) string {
	if p := req.Transport.Principal; p != nil && p.Subject != "" {
		return "sub:" + p.Subject
	}
	if req.SessionID != "" {
		return "sid:" + req.SessionID
	}
	if k := req.ClientKey(); k != "" {
		return "client:" + k
	}
	return "sid:"
}

// client is who a request's tasks count against for the store's
// per-client bounds: the client across its sessions and connections
// (app.Request.ClientKey), else (stdio) the owner.
func client(req *app.Request) string {
	if k := req.ClientKey(); k != "" {
		return k
	}
	return owner(req)
}

// declared reports whether the client declared the extension for the
// request: in the request's _meta clientCapabilities (stateless era) or
// at initialize (handshake era).
func declared(req *app.Request) bool {
	var caps struct {
		Extensions map[string]stdjson.RawMessage `json:"extensions"`
	}
	if len(req.ClientCapabilities) == 0 || stdjson.Unmarshal(req.ClientCapabilities, &caps) != nil {
		return false
	}
	v, ok := caps.Extensions[ID]
	return ok && len(v) > 0 && v[0] == '{'
}

func missingCapability() error {
	return &domain.ProtocolError{Code: domain.CodeMissingClientCapability,
		Message: "Missing required client capability: extensions." + ID,
		Data:    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ID: map[string]any{}}}}}
}

// middleware gates the task methods on the extension's negotiation and
// runs task-supporting tools as tasks.
func (t *Tasks) middleware(next app.MethodHandler) app.MethodHandler {
	return func(ctx context.Context, req *app.Request) (stdjson.RawMessage, error) {
		switch req.Method {
		case "tasks/get", "tasks/cancel", "tasks/update":
			if !declared(req) {
				return nil, missingCapability()
			}
			if err := checkName(req); err != nil {
				return nil, err
			}
			ctx = context.WithValue(ctx, ownerKey, owner(req))
			ctx = context.WithValue(ctx, resumeKey, resumeFunc(func(task ports.Task, st state) {
				t.resume(ctx, req, next, task, st)
			}))
			return next(ctx, req)
		case "tools/call":
			sup := t.opts.Tools[req.Name]
			if sup == Forbidden {
				return next(ctx, req)
			}
			// The tool as the caller sees it, before anything else: a
			// hidden one is unknown, a scoped one refused, as without
			// the extension.
			if e := t.engine.Load(); e != nil {
				if err := e.CheckToolCall(ctx, req); err != nil {
					return nil, err
				}
			}
			if !declared(req) {
				if sup == Required {
					return nil, missingCapability()
				}
				return next(ctx, req)
			}
			if t.opts.Deferred[req.Name] {
				return t.deferred(ctx, req, next)
			}
			return t.start(ctx, req, next, nil)
		}
		return next(ctx, req)
	}
}

// checkName refuses a task method whose Mcp-Name header (SEP-2663's
// routing header, when the transport has headers and the client sent it)
// is not its params.taskId: -32020.
func checkName(req *app.Request) error {
	names, ok := req.Transport.Header["Mcp-Name"]
	if !ok {
		return nil
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = stdjson.Unmarshal(req.Params, &p)
	if len(names) != 1 || names[0] != p.TaskID {
		return &domain.ProtocolError{Code: domain.CodeHeaderMismatch, Message: "Header mismatch: Mcp-Name is not params.taskId"}
	}
	return nil
}

// detachFlag is how Detach tells the middleware that the handler asked
// to go on as a task.
type detachFlag struct {
	t       *Tasks
	asked   bool
	answers map[string]stdjson.RawMessage // the client's answers before Detach
}

// errDetached is the error Detach returns to end the synchronous run. It
// is a protocol error so that the engine does not log it; the middleware
// never sends it.
var errDetached = &domain.ProtocolError{Code: domain.CodeInternalError, Message: "hexmcp: tasks: the call goes on as a task"}

// Detach makes the rest of a tools/call run as a task, for a tool listed
// in [Options.Deferred]: in the call's synchronous run (the client
// declared the extension) it returns an error the handler must return at
// once; the client is then answered with a CreateTaskResult, and the
// handler runs again from the start, with the same arguments and answers,
// as the task, where Detach returns nil. Anywhere else (the run is the
// task already, the tool is not deferred, the client did not declare the
// extension, this process runs as many tasks as it may) it returns nil
// and the call goes on synchronously.
//
//	name, err := rc.Elicit(ctx, "user_name", form) // answered before the task
//	if err != nil {
//		return "", err
//	}
//	if err := tasks.Detach(ctx); err != nil {
//		return "", err
//	}
//	return longWork(ctx, name) // runs as the task
func Detach(ctx context.Context) error {
	f, ok := ctx.Value(detachKey).(*detachFlag)
	if !ok || f == nil || !f.t.room() {
		return nil
	}
	f.asked = true
	f.answers = app.RequestFrom(ctx).Answers()
	return errDetached
}

// deferred runs a deferred tool's call synchronously until its handler
// calls Detach, then as a task.
func (t *Tasks) deferred(ctx context.Context, req *app.Request, next app.MethodHandler) (stdjson.RawMessage, error) {
	flag := &detachFlag{t: t}
	res, err := next(context.WithValue(ctx, detachKey, flag), req)
	if !flag.asked {
		return res, err
	}
	return t.start(ctx, req.Detached(), next, flag.answers)
}

// room reports whether this process may start another task (of n
// bytes, see runBytes).
func (t *Tasks) room() bool { return t.roomFor(0) }

func (t *Tasks) roomFor(n int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fits(n)
}

// fits reports whether a run of n bytes may start. t.mu is held.
func (t *Tasks) fits(n int) bool {
	return !t.closed && len(t.running) < t.opts.MaxRunning && t.runningBytes+n <= t.opts.MaxRunningBytes
}

// start creates the task and runs the call in the background; answers
// are the client's answers the call had before it became a task. The run
// is a request of its own, made of what the store keeps of the task
// (state.callParams): it holds none of req's bytes.
func (t *Tasks) start(ctx context.Context, req *app.Request, next app.MethodHandler, answers map[string]stdjson.RawMessage) (stdjson.RawMessage, error) {
	if !t.room() {
		return next(ctx, req) // the extension lets a server answer synchronously
	}
	st, err := newState(req, answers)
	var run *app.Request
	if err == nil {
		var params stdjson.RawMessage
		if params, err = st.callParams(); err == nil {
			run, err = req.Derive("tools/call", params)
		}
	}
	if err != nil {
		t.log.LogAttrs(ctx, slog.LevelError, "hexmcp: tasks: a call cannot run as a task; it runs synchronously", slog.Any("tool", req.Name), slog.Any("error", err))
		return next(ctx, req)
	}
	if !t.roomFor(runBytes(run)) {
		return next(ctx, req) // the runs hold as much as they may
	}
	own := owner(req)
	task, err := t.store().Create(ctx, ports.Task{Owner: own, Client: client(req), Status: ports.TaskWorking, TTL: t.opts.TTL,
		PollInterval: t.opts.PollInterval, State: st.encode()})
	if err != nil {
		// The store is full (for this client, or in all), the call is
		// more than it keeps, or it is unreachable: a task could not be
		// polled, so the call runs synchronously, which the extension
		// allows.
		level := slog.LevelWarn
		if errors.Is(err, ports.ErrTooManyTasks) || errors.Is(err, ports.ErrTaskTooLarge) {
			level = slog.LevelDebug // a client's doing, not the server's trouble
		}
		t.log.LogAttrs(ctx, level, "hexmcp: tasks: a task cannot be created; the call runs synchronously", slog.Any("tool", req.Name), slog.Any("error", err))
		return next(ctx, req)
	}
	claimed, err := t.store().Claim(ctx, task.ID, own, ports.TaskClaim{Runner: t.instance, Lease: t.opts.Lease})
	if err != nil {
		// Nobody runs it: the next tasks/get, at any instance, does.
		t.log.LogAttrs(ctx, slog.LevelWarn, "hexmcp: tasks: a new task cannot be claimed; it runs at its next tasks/get", slog.Any("task", task.ID), slog.Any("error", err))
		return encodeTask(task, "task", false)
	}
	if !t.launch(ctx, run, next, claimed) {
		// Closed meanwhile: release the claim for another instance.
		t.release(context.WithoutCancel(ctx), task.ID, own)
	}
	return encodeTask(task, "task", false)
}

// resume runs a task again at this instance, which has claimed it, from
// the request that found it ready to run (the tasks/update that brought
// its last answer, or the tasks/get that found its claim expired).
func (t *Tasks) resume(ctx context.Context, req *app.Request, next app.MethodHandler, task ports.Task, st state) {
	params, err := st.callParams()
	var d *app.Request
	if err == nil {
		d, err = req.Derive("tools/call", params)
	}
	if err != nil {
		t.fail(context.WithoutCancel(ctx), task, err)
		return
	}
	if !t.launch(ctx, d, next, task) {
		t.release(context.WithoutCancel(ctx), task.ID, task.Owner)
	}
}

// launch runs req (detached) in the background as task; false when this
// process is closed or full.
func (t *Tasks) launch(ctx context.Context, req *app.Request, next app.MethodHandler, task ports.Task) bool {
	runCtx, cancel := context.WithCancelCause(context.WithValue(context.WithoutCancel(ctx), detachKey, (*detachFlag)(nil)))
	r := &run{cancel: cancel, progress: make(chan string, 1), bytes: runBytes(req)}
	t.mu.Lock()
	if !t.fits(r.bytes) {
		t.mu.Unlock()
		cancel(nil)
		return false
	}
	if old := t.running[task.ID]; old != nil {
		old.cancel(errNotClaimed)
	}
	t.running[task.ID] = r
	t.runningBytes += r.bytes
	t.wg.Add(2)
	t.mu.Unlock()
	superviseCtx, stopSupervise := context.WithCancel(runCtx)
	superviseDone := make(chan struct{})
	go func() {
		defer t.wg.Done()
		defer close(superviseDone)
		t.supervise(superviseCtx, r, task.ID, task.Owner, task.StatusMessage)
	}()
	go func() {
		defer t.wg.Done()
		defer func() {
			t.mu.Lock()
			if t.running[task.ID] == r {
				delete(t.running, task.ID)
			}
			t.runningBytes -= r.bytes
			t.mu.Unlock()
			cancel(nil)
		}()
		req = req.WithProgress(func(_ context.Context, progress, total float64, message string) {
			msg := progressMessage(progress, total, message)
			select {
			case <-r.progress: // the newest message replaces a waiting one
			default:
			}
			r.progress <- msg
		}).WithLog(func(ctx context.Context, level domain.LogLevel, logger string, data any) {
			// A task's log messages reach no client (the extension has
			// no channel for them): they go to the server's log.
			t.log.LogAttrs(ctx, serverLevel(level), "hexmcp: tasks: a task's handler logged", slog.Any("task", task.ID),
				slog.Any("logger", logger), slog.Any("level", string(level)), slog.Any("data", data))
		})
		res, err := next(runCtx, req)
		stopSupervise()
		<-superviseDone
		t.finish(context.WithoutCancel(ctx), runCtx, task, res, err)
	}()
	return true
}

// serverLevel maps an MCP log level to the server log's.
func serverLevel(l domain.LogLevel) slog.Level {
	switch {
	case l.AtLeast(domain.LogError):
		return slog.LevelError
	case l.AtLeast(domain.LogWarning):
		return slog.LevelWarn
	case l.AtLeast(domain.LogInfo):
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// progressMessage is the status message of a progress report.
func progressMessage(progress, total float64, message string) string {
	n := strconv.FormatFloat(progress, 'g', -1, 64)
	if total > 0 {
		n += "/" + strconv.FormatFloat(total, 'g', -1, 64)
	}
	msg := n
	if message != "" {
		msg = message + " (" + n + ")"
	}
	// A handler's message may hold bytes that are not UTF-8: they become
	// U+FFFD (as JSON would write them), and the cut falls between runes.
	return portlimits.Cut(strings.ToValidUTF8(msg, "\uFFFD"), maxStatusMessage)
}

// notClaimed reports whether err says that this instance no longer runs
// the task: it is gone, has ended (or waits for input), or another
// instance claimed it.
func notClaimed(err error) bool {
	return errors.Is(err, ports.ErrTaskNotFound) || errors.Is(err, ports.ErrTaskTransition) || errors.Is(err, ports.ErrTaskClaimed)
}

// supervise renews the run's claim every third of the lease, writes its
// progress to the store (at most every progressEvery), and cancels the run
// when the task was cancelled (or dropped, or claimed by another instance)
// meanwhile. A renewal is the store's Claim: the task's state is neither
// read nor written.
func (t *Tasks) supervise(ctx context.Context, r *run, id, own, shown string) {
	renew := time.NewTicker(max(t.opts.Lease/3, 10*time.Millisecond))
	defer renew.Stop()
	var (
		msg       string
		haveMsg   bool
		lastWrite time.Time
		throttle  <-chan time.Time
	)
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-r.progress:
			msg, haveMsg = m, true
			if wait := progressEvery - time.Since(lastWrite); wait > 0 {
				if throttle == nil {
					throttle = time.After(wait)
				}
				continue
			}
		case <-throttle:
		case <-renew.C:
		}
		throttle = nil
		lastWrite = time.Now()
		c := ports.TaskClaim{Runner: t.instance, Lease: t.opts.Lease}
		if haveMsg && msg != shown {
			c.StatusMessage = &msg
		}
		updated, err := t.store().Claim(ctx, id, own, c)
		if errors.Is(err, ports.ErrTaskTooLarge) && c.StatusMessage != nil {
			// A message over the store's bound: the claim is renewed
			// without it.
			c.StatusMessage, haveMsg = nil, false
			updated, err = t.store().Claim(ctx, id, own, c)
		}
		switch {
		case notClaimed(err):
			r.cancel(errNotClaimed) // cancelled, dropped, or run by another instance now
			return
		case err == nil:
			if c.StatusMessage != nil {
				shown = msg
				t.notify(ctx, updated)
			}
			haveMsg = false
		case ctx.Err() == nil:
			// Redis unreachable, say: the next tick tries again.
			t.log.LogAttrs(ctx, slog.LevelError, "hexmcp: tasks: renewing a task's claim failed", slog.Any("task", id), slog.Any("error", err))
		}
	}
}

// finish writes the end of a run: input_required with the handler's
// questions, completed with its result, failed with its error; nothing
// when the run was cancelled, its claim released when the process shuts
// down.
func (t *Tasks) finish(ctx, runCtx context.Context, task ports.Task, res stdjson.RawMessage, err error) {
	switch context.Cause(runCtx) {
	case errShutdown:
		t.release(ctx, task.ID, task.Owner)
		return
	case errCancelled, errNotClaimed:
		return
	}
	u := ports.TaskUpdate{Status: ports.TaskCompleted, Result: res}
	switch {
	case err != nil || len(res) == 0:
		u = ports.TaskUpdate{Status: ports.TaskFailed, Error: errorObject(err)}
	default:
		if asked, ok := inputRequests(res); ok {
			// The questions wait for tasks/update; nobody runs the task
			// meanwhile (the store drops the claim), and its state stays.
			u = ports.TaskUpdate{Status: ports.TaskInputRequired, InputRequests: asked}
		}
	}
	t.write(ctx, task.ID, task.Owner, u)
}

// errOverBounds is the JSON-RPC error of a task whose outcome (result,
// error, questions) is more than the task store keeps.
var errOverBounds = stdjson.RawMessage(`{"code":-32603,"message":"Internal error: the task's outcome is more than the task store keeps"}`)

// write applies u to a task this instance runs, if it still does (an
// update conditional on its claim), and notifies its listeners. An
// outcome over the store's bounds (for a task, for the client, in all)
// fails the task.
func (t *Tasks) write(ctx context.Context, id, own string, u ports.TaskUpdate) {
	u.IfRunner = t.instance
	updated, err := t.store().Update(ctx, id, own, u)
	if errors.Is(err, ports.ErrTaskTooLarge) || errors.Is(err, ports.ErrTooManyTasks) {
		t.log.LogAttrs(ctx, slog.LevelWarn, "hexmcp: tasks: a task's outcome is over the task store's bounds; the task fails", slog.Any("task", id), slog.Any("error", err))
		updated, err = t.store().Update(ctx, id, own, ports.TaskUpdate{Status: ports.TaskFailed, Error: errOverBounds, IfRunner: t.instance})
	}
	switch {
	case err == nil:
		t.notify(ctx, updated)
	case !notClaimed(err):
		t.log.LogAttrs(ctx, slog.LevelError, "hexmcp: tasks: writing a task failed", slog.Any("task", id), slog.Any("error", err))
	}
}

// fail ends a task this instance claimed but cannot run.
func (t *Tasks) fail(ctx context.Context, task ports.Task, err error) {
	t.log.LogAttrs(ctx, slog.LevelError, "hexmcp: tasks: a task cannot run again", slog.Any("task", task.ID), slog.Any("error", err))
	t.write(ctx, task.ID, task.Owner, ports.TaskUpdate{Status: ports.TaskFailed, Error: errorObject(nil)})
}

// release gives up this instance's claim on a working task, so that
// another instance runs it at its next tasks/get.
func (t *Tasks) release(ctx context.Context, id, own string) {
	_, err := t.store().Claim(ctx, id, own, ports.TaskClaim{Runner: t.instance})
	if err != nil && !notClaimed(err) {
		t.log.LogAttrs(ctx, slog.LevelWarn, "hexmcp: tasks: releasing a task failed; another instance runs it once its claim expires", slog.Any("task", id), slog.Any("error", err))
	}
}

// inputRequests returns the inputRequests of an input_required result.
func inputRequests(res stdjson.RawMessage) (stdjson.RawMessage, bool) {
	var r struct {
		ResultType    string             `json:"resultType"`
		InputRequests stdjson.RawMessage `json:"inputRequests"`
	}
	if stdjson.Unmarshal(res, &r) != nil || r.ResultType != "input_required" || len(r.InputRequests) == 0 {
		return nil, false
	}
	return r.InputRequests, true
}

// errorObject is the JSON-RPC error object of err.
func errorObject(err error) stdjson.RawMessage {
	obj := map[string]any{"code": domain.CodeInternalError, "message": "Internal error"}
	var pe *domain.ProtocolError
	if errors.As(err, &pe) {
		obj = map[string]any{"code": pe.Code, "message": pe.Message}
		if pe.Data != nil {
			obj["data"] = pe.Data
		}
	}
	b, _ := stdjson.Marshal(obj)
	return b
}

// encodeTask is the wire form of a task: a CreateTaskResult (resultType
// "task") or a DetailedTask (detailed: with result, error, inputRequests).
func encodeTask(task ports.Task, resultType string, detailed bool) (stdjson.RawMessage, error) {
	m := map[string]any{
		"taskId":        task.ID,
		"status":        task.Status,
		"createdAt":     task.CreatedAt.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": task.UpdatedAt.UTC().Format(time.RFC3339Nano),
		"ttlMs":         task.TTL.Milliseconds(),
	}
	if resultType != "" {
		m["resultType"] = resultType
	}
	if task.PollInterval > 0 {
		m["pollIntervalMs"] = max(task.PollInterval.Milliseconds(), 1)
	}
	if task.StatusMessage != "" {
		m["statusMessage"] = task.StatusMessage
	}
	if detailed {
		if len(task.Result) > 0 {
			m["result"] = task.Result
		}
		if len(task.Error) > 0 {
			m["error"] = task.Error
		}
		if len(task.InputRequests) > 0 {
			m["inputRequests"] = task.InputRequests
		}
	}
	b, err := stdjson.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("hexmcp: tasks: encoding a task: %w", err)
	}
	return b, nil
}

// taskID decodes params.taskId.
func taskID(req app.ExtensionRequest) (string, error) {
	var p struct {
		TaskID *string `json:"taskId"`
	}
	if err := stdjson.Unmarshal(req.Params, &p); err != nil || p.TaskID == nil || *p.TaskID == "" {
		return "", app.InvalidParams("taskId must be a non-empty string")
	}
	if len(*p.TaskID) > MaxTaskIDBytes {
		// No task has such an id (the stores mint 26 characters): the
		// store is not asked.
		return "", app.InvalidParams("unknown taskId")
	}
	return *p.TaskID, nil
}

// target is the task a tasks/* request names and who asks for it.
func target(ctx context.Context, req app.ExtensionRequest) (id, owner string, err error) {
	if id, err = taskID(req); err != nil {
		return "", "", err
	}
	owner, ok := ctx.Value(ownerKey).(string)
	if !ok {
		return "", "", errors.New("hexmcp: tasks: the extension's middleware did not run (register Tasks.Extension)")
	}
	return id, owner, nil
}

func notFound(err error) error {
	if errors.Is(err, ports.ErrTaskNotFound) {
		return app.InvalidParams("unknown taskId")
	}
	return err
}

func (t *Tasks) serveGet(ctx context.Context, req app.ExtensionRequest) (any, error) {
	id, own, err := target(ctx, req)
	if err != nil {
		return nil, err
	}
	task, err := t.store().Get(ctx, id, own)
	if err != nil {
		return nil, notFound(err)
	}
	if task.Status == ports.TaskWorking {
		task = t.takeOver(ctx, task)
	}
	return encodeTask(task, "", true)
}

// takeOver runs a working task here whose claim has ended (its instance
// died, or released it at shutdown), and returns it as it now is.
func (t *Tasks) takeOver(ctx context.Context, task ports.Task) ports.Task {
	if task.Runner != "" && time.Now().Before(task.LeaseUntil) {
		return task // its runner holds it
	}
	t.mu.Lock()
	_, mine := t.running[task.ID]
	t.mu.Unlock()
	if mine && task.Runner == t.instance {
		return task // its run here renews the claim when the store lets it
	}
	resume, ok := ctx.Value(resumeKey).(resumeFunc)
	if !ok || !t.room() {
		return task
	}
	// Conditional on the version read: a task changed meanwhile (its
	// answers, another claim) is left to the next tasks/get.
	claimed, err := t.store().Claim(ctx, task.ID, task.Owner, ports.TaskClaim{Runner: t.instance, Lease: t.opts.Lease, IfVersion: task.Version})
	if err != nil {
		return task // another instance claimed it first, or it ended
	}
	st, err := decodeState(task)
	if err != nil {
		t.fail(context.WithoutCancel(ctx), claimed, err)
		return claimed
	}
	resume(claimed, st)
	return claimed
}

func (t *Tasks) serveCancel(ctx context.Context, req app.ExtensionRequest) (any, error) {
	id, own, err := target(ctx, req)
	if err != nil {
		return nil, err
	}
	// The cancel that makes the task cancelled, and only that one, tells
	// the listen streams: a conditional update on the version read, read
	// again when another change (a renewal, another cancel) came between.
	for attempt := 0; ; attempt++ {
		before, err := t.store().Get(ctx, id, own)
		if err != nil {
			return nil, notFound(err)
		}
		if before.Status.Terminal() {
			break // cancelled, or ended, before: idempotent
		}
		task, err := t.store().Update(ctx, id, own, ports.TaskUpdate{Status: ports.TaskCancelled,
			StatusMessage: "cancelled by the client", IfVersion: before.Version})
		if errors.Is(err, ports.ErrTaskConflict) && attempt < maxCancelAttempts {
			continue
		}
		if errors.Is(err, ports.ErrTaskConflict) {
			// Changed at every look: cancel it unconditionally (the
			// status notification may then go out twice).
			task, err = t.store().Cancel(ctx, id, own, "cancelled by the client")
		}
		if errors.Is(err, ports.ErrTaskTransition) {
			break // ended meanwhile
		}
		if err != nil {
			return nil, notFound(err)
		}
		if task.Status == ports.TaskCancelled {
			t.notify(ctx, task)
		}
		break
	}
	t.mu.Lock()
	r := t.running[id]
	t.mu.Unlock()
	if r != nil {
		r.cancel(errCancelled)
	}
	return struct{}{}, nil
}

// maxCancelAttempts bounds how often tasks/cancel reads a task again that
// changed between its read and its conditional update.
const maxCancelAttempts = 8

// serveUpdate takes the client's answers to an input_required task's
// questions: answers to keys the task does not ask (any more) are
// ignored; once every question is answered, the task runs again here.
// It acknowledges at once; the task's state shows on the next tasks/get.
func (t *Tasks) serveUpdate(ctx context.Context, req app.ExtensionRequest) (any, error) {
	id, own, err := target(ctx, req)
	if err != nil {
		return nil, err
	}
	var p struct {
		InputResponses stdjson.RawMessage `json:"inputResponses"`
	}
	_ = stdjson.Unmarshal(req.Params, &p)
	var answers map[string]stdjson.RawMessage
	if len(p.InputResponses) == 0 || p.InputResponses[0] != '{' || stdjson.Unmarshal(p.InputResponses, &answers) != nil {
		return nil, app.InvalidParams("inputResponses must be an object")
	}
	for k, v := range answers {
		if len(v) == 0 || v[0] != '{' {
			return nil, app.InvalidParams("inputResponses[" + strconv.Quote(k) + "] must be an object")
		}
	}
	for range conflictRetries {
		task, err := t.store().Get(ctx, id, own)
		if err != nil {
			return nil, notFound(err)
		}
		if task.Status != ports.TaskInputRequired {
			return struct{}{}, nil
		}
		st, err := decodeState(task)
		if err != nil {
			return nil, err
		}
		var pending map[string]stdjson.RawMessage
		if err := stdjson.Unmarshal(task.InputRequests, &pending); err != nil {
			return nil, fmt.Errorf("hexmcp: tasks: task %s: its input requests do not decode: %w", id, err)
		}
		matched := false
		for k, v := range answers {
			if _, ok := pending[k]; ok {
				if st.Answers == nil {
					st.Answers = map[string]stdjson.RawMessage{}
				}
				st.Answers[k] = v
				delete(pending, k)
				matched = true
			}
		}
		if !matched {
			return struct{}{}, nil
		}
		u := ports.TaskUpdate{Status: ports.TaskInputRequired, StatusMessage: task.StatusMessage, IfVersion: task.Version}
		if len(pending) > 0 {
			u.InputRequests, _ = stdjson.Marshal(pending)
		} else {
			// Every question is answered: the task runs again, here when
			// this process has room (and claims it first), else at the
			// next tasks/get anywhere.
			u.Status, u.StatusMessage = ports.TaskWorking, ""
		}
		u.State = st.encode()
		updated, err := t.store().Update(ctx, id, own, u)
		switch {
		case errors.Is(err, ports.ErrTaskConflict):
			continue
		case errors.Is(err, ports.ErrTaskTransition):
			return struct{}{}, nil // it ended meanwhile
		case errors.Is(err, ports.ErrTaskTooLarge), errors.Is(err, ports.ErrTooManyTasks):
			return nil, app.InvalidParams("inputResponses: the answers are more than the task store keeps (for a task, for a client, or in all)")
		case err != nil:
			return nil, notFound(err)
		}
		t.notify(ctx, updated)
		if updated.Status == ports.TaskWorking && t.room() {
			resume, ok := ctx.Value(resumeKey).(resumeFunc)
			if ok {
				claimed, err := t.store().Claim(ctx, id, own, ports.TaskClaim{Runner: t.instance, Lease: t.opts.Lease, IfVersion: updated.Version})
				if err == nil {
					resume(claimed, st)
				}
			}
		}
		return struct{}{}, nil
	}
	return nil, fmt.Errorf("hexmcp: tasks: task %s changed %d times while its answers were stored", id, conflictRetries)
}
