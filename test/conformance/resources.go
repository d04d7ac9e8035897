package main

import (
	"context"
	"encoding/json"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// conformanceResources returns the resources and resource templates the
// suite's resources-* scenarios read (the URIs and contents of their
// "Server Implementation Requirements"). test://nonexistent-... of
// sep-2164-resource-not-found is, by design, not registered.
func conformanceResources() []app.Resource {
	return []app.Resource{
		// resources-list, resources-read-text
		app.TextResource("test://static-text", "static-text", "This is the content of the static text resource.",
			app.WithDescription("A static text resource.")),
		// resources-read-binary
		app.BlobResource("test://static-binary", "static-binary", redPixelPNG(),
			app.WithMimeType("image/png"), app.WithDescription("A static binary resource (a PNG image).")),
		// resources-subscribe, resources-unsubscribe
		app.TextResource("test://watched-resource", "watched-resource", "A resource clients may subscribe to.",
			app.WithDescription("A resource for subscription tests.")),
		// resources-templates-read
		app.NewResourceTemplate("test://template/{id}/data", "template-data",
			func(_ context.Context, _ string, vars map[string]string) ([]domain.ResourceContents, error) {
				id := vars["id"]
				body, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
				if err != nil {
					return nil, err
				}
				return []domain.ResourceContents{{Text: string(body)}}, nil
			},
			app.WithMimeType("application/json"), app.WithDescription("Data for an id, from a URI template.")),
	}
}
