// Package tasks is a first cut of the MCP tasks extension (SEP-2663,
// "io.modelcontextprotocol/tasks"): a tools/call of a task-supporting tool
// from a client that declared the extension is answered at once with a
// CreateTaskResult while the tool runs in the background; the client polls
// it with tasks/get (the result or error inlined once terminal) and stops
// it with tasks/cancel. Tasks live in a [ports.TaskStore].
//
//	t := tasks.New(tasks.Options{Tools: map[string]tasks.Support{"build": tasks.Optional}})
//	engine, err := app.NewEngine(app.Options{...,
//		Extensions: []app.Extension{t.Extension()},
//		Middleware: []app.Middleware{t.Middleware()}})
//
// Not yet: input_required (tasks/update acks but no task waits for
// input), status notifications, the
// handshake era's session-level capabilities (only the request's
// _meta clientCapabilities are read).
package tasks

import (
	"cmp"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
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
	// extension, synchronously otherwise.
	Optional
	// Required: the tool runs only as a task; a client that did not
	// declare the extension is answered -32021.
	Required
)

// DefaultMaxRunning bounds the tasks one Tasks runs at once.
const DefaultMaxRunning = 1024

// Options configures [New]. Zero fields take their defaults.
type Options struct {
	// Store keeps the tasks; nil: a memory.NewTaskStore with its defaults.
	Store ports.TaskStore
	// Tools says which tools may run as tasks, by name; a tool absent is
	// Forbidden.
	Tools map[string]Support
	// TTL is the TTL asked for each task (0: the store's default, which
	// also caps it).
	TTL time.Duration
	// PollInterval is the suggested poll interval (pollIntervalMs);
	// 0: none suggested.
	PollInterval time.Duration
	// MaxRunning bounds the tasks running at once in this process
	// (DefaultMaxRunning); past it a task-supporting call runs
	// synchronously instead.
	MaxRunning int
}

// Tasks serves the extension: its [app.Extension] and its method
// [app.Middleware], which must both be registered with the engine.
type Tasks struct {
	opts Options

	mu      sync.Mutex
	running map[string]context.CancelFunc // task id → cancels its run
	wg      sync.WaitGroup
}

// New returns the extension configured by opts.
func New(opts Options) *Tasks {
	if opts.Store == nil {
		opts.Store = memory.NewTaskStore(memory.TaskStoreOptions{})
	}
	opts.MaxRunning = cmp.Or(max(opts.MaxRunning, 0), DefaultMaxRunning)
	return &Tasks{opts: opts, running: make(map[string]context.CancelFunc)}
}

// Wait blocks until every background run has ended (for tests and
// shutdown).
func (t *Tasks) Wait() { t.wg.Wait() }

// Extension returns the extension to put in app.Options.Extensions: the
// capability and the methods tasks/get and tasks/cancel.
func (t *Tasks) Extension() app.Extension {
	return app.Extension{
		ID:       ID,
		Settings: map[string]any{},
		Methods: []app.ExtensionMethod{
			{Name: "tasks/get", Serve: t.serveGet},
			{Name: "tasks/cancel", Serve: t.serveCancel},
			{Name: "tasks/update", Serve: t.serveUpdate},
		},
	}
}

type ownerKey struct{}

// owner is who a request's tasks belong to: the principal's subject, else
// the session id.
func owner(req *app.Request) string {
	if p := req.Transport.Principal; p != nil && p.Subject != "" {
		return "sub:" + p.Subject
	}
	return "sid:" + req.SessionID
}

// declared reports whether the request's _meta clientCapabilities name the
// extension.
func declared(params stdjson.RawMessage) bool {
	var p struct {
		Meta struct {
			Caps struct {
				Extensions map[string]stdjson.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	if len(params) == 0 || stdjson.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p.Meta.Caps.Extensions[ID]
	return ok
}

func missingCapability() error {
	return &domain.ProtocolError{Code: domain.CodeMissingClientCapability,
		Message: "Missing required client capability: extensions." + ID,
		Data:    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ID: map[string]any{}}}}}
}

// Middleware returns the method middleware that gates the task methods on
// the extension's negotiation and runs task-supporting tools as tasks.
func (t *Tasks) Middleware() app.Middleware {
	return func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, req *app.Request) (stdjson.RawMessage, error) {
			switch req.Method {
			case "tasks/get", "tasks/cancel", "tasks/update":
				if !declared(req.Params) {
					return nil, missingCapability()
				}
				if err := checkName(req); err != nil {
					return nil, err
				}
				return next(context.WithValue(ctx, ownerKey{}, owner(req)), req)
			case "tools/call":
				sup := t.opts.Tools[req.Name]
				if sup == Forbidden {
					return next(ctx, req)
				}
				if !declared(req.Params) {
					if sup == Required {
						return nil, missingCapability()
					}
					return next(ctx, req)
				}
				return t.start(ctx, req, next)
			}
			return next(ctx, req)
		}
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

// start creates the task and runs the call in the background.
func (t *Tasks) start(ctx context.Context, req *app.Request, next app.MethodHandler) (stdjson.RawMessage, error) {
	t.mu.Lock()
	full := len(t.running) >= t.opts.MaxRunning
	t.mu.Unlock()
	if full {
		return next(ctx, req)
	}
	own := owner(req)
	task, err := t.opts.Store.Create(ctx, ports.Task{Owner: own, Status: ports.TaskWorking, TTL: t.opts.TTL, PollInterval: t.opts.PollInterval})
	if err != nil {
		return nil, fmt.Errorf("tasks: creating a task: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t.mu.Lock()
	t.running[task.ID] = cancel
	t.mu.Unlock()
	detached := req.Detached()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer func() {
			t.mu.Lock()
			delete(t.running, task.ID)
			t.mu.Unlock()
			cancel()
		}()
		res, err := next(runCtx, detached)
		if runCtx.Err() != nil {
			return // cancelled: the store says so already
		}
		u := ports.TaskUpdate{Status: ports.TaskCompleted, Result: res}
		if err != nil || len(res) == 0 {
			u = ports.TaskUpdate{Status: ports.TaskFailed, Error: errorObject(err)}
		}
		// A refused transition (cancelled meanwhile) leaves the task as it is.
		_, _ = t.opts.Store.Update(context.WithoutCancel(ctx), task.ID, own, u)
	}()
	return encodeTask(task, "task", false)
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
		return nil, fmt.Errorf("tasks: encoding a task: %w", err)
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
	return *p.TaskID, nil
}

func ownerFrom(ctx context.Context) (string, error) {
	o, ok := ctx.Value(ownerKey{}).(string)
	if !ok {
		return "", errors.New("tasks: the extension's middleware is not installed (app.Options.Middleware)")
	}
	return o, nil
}

// target is the task a tasks/* request names and who asks for it.
func target(ctx context.Context, req app.ExtensionRequest) (id, owner string, err error) {
	if id, err = taskID(req); err != nil {
		return "", "", err
	}
	owner, err = ownerFrom(ctx)
	return id, owner, err
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
	task, err := t.opts.Store.Get(ctx, id, own)
	if err != nil {
		return nil, notFound(err)
	}
	return encodeTask(task, "", true)
}

func (t *Tasks) serveCancel(ctx context.Context, req app.ExtensionRequest) (any, error) {
	id, own, err := target(ctx, req)
	if err != nil {
		return nil, err
	}
	if _, err := t.opts.Store.Cancel(ctx, id, own, "cancelled by the client"); err != nil {
		return nil, notFound(err)
	}
	t.mu.Lock()
	cancel := t.running[id]
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return struct{}{}, nil
}

// serveUpdate acknowledges tasks/update. No task of this first cut waits
// for input, so the responses are ignored (the extension ignores the keys
// of requests that are not pending); an unknown task is -32602.
func (t *Tasks) serveUpdate(ctx context.Context, req app.ExtensionRequest) (any, error) {
	id, own, err := target(ctx, req)
	if err != nil {
		return nil, err
	}
	if _, err := t.opts.Store.Get(ctx, id, own); err != nil {
		return nil, notFound(err)
	}
	return struct{}{}, nil
}
