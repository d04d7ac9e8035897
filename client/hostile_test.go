package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/clienttest"
	"github.com/hexmcp/hexmcp/ports"
)

// rpc is a message a fake server reads.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// fake serves a scripted server over pipes: answer returns the lines to
// write for each message of the client (nil: none).
func fake(t *testing.T, answer func(m rpc) []string) client.Transport {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer fromServer.Close()
		sc := bufio.NewScanner(toServer)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m rpc
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			for _, l := range answer(m) {
				if l == hangUp {
					return
				}
				if last, ok := strings.CutPrefix(l, unterminated); ok {
					_, _ = io.WriteString(fromServer, last) // no newline, then the end
					return
				}
				if _, err := io.WriteString(fromServer, l+"\n"); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		fromClient.Close()
		toServer.Close()
		<-done
	})
	return client.IOTransport(toClient, fromClient)
}

// hangUp, as a line to write, makes the fake server close the connection.
const hangUp = "\x00hang up"

// unterminated begins a line that the fake server writes as its last,
// without a newline, before it closes the connection.
const unterminated = "\x00last:"

func result(m rpc, v string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, v)
}

// stateless answers server/discover for 2026-07-28 and calls more for the
// rest.
func stateless(more func(m rpc) []string) func(m rpc) []string {
	return func(m rpc) []string {
		if m.Method == "server/discover" {
			return []string{result(m, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}`)}
		}
		return more(m)
	}
}

func TestHostileServer(t *testing.T) {
	ctx := t.Context()
	t.Run("message too large", func(t *testing.T) {
		tr := fake(t, func(m rpc) []string {
			return []string{result(m, `{"x":"`+strings.Repeat("a", 2<<10)+`"}`)}
		})
		_, err := client.New(client.Options{MaxMessageBytes: 1 << 10}).Connect(ctx, tr)
		if !errors.Is(err, ports.ErrMessageTooLarge) || !errors.Is(err, client.ErrClosed) {
			t.Fatalf("connect: %v, want ErrMessageTooLarge", err)
		}
	})
	t.Run("silence", func(t *testing.T) {
		tr := fake(t, func(rpc) []string { return nil })
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err := client.New(client.Options{ProbeTimeout: 50 * time.Millisecond}).Connect(cctx, tr)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "initialize") {
			t.Fatalf("connect: %v, want initialize to time out after the probe", err)
		}
	})
	t.Run("endless pages", func(t *testing.T) {
		n := 0
		s := connect(t, client.New(client.Options{MaxPages: 5}), fake(t, stateless(func(m rpc) []string {
			n++
			return []string{result(m, fmt.Sprintf(`{"resultType":"complete","tools":[{"name":"t%d","inputSchema":{"type":"object"}}],"nextCursor":"c%d"}`, n, n))}
		})))
		tools, err := client.Collect(s.ListTools(ctx))
		if err == nil || !strings.Contains(err.Error(), "more than 5 pages") || tools != nil {
			t.Fatalf("list = %v, %v", tools, err)
		}
	})
	t.Run("cursor loop", func(t *testing.T) {
		s := connect(t, client.New(client.Options{}), fake(t, stateless(func(m rpc) []string {
			return []string{result(m, `{"resultType":"complete","tools":[],"nextCursor":"same"}`)}
		})))
		if _, err := client.Collect(s.ListTools(ctx)); err == nil || !strings.Contains(err.Error(), "twice") {
			t.Fatalf("list: %v", err)
		}
	})
	t.Run("endless input rounds", func(t *testing.T) {
		rounds := 0
		s := connect(t, client.New(client.Options{
			MaxInputRounds: 3,
			Roots:          func(context.Context) ([]domain.Root, error) { return nil, nil },
		}), fake(t, stateless(func(m rpc) []string {
			rounds++
			return []string{result(m, `{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list","params":{}}},"requestState":"s"}`)}
		})))
		_, err := s.CallTool(ctx, "x", nil)
		if err == nil || !strings.Contains(err.Error(), "after 3 rounds") || rounds != 3 {
			t.Fatalf("call: %v after %d rounds", err, rounds)
		}
	})
	t.Run("garbage and strangers", func(t *testing.T) {
		s := connect(t, client.New(client.Options{}), fake(t, stateless(func(m rpc) []string {
			return []string{
				`not json`, `[1,2`, `{"jsonrpc":"2.0","id":999,"result":{}}`, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody","progress":1}}`,
				`{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{}}`,
				result(m, `{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`),
			}
		})))
		res, err := s.CallTool(ctx, "x", nil)
		if err != nil || res.Text() != "ok" {
			t.Fatalf("call = %+v, %v", res, err)
		}
	})
	t.Run("last message without a newline", func(t *testing.T) {
		s := connect(t, client.New(client.Options{}), fake(t, stateless(func(m rpc) []string {
			return []string{unterminated + result(m, `{"resultType":"complete","content":[{"type":"text","text":"bye"}]}`)}
		})))
		res, err := s.CallTool(ctx, "x", nil)
		if err != nil || res.Text() != "bye" {
			t.Fatalf("call = %+v, %v; want the answer the server wrote before it left", res, err)
		}
	})
	t.Run("server leaves", func(t *testing.T) {
		s := connect(t, client.New(client.Options{}), fake(t, stateless(func(m rpc) []string {
			return []string{hangUp}
		})))
		_, err := s.CallTool(ctx, "x", nil)
		if !errors.Is(err, client.ErrClosed) {
			t.Fatalf("call: %v, want ErrClosed", err)
		}
	})
	t.Run("no answer", func(t *testing.T) {
		s := connect(t, client.New(client.Options{}), fake(t, stateless(func(rpc) []string { return nil })))
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := s.CallTool(cctx, "x", nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call: %v", err)
		}
	})
}

// legacyHTTP is a handshake-era Streamable HTTP server of its own making,
// as a peer SDK's might be: it refuses a request without a session with
// a 400 that is no modern error.
func legacyHTTP(t *testing.T, deleted chan<- string) string {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get("Mcp-Session-Id")
		if r.Method == http.MethodDelete {
			deleted <- sid
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var m rpc
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			fmt.Fprint(w, result(m, `{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}`))
		case sid != "s1":
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: no valid session ID"}}`)
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "tools/list":
			fmt.Fprint(w, result(m, `{"tools":[{"name":"big","inputSchema":{"type":"object"}}]}`))
		case m.Method == "tools/call" && strings.Contains(string(m.Params), `"big"`):
			fmt.Fprint(w, result(m, `{"content":[{"type":"text","text":"`+strings.Repeat("a", 4<<10)+`"}]}`))
		case m.Method == "tools/call" && strings.Contains(string(m.Params), `"cut"`):
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n")
		case m.Method == "tools/call" && strings.Contains(string(m.Params), `"locked"`):
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`)
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, "no")
		default:
			fmt.Fprint(w, result(m, `{"content":[{"type":"text","text":"ok"}]}`))
		}
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func TestHostileHTTPServer(t *testing.T) {
	ctx := t.Context()
	deleted := make(chan string, 1)
	s, err := client.New(client.Options{MaxMessageBytes: 2 << 10}).Connect(ctx, client.HTTPTransport(legacyHTTP(t, deleted), client.HTTPOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Revision() != "2025-03-26" || s.ServerInfo().Name != "legacy" {
		t.Fatalf("session at %s with %+v", s.Revision(), s.ServerInfo())
	}
	if res, err := s.CallTool(ctx, "small", nil); err != nil || res.Text() != "ok" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if _, err := s.CallTool(ctx, "big", nil); !errors.Is(err, ports.ErrMessageTooLarge) {
		t.Errorf("big: %v, want ErrMessageTooLarge", err)
	}
	if _, err := s.CallTool(ctx, "cut", nil); err == nil || !strings.Contains(err.Error(), "stream ended before the response") {
		t.Errorf("cut: %v", err)
	}
	_, err = s.CallTool(ctx, "locked", nil)
	var he *client.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized || !strings.Contains(he.Header.Get("WWW-Authenticate"), "resource_metadata") {
		t.Errorf("locked: %v, want an *HTTPError 401", err)
	}
	if res, err := s.CallTool(ctx, "small", nil); err != nil || res.Text() != "ok" {
		t.Fatalf("call after the failures = %+v, %v", res, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if sid := <-deleted; sid != "s1" {
		t.Errorf("DELETE with session %q", sid)
	}
}

// CallToolAs checks a structured result against the output schema the
// tool was listed with.
func TestOutputSchemaChecked(t *testing.T) {
	ctx := t.Context()
	s := connect(t, client.New(client.Options{}), fake(t, stateless(func(m rpc) []string {
		switch {
		case m.Method == "tools/list":
			return []string{result(m, `{"resultType":"complete","tools":[{"name":"n","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}]}`)}
		case strings.Contains(string(m.Params), `"good"`):
			return []string{result(m, `{"resultType":"complete","content":[],"structuredContent":{"n":7}}`)}
		}
		return []string{result(m, `{"resultType":"complete","content":[],"structuredContent":{"n":"seven"}}`)}
	})))
	type out struct{ N any }
	// Not listed yet: nothing to check against.
	if _, err := client.CallToolAs[out](ctx, s, "n", nil); err != nil {
		t.Fatalf("before the list: %v", err)
	}
	if _, err := client.Collect(s.ListTools(ctx)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CallToolAs[out](ctx, s, "n", nil); !errors.Is(err, client.ErrOutputSchema) {
		t.Fatalf("after the list: %v, want ErrOutputSchema", err)
	}
	if v, err := client.CallToolAs[out](ctx, s, "n", map[string]any{"good": true}); err != nil || v.N != float64(7) {
		t.Fatalf("good = %+v, %v", v, err)
	}
}

func TestHostileWebSocketServer(t *testing.T) {
	serve := func(subprotocols []string, reply string) string {
		up := gws.Upgrader{Subprotocols: subprotocols}
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ws, err := up.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			defer ws.Close()
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
				if err := ws.WriteMessage(gws.TextMessage, []byte(reply)); err != nil {
					return
				}
			}
		}))
		t.Cleanup(ts.Close)
		return "ws" + strings.TrimPrefix(ts.URL, "http")
	}
	big := `{"jsonrpc":"2.0","id":1,"result":{"x":"` + strings.Repeat("a", 2<<10) + `"}}`
	_, err := client.New(client.Options{MaxMessageBytes: 1 << 10}).Connect(t.Context(), client.WebSocketTransport(serve([]string{"mcp"}, big), client.WebSocketOptions{}))
	if !errors.Is(err, ports.ErrMessageTooLarge) {
		t.Errorf("a message over the bound: %v, want ErrMessageTooLarge", err)
	}
	_, err = client.New(client.Options{}).Connect(t.Context(), client.WebSocketTransport(serve(nil, big), client.WebSocketOptions{}))
	if err == nil || !strings.Contains(err.Error(), "subprotocol") {
		t.Errorf("a server without the subprotocol mcp: %v", err)
	}
}

// A handshake-era server that answers every request it does not know with
// an empty result (as the suite's sse-retry server does) gets initialize:
// a server/discover result listing no revision is no stateless server.
func TestDiscoverAnsweredEmpty(t *testing.T) {
	tr := fake(t, func(m rpc) []string {
		switch {
		case m.ID == nil:
			return nil
		case m.Method == "initialize":
			return []string{result(m, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"lax","version":"1"}}`)}
		default:
			return []string{result(m, `{}`)}
		}
	})
	s, err := client.New(client.Options{}).Connect(t.Context(), tr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Revision() != "2025-11-25" || s.ServerInfo().Name != "lax" {
		t.Fatalf("session at %s with %+v", s.Revision(), s.ServerInfo())
	}
}

// A server that refuses the first server/discover with
// UnsupportedProtocolVersion, listing the revision asked for, is asked
// once more (and only once) with the newest stateless revision it lists.
func TestDiscoverRetriedOnUnsupportedVersion(t *testing.T) {
	for _, refusals := range []int{1, 2} {
		var discovers int
		tr := fake(t, func(m rpc) []string {
			if m.Method != "server/discover" {
				return []string{result(m, `{"resultType":"complete"}`)}
			}
			if discovers++; discovers <= refusals {
				return []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`, m.ID)}
			}
			return stateless(nil)(m)
		})
		s, err := client.New(client.Options{}).Connect(t.Context(), tr)
		if refusals == 1 {
			if err != nil || s.Revision() != "2026-07-28" {
				t.Fatalf("after one refusal: %v", err)
			}
			s.Close()
		} else if err == nil || discovers != 2 {
			t.Fatalf("after two refusals: %v, %d discovers", err, discovers)
		}
	}
}

// In the stateless era a tool with an invalid x-mcp-header annotation is
// left out of the list; the others stay.
func TestInvalidHeaderToolsLeftOut(t *testing.T) {
	s := connect(t, client.New(client.Options{}), fake(t, stateless(func(m rpc) []string {
		return []string{result(m, `{"resultType":"complete","tools":[{"name":"valid","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}},{"name":"number","inputSchema":{"type":"object","properties":{"s":{"type":"number","x-mcp-header":"Score"}}}},{"name":"twice","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"F"},"b":{"type":"string","x-mcp-header":"f"}}}},{"name":"space","inputSchema":{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}},{"name":"plain","inputSchema":{"type":"object"}}]}`)}
	})))
	if names := clienttest.ToolNames(t, s); !slices.Equal(names, []string{"valid", "plain"}) {
		t.Fatalf("tools = %v, want [valid plain]", names)
	}
}

// A nil map or pointer as a tool's arguments sends no arguments, not
// "arguments": null (which servers validating an object refuse).
func TestNilArgumentsLeftOut(t *testing.T) {
	calls := make(chan json.RawMessage, 4)
	tr := fake(t, stateless(func(m rpc) []string {
		if m.Method != "tools/call" {
			return nil
		}
		calls <- m.Params
		return []string{result(m, `{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`)}
	}))
	s, err := client.New(client.Options{}).Connect(t.Context(), tr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var nilMap map[string]any
	var nilPtr *AddInput
	for i, args := range []any{nil, nilMap, nilPtr, map[string]any{}} {
		if _, err := s.CallTool(t.Context(), "t", args); err != nil {
			t.Fatalf("CallTool(%#v): %v", args, err)
		}
		var p map[string]json.RawMessage
		if err := json.Unmarshal(<-calls, &p); err != nil {
			t.Fatal(err)
		}
		a, ok := p["arguments"]
		if want := i == 3; ok != want || (ok && string(a) != "{}") {
			t.Errorf("CallTool(%#v) sent arguments %s (present %v)", args, a, ok)
		}
	}
}

// A result that does not decode is an error naming what was asked.
func TestUndecodableResults(t *testing.T) {
	ctx := t.Context()
	s := connect(t, client.New(client.Options{}), fake(t, stateless(func(m rpc) []string {
		switch m.Method {
		case "tools/call":
			return []string{result(m, `{"resultType":"complete","content":"text"}`)}
		case "prompts/get":
			return []string{result(m, `{"resultType":"complete","messages":"text"}`)}
		case "resources/read":
			return []string{result(m, `{"resultType":"complete","contents":5}`)}
		case "tasks/get":
			return []string{result(m, `{"resultType":"complete","taskId":5}`)}
		}
		return nil
	})))
	for _, tc := range []struct {
		err  error
		want string
	}{
		{second(s.CallTool(ctx, "add", nil)), "hexmcp: decoding the result of add: "},
		{second(s.GetPrompt(ctx, "intro", nil)), "hexmcp: decoding the prompt intro: "},
		{second(s.ReadResource(ctx, "file:///a")), "hexmcp: decoding the resource file:///a: "},
		{second(s.GetTask(ctx, "t1")), "hexmcp: decoding the task t1: "},
	} {
		if tc.err == nil || !strings.HasPrefix(tc.err.Error(), tc.want) {
			t.Errorf("error %v, want one that starts with %q", tc.err, tc.want)
		}
	}
}

// second returns the second of two values.
func second[A, B any](_ A, b B) B { return b }

// A WebSocket handshake the server refuses (401) is an *HTTPError with
// its status and headers; a dial that gets no answer at all is an error
// without one.
func TestWebSocketRefusedHandshake(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/prm"`)
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(ts.Close)
	_, err := client.New(client.Options{}).Connect(t.Context(), client.WebSocketTransport("ws"+strings.TrimPrefix(ts.URL, "http"), client.WebSocketOptions{}))
	var he *client.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized || !strings.Contains(he.Header.Get("WWW-Authenticate"), "resource_metadata") {
		t.Fatalf("Connect = %v, want an *HTTPError 401", err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	url := "ws" + strings.TrimPrefix(closed.URL, "http")
	closed.Close()
	if _, err := client.New(client.Options{}).Connect(t.Context(), client.WebSocketTransport(url, client.WebSocketOptions{})); err == nil || errors.As(err, &he) {
		t.Fatalf("Connect to nothing = %v, want an error without an HTTP status", err)
	}
}

// A server that refuses the client (401 or 403) tells no era: Connect
// returns the refusal of server/discover, an *HTTPError with the server's
// challenge, and sends nothing more (not initialize, whose refusal would
// hide which request was refused).
func TestConnectRefused(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		var mu sync.Mutex
		var methods []string
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var m rpc
			_ = json.NewDecoder(r.Body).Decode(&m)
			mu.Lock()
			methods = append(methods, m.Method)
			mu.Unlock()
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, `{"error":"refused"}`)
		}))
		_, err := client.New(client.Options{}).Connect(t.Context(), client.HTTPTransport(ts.URL, client.HTTPOptions{}))
		ts.Close()
		var he *client.HTTPError
		if !errors.As(err, &he) || he.StatusCode != status || he.Header.Get("WWW-Authenticate") == "" || !strings.Contains(err.Error(), "server/discover") {
			t.Errorf("%d: Connect = %v, want the *HTTPError of server/discover", status, err)
		}
		mu.Lock()
		if !slices.Equal(methods, []string{"server/discover"}) {
			t.Errorf("%d: the client sent %q, want server/discover alone", status, methods)
		}
		mu.Unlock()
	}
}
