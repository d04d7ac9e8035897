package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

func ackOf(id string) string {
	return `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `},"notifications":{"toolsListChanged":true}}}`
}

// decodeError decodes a JSON-RPC error response (failing on anything else).
func decodeError(t *testing.T, msg string) rpcReply {
	t.Helper()
	r := decodeReply(t, msg)
	if r.Error == nil || r.Error.Code == 0 {
		t.Fatalf("not an error response: %s", msg)
	}
	return r
}

// listenOK opens a tools listen stream with the given id and checks its
// acknowledgement.
func (c *client) listenOK(id string) {
	c.t.Helper()
	c.send(listenReq(id, `{"toolsListChanged":true}`))
	equalJSON(c.t, c.recv(), ackOf(id))
}

// listenRefused opens a listen stream that must be refused with
// app.CodeListenLimit, the request's id and data naming limit.
func (c *client) listenRefused(id, limit string, max int) {
	c.t.Helper()
	c.send(listenReq(id, `{"toolsListChanged":true}`))
	e := decodeError(c.t, c.recv())
	if e.Error.Code != app.CodeListenLimit || string(e.ID) != id || e.Error.Data["limit"] != limit || e.Error.Data["max"] != float64(max) ||
		!strings.Contains(e.Error.Message, "Too many listen streams") {
		c.t.Fatalf("refusal %+v, want code %d, id %s, limit %s, max %d", e, app.CodeListenLimit, id, limit, max)
	}
}

// listenEventually opens a listen stream, retrying (with new ids) while it
// is refused for a cap: a stream that was cancelled frees its place once
// its request has ended, which the client does not see.
func (c *client) listenEventually(firstID int) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for id := firstID; ; id++ {
		sid := fmt.Sprint(id)
		c.send(listenReq(sid, `{"toolsListChanged":true}`))
		msg := c.recv()
		if !strings.Contains(msg, `"error"`) {
			equalJSON(c.t, msg, ackOf(sid))
			return
		}
		if e := decodeError(c.t, msg); e.Error.Code != app.CodeListenLimit {
			c.t.Fatalf("listen: %s", msg)
		}
		if time.Now().After(deadline) {
			c.t.Fatal("the place of a cancelled listen stream was not freed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (c *client) cancel(id string) {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
}

// Options.MaxListeners bounds the listen streams of the whole engine, over
// every connection: one more is refused at once with CodeListenLimit,
// other requests are still served, and a stream that ends frees its place.
func TestListenMaxListeners(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), MaxListeners: 2, MaxListenersPerClient: hexmcp.Unlimited}, addTool())
	a := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "10.0.0.1:1000"})
	b := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "10.0.0.2:1000"})
	a.listenOK("1")
	b.listenOK("1")
	a.listenRefused("2", "maxListeners", 2)
	b.listenRefused(`"x"`, "maxListeners", 2)
	if resp := b.roundTrip(`{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{` + meta2026 + `}}`); !strings.Contains(resp, `"result"`) {
		t.Fatalf("discover past the cap: %s", resp)
	}
	// both open streams still get their notifications
	if err := e.AddTool(hexmcp.NewTool(func() string { return "x" }, hexmcp.WithName("late"))); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*client{a, b} {
		equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`)
	}
	a.cancel("1")
	b.listenEventually(10)
}

// Options.MaxListenersPerClient bounds the listen streams of one client,
// told by TransportInfo.ClientKey: the same IP address on two connections
// is one client, another address or an authenticated principal another.
func TestListenMaxListenersPerClient(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), MaxListenersPerClient: 2}, addTool())
	a1 := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "10.0.0.1:1001"})
	a2 := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "10.0.0.1:1002"})
	a1.listenOK("1")
	a1.listenOK("2")
	a2.listenRefused("1", "maxListenersPerClient", 2)
	a1.listenRefused("3", "maxListenersPerClient", 2)

	b := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "10.0.0.2:1001"})
	b.listenOK("1")
	b.listenOK("2")
	alice := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "10.0.0.1:1003", Principal: &ports.Principal{Subject: "alice"}})
	alice.listenOK("1")

	a1.cancel("2")
	a2.listenEventually(10)
	a1.listenRefused("4", "maxListenersPerClient", 2)
}

// A transport that names no client (stdio, a WebSocket connection without
// TransportInfo) has its listen streams counted per connection.
func TestListenMaxListenersPerConnection(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), MaxListenersPerClient: 1}, addTool())
	a, b := serve(t, e), serve(t, e)
	a.listenOK("1")
	a.listenRefused("2", "maxListenersPerClient", 1)
	b.listenOK("1")
}

// resourceSubscriptions is bounded in count (MaxListenSubscriptions) and
// each URI in bytes (MaxURILength): past either, -32602 naming the limit,
// and nothing is kept.
func TestListenSubscriptionLimits(t *testing.T) {
	e := resourceEngine(t, app.Options{Validator: jsonschema.New(), MaxListenSubscriptions: 3, MaxURILength: 40}, sampleResources()...)
	c := serve(t, e)
	listen := func(id string, uris ...string) string {
		b, _ := json.Marshal(uris)
		return c.roundTrip(listenReq(id, `{"resourceSubscriptions":`+string(b)+`}`))
	}
	invalid := func(resp, limit string, max int, msg string) {
		t.Helper()
		e := decodeError(t, resp)
		if e.Error.Code != -32602 || e.Error.Data["limit"] != limit || e.Error.Data["max"] != float64(max) || !strings.Contains(e.Error.Message, msg) {
			t.Fatalf("%s, want -32602 naming %s", resp, limit)
		}
	}
	invalid(listen("1", "test://a", "test://b", "test://c", "test://d"), "maxListenSubscriptions", 3, "more than 3 URIs")
	invalid(listen("2", "test://"+strings.Repeat("x", 34)), "maxURILength", 40, "longer than 40 bytes")
	invalid(listen("2", "test://"+strings.Repeat("x", 1<<20)), "maxURILength", 40, "longer than 40 bytes")
	// a URI whose escapes make it longer on the wire, not in bytes, is fine
	// (40 bytes: a URI of the template test://template/{id}/data)
	long := "test://template/" + strings.Repeat("x", 19) + "/data"
	resp := c.roundTrip(listenReq("3", `{"resourceSubscriptions":["\u0074est://static-text","`+long+`","test://static-binary"]}`))
	equalJSON(t, resp, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":3},"notifications":{"resourceSubscriptions":["test://static-text","`+long+`","test://static-binary"]}}}`)
	if n := e.NotifyResourceUpdated("test://static-text"); n != 1 {
		t.Fatalf("NotifyResourceUpdated = %d", n)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://static-text","_meta":{"io.modelcontextprotocol/subscriptionId":3}}}`)
	for _, bad := range []string{`{"toolsListChanged":"yes"}`, `{"promptsListChanged":[true]}`} {
		resp := c.roundTrip(listenReq("5", bad))
		if e := decodeError(t, resp); e.Error.Code != -32602 || !strings.Contains(e.Error.Message, "ListChanged must be a boolean") {
			t.Fatalf("%s: %s", bad, resp)
		}
	}
	// unknown members are skipped, whatever they hold; null is false
	resp = c.roundTrip(listenReq("6", `{"future":{"a":[1,{"b":null}]},"toolsListChanged":null,"resourcesListChanged":true,"resourceSubscriptions":null}`))
	equalJSON(t, resp, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":6},"notifications":{"resourcesListChanged":true}}}`)
	for _, bad := range []string{`"test://a"`, `[1]`, `["a",null]`, `{}`} {
		resp := c.roundTrip(listenReq("4", `{"resourceSubscriptions":`+bad+`}`))
		if e := decodeError(t, resp); e.Error.Code != -32602 || !strings.Contains(e.Error.Message, "array of strings") {
			t.Fatalf("%s: %s", bad, resp)
		}
	}
}

// With the default limits, a list of 380,000 URIs (4 MiB) is refused
// with -32602 rather than kept for the life of the stream.
func TestListenHugeSubscriptionListRefused(t *testing.T) {
	e := resourceEngine(t, app.Options{Validator: jsonschema.New()}, sampleResources()...)
	c := serve(t, e)
	list := "[" + strings.Repeat(`"test://x",`, 380_000) + `"test://x"]`
	resp := c.roundTrip(listenReq("1", `{"resourceSubscriptions":`+list+`}`))
	if e := decodeError(t, resp); e.Error.Code != -32602 || e.Error.Data["max"] != float64(app.DefaultMaxListenSubscriptions) ||
		!strings.Contains(e.Error.Message, fmt.Sprintf("more than %d URIs", app.DefaultMaxListenSubscriptions)) {
		t.Fatal(resp)
	}
	if n := e.NotifyResourceUpdated("test://x"); n != 0 {
		t.Fatalf("a refused listen is subscribed: %d", n)
	}
}

// A stream that delivers nothing for ListenIdleTimeout is ended by the
// server, with the completion result, and its place is free again.
func TestListenIdleTimeout(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), ListenIdleTimeout: 50 * time.Millisecond, MaxListenersPerClient: 1}, addTool())
	c := serve(t, e)
	c.listenOK("1")
	equalJSON(t, c.recv(), listenDone("1"))
	c.listenOK("2") // the place was freed before the completion result was sent
	equalJSON(t, c.recv(), listenDone("2"))
}

// With ListenIdleTimeout turned off (hexmcp.Unlimited) a stream has no
// idle timer: it delivers, again and again, and is never ended for
// idleness.
func TestListenWithoutIdleTimeout(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), ListenIdleTimeout: hexmcp.Unlimited}, addTool())
	c := serve(t, e)
	c.listenOK("1")
	for _, name := range []string{"late", "later"} {
		if err := e.AddTool(hexmcp.NewTool(func() string { return "x" }, hexmcp.WithName(name))); err != nil {
			t.Fatal(err)
		}
		equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`)
	}
	equalJSON(t, c.roundTrip(ping), pingResp)
}

// gatedWriter lets the acknowledgement through, then blocks every write
// until open is closed: a client that stopped reading.
type gatedWriter struct {
	open chan struct{}
	mu   sync.Mutex
	msgs []string
	got  chan struct{}
	n    int
}

func newGatedWriter() *gatedWriter {
	return &gatedWriter{open: make(chan struct{}), got: make(chan struct{}, 1)}
}

func (w *gatedWriter) WriteMessage(_ context.Context, msg []byte) error {
	w.mu.Lock()
	first := w.n == 0
	w.n++
	w.mu.Unlock()
	if !first {
		<-w.open // deaf to the context, as a stuck network write can be
	}
	w.mu.Lock()
	w.msgs = append(w.msgs, string(msg))
	w.mu.Unlock()
	select {
	case w.got <- struct{}{}:
	default:
	}
	return nil
}

func (w *gatedWriter) written() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

// waitFor waits (bounded) until the writer has n messages.
func (w *gatedWriter) waitFor(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if m := w.written(); len(m) >= n {
			return m
		}
		select {
		case <-w.got:
		case <-deadline:
			t.Fatalf("%d messages written, want %d: %q", len(w.written()), n, w.written())
		}
	}
}

// One listener whose client does not read delays no one: notifiers only
// queue, the normal listener gets every change, and the stalled one's queue
// stays bounded (one notification per kind and per URI it asked for:
// one waiting already says what another would). When the client reads
// again it gets one notification for all it missed of each.
func TestListenStalledListenerDelaysNobody(t *testing.T) {
	e := resourceEngine(t, app.Options{Validator: jsonschema.New()}, sampleResources()...)
	if err := e.AddTool(addTool()); err != nil {
		t.Fatal(err)
	}
	open := func(id string, w ports.MessageWriter) (cancel func(), done chan []byte) {
		ctx, cancel := context.WithCancel(context.Background())
		done = make(chan []byte, 1)
		req := listenReq(id, `{"toolsListChanged":true,"resourceSubscriptions":["test://static-text","test://static-binary","test://template/last/data"]}`)
		go func() { done <- e.HandleMessage(ctx, nil, []byte(req), w) }()
		return cancel, done
	}
	stalled, normal := newGatedWriter(), newGatedWriter()
	close(normal.open)
	cancelS, doneS := open("1", stalled)
	defer stalled.releaseOnce()
	stalled.waitFor(t, 1) // the acknowledgement
	cancelN, doneN := open("2", normal)
	normal.waitFor(t, 1)

	const rounds = 500
	changed := make(chan struct{})
	go func() {
		defer close(changed)
		for i := range rounds {
			name := fmt.Sprint("t", i)
			_ = e.AddTool(hexmcp.NewTool(func() string { return "x" }, hexmcp.WithName(name)))
			e.NotifyResourceUpdated("test://static-text")
			e.NotifyResourceUpdated("test://static-binary")
			e.RemoveTool(name)
		}
		e.NotifyResourceUpdated("test://template/last/data")
	}()
	testtools.Recv(t, changed, 20*time.Second, "the notifiers are held up by a listener that does not read")
	// The normal listener gets the changes, up to the last one: its
	// queue is then empty (notices are written in the order they came).
	for msgs := normal.waitFor(t, 2); !strings.Contains(msgs[len(msgs)-1], "test://template/last/data"); {
		msgs = normal.waitFor(t, len(msgs)+1)
	}
	// The stalled one has one write blocked and at most one notice per
	// kind and URI waiting (the last one among them).
	q := slices.Max(app.ListenQueueLengths(e))
	if q < 1 || q > 4 {
		t.Fatalf("queue lengths %v, want 1 to 4 for the stalled listener", app.ListenQueueLengths(e))
	}
	if got := len(stalled.written()); got != 1 {
		t.Fatalf("stalled writer wrote %d", got)
	}
	stalled.releaseOnce()
	got := stalled.waitFor(t, 2+q)[2:] // after the acknowledgement and the blocked write, the queue
	if !strings.Contains(got[len(got)-1], "test://template/last/data") {
		t.Fatalf("the last change did not reach the stalled listener: %q", got)
	}
	seen := map[string]bool{}
	for _, m := range got {
		if seen[m] {
			t.Fatalf("%q was queued twice", m)
		}
		seen[m] = true
	}
	cancelS()
	cancelN()
	for _, d := range []chan []byte{doneS, doneN} {
		if resp := testtools.Recv(t, d, 10*time.Second, "a listen request did not end when cancelled"); resp != nil {
			t.Fatalf("response after cancellation: %s", resp)
		}
	}
	if n := len(stalled.written()); n != 2+q {
		t.Fatalf("stalled listener: %d messages, want %d", n, 2+q)
	}
}

func (w *gatedWriter) releaseOnce() {
	select {
	case <-w.open:
	default:
		close(w.open)
	}
}

// A listen stream whose write fails ends at once, without a response, and
// frees its place.
func TestListenEndsWhenWriteFails(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), MaxListenersPerClient: 1}, addTool())
	w := &failingWriter{}
	done := make(chan []byte, 1)
	go func() {
		done <- e.HandleMessage(context.Background(), nil, []byte(listenReq("1", `{"toolsListChanged":true}`)), w)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for w.count() == 0 { // the acknowledgement went through
		if time.Now().After(deadline) {
			t.Fatal("no acknowledgement")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// the place is taken
	resp := e.HandleMessage(context.Background(), nil, []byte(listenReq("2", `{"toolsListChanged":true}`)), &failingWriter{})
	if e := decodeError(t, string(resp)); e.Error.Code != app.CodeListenLimit {
		t.Fatalf("second listen: %s", resp)
	}
	e.RemoveTool("add") // its write fails
	if resp := testtools.Recv(t, done, 10*time.Second, "the listen request did not end when its write failed"); resp != nil {
		t.Fatalf("response on a lost stream: %s", resp)
	}
	// the place is free again
	ctx, cancel := context.WithCancel(context.Background())
	w2 := &failingWriter{}
	done2 := make(chan []byte, 1)
	go func() { done2 <- e.HandleMessage(ctx, nil, []byte(listenReq("3", `{"toolsListChanged":true}`)), w2) }()
	for w2.count() == 0 {
		select {
		case resp := <-done2:
			t.Fatalf("listen after the place was freed: %s", resp)
		default:
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done2
}

// failingWriter takes the first message and fails every other.
type failingWriter struct {
	mu sync.Mutex
	n  int
}

func (w *failingWriter) WriteMessage(context.Context, []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	if w.n > 1 {
		return errors.New("connection reset")
	}
	return nil
}

func (w *failingWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

func TestClientKey(t *testing.T) {
	for _, tc := range []struct {
		info hexmcp.TransportInfo
		want string
	}{
		{hexmcp.TransportInfo{}, ""},
		{hexmcp.TransportInfo{RemoteAddr: "192.0.2.1:5000"}, "ip:192.0.2.1"},
		{hexmcp.TransportInfo{RemoteAddr: "192.0.2.1"}, "ip:192.0.2.1"},
		{hexmcp.TransportInfo{RemoteAddr: "[::ffff:192.0.2.1]:5000"}, "ip:192.0.2.1"},
		{hexmcp.TransportInfo{RemoteAddr: "[2001:db8:1:2:3:4:5:6]:443"}, "ip:2001:db8:1:2::/64"},
		{hexmcp.TransportInfo{RemoteAddr: "pipe"}, "addr:pipe"},
		{hexmcp.TransportInfo{RemoteAddr: "192.0.2.1:5000", Principal: &ports.Principal{Subject: "alice"}}, "sub:alice"},
		{hexmcp.TransportInfo{RemoteAddr: "192.0.2.1:5000", Principal: &ports.Principal{}}, "ip:192.0.2.1"},
		{hexmcp.TransportInfo{RemoteAddr: "192.0.2.1:5000", Principal: &ports.Principal{Subject: "alice"}, Client: "proxy:203.0.113.9"}, "proxy:203.0.113.9"},
	} {
		if got := tc.info.ClientKey(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.info, got, tc.want)
		}
	}
}

// What a listen stream follows answers to resources/subscribe's rule when
// the stream starts and again for every notification: an unknown URI is
// not acknowledged (nor is the member, when nothing is left); a resource
// whose scopes the caller lacks refuses the request naming the scopes
// and the URIs; and a notice queued while the resource was visible is not
// written once it is hidden.
func TestListenFollowsOnlyWhatItMaySee(t *testing.T) {
	var hide sync.Mutex
	hidden := false
	vis := hexmcp.Visibility{Resource: func(_ context.Context, _ *hexmcp.Viewer, uri string) bool {
		hide.Lock()
		defer hide.Unlock()
		return !hidden || uri != "test://static-text"
	}}
	e := resourceEngine(t, app.Options{Validator: jsonschema.New(), Visibility: vis}, append(sampleResources(),
		hexmcp.TextResource("test://scoped", "scoped", "s", hexmcp.WithScopes("a", "b")),
		hexmcp.NewResourceTemplate("test://scoped/{x}", "scopedT", func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) {
			return nil, nil
		}, hexmcp.WithScopes("c")))...)
	c := serveAs(t, e, hexmcp.TransportInfo{Principal: &ports.Principal{Subject: "u", Scopes: []string{"a"}}})
	resp := c.roundTrip(listenReq("1", `{"resourceSubscriptions":["test://nothing","test://template/1/other"]}`))
	equalJSON(t, resp, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{}}}`)
	resp = c.roundTrip(listenReq("2", `{"toolsListChanged":true,"resourceSubscriptions":["test://static-text","test://scoped","test://scoped/x"]}`))
	equalJSON(t, resp, `{"jsonrpc":"2.0","id":2,"error":{"code":-32052,"message":"Insufficient scope: needs b c","data":{"missing":["b","c"],"scopes":["a","b","c"],"uris":["test://scoped","test://scoped/x"]}}}`)

	w := newGatedWriter()
	defer w.releaseOnce()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []byte, 1)
	go func() {
		done <- e.HandleMessage(ctx, nil, []byte(listenReq("3", `{"resourceSubscriptions":["test://static-text","test://static-binary","test://template/end/data"]}`)), w)
	}()
	w.waitFor(t, 1) // the acknowledgement
	if n := e.NotifyResourceUpdated("test://static-binary"); n != 1 {
		t.Fatalf("told %d", n)
	}
	if n := e.NotifyResourceUpdated("test://static-text"); n != 1 {
		t.Fatalf("told %d", n)
	}
	// Both wait (the writer holds the first write after the
	// acknowledgement); now the resource is hidden.
	hide.Lock()
	hidden = true
	hide.Unlock()
	e.VisibilityChanged()
	if n := e.NotifyResourceUpdated("test://static-text"); n != 0 {
		t.Fatalf("a hidden resource's update told %d", n)
	}
	w.releaseOnce()
	e.NotifyResourceUpdated("test://template/end/data") // written after static-text would be
	got := w.waitFor(t, 3)
	cancel()
	<-done
	if len(got) != 3 || !strings.Contains(got[1], "test://static-binary") || !strings.Contains(got[2], "test://template/end/data") {
		t.Fatalf("written %q", got)
	}
}
