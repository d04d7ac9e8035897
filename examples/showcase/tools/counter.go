package tools

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/extensions/apps"
)

// CounterViewURI is the URI of the counter tool's view.
const CounterViewURI = "ui://showcase/counter.html"

//go:embed ui/counter.html
var ui embed.FS

// CounterInput is the count to add one to.
type CounterInput struct {
	Count int `json:"count,omitempty" description:"The count so far (default 0)" minimum:"0" maximum:"1000000"`
}

const counterSchema = `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`

// counter adds one to the count. A host that renders MCP Apps shows the
// result in the counter view, whose +1 button calls counter again through
// the host; any other client reads the text.
func counter(_ context.Context, rc *hexmcp.RequestContext, in CounterInput) (*hexmcp.CallToolResult, error) {
	n := in.Count + 1
	text := fmt.Sprintf("Count: %d", n)
	if !apps.ClientSupports(rc) {
		text += fmt.Sprintf(" (call counter with count %d to add one more)", n)
	}
	structured, err := json.Marshal(map[string]int{"count": n})
	if err != nil {
		return nil, fmt.Errorf("counter: %w", err)
	}
	return &hexmcp.CallToolResult{Content: []hexmcp.Content{hexmcp.Text(text)}, StructuredContent: structured}, nil
}

// counterTool is the tool with a view.
// resetCounter sets the counter back to zero. It is annotated
// destructive, so the showcase's hexmcp.ConfirmDestructive asks the
// user before it runs (elicitation, in both eras); a client that cannot be
// asked gets a tool error and the count stays.
func resetCounter(_ context.Context, _ struct{}) (*hexmcp.CallToolResult, error) {
	return &hexmcp.CallToolResult{Content: []hexmcp.Content{hexmcp.Text("Count: 0")}, StructuredContent: json.RawMessage(`{"count":0}`)}, nil
}

func resetCounterTool() hexmcp.Tool {
	return hexmcp.Func(resetCounter, hexmcp.WithName("resetCounter"), hexmcp.WithTitle("Reset the counter"),
		hexmcp.WithDescription("Sets the counter back to zero. Destructive: the user is asked to confirm first."),
		hexmcp.WithOutputSchema(json.RawMessage(counterSchema)),
		hexmcp.WithAnnotations(hexmcp.ToolAnnotations{ReadOnlyHint: hexmcp.Bool(false), DestructiveHint: hexmcp.Bool(true), IdempotentHint: hexmcp.Bool(true), OpenWorldHint: hexmcp.Bool(false)}))
}

func counterTool() hexmcp.Tool {
	return hexmcp.NewTool(counter, hexmcp.WithTitle("Counter"),
		hexmcp.WithDescription("Adds one to a count and shows it in a small counter view (MCP Apps) where the client renders views."),
		hexmcp.WithOutputSchema(json.RawMessage(counterSchema)),
		apps.WithView(CounterViewURI))
}

// Apps is the showcase's MCP Apps extension (io.modelcontextprotocol/ui):
// the counter view. The view loads the ext-apps App API from jsDelivr, the
// one origin its CSP declares.
func Apps() (hexmcp.Extension, error) {
	border := true
	return apps.New(apps.Options{Views: []apps.View{{
		URI:           CounterViewURI,
		Name:          "counter",
		Title:         "Counter",
		Description:   "Shows the count of the counter tool, with a +1 button that calls it again.",
		FS:            ui,
		Path:          "ui/counter.html",
		CSP:           &apps.CSP{ResourceDomains: []string{"https://cdn.jsdelivr.net"}},
		PrefersBorder: &border,
	}}})
}
