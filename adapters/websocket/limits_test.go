package websocket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
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
	e := newEngine(t, app.NewTool(func() string { return big }, app.WithName("big")))
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
	received := 0
	_ = mute.SetReadDeadline(time.Now().Add(testDeadline))
	for {
		_, _, err := mute.ReadMessage()
		if err != nil {
			var ce *gws.CloseError
			if !errors.As(err, &ce) || ce.Code != gws.CloseTryAgainLater {
				t.Fatalf("connection ended with %v, want close 1013", err)
			}
			break
		}
		received++
	}
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
	e := newEngine(t, app.NewTool(func() string { return huge }, app.WithName("huge")))
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
	_ = a2.WriteControl(gws.CloseMessage, gws.FormatCloseMessage(gws.CloseNormalClosure, ""), time.Now().Add(time.Second))
	expectClose(t, a2, gws.CloseNormalClosure)
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

// TestConnectionLimitsDefaults: the zero Options bound connections, and
// Unlimited turns the bounds off explicitly.
func TestConnectionLimitsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if o.MaxConns != defaultMaxConns || o.MaxConnsPerClient != defaultMaxConnsPerClient || o.MaxQueueBytes != defaultMaxQueueBytes {
		t.Fatalf("defaults: %d %d %d", o.MaxConns, o.MaxConnsPerClient, o.MaxQueueBytes)
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
	e, err := app.NewEngine(app.Options{Validator: jsonschema.New(), ToolRegistry: memory.NewRegistry(), MaxListenersPerClient: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	_, srv := serve(t, e, Options{})
	listen := func(c *gws.Conn, id int) rpcMessage {
		t.Helper()
		send(t, c, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},%s}}`, id, meta2026))
		return recv(t, c)
	}
	a, _, err := dialFrom(t, srv, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := dialFrom(t, srv, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= 2; id++ {
		if m := listen(a, id); m.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("listen %d: %+v, want its acknowledgement", id, m)
		}
	}
	if m := listen(b, 3); m.Error == nil || m.Error.Code != app.CodeListenLimit {
		t.Fatalf("a third listen from the same address on another connection: %+v, want error %d", m, app.CodeListenLimit)
	}
	c, _, err := dialFrom(t, srv, "127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	if m := listen(c, 4); m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("a listen from another address: %+v, want its acknowledgement", m)
	}
}
