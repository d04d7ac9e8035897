package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// WithAnnotations gives a tool its domain.ToolAnnotations and a resource
// its domain.Annotations, listed as given; the other kind is refused when
// the definition is added.
func TestWithAnnotations(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), ResourceRegistry: memory.NewResourceRegistry()},
		app.NewTool(func(context.Context) (string, error) { return "", nil }, app.WithName("look"),
			app.WithAnnotations(domain.ToolAnnotations{Title: "Look", ReadOnlyHint: domain.Bool(true)})))
	priority := 0.5
	if err := e.AddResource(app.TextResource("test://a", "a", "x",
		app.WithAnnotations(domain.Annotations{Audience: []string{"user"}, Priority: &priority}))); err != nil {
		t.Fatal(err)
	}
	c := serve(t, e)
	c.initialize("2025-11-25")
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"look","inputSchema":{"type":"object","properties":{}},"annotations":{"title":"Look","readOnlyHint":true}}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`),
		`{"jsonrpc":"2.0","id":2,"result":{"resources":[{"uri":"test://a","name":"a","mimeType":"text/plain","annotations":{"audience":["user"],"priority":0.5}}]}}`)

	err := e.AddTool(app.NewTool(func(context.Context) (string, error) { return "", nil }, app.WithName("wrong"),
		app.WithAnnotations(domain.Annotations{Audience: []string{"user"}})))
	if err == nil || !strings.Contains(err.Error(), "domain.ToolAnnotations") {
		t.Fatalf("a tool with domain.Annotations: %v, want an error naming domain.ToolAnnotations", err)
	}
	err = e.AddResource(app.TextResource("test://b", "b", "x", app.WithAnnotations(domain.ToolAnnotations{Title: "B"})))
	if err == nil || !strings.Contains(err.Error(), "domain.Annotations") {
		t.Fatalf("a resource with domain.ToolAnnotations: %v, want an error naming domain.Annotations", err)
	}
}
