package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/examples/showcase/tools"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/ports"
)

// tasksServer is a server with the tasks extension: the showcase's
// buildReport, a tool that asks the user's name, and one that runs until
// cancelled (started tells of its runs).
func tasksServer(t *testing.T, started chan<- struct{}) *hexmcp.Server {
	x := tasks.New(tasks.Options{
		Tools:        map[string]tasks.Support{"buildReport": tasks.Optional, "askName": tasks.Optional, "forever": tasks.Required},
		PollInterval: 10_000_000, // 10 ms
	})
	t.Cleanup(func() { _ = x.Shutdown(context.Background()) })
	name := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
	return testServer(t, nil, func(o *hexmcp.Options) {
		o.Extensions = []hexmcp.Extension{x.Extension()}
		for _, tl := range tools.All() {
			if tl.Definition().Name == "buildReport" {
				o.Tools = append(o.Tools, tl)
			}
		}
		o.Tools = append(o.Tools,
			hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
				res, err := rc.Elicit(ctx, "who", hexmcp.ElicitForm("Name?", name))
				if err != nil {
					return "", err
				}
				return "hello " + string(res.Content), nil
			}, hexmcp.WithName("askName")),
			hexmcp.NewTool(func(ctx context.Context) (string, error) {
				started <- struct{}{}
				<-ctx.Done()
				return "", ctx.Err()
			}, hexmcp.WithName("forever")))
	})
}

// The tasks extension, in both eras and on every transport: a call that
// runs as a task is awaited, its questions answered through tasks/update,
// and a task is cancelled by tasks/cancel or by the caller's context.
func TestTasks(t *testing.T) {
	started := make(chan struct{}, 100)
	srv := tasksServer(t, started)
	opts := client.Options{
		Tasks: true,
		Elicitation: func(context.Context, domain.ElicitParams) (*domain.ElicitResult, error) {
			return client.Accept(map[string]any{"name": "Ada"})
		},
	}
	forEach(t, srv, opts, func(t *testing.T, s *client.Session) {
		ctx := t.Context()
		task, err := s.StartTool(ctx, "buildReport", map[string]any{"sections": 2, "stepMs": 1})
		if err != nil || task.ID == "" || task.Status.Terminal() {
			t.Fatalf("StartTool = %+v, %v; want a task", task, err)
		}
		res, err := s.AwaitTask(ctx, task.ID)
		if err != nil || res.Text() != "Report ready: 2 sections" {
			t.Fatalf("AwaitTask = %+v, %v", res, err)
		}
		// CallTool awaits by itself, answering the task's questions.
		res, err = s.CallTool(ctx, "askName", nil)
		var re *client.RPCError
		switch {
		case !s.Features().Elicitation:
			// A failed task: its error.
			if !errors.As(err, &re) || re.Code != domain.CodeMissingClientCapability {
				t.Fatalf("askName without elicitation = %+v, %v", res, err)
			}
		case err != nil || res.Text() != `hello {"name":"Ada"}`:
			t.Fatalf("askName = %+v, %v", res, err)
		}
		// A tool that does not run as a task answers at once.
		if task, err := s.StartTool(ctx, "add", AddInput{A: 1, B: 2}); err != nil || task.Status != ports.TaskCompleted {
			t.Fatalf("StartTool(add) = %+v, %v", task, err)
		}
		// A call the server refuses is an error, not a completed task.
		if task, err := s.StartTool(ctx, "no-such-tool", nil); err == nil {
			t.Fatalf("StartTool of an unknown tool = %+v, want the server's error", task)
		}
		// tasks/cancel.
		task, err = s.StartTool(ctx, "forever", nil)
		if err != nil {
			t.Fatal(err)
		}
		<-started
		if err := s.CancelTask(ctx, task.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AwaitTask(ctx, task.ID); !errors.Is(err, client.ErrTaskCancelled) {
			t.Fatalf("AwaitTask of a cancelled task: %v", err)
		}
		// The caller's context.
		cctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			_, err := s.CallTool(cctx, "forever", nil)
			errc <- err
		}()
		<-started
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("a call given up: %v", err)
		}
	})
	// Without the extension declared, the call runs at once.
	s := connect(t, client.New(client.Options{}), pipeTransport(t, srv))
	if task, err := s.StartTool(t.Context(), "buildReport", map[string]any{"sections": 1, "stepMs": 1}); err != nil || task.Status != ports.TaskCompleted {
		t.Fatalf("StartTool without the extension = %+v, %v", task, err)
	}
}

// At 2026-07-28 a subscriptions/listen stream tells of a task's changes
// (notifications/tasks).
func TestTaskStatusNotifications(t *testing.T) {
	started := make(chan struct{}, 100)
	srv := tasksServer(t, started)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			statuses := make(chan client.Task, 10)
			s := connect(t, client.New(client.Options{Tasks: true, TaskStatus: func(t client.Task) { statuses <- t }}), tr.dial(t, srv))
			task, err := s.StartTool(t.Context(), "forever", nil)
			if err != nil {
				t.Fatal(err)
			}
			<-started
			sub, err := s.Subscribe(t.Context(), client.Subscriptions{TaskIDs: []string{task.ID}})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			if len(sub.Acknowledged.TaskIDs) != 1 || sub.Acknowledged.TaskIDs[0] != task.ID {
				t.Fatalf("acknowledged %+v", sub.Acknowledged)
			}
			if err := s.CancelTask(t.Context(), task.ID); err != nil {
				t.Fatal(err)
			}
			for got := range statuses {
				if got.ID != task.ID {
					t.Fatalf("notified of %+v", got)
				}
				if got.Status == ports.TaskCancelled {
					break
				}
			}
		})
	}
}
