package websocket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

func bigCall(id int, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,%s}}`, id, tool, meta2026)
}

// TestSendQueueBytes: a client that never reads, calling a tool with large
// results, is closed with 1013 once its queue would pass MaxQueueBytes,
// and the bytes its connection holds never pass the bound, while another
// client of the same handler gets the same large results.
func TestSendQueueBytes(t *testing.T) {
	const (
		budget = 4 << 20
		size   = 1 << 20
		calls  = 64 // 64 MiB of results: far more than the socket buffers hold
	)
	big := strings.Repeat("x", size)
	e := newEngine(t, decl.NewTool(func() string { return big }, decl.WithName("big")))
	h, srv := serve(t, e, Options{MaxQueueBytes: budget})

	mute := dial(t, srv)
	for i := range calls {
		send(t, mute, bigCall(i, "big"))
	}
	eventually(t, "the server to give up on the client that does not read", func() bool { return closing(h) })

	peak := h.stats.peakQueueBytes.Load()
	if peak > budget {
		t.Errorf("a connection held %d bytes in its send queue, bound %d", peak, budget)
	}
	if peak < 3*size {
		t.Errorf("the send queue held at most %d bytes: the bound was not reached, the test proves nothing", peak)
	}
	if n := h.stats.peakQueue.Load(); n >= defaultSendQueue {
		t.Errorf("the queue reached %d messages: the message bound, not the byte bound, closed it", n)
	}

	// Another client is served meanwhile, large results included.
	other := dial(t, srv)
	send(t, other, bigCall(1, "big"))
	if got := text(t, recv(t, other)); len(got) != size {
		t.Errorf("the other client got %d bytes, want %d", len(got), size)
	}

	// What the network held arrives, then the close frame.
	received := readUntilTryAgainLater(t, mute, func([]byte) {})
	if received >= calls {
		t.Errorf("received all %d results: nothing was dropped", received)
	}
	t.Logf("%d of %d results of %d bytes delivered before close 1013; peak queue %d bytes", received, calls, size, peak)
	eventually(t, "the connection to be released", func() bool { return h.Conns() == 1 })
}

// TestMessageLargerThanQueue: one message larger than MaxQueueBytes can
// never be queued: the connection is closed with 1009 and a reason naming
// the bound, and nothing is held.
func TestMessageLargerThanQueue(t *testing.T) {
	const budget = 64 << 10
	huge := strings.Repeat("y", budget+1)
	e := newEngine(t, decl.NewTool(func() string { return huge }, decl.WithName("huge")))
	h, srv := serve(t, e, Options{MaxQueueBytes: budget})
	c := dial(t, srv)
	send(t, c, bigCall(1, "hi"))
	if got := text(t, recv(t, c)); got != "hi" {
		t.Fatalf("got %q", got)
	}
	send(t, c, bigCall(2, "huge"))
	if ce := expectClose(t, c, gws.CloseMessageTooBig); !strings.Contains(ce.Text, "65536") {
		t.Errorf("reason %q does not give the bound", ce.Text)
	}
	if peak := h.stats.peakQueueBytes.Load(); peak > budget {
		t.Errorf("held %d bytes, bound %d", peak, budget)
	}
	eventually(t, "the connection to be released", func() bool { return h.Conns() == 0 })
}

// dialFrom dials srv from the loopback address ip (127.0.0.0/8 are all
// this machine's), so that the server sees distinct clients.
func dialFrom(t *testing.T, srv *httptest.Server, ip string) (*gws.Conn, *http.Response, error) {
	t.Helper()
	nd := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: testDeadline}
	d := gws.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: testDeadline, NetDialContext: nd.DialContext}
	c, resp, err := d.Dial(wsURL(srv), nil)
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, resp, err
}

// mustDialFrom is dialFrom that fails t when the dial fails.
func mustDialFrom(t *testing.T, srv *httptest.Server, ip string) *gws.Conn {
	t.Helper()
	c, _, err := dialFrom(t, srv, ip)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mustServe checks that c is served.
func mustServe(t *testing.T, c *gws.Conn, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	send(t, c, bigCall(1, "hi"))
	if got := text(t, recv(t, c)); got != "hi" {
		t.Fatalf("got %q", got)
	}
}

// refused checks an upgrade refused with status, Retry-After and a body
// containing want.
func refused(t *testing.T, resp *http.Response, err error, status int, want string) {
	t.Helper()
	if resp == nil {
		t.Fatalf("no response: %v", err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != status {
		t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, status)
	}
	if resp.Header.Get("Retry-After") == "" {
		t.Errorf("no Retry-After")
	}
	if !strings.Contains(string(body), want) {
		t.Errorf("body %q lacks %q", body, want)
	}
}

func TestConnectionLimits(t *testing.T) {
	h, srv := serve(t, newEngine(t), Options{MaxConns: 3, MaxConnsPerClient: 2})

	a1, _, err := dialFrom(t, srv, "127.0.0.1")
	mustServe(t, a1, err)
	a2, _, err := dialFrom(t, srv, "127.0.0.1")
	mustServe(t, a2, err)
	// A third connection of the same client: 429.
	_, resp, err := dialFrom(t, srv, "127.0.0.1")
	refused(t, resp, err, http.StatusTooManyRequests, "2 connections")
	// Another client still gets in, up to the total.
	b1, _, err := dialFrom(t, srv, "127.0.0.2")
	mustServe(t, b1, err)
	_, resp, err = dialFrom(t, srv, "127.0.0.3")
	refused(t, resp, err, http.StatusServiceUnavailable, "limit of 3 connections")
	if n := h.Conns(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
	// The ones in place are still served.
	mustServe(t, a1, nil)
	mustServe(t, b1, nil)

	// A connection that ends frees its slots.
	closeNormally(t, a2)
	eventually(t, "the slot to be released", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.admitted == 2
	})
	c, _, err := dialFrom(t, srv, "127.0.0.3")
	mustServe(t, c, err)
	_, resp, err = dialFrom(t, srv, "127.0.0.1")
	refused(t, resp, err, http.StatusServiceUnavailable, "limit of 3 connections")
}

// closeNormally closes c with 1000 and waits for the server's close.
func closeNormally(t *testing.T, c *gws.Conn) {
	t.Helper()
	_ = c.WriteControl(gws.CloseMessage, gws.FormatCloseMessage(gws.CloseNormalClosure, ""), time.Now().Add(time.Second))
	expectClose(t, c, gws.CloseNormalClosure)
}

// A client whose connections have all ended is forgotten: the handler
// keeps no entry for every address it ever served.
func TestClientForgottenWhenItsConnectionsEnd(t *testing.T) {
	h, srv := serve(t, newEngine(t), Options{})
	for range 2 {
		c, _, err := dialFrom(t, srv, "127.0.0.5")
		mustServe(t, c, err)
		closeNormally(t, c)
	}
	eventually(t, "the client to be forgotten", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.admitted == 0 && len(h.perClient) == 0
	})
}

// A negative PingInterval sends no pings (the writer starts no ticker),
// and the connection is served.
func TestNoPings(t *testing.T) {
	h, srv := serve(t, newEngine(t), Options{PingInterval: -1})
	c, _, err := dialFrom(t, srv, "127.0.0.1")
	mustServe(t, c, err)
	mustServe(t, c, nil)
	closeNormally(t, c)
	eventually(t, "the connection to end", func() bool { return h.Conns() == 0 })
}

// TestConnectionLimitsDefaults: the zero Options bound connections, and
// Unlimited turns the bounds off explicitly.
func TestConnectionLimitsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	// The values Options documents (a limit is a promise).
	type defaults struct {
		subprotocol                 string
		maxMessageSize, sendQueue   int
		maxQueueBytes               int64
		maxConns, maxConnsPerClient int
		ping, pong, write           time.Duration
	}
	want := defaults{"mcp", 4 << 20, 256, 8 << 20, 4096, 256, 30 * time.Second, 60 * time.Second, 10 * time.Second}
	got := defaults{o.Subprotocol, o.MaxMessageSize, o.SendQueue, o.MaxQueueBytes, o.MaxConns, o.MaxConnsPerClient, o.PingInterval, o.PongWait, o.WriteTimeout}
	if got != want {
		t.Fatalf("defaults:\n got %+v\nwant %+v", got, want)
	}
	h := NewHandler(newEngine(t), Options{MaxConns: Unlimited, MaxConnsPerClient: Unlimited, MaxQueueBytes: Unlimited})
	for range defaultMaxConnsPerClient + 1 {
		if status, why := h.admit("192.0.2.1"); status != 0 {
			t.Fatalf("Unlimited refused: %d %s", status, why)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	_ = h.Shutdown(ctx)
}

// A request refused before the upgrade takes no slot.
func TestRefusedUpgradeTakesNoSlot(t *testing.T) {
	h, srv := serve(t, newEngine(t), Options{MaxConns: 1})
	for range 3 {
		_, resp, _ := dialRaw(t, srv, []string{"other"}, nil)
		if resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("want 400, got %v", resp)
		}
		_, resp, _ = dialRaw(t, srv, []string{"mcp"}, http.Header{"Origin": {"http://evil.example"}})
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("want 403, got %v", resp)
		}
	}
	c, _, err := dialRaw(t, srv, []string{"mcp"}, nil)
	mustServe(t, c, err)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.admitted != 1 || len(h.perClient) != 1 {
		t.Errorf("admitted %d, clients %v", h.admitted, h.perClient)
	}
}

// Listen streams are counted per client address across WebSocket
// connections: a second connection from the same address does not get a
// second share (ports.PeerAddr), while another address does.
func TestListenStreamsCountedPerAddress(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{MaxListenersPerClient: 2})
	t.Cleanup(func() { _ = e.Close() })
	_, srv := serve(t, e, Options{})
	listen := func(c *gws.Conn, id int) rpcMessage {
		t.Helper()
		send(t, c, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},%s}}`, id, meta2026))
		return recv(t, c)
	}
	a := mustDialFrom(t, srv, "127.0.0.1")
	b := mustDialFrom(t, srv, "127.0.0.1")
	for id := 1; id <= 2; id++ {
		if m := listen(a, id); m.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("listen %d: %+v, want its acknowledgement", id, m)
		}
	}
	if m := listen(b, 3); m.Error == nil || m.Error.Code != app.CodeListenLimit {
		t.Fatalf("a third listen from the same address on another connection: %+v, want error %d", m, app.CodeListenLimit)
	}
	c := mustDialFrom(t, srv, "127.0.0.2")
	if m := listen(c, 4); m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("a listen from another address: %+v, want its acknowledgement", m)
	}
}

// Over WebSocket, a request refused for what its params hold (duplicate
// member names, invalid UTF-8) is answered with its id (issue 10, "No
// lost ids"); the connection goes on.
func TestRefusedRequestAnswersItsIDOverWebSocket(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{})
	t.Cleanup(func() { _ = e.Close() })
	h := NewHandler(e, Options{})
	srv := httptest.NewServer(h) // 127.0.0.1
	d := gws.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		srv.Close()
	})
	exchange := func(msg string) string {
		t.Helper()
		_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if err := c.WriteMessage(gws.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for _, tc := range []struct {
		msg, id string
		code    int
	}{
		{`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"a","name":"b"}}`, `21`, -32600},
		{`{"jsonrpc":"2.0","method":"ping","params":{"_meta":{"k":1,"k":2}},"id":"w-22"}`, `"w-22"`, -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}", `23`, -32700},
	} {
		got := exchange(tc.msg)
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(got), &m); err != nil || string(m.ID) != tc.id || m.Error.Code != tc.code {
			t.Fatalf("%q answered %s; want id %s, code %d", tc.msg, got, tc.id, tc.code)
		}
		if got := exchange(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"p","result":{}}` {
			t.Fatalf("after: %s", got)
		}
	}
}

// TestTokenExpiryClosesConnection upgrades with a principal that expires
// in a few seconds (as mcphttp.RequireBearer puts one in the context), and
// leaves a call running: when the principal expires, the call's context is
// cancelled, its answer is not sent, and the connection is closed with
// 4401 and a reason that says what to do.
func TestTokenExpiryClosesConnection(t *testing.T) {
	started := make(chan struct{})
	cancelled := make(chan struct{})
	e := newEngine(t, decl.NewTool(func(ctx context.Context) (string, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return "late", nil
	}, decl.WithName("wait")))
	h := NewHandler(e, Options{Logger: slog.New(slog.DiscardHandler)})
	expires := make(chan time.Time, 1)
	mux := http.NewServeMux()
	mux.Handle("/ws", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exp := time.Now().Add(3 * time.Second)
		expires <- exp
		h.ServeHTTP(w, r.WithContext(ports.WithPrincipal(r.Context(), ports.Principal{Subject: "alice", Expires: exp})))
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer func() { _ = h.Shutdown(context.Background()) }()

	c := dial(t, srv)
	exp := <-expires
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi",`+meta2026+`}}`)
	if got := text(t, recv(t, c)); got != "hi" {
		t.Fatalf("call: %q", got)
	}
	send(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait",`+meta2026+`}}`)
	select {
	case <-started:
	case <-time.After(testDeadline):
		t.Fatal("the call did not start")
	}
	if time.Now().After(exp) {
		t.Fatal("the machine is too slow for this test: the call started after the principal expired")
	}

	_ = c.SetReadDeadline(time.Now().Add(testDeadline))
	_, msg, err := c.ReadMessage()
	ce, ok := err.(*gws.CloseError)
	if !ok || ce.Code != CloseTokenExpired || !strings.Contains(ce.Text, "token expired") {
		t.Fatalf("after the expiry: %s %v, want close %d", msg, err, CloseTokenExpired)
	}
	if time.Now().Before(exp) {
		t.Fatalf("closed before the principal expired")
	}
	select {
	case <-cancelled:
	case <-time.After(testDeadline):
		t.Fatal("the call in flight was not cancelled")
	}
	eventually(t, "the connection to be dropped", func() bool { return h.Conns() == 0 })
}

// clientOf names a client by its IP address alone, in canonical form, so
// that MaxConnsPerClient counts the same client the same whatever the
// port or the spelling of its address.
func TestClientOfCanonicalIP(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:5000":          "127.0.0.1",
		"[::ffff:127.0.0.1]:5001": "127.0.0.1",
		"[0:0:0:0:0:0:0:1]:80":    "::1",
		"[2001:DB8::1]:443":       "2001:db8::1",
		"not an address":          "not an address",
		"host.example:8080":       "host.example",
	} {
		r := &http.Request{RemoteAddr: addr}
		if got := clientOf(r); got != want {
			t.Errorf("clientOf(%q) = %q, want %q", addr, got, want)
		}
	}
}

// TestQueueByteBoundEdges: MaxQueueBytes is the most the queue holds. A
// message of exactly that size is queued into an empty queue; while other
// bytes are queued it is refused as a slow reader's (1013), since it would
// fit later; only a message larger than the bound by itself is 1009. The
// writer is not started, so what is queued stays.
func TestQueueByteBoundEdges(t *testing.T) {
	const limit = 100
	upgraded := make(chan *gws.Conn, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&gws.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		upgraded <- ws
	}))
	t.Cleanup(srv.Close)
	open := func() *conn {
		t.Helper()
		cl, _, err := gws.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		ws := <-upgraded
		t.Cleanup(func() { ws.Close() })
		opts := Options{MaxQueueBytes: limit}.withDefaults()
		return newConn(context.Background(), ws, &opts, &queueStats{})
	}
	full := []byte(strings.Repeat("x", limit))

	c := open()
	if err := c.WriteMessage(context.Background(), full); err != nil {
		t.Fatalf("a message of exactly MaxQueueBytes into an empty queue: %v", err)
	}

	c = open()
	if err := c.WriteMessage(context.Background(), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMessage(context.Background(), full); !errors.Is(err, net.ErrClosed) || c.code != gws.CloseTryAgainLater {
		t.Fatalf("a message of MaxQueueBytes behind 2 queued bytes: %v, close code %d, want 1013", err, c.code)
	}

	c = open()
	if err := c.WriteMessage(context.Background(), append(full, 'x')); !errors.Is(err, net.ErrClosed) || c.code != gws.CloseMessageTooBig {
		t.Fatalf("a message one byte over MaxQueueBytes: %v, close code %d, want 1009", err, c.code)
	}
}

// connHandlerFunc is a ports.ConnHandler of a function.
type connHandlerFunc func(ctx context.Context, c ports.Conn) error

func (f connHandlerFunc) ServeConn(ctx context.Context, c ports.Conn) error { return f(ctx, c) }

// TestMessageKeptAtItsSize: a message reaches the engine in a slice of
// exactly its length, whatever its size and however it was framed, since
// that slice lives as long as its call and the budgets of bytes in flight
// count its length. (A buffer grown while reading, handed over as it was,
// held up to twice as much: 4 MiB calls left waiting took 8 MiB each.)
func TestMessageKeptAtItsSize(t *testing.T) {
	type got struct{ len, cap int }
	msgs := make(chan got, 8)
	h := NewHandler(connHandlerFunc(func(ctx context.Context, c ports.Conn) error {
		for {
			m, err := c.ReadMessage(ctx)
			if err != nil {
				return nil
			}
			msgs <- got{len(m), cap(m)}
		}
	}), Options{MaxMessageSize: 4 << 20})
	srv := mount(t, h)
	c := dial(t, srv)
	defer c.Close()
	for _, n := range []int{2, readChunkSize - 1, readChunkSize, readChunkSize + 1, 1<<20 + 3, 4 << 20} {
		body := `"` + strings.Repeat("x", n-2) + `"`
		if err := c.WriteMessage(gws.TextMessage, []byte(body)); err != nil {
			t.Fatal(err)
		}
		select {
		case g := <-msgs:
			if g.len != n || g.cap != n {
				t.Errorf("a message of %d bytes reached the engine with len %d, cap %d", n, g.len, g.cap)
			}
		case <-time.After(testDeadline):
			t.Fatalf("the message of %d bytes did not arrive", n)
		}
	}
	// Framed in pieces (a fragmented message), it is kept the same.
	w, err := c.NextWriter(gws.TextMessage)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := w.Write([]byte(strings.Repeat("y", 50_000))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-msgs:
		if g.len != 250_000 || g.cap != 250_000 {
			t.Errorf("a fragmented message of 250000 bytes reached the engine with len %d, cap %d", g.len, g.cap)
		}
	case <-time.After(testDeadline):
		t.Fatal("the fragmented message did not arrive")
	}
}

// TestMessagesQueuedAtCloseAreSent: when the engine is done with a
// connection, every message it queued reaches the client, then the close
// frame (1000), even with more queued than the network takes at once.
func TestMessagesQueuedAtCloseAreSent(t *testing.T) {
	const count, size = 8, 4 << 20 // 32 MiB: more than loopback's socket buffers hold
	served := make(chan struct{})
	h := NewHandler(connHandlerFunc(func(ctx context.Context, c ports.Conn) error {
		defer close(served)
		for i := range count {
			msg := []byte(`"` + strings.Repeat(strconv.Itoa(i), size-2) + `"`)
			if err := c.WriteMessage(ctx, msg); err != nil {
				t.Errorf("queueing message %d: %v", i, err)
			}
		}
		return nil // the engine is done: the connection closes once its queue is sent
	}), Options{MaxQueueBytes: 64 << 20})
	srv := mount(t, h)
	c := dial(t, srv)
	defer c.Close()
	<-served // the client reads nothing until then
	// Each read gets its own deadline: what is bounded is a stall, not
	// how fast 32 MiB go through a loaded machine (under -race and busy
	// CPUs one deadline for all eight messages ran out at the seventh).
	for i := range count {
		_ = c.SetReadDeadline(time.Now().Add(testDeadline))
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("message %d of %d: %v", i, count, err)
		}
		if len(data) != size || data[1] != byte('0'+i) {
			t.Fatalf("message %d: %d bytes starting %q", i, len(data), data[:2])
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(testDeadline))
	_, _, err := c.ReadMessage()
	if !gws.IsCloseError(err, gws.CloseNormalClosure) {
		t.Fatalf("after the queued messages: %v, want the close frame 1000", err)
	}
}

// TestPongWaitDefault: an unset PongWait is the default (60 s), and a
// PongWait no longer than the PingInterval is twice the PingInterval.
func TestPongWaitDefault(t *testing.T) {
	for _, tc := range []struct {
		ping, pong, want time.Duration
	}{
		{50 * time.Millisecond, 0, defaultPongWait},
		{0, 0, defaultPongWait},
		{50 * time.Millisecond, 70 * time.Millisecond, 70 * time.Millisecond},
		{50 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond},
		{45 * time.Second, 0, defaultPongWait},
		{defaultPongWait, 0, 2 * defaultPongWait},
		{-1, 0, defaultPongWait},
	} {
		if got := (Options{PingInterval: tc.ping, PongWait: tc.pong}).withDefaults().PongWait; got != tc.want {
			t.Errorf("PingInterval %v, PongWait %v: PongWait %v, want %v", tc.ping, tc.pong, got, tc.want)
		}
	}
}

// TestConnectionBrokenInAMessage: a connection that breaks in the middle
// of a message ends the reading: the engine's ReadMessage fails, nothing
// of the message is handed over, and nothing keeps reading.
func TestConnectionBrokenInAMessage(t *testing.T) {
	type result struct {
		msgs int
		err  error
	}
	done := make(chan result, 1)
	h := NewHandler(connHandlerFunc(func(ctx context.Context, c ports.Conn) error {
		n := 0
		for {
			if _, err := c.ReadMessage(ctx); err != nil {
				done <- result{n, err}
				return nil
			}
			n++
		}
	}), Options{})
	srv := mount(t, h)
	c := dial(t, srv)
	w, err := c.NextWriter(gws.TextMessage)
	if err != nil {
		t.Fatal(err)
	}
	// 100 KB of a message: gorilla sends them as fragments as its buffer
	// fills, and the final fragment never comes.
	if _, err := w.Write([]byte(`"` + strings.Repeat("x", 100_000))); err != nil {
		t.Fatal(err)
	}
	_ = c.UnderlyingConn().Close()
	select {
	case r := <-done:
		if r.msgs != 0 || r.err == nil {
			t.Fatalf("%d messages handed over, then %v", r.msgs, r.err)
		}
	case <-time.After(testDeadline):
		t.Fatal("reading did not end when the connection broke in a message")
	}
}
