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

// A Visibility.Resource filter decides per viewer: the resources and
// templates it hides from one client are unknown to that client's
// resources/read, and read as usual by a client it admits.
func TestResourceVisibilityByViewer(t *testing.T) {
	e := newEngine(t, app.Options{
		Validator:        jsonschema.New(),
		ResourceRegistry: memory.NewResourceRegistry(),
		Visibility: app.Visibility{Resource: func(_ context.Context, v *app.Viewer, uri string) bool {
			return !strings.HasPrefix(uri, "test://staff") || v != nil && v.Client.Name == "staff"
		}},
	})
	err := e.AddResources(
		app.TextResource("test://open", "open", "for all"),
		app.TextResource("test://staff", "staff", "for staff"),
		app.NewResourceTemplate("test://staff/{id}", "staff item", func(_ context.Context, uri string, vars map[string]string) ([]domain.ResourceContents, error) {
			return []domain.ResourceContents{{URI: uri, Text: "item " + vars["id"]}}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	guest, staff := serve(t, e), serve(t, e)
	initializeAs(guest, "guest")
	initializeAs(staff, "staff")
	read := func(id, uri string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"resources/read","params":{"uri":"` + uri + `"}}`
	}
	for _, c := range []*client{guest, staff} {
		equalJSON(t, c.roundTrip(read("1", "test://open")),
			`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"test://open","mimeType":"text/plain","text":"for all"}]}}`)
	}
	equalJSON(t, staff.roundTrip(read("2", "test://staff")),
		`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"test://staff","mimeType":"text/plain","text":"for staff"}]}}`)
	equalJSON(t, staff.roundTrip(read("3", "test://staff/42")),
		`{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"test://staff/42","text":"item 42"}]}}`)
	unknown := guest.roundTrip(read("4", "test://nothing"))
	for _, uri := range []string{"test://staff", "test://staff/42"} {
		got := guest.roundTrip(read("4", uri))
		if want := strings.ReplaceAll(unknown, "test://nothing", uri); got != want {
			t.Fatalf("guest reads %s:\n got %s\nwant %s (as an unknown URI)", uri, got, want)
		}
	}
}
