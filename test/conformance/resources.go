package main

import (
	"context"
	"encoding/json"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/domain"
)

// conformanceResources returns the resources and resource templates the
// suite's resources-* scenarios read (the URIs and contents of their
// "Server Implementation Requirements"). test://nonexistent-... of
// sep-2164-resource-not-found is, by design, not registered.
func conformanceResources() []hexmcp.Resource {
	return []hexmcp.Resource{
		// resources-list, resources-read-text
		hexmcp.TextResource("test://static-text", "static-text", "This is the content of the static text resource.",
			hexmcp.WithDescription("A static text resource.")),
		// resources-read-binary
		hexmcp.BlobResource("test://static-binary", "static-binary", redPixelPNG(),
			hexmcp.WithMimeType("image/png"), hexmcp.WithDescription("A static binary resource (a PNG image).")),
		// resources-subscribe, resources-unsubscribe
		hexmcp.TextResource("test://watched-resource", "watched-resource", "A resource clients may subscribe to.",
			hexmcp.WithDescription("A resource for subscription tests.")),
		// resources-templates-read
		hexmcp.NewResourceTemplate("test://template/{id}/data", "template-data",
			func(_ context.Context, _ string, vars map[string]string) ([]domain.ResourceContents, error) {
				id := vars["id"]
				body, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
				if err != nil {
					return nil, err
				}
				return []domain.ResourceContents{{Text: string(body)}}, nil
			},
			hexmcp.WithMimeType("application/json"), hexmcp.WithDescription("Data for an id, from a URI template.")),
	}
}
