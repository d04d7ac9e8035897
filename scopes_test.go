package hexmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/internal/wiretest"
)

const prm = "https://mcp.example/.well-known/oauth-protected-resource/mcp"

var tokens = mcphttp.StaticTokens{
	"reader": {Subject: "r", Scopes: []string{"files:read"}},
	"writer": {Subject: "w", Scopes: []string{"files:read", "files:write"}},
}

func scopedServer(t *testing.T, vis hexmcp.Visibility) *hexmcp.Server {
	t.Helper()
	srv, err := hexmcp.New(hexmcp.Options{
		Tools: []hexmcp.Tool{
			constTool("read", "read ok"),
			hexmcp.Func(func(context.Context, noInput) (string, error) { return "written", nil }, hexmcp.WithName("write"), hexmcp.WithScopes("files:read", "files:write")),
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

// sessionAs opens a handshake-era session at url as token's holder and
// returns the headers of its later requests.
func sessionAs(t *testing.T, url, token string) map[string]string {
	t.Helper()
	resp, body := postAs(t, url, token, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	sess := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	postAs(t, url, token, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sess)
	return sess
}

// wsCallAs sends call over a WebSocket to url, as token's holder, and
// returns the first message that comes back (waiting 10 s at most); the
// connection is closed when t ends.
func wsCallAs(t *testing.T, url, token, call string) ([]byte, error) {
	t.Helper()
	c, _, err := (&gws.Dialer{Subprotocols: []string{"mcp"}}).Dial(url, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.WriteMessage(gws.TextMessage, []byte(call)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ReadMessage()
	return b, err
}

func postAs(t *testing.T, url, token, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return testtools.DoRead(t, nil, req)
}

// A tool that declares scopes is refused to a caller without them: over
// Streamable HTTP with 403 and a challenge naming the scopes and the
// resource metadata (step-up), in both eras; served to one with them.
func TestScopesOverHTTP(t *testing.T) {
	srv := scopedServer(t, hexmcp.Visibility{})
	hs := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{ResourceMetadataURL: prm, Logger: slog.New(slog.DiscardHandler)})(srv.HTTPHandler(mcphttp.Options{})))
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
	srv := scopedServer(t, hexmcp.Visibility{})
	h := srv.WebSocketHandler(websocket.Options{})
	hs := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{ResourceMetadataURL: prm, Logger: slog.New(slog.DiscardHandler)})(h))
	t.Cleanup(func() { h.Shutdown(context.Background()); hs.Close() })
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write","arguments":{},` + statelessMeta + `}}`
	for token, want := range map[string]string{"reader": `"code":-32052`, "writer": "written"} {
		b, err := wsCallAs(t, "ws"+strings.TrimPrefix(hs.URL, "http"), token, call)
		if err != nil || !strings.Contains(string(b), want) {
			t.Fatalf("%s over WebSocket: %v %s, want %s", token, err, b, want)
		}
	}
	if _, _, err := (&gws.Dialer{Subprotocols: []string{"mcp"}}).Dial("ws"+strings.TrimPrefix(hs.URL, "http"), nil); err == nil {
		t.Fatal("a WebSocket handshake without a token was accepted")
	}
	m := wiretest.Stdio(t, srv).Send(t, call)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(hexmcp.CodeInsufficientScope) {
		t.Fatalf("stdio (no principal): %v", m)
	}
}

// HideUnauthorized: the reader does not see the scoped tool and calling it
// is answered as an unknown tool; the writer sees and calls it.
func TestScopesHidden(t *testing.T) {
	srv := scopedServer(t, hexmcp.HideUnauthorized(hexmcp.Visibility{}))
	hs := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{Logger: slog.New(slog.DiscardHandler)})(srv.HTTPHandler(mcphttp.Options{})))
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
	// A caller with no principal at all (stdio: no authenticator) holds no
	// scope: it sees the unscoped tool alone.
	m := wiretest.Stdio(t, srv).Send(t, list)
	if got := fmt.Sprint(m["result"]); !strings.Contains(got, "name:read") || strings.Contains(got, "name:write") {
		t.Fatalf("stdio (no principal) sees %v", m)
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
		hexmcp.Func(seen, hexmcp.WithName("delegating"), hexmcp.WithAccessToken()),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{Logger: slog.New(slog.DiscardHandler)})(srv.HTTPHandler(mcphttp.Options{})))
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
func scopedResources(t *testing.T, vis hexmcp.Visibility) *httptest.Server {
	t.Helper()
	_, hs := scopedResourceServer(t, vis)
	return hs
}

// scopedResourceServer is scopedResources with the server itself, which
// also has a scoped prompt; the scoped prompt's argument and the scoped
// template's variable have completers.
func scopedResourceServer(t *testing.T, vis hexmcp.Visibility) (*hexmcp.Server, *httptest.Server) {
	t.Helper()
	secrets := func(context.Context, string, map[string]string) ([]string, error) {
		return []string{"secret-plan"}, nil
	}
	srv, err := hexmcp.New(hexmcp.Options{
		Visibility: vis,
		Resources: []hexmcp.Resource{
			hexmcp.TextResource("files:///public.txt", "public", "open"),
			hexmcp.TextResource("files:///secret.txt", "secret", "the secret", hexmcp.WithScopes("files:write")),
			hexmcp.NewResourceTemplate("files:///private/{name}", "private", func(_ context.Context, uri string, _ map[string]string) ([]hexmcp.ResourceContents, error) {
				return []hexmcp.ResourceContents{{URI: uri, Text: "private text"}}, nil
			}, hexmcp.WithScopes("files:write"), hexmcp.WithTemplateCompleter("name", secrets)),
		},
		Prompts: []hexmcp.Prompt{
			hexmcp.NewPrompt("review", func(context.Context, map[string]string) (*hexmcp.GetPromptResult, error) {
				return &hexmcp.GetPromptResult{Messages: []hexmcp.PromptMessage{hexmcp.UserMessage(hexmcp.Text("review it"))}}, nil
			}, hexmcp.WithArgument(hexmcp.PromptArgument{Name: "file"}, secrets), hexmcp.WithScopes("files:write")),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{ResourceMetadataURL: prm, Logger: slog.New(slog.DiscardHandler)})(srv.HTTPHandler(mcphttp.Options{})))
	t.Cleanup(hs.Close)
	return srv, hs
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
	hs := scopedResources(t, hexmcp.Visibility{})
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
	sess := sessionAs(t, hs.URL, "reader")
	resp, body := postAs(t, hs.URL, "reader", `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"files:///secret.txt"}}`, sess)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `"code":-32052`) {
		t.Fatalf("reader subscribes to the scoped resource: %d %s", resp.StatusCode, body)
	}
}

// HideUnauthorized hides scoped resources and templates from a caller
// without the scopes (absent from the lists, read as unknown), and shows
// them to one with them.
func TestResourceScopesHidden(t *testing.T) {
	hs := scopedResources(t, hexmcp.HideUnauthorized(hexmcp.Visibility{}))
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

// sseEvents are the data of an SSE response's events, as they come.
type sseEvents <-chan string

func readEvents(body io.Reader) sseEvents { return testtools.SSEData(body) }

// next is the next event's data.
func (ev sseEvents) next(t *testing.T) string {
	t.Helper()
	return testtools.NextData(t, ev, 30*time.Second)
}

// listenAs sends a 2026-07-28 subscriptions/listen request of id at hs
// with token, asking for notifications (a JSON object). An SSE stream
// comes back as its events (the response ends with the test); any other
// answer as its body.
func listenAs(t *testing.T, hs *httptest.Server, token string, id int, notifications string) (*http.Response, sseEvents, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":%s,%s}}`, id, notifications, statelessMeta)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, readEvents(resp.Body), ""
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, nil, string(b)
}

// ackOf is the acknowledgement of listen request id for notifications.
func ackOf(id int, notifications string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%d},"notifications":%s}}`, id, notifications)
}

// updatedOf is notifications/resources/updated of uri on listen stream id.
func updatedOf(id int, uri string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%d},"uri":%q}}`, id, uri)
}

// Following a resource on a listen stream takes what subscribing takes: a
// caller without a scoped resource's (or template's) scopes is refused as
// resources/subscribe refuses it (-32052, over HTTP a 403 whose challenge
// names the scopes: step-up), never streamed its updates; one with them is
// acknowledged and told.
func TestListenResourceScopesOverHTTP(t *testing.T) {
	srv, hs := scopedResourceServer(t, hexmcp.Visibility{})
	for i, uri := range []string{"files:///secret.txt", "files:///private/a"} {
		id := 30 + i
		resp, ev, body := listenAs(t, hs, "reader", id, `{"toolsListChanged":true,"resourceSubscriptions":["files:///public.txt","`+uri+`"]}`)
		ch := resp.Header.Get("WWW-Authenticate")
		if ev != nil {
			srv.NotifyResourceUpdated(uri)
			t.Fatalf("reader listens to %s: a stream (%d): %s then %s", uri, resp.StatusCode, ev.next(t), ev.next(t))
		}
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="files:write"`) ||
			!strings.Contains(body, `"code":-32052`) || !strings.Contains(body, fmt.Sprintf(`"id":%d`, id)) || !strings.Contains(body, `"missing":["files:write"]`) {
			t.Fatalf("reader listens to %s: %d %q %s", uri, resp.StatusCode, ch, body)
		}
	}
	// The writer holds the scope: acknowledged and told.
	_, ev, body := listenAs(t, hs, "writer", 40, `{"resourceSubscriptions":["files:///secret.txt","files:///private/a"]}`)
	if ev == nil {
		t.Fatalf("writer's listen: %s", body)
	}
	if got, want := ev.next(t), ackOf(40, `{"resourceSubscriptions":["files:///secret.txt","files:///private/a"]}`); got != want {
		t.Fatalf("writer's acknowledgement %s, want %s", got, want)
	}
	if n := srv.NotifyResourceUpdated("files:///private/a"); n != 1 {
		t.Fatalf("NotifyResourceUpdated told %d", n)
	}
	if got, want := ev.next(t), updatedOf(40, "files:///private/a"); got != want {
		t.Fatalf("writer got %s, want %s", got, want)
	}
}

// Under HideUnauthorized a resource hidden from the caller is followed no
// more than an unknown one: left out of the acknowledgement (the subset the
// server honors) exactly as a URI that does not exist, and its updates
// never streamed.
func TestListenResourceHiddenOverHTTP(t *testing.T) {
	srv, hs := scopedResourceServer(t, hexmcp.HideUnauthorized(hexmcp.Visibility{}))
	_, ev, body := listenAs(t, hs, "reader", 50, `{"resourceSubscriptions":["files:///secret.txt","files:///private/a","files:///nothing.txt","files:///public.txt"]}`)
	if ev == nil {
		t.Fatalf("reader's listen: %s", body)
	}
	if got, want := ev.next(t), ackOf(50, `{"resourceSubscriptions":["files:///public.txt"]}`); got != want {
		t.Fatalf("acknowledgement %s, want %s", got, want)
	}
	for _, uri := range []string{"files:///secret.txt", "files:///private/a", "files:///nothing.txt"} {
		if n := srv.NotifyResourceUpdated(uri); n != 0 {
			t.Errorf("NotifyResourceUpdated(%s) told %d", uri, n)
		}
	}
	srv.NotifyResourceUpdated("files:///public.txt")
	// Notices are written in the order they come: a hidden one would be first.
	if got, want := ev.next(t), updatedOf(50, "files:///public.txt"); got != want {
		t.Fatalf("reader got %s, want %s", got, want)
	}
	// The writer sees them: acknowledged.
	_, ev, body = listenAs(t, hs, "writer", 51, `{"resourceSubscriptions":["files:///secret.txt","files:///private/a","files:///nothing.txt"]}`)
	if ev == nil {
		t.Fatalf("writer's listen: %s", body)
	}
	if got, want := ev.next(t), ackOf(51, `{"resourceSubscriptions":["files:///secret.txt","files:///private/a"]}`); got != want {
		t.Fatalf("writer's acknowledgement %s, want %s", got, want)
	}
}

// Visibility is decided when a notification is delivered, not only when
// the stream opened: once the Visibility hides a resource (and the server
// says so, VisibilityChanged), its updates no longer reach a stream that
// followed it.
func TestListenResourceHiddenLaterOverHTTP(t *testing.T) {
	var hide atomic.Bool
	srv, hs := scopedResourceServer(t, hexmcp.Visibility{Resource: func(_ context.Context, _ *hexmcp.Viewer, uri string) bool {
		return uri != "files:///public.txt" || !hide.Load()
	}})
	_, ev, body := listenAs(t, hs, "writer", 60, `{"resourceSubscriptions":["files:///public.txt","files:///secret.txt"]}`)
	if ev == nil {
		t.Fatalf("listen: %s", body)
	}
	if got, want := ev.next(t), ackOf(60, `{"resourceSubscriptions":["files:///public.txt","files:///secret.txt"]}`); got != want {
		t.Fatalf("acknowledgement %s, want %s", got, want)
	}
	srv.NotifyResourceUpdated("files:///public.txt")
	if got, want := ev.next(t), updatedOf(60, "files:///public.txt"); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	hide.Store(true)
	srv.VisibilityChanged()
	if n := srv.NotifyResourceUpdated("files:///public.txt"); n != 0 {
		t.Errorf("a hidden resource's update told %d", n)
	}
	srv.NotifyResourceUpdated("files:///secret.txt")
	if got, want := ev.next(t), updatedOf(60, "files:///secret.txt"); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// completion/complete of a scoped prompt's argument or a scoped template's
// variable is refused to a caller without the scopes as prompts/get and
// resources/read refuse it (-32052, 403 with the challenge over HTTP),
// in both eras; the completer is not run for it. Under HideUnauthorized
// the prompt or template is unknown to that caller.
func TestCompletionScopesOverHTTP(t *testing.T) {
	refs := map[string]string{
		"prompt":   `"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"file","value":"s"}`,
		"template": `"ref":{"type":"ref/resource","uri":"files:///private/{name}"},"argument":{"name":"name","value":"s"}`,
	}
	stateless := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "completion/complete"}
	_, hs := scopedResourceServer(t, hexmcp.Visibility{})
	sess := sessionAs(t, hs.URL, "reader")
	for name, ref := range refs {
		for era, call := range map[string]struct {
			body string
			hdr  map[string]string
		}{
			"stateless": {`{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{` + ref + `,` + statelessMeta + `}}`, stateless},
			"handshake": {`{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{` + ref + `}}`, sess},
		} {
			resp, body := postAs(t, hs.URL, "reader", call.body, call.hdr)
			ch := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(ch, `scope="files:write"`) || !strings.Contains(body, `"code":-32052`) ||
				!strings.Contains(body, `"id":9`) || strings.Contains(body, "secret-plan") {
				t.Errorf("%s %s, reader: %d %q %s", era, name, resp.StatusCode, ch, body)
			}
		}
		call := `{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{` + ref + `,` + statelessMeta + `}}`
		if resp, body := postAs(t, hs.URL, "writer", call, stateless); resp.StatusCode != 200 || !strings.Contains(body, `"values":["secret-plan"]`) {
			t.Errorf("%s, writer: %d %s", name, resp.StatusCode, body)
		}
	}
	_, hs = scopedResourceServer(t, hexmcp.HideUnauthorized(hexmcp.Visibility{}))
	for name, ref := range refs {
		call := `{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{` + ref + `,` + statelessMeta + `}}`
		if _, body := postAs(t, hs.URL, "reader", call, stateless); !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "unknown") {
			t.Errorf("%s hidden, reader: %s", name, body)
		}
		if resp, body := postAs(t, hs.URL, "writer", call, stateless); resp.StatusCode != 200 || !strings.Contains(body, `"values":["secret-plan"]`) {
			t.Errorf("%s hidden, writer: %d %s", name, resp.StatusCode, body)
		}
	}
}
