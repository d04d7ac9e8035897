package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hexmcp/hexmcp"
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
	rc := hexmcp.RequestFrom(ctx)
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
func logWork(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
	for _, l := range []hexmcp.LogLevel{hexmcp.LogDebug, hexmcp.LogInfo, hexmcp.LogWarning} {
		if err := rc.Log(ctx, l, "showcase", "logWork says "+string(l)); err != nil {
			return "", err
		}
	}
	return "Logged at debug, info and warning", nil
}

// Resources returns the showcase's resources: a fixed text and a template.
func Resources() []hexmcp.Resource {
	return []hexmcp.Resource{
		hexmcp.TextResource("showcase://readme", "readme", "This server shows every kind of tool result of the MCP PHP SDK's tools page.",
			hexmcp.WithDescription("What this server is."), hexmcp.WithMimeType("text/plain")),
		hexmcp.NewResourceTemplate("showcase://users/{id}", "user", readUser,
			hexmcp.WithDescription("A user by id."), hexmcp.WithMimeType("application/json")),
	}
}

// readUser reads showcase://users/{id}. It is safe by construction
// whatever the id holds (with or without hexmcp.WithRawTemplateValues): the id
// only becomes a JSON string, encoded by encoding/json, and touches no file
// or other store.
func readUser(_ context.Context, uri string, vars map[string]string) ([]hexmcp.ResourceContents, error) {
	body, err := json.Marshal(struct {
		ID string `json:"id"`
	}{vars["id"]})
	if err != nil {
		return nil, err
	}
	return []hexmcp.ResourceContents{{URI: uri, MimeType: "application/json", Text: string(body)}}, nil
}

// Prompts returns the showcase's prompt.
func Prompts() []hexmcp.Prompt {
	return []hexmcp.Prompt{
		hexmcp.NewPrompt("summarize", func(_ context.Context, args map[string]string) (*hexmcp.GetPromptResult, error) {
			style := args["style"]
			if style == "" {
				style = "brief"
			}
			return &hexmcp.GetPromptResult{
				Description: "Summarize a text",
				Messages: []hexmcp.PromptMessage{
					hexmcp.UserMessage(hexmcp.Text(fmt.Sprintf("Summarize this text in a %s style:\n\n%s", style, args["text"]))),
				},
			}, nil
		},
			hexmcp.WithDescription("Asks the model to summarize a text."),
			hexmcp.WithArguments(hexmcp.PromptArgument{Name: "text", Description: "The text to summarize", Required: true}),
			hexmcp.WithArgument(hexmcp.PromptArgument{Name: "style", Description: "brief or detailed"},
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
