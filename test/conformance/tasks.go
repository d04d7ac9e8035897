package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/extensions/tasks"
)

// conformanceTasks is the tasks extension (the tasks-* scenarios) with
// the fixtures they call: greet (sync only), slow_compute, failing_job
// (required), protocol_error_job, confirm_delete and multi_input
// (task-supporting; they ask for input inside the task) and
// test_tool_with_task (required and deferred: it asks for user_name before
// it goes on as a task).
func conformanceTasks() (*tasks.Tasks, []hexmcp.Tool) {
	t := tasks.New(tasks.Options{
		PollInterval: 100 * time.Millisecond,
		Tools: map[string]tasks.Support{
			"slow_compute":        tasks.Optional,
			"failing_job":         tasks.Required,
			"protocol_error_job":  tasks.Optional,
			"confirm_delete":      tasks.Optional,
			"multi_input":         tasks.Optional,
			"test_tool_with_task": tasks.Required,
		},
		Deferred: map[string]bool{"test_tool_with_task": true},
	})
	type deleteIn struct {
		Filename string `json:"filename"`
	}
	type greetIn struct {
		Name string `json:"name"`
	}
	type slowIn struct {
		Seconds float64 `json:"seconds"`
		Label   string  `json:"label,omitempty"`
	}
	tools := []hexmcp.Tool{
		hexmcp.NewTool(func(_ context.Context, in greetIn) (string, error) { return "Hello, " + in.Name + "!", nil },
			hexmcp.WithName("greet"), hexmcp.WithDescription("Greets name; never a task.")),
		hexmcp.NewTool(func(ctx context.Context, in slowIn) (string, error) {
			if err := sleep(ctx, time.Duration(min(max(in.Seconds, 0), 600)*float64(time.Second))); err != nil {
				return "", err
			}
			return fmt.Sprintf("computed %s after %gs", in.Label, in.Seconds), nil
		}, hexmcp.WithName("slow_compute"), hexmcp.WithDescription("Sleeps seconds, then answers; may run as a task.")),
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			if err := sleep(ctx, time.Second); err != nil {
				return "", err
			}
			return "", hexmcp.NewToolError("failing_job always fails")
		}, hexmcp.WithName("failing_job"), hexmcp.WithDescription("Fails with a tool error after a second; runs only as a task.")),
		hexmcp.NewTool(func(context.Context) (string, error) {
			panic("protocol_error_job: a deliberate panic")
		}, hexmcp.WithName("protocol_error_job"), hexmcp.WithDescription("Panics into a protocol error; may run as a task.")),
		hexmcp.NewTool(func(ctx context.Context, in deleteIn) (string, error) {
			rc := app.RequestFrom(ctx)
			res, err := rc.Elicit(ctx, "confirm", hexmcp.ElicitForm("Delete "+in.Filename+"?", json.RawMessage(confirmDeleteSchema)))
			if err != nil {
				return "", err
			}
			if !res.Accepted() {
				return "Kept " + in.Filename + ".", nil
			}
			return "Deleted " + in.Filename + ".", nil
		}, hexmcp.WithName("confirm_delete"), hexmcp.WithDescription("Asks to confirm, inside the task, then deletes filename (nothing is deleted).")),
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			rc := app.RequestFrom(ctx)
			ans, err := rc.Ask(ctx,
				hexmcp.ElicitInput("first", hexmcp.ElicitForm("First input?", json.RawMessage(multiInputSchema))),
				hexmcp.ElicitInput("second", hexmcp.ElicitForm("Second input?", json.RawMessage(multiInputSchema))))
			if err != nil {
				return "", err
			}
			a, _ := ans.Elicitation("first")
			b, _ := ans.Elicitation("second")
			return "got " + string(a.Action) + " and " + string(b.Action), nil
		}, hexmcp.WithName("multi_input"), hexmcp.WithDescription("Asks two questions at once, inside the task.")),
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			rc := app.RequestFrom(ctx)
			res, err := rc.Elicit(ctx, "user_name", hexmcp.ElicitForm("What is your name?", json.RawMessage(userNameSchema)))
			if err != nil {
				return "", err
			}
			if err := tasks.Detach(ctx); err != nil {
				return "", err
			}
			var content struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(res.Content, &content)
			return "Hello, " + content.Name + ", from the task!", nil
		}, hexmcp.WithName("test_tool_with_task"), hexmcp.WithDescription("Asks for user_name synchronously, then goes on as a task.")),
	}
	return t, tools
}

const (
	confirmDeleteSchema = `{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`
	multiInputSchema    = `{"type":"object","properties":{"name":{"type":"string"},"confirm":{"type":"boolean"}}}`
	userNameSchema      = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
)
