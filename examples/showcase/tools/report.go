package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/extensions/tasks"
)

// ReportInput sizes buildReport's run.
type ReportInput struct {
	Sections int `json:"sections,omitzero" description:"How many sections to write (default 5)" minimum:"0" maximum:"50"`
	StepMs   int `json:"stepMs,omitzero" description:"How long each section takes, in milliseconds (default 200)" minimum:"0" maximum:"5000"`
}

// buildReport is the showcase's long-running tool: it writes one section
// after another, reporting progress after each, and stops when its call
// (or its task) is cancelled. A client that declared the tasks extension
// gets a task handle at once and polls it; any other waits for the result.
func buildReport(ctx context.Context, in ReportInput) (string, error) {
	sections := in.Sections
	if sections == 0 {
		sections = 5
	}
	step := time.Duration(in.StepMs) * time.Millisecond
	if in.StepMs == 0 {
		step = 200 * time.Millisecond
	}
	rc := hexmcp.RequestFrom(ctx)
	for i := 1; i <= sections; i++ {
		t := time.NewTimer(step)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
		if err := rc.ReportProgress(ctx, float64(i), float64(sections), fmt.Sprintf("section %d of %d written", i, sections)); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("Report ready: %d sections", sections), nil
}

// TaskLease is how long an instance's claim on a showcase task lasts: a
// task whose instance died runs again elsewhere this long after its last
// renewal at most.
const TaskLease = 5 * time.Second

// Tasks is the showcase's tasks extension: buildReport may run as a task.
// The tasks are kept in the engine's shared store when there is one
// (-redis: mcpredis.Share's, so that any instance serves every task), in
// this process's memory otherwise.
func Tasks() *tasks.Tasks {
	return tasks.New(tasks.Options{
		Tools:        map[string]tasks.Support{"buildReport": tasks.Optional},
		PollInterval: 500 * time.Millisecond,
		Lease:        TaskLease,
	})
}

// reportTool is buildReport's definition.
func reportTool() hexmcp.Tool {
	return hexmcp.NewTool(buildReport, hexmcp.WithName("buildReport"), hexmcp.WithTitle("Build a report"),
		hexmcp.WithDescription("Writes a report section by section, reporting progress; long enough to run as a task (the tasks extension)."))
}
