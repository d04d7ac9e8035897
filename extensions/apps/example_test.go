package apps_test

import (
	"context"
	"fmt"
	"log"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/extensions/apps"
)

// A tool with a view: the extension serves the HTML at ui://clock/face.html
// and the tool points at it. The tool's text content is what a client
// without views shows.
func Example() {
	ext, err := apps.New(apps.Options{Views: []apps.View{{
		URI:  "ui://clock/face.html",
		Name: "Clock face",
		HTML: `<!DOCTYPE html><html><body><p id="time"></p><script type="module">/* the App API */</script></body></html>`,
		CSP:  &apps.CSP{ResourceDomains: []string{"https://cdn.jsdelivr.net"}},
	}}})
	if err != nil {
		log.Fatal(err)
	}
	now := hexmcp.NewTool(func(context.Context) (*domain.CallToolResult, error) {
		return &domain.CallToolResult{
			Content:           []domain.Content{hexmcp.Text("It is 12:00.")},
			StructuredContent: []byte(`{"hour":12,"minute":0}`),
		}, nil
	}, hexmcp.WithName("now"), hexmcp.WithDescription("Tells the time on a clock face"), apps.WithView("ui://clock/face.html"))
	srv, err := hexmcp.New(hexmcp.Options{
		Info:             hexmcp.Implementation{Name: "clock", Version: "1.0.0"},
		ResourceRegistry: memory.NewResourceRegistry(),
		Extensions:       []app.Extension{ext},
		Tools:            []hexmcp.Tool{now},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	fmt.Println(srv.Engine().Extensions(), now.Definition().Meta["ui"])
	// Output: [io.modelcontextprotocol/ui] map[resourceUri:ui://clock/face.html]
}
