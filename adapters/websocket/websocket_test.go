package websocket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/app"
)

const (
	meta2026     = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	initialize   = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
	initialized  = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	testDeadline = 10 * time.Second
)

func newEngine(t testing.TB, tools ...decl.Tool) *app.Engine {
	t.Helper()
	e := testtools.NewEngine(t, app.Options{})
	tools = append([]decl.Tool{decl.NewTool(func() string { return "hi" }, decl.WithName("hi"))}, tools...)
	if err := e.AddTools(tools...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// serve mounts a handler for e at /ws of a test server on 127.0.0.1.
func serve(t testing.TB, e *app.Engine, opts Options) (*Handler, *httptest.Server) {
	t.Helper()
	h := NewHandler(e, opts)
	srv := mount(t, h)
	t.Cleanup(func() { // before mount's: shut down, then close the server
		ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return h, srv
}

// mount serves h at /ws of a test server on 127.0.0.1, closed when the
// test ends; the test shuts h down itself.
func mount(t testing.TB, h *Handler) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/ws", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func wsURL(srv *httptest.Server) string { return "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws" }

// dialRaw dials with the given subprotocols and headers; it returns the
// response even when the upgrade is refused.
func dialRaw(t testing.TB, srv *httptest.Server, protocols []string, header http.Header) (*gws.Conn, *http.Response, error) {
	t.Helper()
	d := gws.Dialer{Subprotocols: protocols, HandshakeTimeout: testDeadline}
	c, resp, err := d.Dial(wsURL(srv), header)
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, resp, err
}

// dial connects the way the TypeScript client does: offering "mcp".
func dial(t testing.TB, srv *httptest.Server) *gws.Conn {
	t.Helper()
	c, _, err := dialRaw(t, srv, []string{"mcp"}, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	return c
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		ProtocolVersion string `json:"protocolVersion"`
		ResultType      string `json:"resultType"`
		Tools           []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func send(t testing.TB, c *gws.Conn, msg string) {
	t.Helper()
	_ = c.SetWriteDeadline(time.Now().Add(testDeadline))
	if err := c.WriteMessage(gws.TextMessage, []byte(msg)); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// readFrame reads the next message of c (testDeadline at most) and fails
// t if none comes.
func readFrame(t testing.TB, c *gws.Conn) []byte {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(testDeadline))
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func recv(t testing.TB, c *gws.Conn) rpcMessage {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(testDeadline))
	typ, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	if typ != gws.TextMessage {
		t.Fatalf("recv: frame type %d, want text", typ)
	}
	var m rpcMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("recv: %v in %s", err, data)
	}
	return m
}

// text returns the text of a tools/call result, or fails.
func text(t testing.TB, m rpcMessage) string {
	t.Helper()
	if m.Error != nil || m.Result == nil || len(m.Result.Content) != 1 {
		t.Fatalf("not a one-block tool result: %+v", m)
	}
	return m.Result.Content[0].Text
}

// expectClose reads until the connection ends and checks the close code.
func expectClose(t testing.TB, c *gws.Conn, code int) *gws.CloseError {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(testDeadline))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		var ce *gws.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("connection ended with %v, want close %d", err, code)
		}
		if ce.Code != code {
			t.Fatalf("close %d %q, want %d", ce.Code, ce.Text, code)
		}
		return ce
	}
}

// readUntilTryAgainLater reads c, passing each message to each, until the
// server closes it with 1013 (try again later), and returns how many
// messages came first; it fails t if c ends any other way.
func readUntilTryAgainLater(t *testing.T, c *gws.Conn, each func(data []byte)) int {
	t.Helper()
	received := 0
	_ = c.SetReadDeadline(time.Now().Add(testDeadline))
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			var ce *gws.CloseError
			if !errors.As(err, &ce) || ce.Code != gws.CloseTryAgainLater {
				t.Fatalf("connection ended with %v, want close 1013", err)
			}
			return received
		}
		each(data)
		received++
	}
}

// eventually waits for cond.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testtools.Eventually(t, testDeadline, what, cond)
}

func TestSubprotocol(t *testing.T) {
	_, srv := serve(t, newEngine(t), Options{})
	for _, tc := range []struct {
		name    string
		offered []string
		status  int
		want    string
	}{
		{"mcp offered", []string{"mcp"}, http.StatusSwitchingProtocols, "mcp"},
		{"mcp among others", []string{"other", "mcp"}, http.StatusSwitchingProtocols, "mcp"},
		{"none offered", nil, http.StatusSwitchingProtocols, ""},
		{"only others", []string{"graphql-ws", "mcp.version.2025-11-25"}, http.StatusBadRequest, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, resp, err := dialRaw(t, srv, tc.offered, nil)
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%v)", resp.StatusCode, tc.status, err)
			}
			if tc.status != http.StatusSwitchingProtocols {
				body := make([]byte, 512)
				n, _ := resp.Body.Read(body)
				if !strings.Contains(string(body[:n]), `"mcp"`) {
					t.Errorf("refusal does not name the subprotocol: %q", body[:n])
				}
				return
			}
			if got := c.Subprotocol(); got != tc.want {
				t.Errorf("subprotocol %q, want %q", got, tc.want)
			}
			send(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi",`+meta2026+`}}`)
			if got := text(t, recv(t, c)); got != "hi" {
				t.Errorf("got %q", got)
			}
		})
	}
}

func TestBothErasOnOneConnection(t *testing.T) {
	_, srv := serve(t, newEngine(t), Options{})
	c := dial(t, srv)

	send(t, c, initialize)
	if m := recv(t, c); m.Result == nil || m.Result.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize: %+v", m)
	}
	send(t, c, initialized)
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if m := recv(t, c); m.Result == nil || len(m.Result.Tools) != 1 || m.Result.Tools[0].Name != "hi" {
		t.Fatalf("tools/list: %+v", m)
	}
	send(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hi","arguments":{}}}`)
	m := recv(t, c)
	if string(m.ID) != "2" || text(t, m) != "hi" || m.Result.ResultType != "" {
		t.Fatalf("handshake-era call: %+v", m)
	}

	send(t, c, `{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"hi","arguments":{},`+meta2026+`}}`)
	m = recv(t, c)
	if string(m.ID) != `"s"` || text(t, m) != "hi" || m.Result.ResultType != "complete" {
		t.Fatalf("stateless call: %+v", m)
	}
}

func TestServerNotification(t *testing.T) {
	e := newEngine(t)
	_, srv := serve(t, e, Options{})
	c := dial(t, srv)
	send(t, c, initialize)
	recv(t, c)
	send(t, c, initialized)
	// A round trip, so that the notification is known to be processed.
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	recv(t, c)

	if err := e.AddTool(decl.NewTool(func() string { return "new" }, decl.WithName("new"))); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, c); m.Method != "notifications/tools/list_changed" || m.ID != nil {
		t.Fatalf("got %+v, want notifications/tools/list_changed", m)
	}
}

func TestOrigin(t *testing.T) {
	_, srv := serve(t, newEngine(t), Options{AllowedOrigins: []string{"http://localhost:6274"}})
	_, star := serve(t, newEngine(t), Options{AllowedOrigins: []string{"*"}})
	for _, tc := range []struct {
		name   string
		srv    *httptest.Server
		origin string
		status int
	}{
		{"listed", srv, "http://localhost:6274", http.StatusSwitchingProtocols},
		{"same host", srv, srv.URL, http.StatusSwitchingProtocols},
		{"no origin", srv, "", http.StatusSwitchingProtocols},
		{"foreign", srv, "http://evil.example", http.StatusForbidden},
		{"listed host, other port", srv, "http://localhost:6275", http.StatusForbidden},
		{"null", srv, "null", http.StatusForbidden},
		{"star", star, "http://evil.example", http.StatusSwitchingProtocols},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var header http.Header
			if tc.origin != "" {
				header = http.Header{"Origin": {tc.origin}}
			}
			d := gws.Dialer{Subprotocols: []string{"mcp"}}
			c, resp, err := d.Dial(wsURL(tc.srv), header)
			if c != nil {
				defer c.Close()
			}
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

func TestMessageTooBig(t *testing.T) {
	h, srv := serve(t, newEngine(t), Options{MaxMessageSize: 1024, WriteTimeout: 3 * time.Second})
	c := dial(t, srv)
	// At the limit: served.
	pad := strings.Repeat(" ", 1024-len(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+pad)
	if m := recv(t, c); string(m.ID) != "1" || m.Error != nil {
		t.Fatalf("ping: %+v", m)
	}
	// One byte over, in one frame: closed with 1009.
	send(t, c, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+pad+" ")
	if ce := expectClose(t, c, gws.CloseMessageTooBig); !strings.Contains(ce.Text, "1024") {
		t.Errorf("reason %q does not give the limit", ce.Text)
	}
	eventually(t, "the connection to be released", func() bool { return h.Conns() == 0 })

	// A huge message is not read whole.
	c = dial(t, srv)
	go func() {
		_ = c.SetWriteDeadline(time.Now().Add(testDeadline))
		_ = c.WriteMessage(gws.TextMessage, make([]byte, 8<<20))
	}()
	expectClose(t, c, gws.CloseMessageTooBig)
	eventually(t, "the connection to be released", func() bool { return h.Conns() == 0 })
}

func TestBinaryFrame(t *testing.T) {
	h, srv := serve(t, newEngine(t), Options{})
	c := dial(t, srv)
	_ = c.WriteMessage(gws.BinaryMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	expectClose(t, c, gws.CloseUnsupportedData)
	eventually(t, "the connection to be released", func() bool { return h.Conns() == 0 })
}

func TestPeerClose(t *testing.T) {
	h, srv := serve(t, newEngine(t), Options{})
	c := dial(t, srv)
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi",`+meta2026+`}}`)
	recv(t, c)
	if err := c.WriteControl(gws.CloseMessage, gws.FormatCloseMessage(gws.CloseNormalClosure, "bye"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	expectClose(t, c, gws.CloseNormalClosure) // the server's answer
	eventually(t, "the connection to be released", func() bool { return h.Conns() == 0 })

	// The server echoes the peer's status code (RFC 6455, 5.5.1); a close
	// frame without one (1005, which must never be sent) is answered 1000.
	for _, tc := range []struct {
		payload []byte
		want    int
	}{
		{gws.FormatCloseMessage(gws.CloseGoingAway, "tab closed"), gws.CloseGoingAway},
		{gws.FormatCloseMessage(4001, ""), 4001},
		{nil, gws.CloseNormalClosure},
	} {
		c = dial(t, srv)
		if err := c.WriteControl(gws.CloseMessage, tc.payload, time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		expectClose(t, c, tc.want)
		eventually(t, "the connection to be released", func() bool { return h.Conns() == 0 })
	}

	// A peer that vanishes without a close frame is released too.
	c = dial(t, srv)
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi",`+meta2026+`}}`)
	recv(t, c)
	c.NetConn().Close()
	eventually(t, "the connection to be released", func() bool { return h.Conns() == 0 })
}

// closing reports whether a connection of h has decided to close.
func closing(h *Handler) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.conns {
		if c.isClosing() {
			return true
		}
	}
	return false
}

func TestSlowReader(t *testing.T) {
	const queue = 4
	big := strings.Repeat("x", 32<<10)
	e := newEngine(t)
	h, srv := serve(t, e, Options{SendQueue: queue})
	sent := 0
	flooded := make(chan struct{})
	flood := decl.NewTool(func(ctx context.Context, rc *app.RequestContext) string {
		defer close(flooded)
		// Progress until the server gives up on the client (bounded, in
		// case it never does).
		for sent = 1; sent <= 100000 && !closing(h); sent++ {
			if err := rc.ReportProgress(ctx, float64(sent), 0, big); err != nil {
				t.Error(err)
				break
			}
		}
		return "done"
	}, decl.WithName("flood"))
	if err := e.AddTool(flood); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv)
	send(t, c, initialize)
	recv(t, c)
	send(t, c, initialized)
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","_meta":{"progressToken":"p"}}}`)

	// The client reads nothing until the server has given up.
	select {
	case <-flooded:
	case <-time.After(testDeadline):
		t.Fatal("the flood did not end")
	}
	if !closing(h) {
		t.Fatalf("the server sent %d notifications of %d bytes without closing", sent, len(big))
	}
	if peak := h.stats.peakQueue.Load(); peak > queue {
		t.Errorf("the send queue held %d messages, bound %d", peak, queue)
	}

	// What the network held arrives, then the close frame.
	received := readUntilTryAgainLater(t, c, func(data []byte) {
		if !strings.Contains(string(data), `"notifications/progress"`) {
			t.Fatalf("unexpected message %.200s", data)
		}
	})
	if received >= sent {
		t.Errorf("received %d notifications of %d sent: nothing was dropped", received, sent)
	}
	t.Logf("%d notifications produced, %d delivered before close 1013", sent, received)
	eventually(t, "the connection to be released", func() bool { return h.Conns() == 0 })
}

func TestPing(t *testing.T) {
	// The live client must answer a ping within pongWait although it
	// shares two cores with the server, other tests and, in CI, CPU
	// burners: 300 ms was not always enough under -race (the server
	// closed it). The wait costs this test about 2*pongWait.
	const pongWait = 1500 * time.Millisecond
	h, srv := serve(t, newEngine(t), Options{PingInterval: 25 * time.Millisecond, PongWait: pongWait})

	// A client that reads answers pings (gorilla does it) and stays.
	alive := dial(t, srv)
	pings := make(chan struct{}, 100)
	alive.SetPingHandler(func(data string) error {
		select {
		case pings <- struct{}{}:
		default:
		}
		return alive.WriteControl(gws.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	msgs := make(chan rpcMessage, 1)
	go func() {
		for {
			_, data, err := alive.ReadMessage()
			if err != nil {
				close(msgs)
				return
			}
			var m rpcMessage
			_ = json.Unmarshal(data, &m)
			msgs <- m
		}
	}()

	// A client that never reads (so never answers pings) is disconnected.
	mute := dial(t, srv)
	_ = mute

	// Nor does one that reads but does not answer pings; it sees 1008.
	silent := dial(t, srv)
	silent.SetPingHandler(func(string) error { return nil })
	start := time.Now()
	if ce := expectClose(t, silent, gws.ClosePolicyViolation); !strings.Contains(ce.Text, "ping") {
		t.Errorf("reason %q", ce.Text)
	}
	if d := time.Since(start); d < pongWait-50*time.Millisecond {
		t.Errorf("disconnected after %v, before PongWait", d)
	}
	eventually(t, "the mute and silent clients to be released", func() bool { return h.Conns() == 1 })

	// The live one was pinged all along and still works.
	time.Sleep(pongWait + 100*time.Millisecond)
	if len(pings) < 3 {
		t.Errorf("%d pings received", len(pings))
	}
	send(t, alive, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi",`+meta2026+`}}`)
	select {
	case m, ok := <-msgs:
		if !ok || text(t, m) != "hi" {
			t.Fatalf("live client: %+v", m)
		}
	case <-time.After(testDeadline):
		t.Fatal("no answer")
	}
}

func TestShutdownWithCallInFlight(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	slow := decl.NewTool(func() string {
		close(started)
		<-release
		return "finished"
	}, decl.WithName("slow"))
	e := newEngine(t, slow)
	h := NewHandler(e, Options{})
	srv := mount(t, h)
	c := dial(t, srv)
	send(t, c, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow",`+meta2026+`}}`)
	<-started

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
		defer cancel()
		shut <- h.Shutdown(ctx)
	}()
	eventually(t, "the shutdown to begin", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.shutdown
	})
	// New connections are refused while the call finishes.
	c2, resp, err := dialRaw(t, srv, []string{"mcp"}, nil)
	if c2 != nil {
		c2.Close()
	}
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("upgrade during shutdown: %v %v, want 503", resp, err)
	}
	if h.Conns() != 1 {
		t.Fatalf("%d connections during shutdown, want 1", h.Conns())
	}
	close(release)

	m := recv(t, c)
	if string(m.ID) != "7" || text(t, m) != "finished" {
		t.Fatalf("in-flight call: %+v", m)
	}
	expectClose(t, c, gws.CloseGoingAway)
	select {
	case err := <-shut:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-time.After(testDeadline):
		t.Fatal("Shutdown did not return")
	}
	if n := h.Conns(); n != 0 {
		t.Errorf("%d connections after Shutdown", n)
	}
}

func TestShutdownDeadline(t *testing.T) {
	started := make(chan struct{})
	stuck := decl.NewTool(func(ctx context.Context) string {
		close(started)
		<-ctx.Done() // until the engine aborts
		return "aborted"
	}, decl.WithName("stuck"))
	e := newEngine(t, stuck)
	h := NewHandler(e, Options{})
	c := dial(t, mount(t, h))
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stuck",`+meta2026+`}}`)
	<-started

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := h.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
	}
	// The connection was closed at once.
	_ = c.SetReadDeadline(time.Now().Add(testDeadline))
	if _, _, err := c.ReadMessage(); err == nil {
		t.Fatal("the connection is still open")
	}
	e.Abort()
	eventually(t, "the connection to be released", func() bool { return h.Conns() == 0 })
}

func TestConcurrentConnections(t *testing.T) {
	const clients, calls = 20, 20
	_, srv := serve(t, newEngine(t), Options{})
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- client(srv, i, calls)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// client sends calls pipelined on one connection (handshake era for even
// clients, stateless for odd ones) and checks every answer.
func client(srv *httptest.Server, n, calls int) error {
	c, _, err := (&gws.Dialer{Subprotocols: []string{"mcp"}}).Dial(wsURL(srv), nil)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(testDeadline))
	meta := "," + meta2026
	if n%2 == 0 {
		meta = ""
		if err := c.WriteMessage(gws.TextMessage, []byte(initialize)); err != nil {
			return err
		}
		if _, _, err := c.ReadMessage(); err != nil {
			return err
		}
		if err := c.WriteMessage(gws.TextMessage, []byte(initialized)); err != nil {
			return err
		}
	}
	for i := range calls {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%d-%d","method":"tools/call","params":{"name":"hi"%s}}`, n, i, meta)
		if err := c.WriteMessage(gws.TextMessage, []byte(msg)); err != nil {
			return err
		}
	}
	seen := make(map[string]bool)
	for range calls {
		_, data, err := c.ReadMessage()
		if err != nil {
			return fmt.Errorf("client %d: %v", n, err)
		}
		var m rpcMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return err
		}
		var id string
		_ = json.Unmarshal(m.ID, &id)
		if !strings.HasPrefix(id, fmt.Sprintf("%d-", n)) || seen[id] || m.Result == nil || len(m.Result.Content) != 1 || m.Result.Content[0].Text != "hi" {
			return fmt.Errorf("client %d: unexpected %s", n, data)
		}
		seen[id] = true
	}
	return nil
}

// TestTypeScriptClient runs WebSocketClientTransport of the official
// TypeScript SDK against the handler. It needs node and a folder with
// @modelcontextprotocol/sdk@1.32.2 and ws installed:
//
//	cd /tmp/wsclient && npm init -y && npm i @modelcontextprotocol/sdk@1.32.2 ws
//	WS_TS_CLIENT_DIR=/tmp/wsclient go test -run TypeScript ./adapters/websocket/
func TestTypeScriptClient(t *testing.T) {
	dir := os.Getenv("WS_TS_CLIENT_DIR")
	if dir == "" {
		t.Skip("WS_TS_CLIENT_DIR is not set")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skipf("no @modelcontextprotocol/sdk in %s: %v", dir, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	_, srv := serve(t, newEngine(t), Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "tsclient.mjs"), wsURL(srv))
	cmd.Env = append(os.Environ(), "WS_TS_CLIENT_DIR="+dir)
	out, err := cmd.CombinedOutput()
	t.Logf("node output:\n%s", out)
	if err != nil {
		t.Fatalf("the TypeScript client failed: %v", err)
	}
	for _, want := range []string{`tools: hi`, `result: {"content":[{"type":"text","text":"hi"}]}`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// A Shutdown that runs out of time cancels the calls of its own handler's
// connections, and only those: another handler of the same engine goes on.
func TestShutdownDeadlineCancelsOwnCallsOnly(t *testing.T) {
	started := make(chan string, 2)
	cancelled := make(chan string, 2)
	type in struct {
		Who string `json:"who"`
	}
	stuck := decl.Func(func(ctx context.Context, v in) (string, error) {
		started <- v.Who
		select {
		case <-ctx.Done():
			cancelled <- v.Who
			return "", ctx.Err()
		case <-time.After(20 * time.Second):
			return "finished", nil
		}
	}, decl.WithName("stuck"))
	e := newEngine(t, stuck)
	h1, h2 := NewHandler(e, Options{}), NewHandler(e, Options{})
	for who, srv := range map[string]*httptest.Server{"one": mount(t, h1), "two": mount(t, h2)} {
		c := dial(t, srv)
		send(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stuck","arguments":{"who":"`+who+`"},`+meta2026+`}}`)
		<-started
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := h1.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
	}
	select {
	case who := <-cancelled:
		if who != "one" {
			t.Fatalf("the call of %q was cancelled", who)
		}
	case <-time.After(testDeadline):
		t.Fatal("the timed-out Shutdown did not cancel its handler's call")
	}
	select {
	case who := <-cancelled:
		t.Fatalf("the call of %q on the other handler was cancelled too", who)
	case <-time.After(200 * time.Millisecond):
	}
	e.Abort()
	if who := <-cancelled; who != "two" {
		t.Fatalf("Abort cancelled %q", who)
	}
}

// A handler given no Logger logs through its engine's.
func TestHandlerLogsThroughTheEngineByDefault(t *testing.T) {
	log := &testtools.LogRecorder{}
	e := testtools.NewEngine(t, app.Options{Logger: log})
	defer e.Close()
	if h := NewHandler(e, Options{}); h.opts.Logger != ports.Logger(log) {
		t.Fatalf("the handler logs to %T, not the engine's logger", h.opts.Logger)
	}
}
