package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// CountdownInput is how many steps countDown takes.
type CountdownInput struct {
	Steps int `json:"steps,omitempty" description:"Number of steps (default 3)" minimum:"1" maximum:"10"`
}

// countDown reports progress after every step when the request carried a
// progressToken, then says how many steps it took.
func countDown(ctx context.Context, in CountdownInput) (string, error) {
	steps := in.Steps
	if steps == 0 {
		steps = 3
	}
	rc := app.RequestFrom(ctx)
	for i := 1; i <= steps; i++ {
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if err := rc.ReportProgress(ctx, float64(i), float64(steps), fmt.Sprintf("step %d of %d", i, steps)); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("Counted down %d steps", steps), nil
}

// logWork logs to the client at three levels; the client gets the ones at
// or above the level it asked for (none when it asked for none).
func logWork(ctx context.Context, rc *app.RequestContext) (string, error) {
	for _, l := range []domain.LogLevel{domain.LogDebug, domain.LogInfo, domain.LogWarning} {
		if err := rc.Log(ctx, l, "showcase", "logWork says "+string(l)); err != nil {
			return "", err
		}
	}
	return "Logged at debug, info and warning", nil
}

// Resources returns the showcase's resources: a fixed text and a template.
func Resources() []app.Resource {
	return []app.Resource{
		app.TextResource("showcase://readme", "readme", "This server shows every kind of tool result of the MCP PHP SDK's tools page.",
			app.WithDescription("What this server is."), app.WithMimeType("text/plain")),
		app.NewResourceTemplate("showcase://users/{id}", "user", readUser,
			app.WithDescription("A user by id."), app.WithMimeType("application/json")),
	}
}

// readUser reads showcase://users/{id}. It is safe by construction
// whatever the id holds (with or without app.WithRawTemplateValues): the id
// only becomes a JSON string, encoded by encoding/json, and touches no file
// or other store.
func readUser(_ context.Context, uri string, vars map[string]string) ([]domain.ResourceContents, error) {
	body, err := json.Marshal(struct {
		ID string `json:"id"`
	}{vars["id"]})
	if err != nil {
		return nil, err
	}
	return []domain.ResourceContents{{URI: uri, MimeType: "application/json", Text: string(body)}}, nil
}

// Prompts returns the showcase's prompt.
func Prompts() []app.Prompt {
	return []app.Prompt{
		app.NewPrompt("summarize", func(_ context.Context, args map[string]string) (*domain.GetPromptResult, error) {
			style := args["style"]
			if style == "" {
				style = "brief"
			}
			return &domain.GetPromptResult{
				Description: "Summarize a text",
				Messages: []domain.PromptMessage{
					domain.UserMessage(domain.Text(fmt.Sprintf("Summarize this text in a %s style:\n\n%s", style, args["text"]))),
				},
			}, nil
		},
			app.WithDescription("Asks the model to summarize a text."),
			app.WithArguments(domain.PromptArgument{Name: "text", Description: "The text to summarize", Required: true}),
			app.WithArgument(domain.PromptArgument{Name: "style", Description: "brief or detailed"},
				func(_ context.Context, value string, _ map[string]string) ([]string, error) {
					var out []string
					for _, s := range []string{"brief", "detailed"} {
						if strings.HasPrefix(s, value) {
							out = append(out, s)
						}
					}
					return out, nil
				}),
		),
	}
}
