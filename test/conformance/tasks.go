package main

import (
	"context"
	"fmt"
	"time"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/extensions/tasks"
)

// conformanceTasks is the tasks extension (the tasks-* scenarios) with
// the fixtures they call: greet (sync only), slow_compute, failing_job
// (required) and protocol_error_job (task-supporting).
func conformanceTasks() (*tasks.Tasks, []app.Tool) {
	t := tasks.New(tasks.Options{
		PollInterval: 100 * time.Millisecond,
		Tools: map[string]tasks.Support{
			"slow_compute":       tasks.Optional,
			"failing_job":        tasks.Required,
			"protocol_error_job": tasks.Optional,
		},
	})
	type greetIn struct {
		Name string `json:"name"`
	}
	type slowIn struct {
		Seconds float64 `json:"seconds"`
		Label   string  `json:"label,omitempty"`
	}
	tools := []app.Tool{
		app.NewTool(func(_ context.Context, in greetIn) (string, error) { return "Hello, " + in.Name + "!", nil },
			app.WithName("greet"), app.WithDescription("Greets name; never a task.")),
		app.NewTool(func(ctx context.Context, in slowIn) (string, error) {
			if err := sleep(ctx, time.Duration(min(max(in.Seconds, 0), 600)*float64(time.Second))); err != nil {
				return "", err
			}
			return fmt.Sprintf("computed %s after %gs", in.Label, in.Seconds), nil
		}, app.WithName("slow_compute"), app.WithDescription("Sleeps seconds, then answers; may run as a task.")),
		app.NewTool(func(ctx context.Context) (string, error) {
			if err := sleep(ctx, time.Second); err != nil {
				return "", err
			}
			return "", domain.NewToolError("failing_job always fails")
		}, app.WithName("failing_job"), app.WithDescription("Fails with a tool error after a second; runs only as a task.")),
		app.NewTool(func(context.Context) (string, error) {
			panic("protocol_error_job: a deliberate panic")
		}, app.WithName("protocol_error_job"), app.WithDescription("Panics into a protocol error; may run as a task.")),
	}
	return t, tools
}
