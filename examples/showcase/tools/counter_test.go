package tools

import (
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/extensions/apps"
	"github.com/hexmcp/hexmcp/hexmcptest"
)

// TestCounterView: the counter tool points at its view, which is served
// as an MCP App (its ext-apps import allowed by the CSP it declares), and
// the tool counts for clients with and without views.
func TestCounterView(t *testing.T) {
	ext, err := Apps()
	if err != nil {
		t.Fatal(err)
	}
	srv := hexmcptest.NewServer(t, hexmcp.Options{
		ResourceRegistry: memory.NewResourceRegistry(),
		Extensions:       []hexmcp.Extension{ext},
		Tools:            []hexmcp.Tool{counterTool()},
	})
	uiCaps := map[string]any{"extensions": map[string]any{apps.ID: map[string]any{"mimeTypes": []string{apps.MimeType}}}}
	for _, caps := range []map[string]any{uiCaps, {}} {
		hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{Capabilities: caps}, func(t *testing.T, c *client.Session) {
			ctx := t.Context()
			tools, err := client.Collect(c.ListTools(ctx))
			if err != nil || len(tools) != 1 {
				t.Fatalf("tools/list = %+v, %v", tools, err)
			}
			if ui, _ := tools[0].Meta["ui"].(map[string]any); c.Features().Meta && ui["resourceUri"] != CounterViewURI {
				t.Errorf("counter _meta = %v", tools[0].Meta)
			}
			read, err := c.ReadResource(ctx, CounterViewURI)
			if err != nil || len(read.Contents) != 1 || read.Contents[0].MimeType != apps.MimeType {
				t.Fatalf("resources/read = %+v, %v", read, err)
			}
			if html := read.Contents[0].Text; !strings.Contains(html, `import { App } from "https://cdn.jsdelivr.net/npm/@modelcontextprotocol/ext-apps@`) ||
				!strings.Contains(html, `name: "counter"`) {
				t.Errorf("the view does not load the App API from its declared origin or does not call counter:\n%s", html)
			}
			res, err := c.CallTool(ctx, "counter", map[string]any{"count": 41})
			if err != nil || res.IsError {
				t.Fatalf("counter = %+v, %v", res, err)
			}
			want := "Count: 42"
			if len(caps) == 0 {
				want += " (call counter with count 42 to add one more)"
			}
			if res.Text() != want {
				t.Errorf("text = %q, want %q", res.Text(), want)
			}
			if c.Features().StructuredContent && string(res.StructuredContent) != `{"count":42}` {
				t.Errorf("structuredContent = %s", res.StructuredContent)
			}
		})
	}
}
