package apps_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/extensions/apps"
	"github.com/hexmcp/hexmcp/hexmcptest"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

const counterHTML = "<!DOCTYPE html><html><body><p id=count>0</p></body></html>"

const counterURI = "ui://test/counter.html"

// uiCaps are the client capabilities of a host that renders views.
var uiCaps = map[string]any{"extensions": map[string]any{apps.ID: map[string]any{"mimeTypes": []string{apps.MimeType}}}}

type countIn struct {
	Count int `json:"count"`
}

// counter adds one; its text says whether the client renders views.
func counter(_ context.Context, rc *app.RequestContext, in countIn) (*domain.CallToolResult, error) {
	text := "count " + jsonText(in.Count+1)
	if !apps.ClientSupports(rc) {
		text += " (no view)"
	}
	return &domain.CallToolResult{
		Content:           []domain.Content{hexmcp.Text(text)},
		StructuredContent: json.RawMessage(`{"count":` + jsonText(in.Count+1) + `}`),
	}, nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func server(t *testing.T, views ...apps.View) *hexmcp.Server {
	t.Helper()
	ext, err := apps.New(apps.Options{Views: views})
	if err != nil {
		t.Fatal(err)
	}
	return hexmcptest.NewServer(t, hexmcp.Options{
		ResourceRegistry: memory.NewResourceRegistry(),
		Extensions:       []app.Extension{ext},
		Tools: []hexmcp.Tool{
			hexmcp.NewTool(counter, hexmcp.WithDescription("Adds one"), apps.WithView(counterURI)),
			hexmcp.NewTool(counter, hexmcp.WithName("bump"), apps.WithView(counterURI, apps.VisibilityApp, "bogus", apps.VisibilityApp)),
		},
	})
}

func yes() *bool { b := true; return &b }

func fullView() apps.View {
	return apps.View{
		URI: counterURI, Name: "Counter", Title: "A counter", Description: "Shows a count",
		HTML:          counterHTML,
		CSP:           &apps.CSP{ConnectDomains: []string{"https://api.example.com"}, ResourceDomains: []string{"https://*.cdn.example.com", "https://cdn.example.org:8443"}},
		Permissions:   apps.Permissions{ClipboardWrite: true},
		Domain:        "abc.example-content.com",
		PrefersBorder: yes(),
	}
}

const wantUIMeta = `{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://*.cdn.example.com","https://cdn.example.org:8443"]},"domain":"abc.example-content.com","permissions":{"clipboardWrite":{}},"prefersBorder":true}`

// roundTrip sends raw messages to the engine over one in-memory
// connection and returns the result of each.
func roundTrip(t *testing.T, e *app.Engine, msgs ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, raw := range testtools.Exchange(t, e, msgs...) {
		var r struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(raw, &r); err != nil || r.Result == nil {
			t.Fatalf("%s answered %s (%v)", msgs[i], raw, err)
		}
		out = append(out, r.Result)
	}
	return out
}

// The capability is advertised with its settings in both eras: in the
// initialize result (handshake) and in server/discover (stateless), with
// the resources capability the views need.
func TestCapabilityBothEras(t *testing.T) {
	srv := server(t, fullView())
	const want = `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`
	init := roundTrip(t, srv.Engine(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)[0]
	disc := roundTrip(t, srv.Engine(), `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"2"}}}}`)[0]
	for name, res := range map[string]map[string]any{"initialize": init, "server/discover": disc} {
		caps, _ := res["capabilities"].(map[string]any)
		if got := jsonText(caps["extensions"]); got != want {
			t.Errorf("%s: extensions = %s, want %s", name, got, want)
		}
		if caps["resources"] == nil {
			t.Errorf("%s: no resources capability: %v", name, caps)
		}
	}
}

// Over every revision: the tool points at its view where the revision has
// _meta on tools (2025-06-18 on) and is a plain tool before; the view is
// listed and read with its MIME type and _meta.ui; the tool works with and
// without the client's declaring the extension, its text telling which.
func TestViewEveryRevision(t *testing.T) {
	srv := server(t, fullView())
	for _, declared := range []bool{true, false} {
		opts := hexmcptest.ClientOptions{}
		if declared {
			opts.Capabilities = uiCaps
		}
		t.Run(map[bool]string{true: "declared", false: "undeclared"}[declared], func(t *testing.T) {
			hexmcptest.ForEachRevision(t, srv, opts, func(t *testing.T, c *client.Session) {
				ctx := t.Context()
				tools, err := client.Collect(c.ListTools(ctx))
				if err != nil {
					t.Fatal(err)
				}
				metas := map[string]string{}
				for _, tl := range tools {
					metas[tl.Name] = jsonText(tl.Meta)
				}
				want := map[string]string{
					"counter": `{"ui":{"resourceUri":"ui://test/counter.html"},"ui/resourceUri":"ui://test/counter.html"}`,
					"bump":    `{"ui":{"resourceUri":"ui://test/counter.html","visibility":["app"]},"ui/resourceUri":"ui://test/counter.html"}`,
				}
				if !c.Features().Meta {
					want = map[string]string{"counter": "null", "bump": "null"}
				}
				for name, w := range want {
					if metas[name] != w {
						t.Errorf("tool %s _meta = %s, want %s", name, metas[name], w)
					}
				}

				listed, err := client.Collect(c.ListResources(ctx))
				if err != nil {
					t.Fatal(err)
				}
				if len(listed) != 1 || listed[0].URI != counterURI || listed[0].MimeType != apps.MimeType || listed[0].Name != "Counter" || listed[0].Description != "Shows a count" {
					t.Fatalf("resources/list = %+v", listed)
				}
				read, err := c.ReadResource(ctx, counterURI)
				if err != nil || len(read.Contents) != 1 {
					t.Fatalf("resources/read = %+v, %v", read, err)
				}
				got := read.Contents[0]
				if got.URI != counterURI || got.MimeType != apps.MimeType || got.Text != counterHTML {
					t.Errorf("contents = %+v", got)
				}
				// _meta on resources is the engine's to send or drop by revision.
				wantMeta := `{"ui":` + wantUIMeta + `}`
				if m := jsonText(got.Meta); c.Features().Meta && m != wantMeta {
					t.Errorf("contents _meta = %s, want %s", m, wantMeta)
				}
				if m := jsonText(listed[0].Meta); c.Features().Meta && m != wantMeta {
					t.Errorf("listed _meta = %s, want %s", m, wantMeta)
				}

				res, err := c.CallTool(ctx, "counter", map[string]any{"count": 2})
				if err != nil || res.IsError {
					t.Fatalf("counter = %+v, %v", res, err)
				}
				wantText := "count 3"
				if !declared {
					wantText += " (no view)"
				}
				if res.Text() != wantText {
					t.Errorf("text = %q, want %q", res.Text(), wantText)
				}
				if c.Features().StructuredContent && string(res.StructuredContent) != `{"count":3}` {
					t.Errorf("structuredContent = %s", res.StructuredContent)
				}
			})
		})
	}
}

func TestViewFromFS(t *testing.T) {
	fsys := fstest.MapFS{"ui/counter.html": {Data: []byte(counterHTML)}}
	srv := server(t, apps.View{URI: counterURI, Name: "Counter", FS: fsys, Path: "ui/counter.html"})
	c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{})
	read, err := c.ReadResource(t.Context(), counterURI)
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != counterHTML {
		t.Fatalf("resources/read = %+v, %v", read, err)
	}
	// No settings: no _meta.ui at all.
	if read.Contents[0].Meta != nil {
		t.Errorf("_meta = %v, want none", read.Contents[0].Meta)
	}
}

func TestNewRefuses(t *testing.T) {
	ok := func() apps.View { return apps.View{URI: counterURI, Name: "n", HTML: counterHTML} }
	big := strings.Repeat("x", apps.MaxViewBytes+1)
	for name, mod := range map[string]func(*apps.View){
		"http scheme":      func(v *apps.View) { v.URI = "https://x/counter.html" },
		"no scheme":        func(v *apps.View) { v.URI = "counter.html" },
		"empty ui URI":     func(v *apps.View) { v.URI = "ui://" },
		"upper-case UI":    func(v *apps.View) { v.URI = "UI://test/counter.html" },
		"no name":          func(v *apps.View) { v.Name = " " },
		"empty HTML":       func(v *apps.View) { v.HTML = "" },
		"not UTF-8":        func(v *apps.View) { v.HTML = "<p>\xff</p>" },
		"too big":          func(v *apps.View) { v.HTML = big },
		"too big file":     func(v *apps.View) { v.HTML, v.FS, v.Path = "", fstest.MapFS{"a.html": {Data: []byte(big)}}, "a.html" },
		"missing file":     func(v *apps.View) { v.HTML, v.FS, v.Path = "", fstest.MapFS{}, "a.html" },
		"HTML and FS":      func(v *apps.View) { v.FS, v.Path = fstest.MapFS{"a.html": {Data: []byte("x")}}, "a.html" },
		"Path without FS":  func(v *apps.View) { v.Path = "a.html" },
		"CSP directive":    func(v *apps.View) { v.CSP = &apps.CSP{ConnectDomains: []string{"https://a.com; script-src *"}} },
		"CSP keyword":      func(v *apps.View) { v.CSP = &apps.CSP{ResourceDomains: []string{"'unsafe-eval'"}} },
		"CSP path":         func(v *apps.View) { v.CSP = &apps.CSP{FrameDomains: []string{"https://a.com/x"}} },
		"CSP bare host":    func(v *apps.View) { v.CSP = &apps.CSP{BaseURIDomains: []string{"a.com"}} },
		"CSP any host":     func(v *apps.View) { v.CSP = &apps.CSP{ConnectDomains: []string{"https://*"}} },
		"CSP ftp":          func(v *apps.View) { v.CSP = &apps.CSP{ConnectDomains: []string{"ftp://a.com"}} },
		"domain with semi": func(v *apps.View) { v.Domain = "a.com;b" },
		"CSP comma":        func(v *apps.View) { v.CSP = &apps.CSP{ConnectDomains: []string{"https://a.com,b.com"}} },
		"CSP quote":        func(v *apps.View) { v.CSP = &apps.CSP{ResourceDomains: []string{"https://a'b.com"}} },
	} {
		v := ok()
		mod(&v)
		if _, err := apps.New(apps.Options{Views: []apps.View{v}}); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	if _, err := apps.New(apps.Options{Views: []apps.View{ok(), ok()}}); err == nil {
		t.Error("New accepted two views of one URI")
	}
	at := ok()
	at.HTML = strings.Repeat("x", apps.MaxViewBytes)
	if _, err := apps.New(apps.Options{Views: []apps.View{at}}); err != nil {
		t.Errorf("New refused a view of MaxViewBytes: %v", err)
	}
	// A URI that names only a host is a view's name enough.
	host := ok()
	host.URI = "ui://counter"
	if _, err := apps.New(apps.Options{Views: []apps.View{host}}); err != nil {
		t.Errorf("New refused %s: %v", host.URI, err)
	}
	if apps.MaxViewBytes != 4<<20 {
		t.Error("MaxViewBytes changed: update the README's table of limits")
	}
}

func TestWithViewVisibility(t *testing.T) {
	for _, tc := range []struct {
		vis  []apps.Visibility
		want string
	}{
		{nil, `{"resourceUri":"ui://a"}`},
		{[]apps.Visibility{apps.VisibilityApp, apps.VisibilityModel}, `{"resourceUri":"ui://a","visibility":["model","app"]}`},
		{[]apps.Visibility{"other"}, `{"resourceUri":"ui://a"}`},
	} {
		tool := hexmcp.NewTool(func() string { return "x" }, hexmcp.WithName("t"), apps.WithView("ui://a", tc.vis...))
		if err := tool.Err(); err != nil {
			t.Fatal(err)
		}
		meta := tool.Definition().Meta
		if got := jsonText(meta["ui"]); got != tc.want || meta[apps.LegacyResourceURIKey] != "ui://a" {
			t.Errorf("%v: _meta = %v, want ui %s", tc.vis, meta, tc.want)
		}
	}
}

func TestClientSupports(t *testing.T) {
	if apps.ClientSupports(nil) {
		t.Error("ClientSupports(nil) = true")
	}
	probe := hexmcp.NewTool(func(_ context.Context, rc *app.RequestContext) string {
		return jsonText(apps.ClientSupports(rc))
	}, hexmcp.WithName("probe"))
	srv := hexmcptest.NewServer(t, hexmcp.Options{Tools: []hexmcp.Tool{probe}})
	for _, tc := range []struct {
		caps map[string]any
		want string
	}{
		{uiCaps, "true"},
		{map[string]any{}, "false"},
		{map[string]any{"extensions": map[string]any{apps.ID: map[string]any{"mimeTypes": []string{"text/html"}}}}, "false"},
		{map[string]any{"extensions": map[string]any{apps.ID: true}}, "false"},
	} {
		hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{Capabilities: tc.caps}, func(t *testing.T, c *client.Session) {
			res, err := c.CallTool(t.Context(), "probe", nil)
			if err != nil || res.Text() != tc.want {
				t.Errorf("caps %v: probe = %+v, %v; want %s", tc.caps, res, err, tc.want)
			}
		})
	}
}
