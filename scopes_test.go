package hexmcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/wiretest"
	"github.com/hexmcp/hexmcp/ports"
)

const prm = "https://mcp.example/.well-known/oauth-protected-resource/mcp"

var tokens = mcphttp.StaticTokens{
	"reader": {Subject: "r", Scopes: []string{"files:read"}},
	"writer": {Subject: "w", Scopes: []string{"files:read", "files:write"}},
}

func scopedServer(t *testing.T, vis app.Visibility) *hexmcp.Server {
	t.Helper()
	srv, err := hexmcp.New(hexmcp.Options{
		Tools: []hexmcp.Tool{
			constTool("read", "read ok"),
			hexmcp.Func(func(context.Context, noInput) (string, error) { return "written", nil }, hexmcp.WithName("write"), app.WithScopes("files:read", "files:write")),
		},
		Visibility: vis,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func postAs(t *testing.T, url, token, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// A tool that declares scopes is refused to a caller without them: over
// Streamable HTTP with 403 and a challenge naming the scopes and the
// resource metadata (step-up), in both eras; served to one with them.
func TestScopesOverHTTP(t *testing.T) {
	srv := scopedServer(t, app.Visibility{})
	hs := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{ResourceMetadataURL: prm, Logger: ports.NopLogger{}})(srv.HTTPHandler(mcphttp.Options{})))
	defer hs.Close()
	stateless := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "write"}
	call := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write","arguments":{},` + statelessMeta + `}}`
	resp, body := postAs(t, hs.URL, "reader", call, stateless)
	ch := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="files:read files:write"`) || !strings.Contains(ch, `resource_metadata="`+prm+`"`) {
		t.Fatalf("stateless call without the scope: %d %q %s", resp.StatusCode, ch, body)
	}
	if !strings.Contains(body, `"id":4`) || !strings.Contains(body, `"code":-32052`) || !strings.Contains(body, `"missing":["files:write"]`) {
		t.Fatalf("the 403's body: %s", body)
	}
	if resp, body := postAs(t, hs.URL, "writer", call, stateless); resp.StatusCode != 200 || !strings.Contains(body, "written") {
		t.Fatalf("stateless call with the scopes: %d %s", resp.StatusCode, body)
	}
	// Handshake era: a session of the reader.
	resp, body = postAs(t, hs.URL, "reader", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	sess := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	postAs(t, hs.URL, "reader", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sess)
	resp, body = postAs(t, hs.URL, "reader", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{}}}`, sess)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "insufficient_scope") || !strings.Contains(body, `"code":-32052`) {
		t.Fatalf("session call without the scope: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	if resp, body := postAs(t, hs.URL, "reader", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{}}}`, sess); resp.StatusCode != 200 || !strings.Contains(body, "read ok") {
		t.Fatalf("a tool without scopes: %d %s", resp.StatusCode, body)
	}
}

// Over WebSocket the token is checked at the handshake and the scopes of
// each call against its principal: a JSON-RPC error for the reader, the
// result for the writer. Over stdio (no principal) a scoped tool is
// refused.
func TestScopesOverWebSocketAndStdio(t *testing.T) {
	srv := scopedServer(t, app.Visibility{})
	h := srv.WebSocketHandler(websocket.Options{})
	hs := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{ResourceMetadataURL: prm, Logger: ports.NopLogger{}})(h))
	t.Cleanup(func() { h.Shutdown(context.Background()); hs.Close() })
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write","arguments":{},` + statelessMeta + `}}`
	for token, want := range map[string]string{"reader": `"code":-32052`, "writer": "written"} {
		c, _, err := (&gws.Dialer{Subprotocols: []string{"mcp"}}).Dial("ws"+strings.TrimPrefix(hs.URL, "http"), http.Header{"Authorization": {"Bearer " + token}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.WriteMessage(gws.TextMessage, []byte(call)); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil || !strings.Contains(string(b), want) {
			t.Fatalf("%s over WebSocket: %v %s, want %s", token, err, b, want)
		}
	}
	if _, _, err := (&gws.Dialer{Subprotocols: []string{"mcp"}}).Dial("ws"+strings.TrimPrefix(hs.URL, "http"), nil); err == nil {
		t.Fatal("a WebSocket handshake without a token was accepted")
	}
	m := wiretest.Stdio(t, srv).Send(t, call)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(app.CodeInsufficientScope) {
		t.Fatalf("stdio (no principal): %v", m)
	}
}

// HideUnauthorized: the reader does not see the scoped tool and calling it
// is answered as an unknown tool; the writer sees and calls it.
func TestScopesHidden(t *testing.T) {
	srv := scopedServer(t, app.HideUnauthorized(app.Visibility{}))
	hs := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{Logger: ports.NopLogger{}})(srv.HTTPHandler(mcphttp.Options{})))
	defer hs.Close()
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + statelessMeta + `}}`
	names := func(token string) []string {
		_, body := postAs(t, hs.URL, token, list, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
		var r struct {
			Result struct {
				Tools []struct{ Name string }
			}
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("%s: %s", err, body)
		}
		var out []string
		for _, tl := range r.Result.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if got := strings.Join(names("reader"), ","); got != "read" {
		t.Fatalf("the reader sees %s", got)
	}
	if got := strings.Join(names("writer"), ","); got != "read,write" {
		t.Fatalf("the writer sees %s", got)
	}
	_, body := postAs(t, hs.URL, "reader", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{},`+statelessMeta+`}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "write"})
	if !strings.Contains(body, "Unknown tool") {
		t.Fatalf("a hidden tool called: %s", body)
	}
}

// Tools see the principal, never the raw token, unless declared with
// WithAccessToken.
func TestAccessTokenOnlyByName(t *testing.T) {
	seen := func(ctx context.Context, _ noInput) (string, error) {
		rc := hexmcp.RequestFrom(ctx)
		p := rc.Transport().Principal
		if p == nil {
			return "", hexmcp.NewToolError("no principal")
		}
		if len(rc.Transport().Header["Authorization"]) != 0 {
			return "", hexmcp.NewToolError("the Authorization header reached the tool")
		}
		return p.Subject + "|" + rc.AccessToken(), nil
	}
	srv, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{
		hexmcp.Func(seen, hexmcp.WithName("plain")),
		hexmcp.Func(seen, hexmcp.WithName("delegating"), app.WithAccessToken()),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{Logger: ports.NopLogger{}})(srv.HTTPHandler(mcphttp.Options{})))
	defer hs.Close()
	for name, want := range map[string]string{"plain": `"text":"w|"`, "delegating": `"text":"w|writer"`} {
		_, body := postAs(t, hs.URL, "writer", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":{},`+statelessMeta+`}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name})
		if !strings.Contains(body, want) {
			t.Fatalf("%s: %s, want %s", name, body, want)
		}
	}
}

// A resource (or a template) that declares scopes is refused to a caller
// without them on read and on subscribe, over Streamable HTTP with 403 and
// the challenge; listed all the same; served to one with them.
// scopedResources serves a public resource, a scoped one and a scoped
// template behind RequireBearer with tokens.
func scopedResources(t *testing.T, vis app.Visibility) *httptest.Server {
	t.Helper()
	srv, err := hexmcp.New(hexmcp.Options{
		Visibility: vis,
		Resources: []hexmcp.Resource{
			hexmcp.TextResource("files:///public.txt", "public", "open"),
			hexmcp.TextResource("files:///secret.txt", "secret", "the secret", app.WithScopes("files:write")),
			hexmcp.NewResourceTemplate("files:///private/{name}", "private", func(_ context.Context, uri string, _ map[string]string) ([]domain.ResourceContents, error) {
				return []domain.ResourceContents{{URI: uri, Text: "private text"}}, nil
			}, app.WithScopes("files:write")),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{ResourceMetadataURL: prm, Logger: ports.NopLogger{}})(srv.HTTPHandler(mcphttp.Options{})))
	t.Cleanup(hs.Close)
	return hs
}

// readAs reads uri at hs with token (2026-07-28).
func readAs(t *testing.T, hs *httptest.Server, token, uri string) (*http.Response, string) {
	return postAs(t, hs.URL, token, `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"`+uri+`",`+statelessMeta+`}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read", "Mcp-Name": uri})
}

// listAs lists method (resources/list, resources/templates/list) at hs.
func listAs(t *testing.T, hs *httptest.Server, token, method string) string {
	resp, body := postAs(t, hs.URL, token, `{"jsonrpc":"2.0","id":8,"method":"`+method+`","params":{`+statelessMeta+`}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method})
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", method, resp.StatusCode, body)
	}
	return body
}

func TestResourceScopesOverHTTP(t *testing.T) {
	hs := scopedResources(t, app.Visibility{})
	read := func(token, uri string) (*http.Response, string) { return readAs(t, hs, token, uri) }
	for _, uri := range []string{"files:///secret.txt", "files:///private/a"} {
		resp, body := read("reader", uri)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="files:write"`) || !strings.Contains(body, `"code":-32052`) || !strings.Contains(body, `"id":7`) {
			t.Fatalf("reader reads %s: %d %q %s", uri, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
		// What a scoped read returns depends on who asks: no shared cache
		// may keep it.
		if resp, body := read("writer", uri); resp.StatusCode != 200 || !strings.Contains(body, "text") || !strings.Contains(body, `"cacheScope":"private"`) {
			t.Fatalf("writer reads %s: %d %s", uri, resp.StatusCode, body)
		}
	}
	if resp, body := read("reader", "files:///public.txt"); resp.StatusCode != 200 || !strings.Contains(body, "open") || !strings.Contains(body, `"cacheScope":"public"`) {
		t.Fatalf("reader reads the public resource: %d %s", resp.StatusCode, body)
	}
	// Listed to the reader all the same (scopes are never sent).
	if body := listAs(t, hs, "reader", "resources/list"); !strings.Contains(body, "files:///secret.txt") || strings.Contains(body, "files:write") {
		t.Fatalf("resources/list: %s", body)
	}
	// Subscribing (handshake era) is refused likewise.
	resp, body := postAs(t, hs.URL, "reader", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	sess := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	postAs(t, hs.URL, "reader", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sess)
	resp, body = postAs(t, hs.URL, "reader", `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"files:///secret.txt"}}`, sess)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `"code":-32052`) {
		t.Fatalf("reader subscribes to the scoped resource: %d %s", resp.StatusCode, body)
	}
}

// HideUnauthorized hides scoped resources and templates from a caller
// without the scopes (absent from the lists, read as unknown), and shows
// them to one with them.
func TestResourceScopesHidden(t *testing.T) {
	hs := scopedResources(t, app.HideUnauthorized(app.Visibility{}))
	if body := listAs(t, hs, "reader", "resources/list"); strings.Contains(body, "secret") || !strings.Contains(body, "public") {
		t.Fatalf("reader's resources/list: %s", body)
	}
	if body := listAs(t, hs, "reader", "resources/templates/list"); strings.Contains(body, "files:///private") {
		t.Fatalf("reader's resources/templates/list: %s", body)
	}
	for _, uri := range []string{"files:///secret.txt", "files:///private/a"} {
		// Unknown: -32602 in 2026-07-28 (SEP-2164), not the scope challenge.
		if _, body := readAs(t, hs, "reader", uri); !strings.Contains(body, `"code":-32602`) {
			t.Fatalf("reader reads hidden %s: %s, want resource not found", uri, body)
		}
	}
	if body := listAs(t, hs, "writer", "resources/list"); !strings.Contains(body, "secret") {
		t.Fatalf("writer's resources/list: %s", body)
	}
	if resp, body := readAs(t, hs, "writer", "files:///private/a"); resp.StatusCode != 200 || !strings.Contains(body, "private text") {
		t.Fatalf("writer reads the template: %d %s", resp.StatusCode, body)
	}
}
