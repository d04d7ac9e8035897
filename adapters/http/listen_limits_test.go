package mcphttp_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// listenEngine is an engine with one tool and the given listen limits.
func listenEngine(t *testing.T, opts app.Options) *app.Engine {
	t.Helper()
	opts.Info = domain.Implementation{Name: "test", Version: "1.0.0"}
	opts.ToolRegistry = memory.NewRegistry()
	e, err := app.NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddTool(hexmcp.NewTool(func() string { return "pong" }, hexmcp.WithName("ping"))); err != nil {
		t.Fatal(err)
	}
	return e
}

// clientFrom returns an HTTP client whose connections come from the
// loopback address ip (any of 127.0.0.0/8): another client, to the server.
func clientFrom(t *testing.T, ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// postListen sends subscriptions/listen with the given id from c (with
// extra headers h) and returns the response, whatever it is.
func postListen(t *testing.T, ctx context.Context, c *http.Client, url string, id int, h hdr) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(statelessBody(id, "subscriptions/listen", listenParams)))
	if err != nil {
		t.Fatal(err)
	}
	testtools.MCPHeaders(req, statelessHdr("subscriptions/listen", ""), h)
	return testtools.Do(t, c, req)
}

func listenAck(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%d},"notifications":{"toolsListChanged":true}}}`, id)
}

// openStream is an open listen stream; close ends it from the client's side.
type openStream struct {
	*sse
	close func()
}

// openListen opens a listen stream that must be served: an SSE stream
// whose first event is the acknowledgement.
func openListen(t *testing.T, c *http.Client, url string, id int, h hdr) *openStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	return served(t, postListen(t, ctx, c, url, id, h), cancel, id)
}

// served checks that resp opens the listen stream of request id.
func served(t *testing.T, resp *http.Response, cancel func(), id int) *openStream {
	t.Helper()
	st := &openStream{close: sync.OnceFunc(func() { cancel(); resp.Body.Close() })}
	t.Cleanup(st.close)
	st.sse = newSSE(t, resp)
	if ev := st.nextEvent(t); ev.data != listenAck(id) {
		t.Fatalf("first event %q", ev.data)
	}
	return st
}

// expectListenRefused checks that a listen with this id is refused for a
// cap on listen streams: 429, Retry-After, and the JSON-RPC error
// (app.CodeListenLimit, the request's id, data naming the limit).
func expectListenRefused(t *testing.T, c *http.Client, url string, id int, h hdr, limit string) {
	t.Helper()
	resp := postListen(t, context.Background(), c, url, id, h)
	body := expect(t, resp, http.StatusTooManyRequests, "Too many listen streams", `"limit":"`+limit+`"`)
	if resp.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	if code, gotID := rpcError(t, body); code != app.CodeListenLimit || gotID != fmt.Sprint(id) {
		t.Fatalf("error %d with id %s, want %d with id %d: %s", code, gotID, app.CodeListenLimit, id, body)
	}
}

// listenEventually opens a listen stream, retrying while it is refused
// with 429: a closed stream frees its place once the server has seen the
// connection go, which the client cannot tell.
func listenEventually(t *testing.T, c *http.Client, url string, firstID int, h hdr) *openStream {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for id := firstID; ; id++ {
		ctx, cancel := context.WithCancel(context.Background())
		resp := postListen(t, ctx, c, url, id, h)
		if resp.StatusCode != http.StatusTooManyRequests {
			return served(t, resp, cancel, id)
		}
		readAll(t, resp)
		cancel()
		if time.Now().After(deadline) {
			t.Fatal("closing a listen stream did not free its place")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const toolsChanged = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%d}}}`

// One client (by IP address) may open MaxListenersPerClient listen
// streams; the next is refused with 429 and a clear JSON-RPC error, while
// another client is still served, the first one's other requests too, and
// closing a stream frees its place.
func TestListenPerClientCap(t *testing.T) {
	e := listenEngine(t, app.Options{Validator: jsonschema.New(), MaxListenersPerClient: 2})
	ev := envFor(t, e, mcphttp.Options{})
	a, b := clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.2")

	a1 := openListen(t, a, ev.url, 1, nil)
	a2 := openListen(t, a, ev.url, 2, nil)
	expectListenRefused(t, a, ev.url, 3, nil, "maxListenersPerClient")
	b1 := openListen(t, b, ev.url, 1, nil)
	resp := request(t, context.Background(), http.MethodPost, ev.url, statelessCall(4, "ping", `{}`), statelessHdr("tools/call", "ping"))
	expect(t, resp, http.StatusOK, "pong")

	a1.close()
	a3 := listenEventually(t, a, ev.url, 5, nil)
	expectListenRefused(t, a, ev.url, 6, nil, "maxListenersPerClient")

	if err := e.AddTool(hexmcp.NewTool(func() string { return "x" }, hexmcp.WithName("late"))); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*openStream{a2, b1, a3} {
		got := s.nextEvent(t).data
		if !strings.HasPrefix(got, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"`) {
			t.Fatalf("event %q", got)
		}
	}
}

// An authenticated client is counted by its principal, wherever it
// connects from: two principals on one address each have their own
// streams.
func TestListenPerPrincipalCap(t *testing.T) {
	e := listenEngine(t, app.Options{Validator: jsonschema.New(), MaxListenersPerClient: 1})
	h := mcphttp.NewHandler(e, mcphttp.Options{})
	auth := mcphttp.StaticTokens{"tok-a": {Subject: "alice"}, "tok-b": {Subject: "bob"}}
	srv := httptest.NewServer(mcphttp.RequireBearer(auth, mcphttp.AuthOptions{})(h))
	t.Cleanup(func() {
		h.CloseStreams()
		srv.Close()
		_ = e.Close()
	})
	c := clientFrom(t, "127.0.0.1")
	alice, bob := hdr{"Authorization": "Bearer tok-a"}, hdr{"Authorization": "Bearer tok-b"}
	a1 := openListen(t, c, srv.URL, 1, alice)
	expectListenRefused(t, c, srv.URL, 2, alice, "maxListenersPerClient")
	openListen(t, c, srv.URL, 1, bob)
	expectListenRefused(t, c, srv.URL, 2, bob, "maxListenersPerClient")
	a1.close()
	listenEventually(t, c, srv.URL, 3, alice)
}

// A stateless listen stream carries a keep-alive comment every
// Options.KeepAlive.
func TestListenKeepAlive(t *testing.T) {
	ev := envFor(t, listenEngine(t, app.Options{Validator: jsonschema.New()}), mcphttp.Options{KeepAlive: 10 * time.Millisecond})
	resp := postListen(t, context.Background(), http.DefaultClient, ev.url, 1, nil)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	found := make(chan error, 1)
	go func() {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				found <- err
				return
			}
			if strings.HasPrefix(line, ":") {
				found <- nil
				return
			}
		}
	}()
	if err := testtools.Recv(t, found, 10*time.Second, "no keep-alive comment within 10 s"); err != nil {
		t.Fatalf("stream ended without a keep-alive: %v", err)
	}
	ev.h.CloseStreams()
}

// deadPeer is a response writer whose connection breaks after the first
// write (the acknowledgement): writes fail, but nothing cancels the
// request's context, as with a peer that vanished without closing.
type deadPeer struct {
	header http.Header
	mu     sync.Mutex
	writes int
	first  chan struct{}
}

func (w *deadPeer) Header() http.Header { return w.header }
func (w *deadPeer) WriteHeader(int)     {}

func (w *deadPeer) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	if w.writes == 1 {
		close(w.first)
		return len(b), nil
	}
	return 0, errors.New("broken pipe")
}

func listenRequest(id int) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(statelessBody(id, "subscriptions/listen", listenParams)))
	req.Host = "127.0.0.1"
	testtools.MCPHeaders(req, statelessHdr("subscriptions/listen", ""))
	return req
}

// A listen stream whose peer is gone is found by its next keep-alive, whose
// write fails: the stream ends and its place is free again.
func TestListenKeepAliveFreesDeadPeer(t *testing.T) {
	e := listenEngine(t, app.Options{Validator: jsonschema.New(), MaxListenersPerClient: 1})
	h := mcphttp.NewHandler(e, mcphttp.Options{KeepAlive: 10 * time.Millisecond})
	t.Cleanup(func() {
		h.CloseStreams()
		_ = e.Close()
	})
	w := &deadPeer{header: http.Header{}, first: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, listenRequest(1))
	}()
	testtools.Recv(t, w.first, 10*time.Second, "no acknowledgement")
	testtools.Recv(t, done, 10*time.Second, "the stream of a peer that is gone was not ended")
	// the same client (httptest's RemoteAddr) may listen again
	rec := &streamRecorder{header: http.Header{}, wrote: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done2 := make(chan struct{})
	go func() {
		defer close(done2)
		h.ServeHTTP(rec, listenRequest(2).WithContext(ctx))
	}()
	rec.waitAcknowledged(t, done2)
	cancel()
	<-done2
}

// A resourceSubscriptions list over the limit is refused with -32602
// naming it, at once.
func TestListenSubscriptionListBounded(t *testing.T) {
	opts := app.Options{Validator: jsonschema.New(), ResourceRegistry: memory.NewResourceRegistry()}
	ev := envFor(t, listenEngine(t, opts), mcphttp.Options{})
	list := "[" + strings.Repeat(`"test://x",`, 100_000) + `"test://x"]` // 1.1 MB
	body := statelessBody(1, "subscriptions/listen", `"notifications":{"resourceSubscriptions":`+list+`}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a stream that was accepted would never end
	defer cancel()
	resp := request(t, ctx, http.MethodPost, ev.url, body, statelessHdr("subscriptions/listen", ""))
	got := expect(t, resp, http.StatusOK, `"code":-32602`, "more than 100 URIs", `"limit":"maxListenSubscriptions"`)
	if code, id := rpcError(t, got); code != -32602 || id != "1" {
		t.Fatal(got)
	}
}

// padReader yields n bytes of 'x' without holding them.
type padReader struct{ n int }

func (r *padReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// A listen stream does not keep its request: streams opened with large
// bodies (within MaxBodyBytes) hold much less memory than the bodies.
func TestListenDoesNotPinBody(t *testing.T) {
	const (
		streams = 8
		pad     = 1 << 20
	)
	ev := envFor(t, listenEngine(t, app.Options{Validator: jsonschema.New()}), mcphttp.Options{})
	c := clientFrom(t, "127.0.0.1")
	before := liveHeap()
	for id := range streams {
		prefix := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{`+statelessMeta+`,"notifications":{"toolsListChanged":true,"padding":"`, id, "2026-07-28")
		body := io.MultiReader(strings.NewReader(prefix), &padReader{n: pad}, strings.NewReader(`"}}}`))
		ctx, cancel := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ev.url, body)
		if err != nil {
			t.Fatal(err)
		}
		testtools.MCPHeaders(req, statelessHdr("subscriptions/listen", ""))
		resp := testtools.Do(t, c, req)
		t.Cleanup(func() { cancel(); resp.Body.Close() })
		s := newSSE(t, resp)
		if ev := s.nextEvent(t); !strings.Contains(ev.data, "notifications/subscriptions/acknowledged") {
			t.Fatalf("first event %q", ev.data)
		}
	}
	grown := liveHeap() - before
	t.Logf("%d streams with %d-byte bodies: %d bytes more live heap", streams, pad, grown)
	if limit := int64(streams * pad / 4); grown > limit {
		t.Fatalf("%d listen streams opened with %d-byte bodies hold %d bytes more (limit %d): the bodies are kept", streams, pad, grown, limit)
	}
}

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// The listen streams of a client are counted by Options.ClientKey, as its
// sessions are: behind a proxy, the client the proxy names.
func TestListenCapUsesClientKey(t *testing.T) {
	e := listenEngine(t, app.Options{Validator: jsonschema.New(), MaxListenersPerClient: 1})
	ev := envFor(t, e, mcphttp.Options{ClientKey: func(r *http.Request) string { return "fwd:" + r.Header.Get("X-Forwarded-For") }})
	c := clientFrom(t, "127.0.0.1")
	one, two := hdr{"X-Forwarded-For": "198.51.100.1"}, hdr{"X-Forwarded-For": "198.51.100.2"}
	openListen(t, c, ev.url, 1, one)
	expectListenRefused(t, c, ev.url, 2, one, "maxListenersPerClient")
	openListen(t, c, ev.url, 1, two)
}

// A listen stream that delivers nothing for the engine's ListenIdleTimeout
// ends with the completion result (the server ended it), then EOF.
func TestListenIdleTimeoutOverHTTP(t *testing.T) {
	ev := envFor(t, listenEngine(t, app.Options{Validator: jsonschema.New(), ListenIdleTimeout: 20 * time.Millisecond}), mcphttp.Options{})
	s := openListen(t, http.DefaultClient, ev.url, 5, nil)
	if last := s.nextEvent(t); last.data != listenDone5 {
		t.Fatalf("last event %q", last.data)
	}
	if ev, err := s.next(); err != io.EOF {
		t.Fatalf("after the completion result: %q, %v", ev.data, err)
	}
}

// Options.ClientKey names the client of every request for what the engine
// and extensions count per client (TransportInfo.ClientKey: tasks, waiting
// calls…), in sessions and statelessly alike, not only of listen streams.
func TestClientKeyReachesEveryRequest(t *testing.T) {
	who := hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		return rc.Transport().ClientKey(), nil
	}, hexmcp.WithName("who"))
	e := testtools.NewEngine(t, app.Options{})
	if err := e.AddTools(who); err != nil {
		t.Fatal(err)
	}
	ev := envFor(t, e, mcphttp.Options{ClientKey: func(r *http.Request) string { return "fwd:" + r.Header.Get("X-Forwarded-For") }})
	sid := ev.initialize("2025-11-25")
	h := sessHdr(sid, "2025-11-25")
	h["X-Forwarded-For"] = "198.51.100.7"
	expect(t, ev.post(callBody(2, "who", `{}`), h), http.StatusOK, "fwd:198.51.100.7")
	sh := statelessHdr("tools/call", "who")
	sh["X-Forwarded-For"] = "198.51.100.8"
	expect(t, ev.post(statelessCall(3, "who", `{}`), sh), http.StatusOK, "fwd:198.51.100.8")
}

// A user's Options.ClientKey is asked once per POST, however many of the
// handler's parts count per client (the body budget, the new session, the
// engine's limits): it may cost (a lookup), and answering differently
// within one request would count one request against two clients.
func TestClientKeyOncePerRequest(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{})
	if err := e.AddTools(hexmcp.NewTool(func() string { return "ok" }, hexmcp.WithName("ok"))); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var calls int
	ev := envFor(t, e, mcphttp.Options{ClientKey: func(r *http.Request) string {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return "fwd:" + r.Header.Get("X-Forwarded-For")
	}})
	asked := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := calls
		calls = 0
		return n
	}
	sid := ev.initialize("2025-11-25") // initialize, then notifications/initialized
	if n := asked(); n != 2 {
		t.Fatalf("ClientKey asked %d times for 2 POSTs (initialize, initialized)", n)
	}
	expect(t, ev.post(callBody(2, "ok", `{}`), sessHdr(sid, "2025-11-25")), http.StatusOK, `"ok"`)
	expect(t, ev.post(statelessCall(3, "ok", `{}`), statelessHdr("tools/call", "ok")), http.StatusOK, `"ok"`)
	if n := asked(); n != 2 {
		t.Fatalf("ClientKey asked %d times for 2 tools/call POSTs", n)
	}
}

const listenParams = `"notifications":{"toolsListChanged":true}`

// A POST subscriptions/listen becomes an SSE stream that starts with the
// acknowledgement and carries the list changes, tagged with the request id,
// until the client goes away.
func TestListenStream(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := request(t, ctx, http.MethodPost, ev.url, statelessBody(5, "subscriptions/listen", listenParams), statelessHdr("subscriptions/listen", ""))
	defer resp.Body.Close()
	stream := newSSE(t, resp)
	if ev0 := stream.nextEvent(t); ev0.data != `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5},"notifications":{"toolsListChanged":true}}}` {
		t.Fatalf("first event %q", ev0.data)
	}
	if err := ev.e.AddTool(hexmcp.NewTool(func() string { return "x" }, hexmcp.WithName("late"))); err != nil {
		t.Fatal(err)
	}
	if ev1 := stream.nextEvent(t); ev1.data != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5}}}` {
		t.Fatalf("second event %q", ev1.data)
	}
	// other requests are served meanwhile
	expect(t, ev.post(statelessCall(6, "echo", `{"text":"hi"}`), statelessHdr("tools/call", "echo")), http.StatusOK, "echo: hi")
}

// A client that accepts only JSON cannot listen.
func TestListenNeedsSSE(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	h := statelessHdr("subscriptions/listen", "")
	h["Accept"] = "application/json"
	expect(t, ev.post(statelessBody(5, "subscriptions/listen", listenParams), h), http.StatusNotAcceptable, "text/event-stream")
}

// Server.Shutdown ends the listen streams (they never end by themselves),
// each with the completion result of its listen request (2026-07-28,
// "Graceful Closure"), and returns without waiting for its deadline.
func TestListenEndsOnShutdown(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	srv, url := startServer(t, ev)
	resp := request(t, context.Background(), http.MethodPost, url, statelessBody(5, "subscriptions/listen", listenParams), statelessHdr("subscriptions/listen", ""))
	defer resp.Body.Close()
	stream := newSSE(t, resp)
	stream.nextEvent(t) // the acknowledgement
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
	// the server ended it: the completion result is the last event
	if last := stream.nextEvent(t); last.data != listenDone5 {
		t.Fatalf("last event %q", last.data)
	}
	if _, err := stream.next(); err != io.EOF {
		t.Fatalf("stream after Shutdown: %v", err)
	}
}

// CloseStreams (for a handler on a server of one's own) ends them too,
// with the completion result.
func TestListenEndsOnCloseStreams(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	resp := ev.post(statelessBody(5, "subscriptions/listen", listenParams), statelessHdr("subscriptions/listen", ""))
	defer resp.Body.Close()
	stream := newSSE(t, resp)
	stream.nextEvent(t)
	ev.h.CloseStreams()
	if last := stream.nextEvent(t); last.data != listenDone5 {
		t.Fatalf("last event %q", last.data)
	}
	if ev, err := stream.next(); err != io.EOF {
		t.Fatalf("after the completion result: %q, %v", ev.data, err)
	}
}

// listenDone5 is the completion result of the listen request of id 5: the
// server ended the subscription.
const listenDone5 = `{"jsonrpc":"2.0","id":5,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"1.0.0"},"io.modelcontextprotocol/subscriptionId":5}}}`

// A client that closes its listen stream cancels the subscription: no
// response is written, not even when the server's streams close next. The
// handler is served directly, to see what it writes after the client left.
func TestListenClientCancelGetsNoResponse(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(statelessBody(5, "subscriptions/listen", listenParams)))
	req.Host = "127.0.0.1"
	testtools.MCPHeaders(req, statelessHdr("subscriptions/listen", ""))
	w := &streamRecorder{header: http.Header{}, wrote: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ev.h.ServeHTTP(w, req)
	}()
	w.waitAcknowledged(t, nil)
	cancel() // the client goes away
	testtools.Recv(t, done, 10*time.Second, "the listen request did not end when the client went away")
	ev.h.CloseStreams()
	if body := w.body(); strings.Contains(body, `"id":5`) || strings.Contains(body, `"result"`) {
		t.Fatalf("response after the client cancelled: %q", body)
	}
}

// streamRecorder is an http.ResponseWriter (and Flusher) whose body can be
// read while the handler writes.
type streamRecorder struct {
	header http.Header
	mu     sync.Mutex
	buf    strings.Builder
	wrote  chan struct{}
}

func (w *streamRecorder) Header() http.Header { return w.header }
func (w *streamRecorder) WriteHeader(int)     {}
func (w *streamRecorder) Flush()              {}

func (w *streamRecorder) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(b)
	w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(b), nil
}

func (w *streamRecorder) body() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitAcknowledged waits until the body holds the acknowledgement of a
// listen stream; it fails t when ended is closed first (the handler
// returned: the stream was refused) or when none came within ten seconds.
// A nil ended is never closed.
func (w *streamRecorder) waitAcknowledged(t *testing.T, ended <-chan struct{}) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(w.body(), "notifications/subscriptions/acknowledged") {
		select {
		case <-w.wrote:
		case <-ended:
			t.Fatalf("refused: %q", w.body())
		case <-deadline:
			t.Fatalf("no acknowledgement: %q", w.body())
		}
	}
}
