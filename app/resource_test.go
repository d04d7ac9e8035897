package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"go.uber.org/mock/gomock"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

const srvMeta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1"}}`

// resourceEngine is an engine with a resource registry holding rs.
func resourceEngine(t *testing.T, opts app.Options, rs ...hexmcp.Resource) *app.Engine {
	t.Helper()
	opts.Info = domain.Implementation{Name: "srv", Version: "1"}
	if opts.ResourceRegistry == nil {
		opts.ResourceRegistry = memory.NewResourceRegistry()
	}
	e := newEngine(t, opts)
	if err := e.AddResources(rs...); err != nil {
		t.Fatal(err)
	}
	return e
}

func sampleResources() []hexmcp.Resource {
	return []hexmcp.Resource{
		hexmcp.TextResource("test://static-text", "static-text", "This is the content of the static text resource.",
			hexmcp.WithTitle("Static text"), hexmcp.WithDescription("A text resource")),
		hexmcp.BlobResource("test://static-binary", "static-binary", []byte{0, 1, 2}, hexmcp.WithMimeType("image/png")),
		hexmcp.NewResourceTemplate("test://template/{id}/data", "template", func(_ context.Context, uri string, vars map[string]string) ([]domain.ResourceContents, error) {
			if vars["id"] == "missing" {
				return nil, fmt.Errorf("no row: %w", domain.ErrResourceNotFound)
			}
			if vars["id"] == "boom" {
				return nil, errors.New("database down")
			}
			if vars["id"] == "panic" {
				panic("oops")
			}
			if vars["id"] == "denied" {
				return nil, domain.NewProtocolError(-32001, "denied", nil)
			}
			return []domain.ResourceContents{{Text: `{"id":"` + vars["id"] + `"}`}}, nil
		}, hexmcp.WithMimeType("application/json"), hexmcp.WithTitle("Data")),
	}
}

func TestResourcesHandshake(t *testing.T) {
	log := quietLogger(gomock.NewController(t))
	var logged []string
	log.EXPECT().LogAttrs(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Do(func(_ context.Context, _ slog.Level, msg string, _ ...slog.Attr) {
		logged = append(logged, msg)
	}).AnyTimes()
	c := serve(t, resourceEngine(t, app.Options{Validator: jsonschema.New(), Logger: log}, sampleResources()...))
	init := c.initialize("2025-11-25")
	if !strings.Contains(init, `"resources":{"listChanged":true,"subscribe":true}`) {
		t.Fatal(init)
	}
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"resources":[
			{"uri":"test://static-binary","name":"static-binary","mimeType":"image/png"},
			{"uri":"test://static-text","name":"static-text","title":"Static text","description":"A text resource","mimeType":"text/plain"}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}`),
		`{"jsonrpc":"2.0","id":2,"result":{"resourceTemplates":[{"uriTemplate":"test://template/{id}/data","name":"template","title":"Data","mimeType":"application/json"}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://static-text"}}`),
		`{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://static-binary"}}`),
		`{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":"AAEC"}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://template/123/data"}}`),
		`{"jsonrpc":"2.0","id":5,"result":{"contents":[{"uri":"test://template/123/data","mimeType":"application/json","text":"{\"id\":\"123\"}"}]}}`)
	// errors
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"test://nope"}}`),
		`{"jsonrpc":"2.0","id":6,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"test://nope"}}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"test://template/missing/data"}}`),
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"test://template/missing/data"}}}`)
	for i, id := range []string{"boom", "panic"} {
		equalJSON(t, c.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"test://template/%s/data"}}`, 8+i, id)),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"Internal error"}}`, 8+i))
	}
	if fmt.Sprint(logged) != "[hexmcp: resource handler failed hexmcp: resource handler panicked]" {
		t.Fatalf("logged %q", logged)
	}
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"test://template/denied/data"}}`),
		`{"jsonrpc":"2.0","id":10,"error":{"code":-32001,"message":"denied"}}`)
	for i, params := range []string{`{}`, `{"uri":""}`, `{"uri":7}`} {
		got := c.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":%s}`, 11+i, params))
		if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, `"uri\" must be a non-empty string`) {
			t.Fatal(got)
		}
	}
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":14,"method":"resources/list","params":{"cursor":"bogus"}}`); !strings.Contains(got, `"code":-32602`) {
		t.Fatal(got)
	}
}

func TestResourcesStateless(t *testing.T) {
	c := serve(t, resourceEngine(t, app.Options{Validator: jsonschema.New(), ListTTL: 2 * time.Second, PrivateCache: true}, sampleResources()...))
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","resources":[
			{"uri":"test://static-binary","name":"static-binary","mimeType":"image/png"},
			{"uri":"test://static-text","name":"static-text","title":"Static text","description":"A text resource","mimeType":"text/plain"}],
			"ttlMs":2000,"cacheScope":"private",`+srvMeta+`}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"resources/templates/list","params":{`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","resourceTemplates":[{"uriTemplate":"test://template/{id}/data","name":"template","title":"Data","mimeType":"application/json"}],"ttlMs":2000,"cacheScope":"private",`+srvMeta+`}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://template/9/data",`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","contents":[{"uri":"test://template/9/data","mimeType":"application/json","text":"{\"id\":\"9\"}"}],"ttlMs":2000,"cacheScope":"private",`+srvMeta+`}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://nonexistent",`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"test://nonexistent"}}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://template/missing/data",`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"test://template/missing/data"}}}`)
	// subscriptions are a handshake-era method
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":6,"method":"resources/subscribe","params":{"uri":"test://static-text",` + meta2026 + `}}`); !strings.Contains(got, `"code":-32601`) {
		t.Fatal(got)
	}
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"logging":{},"tools":{"listChanged":true},"resources":{"listChanged":true}},"ttlMs":2000,"cacheScope":"private",`+srvMeta+`}}`)
}

func TestResourcesShapedPerRevision(t *testing.T) {
	r := hexmcp.TextResource("x://a", "a", "hi", hexmcp.WithTitle("A"),
		hexmcp.WithIcons(domain.Icon{Src: "https://example.com/a.png"}), hexmcp.WithMeta(map[string]any{"k": "v"}),
		hexmcp.WithSize(2))
	e := resourceEngine(t, app.Options{Validator: jsonschema.New()}, r)
	old := serve(t, e)
	init := old.initialize("2024-11-05")
	if !strings.Contains(init, `"resources":{"listChanged":true,"subscribe":true}`) {
		t.Fatal(init)
	}
	equalJSON(t, old.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"x://a","name":"a","mimeType":"text/plain","size":2}]}}`)
	cur := serve(t, e)
	cur.initialize("2025-11-25")
	equalJSON(t, cur.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"x://a","name":"a","title":"A","mimeType":"text/plain","size":2,"icons":[{"src":"https://example.com/a.png"}],"_meta":{"k":"v"}}]}}`)
}

func TestResourcesPagination(t *testing.T) {
	var rs []hexmcp.Resource
	for i := 0; i < 5; i++ {
		rs = append(rs, hexmcp.TextResource(fmt.Sprintf("x://r%d", i), "r", "t"))
		rs = append(rs, hexmcp.NewResourceTemplate(fmt.Sprintf("x://t%d/{id}", i), "t", func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) { return nil, nil }))
	}
	c := serve(t, resourceEngine(t, app.Options{Validator: jsonschema.New(), PageSize: 2}, rs...))
	c.initialize("2025-11-25")
	for _, method := range []string{"resources/list", "resources/templates/list"} {
		var got []string
		listPages(t, c, method, func(result string) {
			var page struct {
				Resources []struct{ URI string }
				Templates []struct{ URITemplate string } `json:"resourceTemplates"`
			}
			decodeJSON(t, result, &page)
			for _, r := range page.Resources {
				got = append(got, r.URI)
			}
			for _, r := range page.Templates {
				got = append(got, r.URITemplate)
			}
		})
		if len(got) != 5 {
			t.Fatalf("%s: paged through %v", method, got)
		}
	}
}

func TestResourcesListChangedAndSubscriptions(t *testing.T) {
	e := resourceEngine(t, app.Options{Validator: jsonschema.New()})
	// nothing registered: no capability, no notification
	early := serve(t, e)
	if init := early.initialize("2025-11-25"); strings.Contains(init, `"resources"`) {
		t.Fatal("resources advertised with an empty registry: " + init)
	}
	if err := e.AddResource(hexmcp.TextResource("x://a", "a", "one")); err != nil {
		t.Fatal(err)
	}
	early.expectNothing()

	c := serve(t, e)
	if init := c.initialize("2025-11-25"); !strings.Contains(init, `"resources":{"listChanged":true,"subscribe":true}`) {
		t.Fatal(init)
	}
	stateless := serve(t, e)
	stateless.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{` + meta2026 + `}}`)

	if err := e.AddResource(hexmcp.NewResourceTemplate("x://{id}", "t", func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) { return nil, nil })); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`)
	if !e.RemoveResourceTemplate("x://{id}") || e.RemoveResourceTemplate("x://{id}") {
		t.Fatal("RemoveResourceTemplate result wrong")
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`)

	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"x://a"}}`), `{"jsonrpc":"2.0","id":2,"result":{}}`)
	if n := e.NotifyResourceUpdated("x://a"); n != 1 {
		t.Fatalf("NotifyResourceUpdated told %d sessions", n)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"x://a"}}`)
	e.NotifyResourceUpdated("x://other")
	c.expectNothing()
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"x://a"}}`), `{"jsonrpc":"2.0","id":3,"result":{}}`)
	if n := e.NotifyResourceUpdated("x://a"); n != 0 {
		t.Fatalf("after unsubscribe, NotifyResourceUpdated told %d sessions", n)
	}
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{}}`); !strings.Contains(got, `"code":-32602`) {
		t.Fatal(got)
	}

	if !e.RemoveResource("x://a") || e.RemoveResource("x://a") {
		t.Fatal("RemoveResource result wrong")
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"resources/list"}`), `{"jsonrpc":"2.0","id":5,"result":{"resources":[]}}`)
	stateless.expectNothing()
	early.expectNothing()
}

func TestNoResourceRegistry(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
	c := serve(t, e)
	if init := c.initialize("2025-11-25"); strings.Contains(init, `"resources"`) {
		t.Fatal(init)
	}
	for _, m := range []string{"resources/list", "resources/templates/list", "resources/read", "resources/subscribe"} {
		if got := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"` + m + `","params":{"uri":"x://a"}}`); !strings.Contains(got, `"code":-32601`) {
			t.Fatalf("%s: %s", m, got)
		}
	}
	if err := e.AddResource(hexmcp.TextResource("x://a", "a", "t")); err == nil {
		t.Fatal("AddResource without a registry succeeded")
	}
	if e.RemoveResource("x://a") {
		t.Fatal("RemoveResource without a registry")
	}
}

func TestResourceRegistrationErrors(t *testing.T) {
	e := resourceEngine(t, app.Options{Validator: jsonschema.New()}, hexmcp.TextResource("x://a", "a", "t"))
	read := func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) { return nil, nil }
	bad := map[string]hexmcp.Resource{
		"duplicate":    hexmcp.TextResource("x://a", "a", "t"),
		"no scheme":    hexmcp.TextResource("nope", "a", "t"),
		"no name":      hexmcp.TextResource("x://b", "", "t"),
		"no handler":   hexmcp.NewResource("x://c", "c", nil),
		"bad template": hexmcp.NewResourceTemplate("x://{a}{b}", "t", read),
		"level 2":      hexmcp.NewResourceTemplate("x://{+path}", "t", read),
		"sized tmpl":   hexmcp.NewResourceTemplate("x://{a}", "t", read, hexmcp.WithSize(3)),
		"bad icon":     hexmcp.TextResource("x://d", "d", "t", hexmcp.WithIcons(domain.Icon{Src: "ftp://x"})),
		"empty":        {},
	}
	for name, r := range bad {
		err := e.AddResource(r)
		var de *domain.DefinitionError
		if !errors.As(err, &de) || de.Kind != "resource" {
			t.Errorf("%s: AddResource = %v, want a resource DefinitionError", name, err)
		}
	}
	if err := e.AddResource(hexmcp.NewResourceTemplate("x://{a}", "t", read)); err != nil {
		t.Fatal(err)
	}
	if err := e.AddResource(hexmcp.NewResourceTemplate("x://{a}", "t", read)); !errors.Is(err, domain.ErrDuplicateResource) {
		t.Fatalf("duplicate template: %v", err)
	}
	if err := e.AddResourceTemplate(hexmcp.TextResource("x://z", "z", "t")); err == nil {
		t.Fatal("AddResourceTemplate took a plain resource")
	}
	if err := e.AddResourceTemplate(hexmcp.NewResourceTemplate("x://t/{a}", "t", read)); err != nil {
		t.Fatal(err)
	}
}

// listPages calls method page after page (10 at most), passing each page's
// result to page, until a page has no nextCursor.
func listPages(t *testing.T, c *client, method string, page func(result string)) {
	t.Helper()
	cursor := ""
	for range 10 {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		var out struct {
			Result json.RawMessage
		}
		decodeJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`), &out)
		var next struct{ NextCursor string }
		decodeJSON(t, string(out.Result), &next)
		page(string(out.Result))
		if cursor = next.NextCursor; cursor == "" {
			return
		}
	}
}

// listNames pages through method with listPages and returns the names of
// the items of member (tools, prompts) of every page in turn.
func listNames(t *testing.T, c *client, method, member string) []string {
	t.Helper()
	var names []string
	listPages(t, c, method, func(result string) {
		var page map[string]json.RawMessage
		decodeJSON(t, result, &page)
		var items []struct{ Name string }
		decodeJSON(t, string(page[member]), &items)
		for _, it := range items {
			names = append(names, it.Name)
		}
	})
	return names
}

func decodeJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
}
