package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// TasksExtension is the identifier of the tasks extension (SEP-2663),
// which [Options.Tasks] declares.
const TasksExtension = "io.modelcontextprotocol/tasks"

// The bounds of the polling of a task: the server's pollIntervalMs is
// taken within them; DefaultTaskPollInterval when it gives none.
const (
	DefaultTaskPollInterval = time.Second
	minTaskPollInterval     = 10 * time.Millisecond
	maxTaskPollInterval     = time.Minute
)

// Task is a task of the tasks extension: the answer of a task-supporting
// tools/call (a CreateTaskResult), or of tasks/get (with the result, the
// error or the input requests).
type Task struct {
	ID string `json:"taskId"`
	// Status is one of the tasks extension's (ports.TaskWorking,
	// TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled; the
	// last three are terminal: Status.Terminal()).
	Status        ports.TaskStatus `json:"status"`
	StatusMessage string           `json:"statusMessage,omitempty"`
	CreatedAt     string           `json:"createdAt,omitempty"`
	LastUpdatedAt string           `json:"lastUpdatedAt,omitempty"`
	// TTLMs is how long the server keeps the task, in milliseconds.
	TTLMs *int64 `json:"ttlMs,omitempty"`
	// PollIntervalMs is the server's suggested poll interval.
	PollIntervalMs int64 `json:"pollIntervalMs,omitempty"`
	// InputRequests are the server's questions while the status is
	// input_required, by key: {"method", "params"} each.
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Result is the call's result once completed (a CallToolResult as
	// sent); Error the JSON-RPC error of a failed task.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
	// Raw is the task as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// ErrTaskCancelled is the error of [Session.AwaitTask] (and of a call
// that ran as a task) for a task that was cancelled.
var ErrTaskCancelled = errors.New("hexmcp: the task was cancelled")

// StartTool calls the tool name with args as [Session.CallTool] does,
// and returns the task the server made of the call, without waiting for
// it: [Options.Tasks] must declare the extension. A server that ran the
// call at once (the tool does not run as a task) returns a completed task
// whose Result is the call's result.
func (s *Session) StartTool(ctx context.Context, name string, args any) (*Task, error) {
	raw, err := s.callTool(ctx, name, args)
	if err != nil {
		return nil, err
	}
	if t, ok := asTask(raw); ok {
		return t, nil
	}
	return &Task{Status: ports.TaskCompleted, Result: raw, Raw: raw}, nil
}

// asTask returns the task of a CreateTaskResult.
func asTask(raw json.RawMessage) (*Task, bool) {
	var head struct {
		ResultType string `json:"resultType"`
	}
	if json.Unmarshal(raw, &head) != nil || head.ResultType != "task" {
		return nil, false
	}
	t := &Task{Raw: raw}
	if json.Unmarshal(raw, t) != nil || t.ID == "" {
		return nil, false
	}
	return t, true
}

// GetTask asks the server for the task id (tasks/get).
func (s *Session) GetTask(ctx context.Context, id string) (*Task, error) {
	raw, err := s.request(ctx, "tasks/get", map[string]any{"taskId": id})
	if err != nil {
		return nil, err
	}
	return decodeResult(raw, &Task{Raw: raw}, "the task ", id)
}

// UpdateTask answers the input requests of the task id (tasks/update):
// answers by key, each a result of the method asked (an ElicitResult,
// ...).
func (s *Session) UpdateTask(ctx context.Context, id string, answers map[string]any) error {
	_, err := s.request(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": answers})
	return err
}

// CancelTask asks the server to stop the task id (tasks/cancel).
func (s *Session) CancelTask(ctx context.Context, id string) error {
	_, err := s.request(ctx, "tasks/cancel", map[string]any{"taskId": id})
	return err
}

// AwaitTask polls the task id (tasks/get, at the server's
// pollIntervalMilliseconds, or every [DefaultTaskPollInterval] when it
// gives none) until it ends, answering its input requests with the handlers of
// [Options] (tasks/update), and returns its result. A failed task is the
// task's error (an [*RPCError]), a cancelled one [ErrTaskCancelled]. When
// ctx ends first, the task is cancelled (tasks/cancel).
func (s *Session) AwaitTask(ctx context.Context, id string) (*CallToolResult, error) {
	answered := map[string]bool{}
	rounds := 0
	for {
		t, err := s.GetTask(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				s.cancelTask(id)
			}
			return nil, err
		}
		switch t.Status {
		case ports.TaskCompleted:
			return decodeResult(t.Result, &CallToolResult{Raw: t.Result}, "the result of the task ", id)
		case ports.TaskFailed:
			if t.Error == nil {
				return nil, fmt.Errorf("hexmcp: the task %s failed", id)
			}
			return nil, fmt.Errorf("hexmcp: the task %s failed: %w", id, t.Error)
		case ports.TaskCancelled:
			return nil, fmt.Errorf("hexmcp: the task %s: %w", id, ErrTaskCancelled)
		case ports.TaskInputRequired:
			answers := map[string]any{}
			for _, key := range slices.Sorted(maps.Keys(t.InputRequests)) {
				if answered[key] {
					continue // answered already; the task has not seen it yet
				}
				var q struct {
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
				}
				if err := json.Unmarshal(t.InputRequests[key], &q); err != nil {
					return nil, fmt.Errorf("hexmcp: the input request %q of the task %s: %w", key, id, err)
				}
				res, err := s.answer(ctx, q.Method, q.Params)
				if err != nil {
					s.cancelTask(id)
					return nil, fmt.Errorf("hexmcp: answering %s %q of the task %s: %w", q.Method, key, id, err)
				}
				answers[key] = res
			}
			if len(answers) > 0 {
				if rounds++; rounds > s.c.opts.MaxInputRounds {
					s.cancelTask(id)
					return nil, fmt.Errorf("hexmcp: the task %s still asks for input after %d rounds", id, s.c.opts.MaxInputRounds)
				}
				if err := s.UpdateTask(ctx, id, answers); err != nil {
					if ctx.Err() != nil {
						s.cancelTask(id)
					}
					return nil, err
				}
				for k := range answers {
					answered[k] = true
				}
				continue
			}
		}
		wait := DefaultTaskPollInterval
		if t.PollIntervalMs > 0 {
			wait = min(max(time.Duration(t.PollIntervalMs)*time.Millisecond, minTaskPollInterval), maxTaskPollInterval)
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			s.cancelTask(id)
			return nil, fmt.Errorf("hexmcp: the task %s: %w", id, context.Cause(ctx))
		}
	}
}

// cancelTask cancels the task id of a caller that gave up, within a
// second.
func (s *Session) cancelTask(id string) {
	ctx, cancel := context.WithTimeout(s.base, time.Second)
	defer cancel()
	_ = s.CancelTask(ctx, id)
}
