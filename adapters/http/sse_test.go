package mcphttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// The HTTP+SSE transport of 2024-11-05, on the wire: a raw HTTP client
// reads the event stream.

// newSSEEngine returns an engine with echo, a blocking tool (steered by
// the blocker) and an eliciting one.
func newSSEEngine(t *testing.T, o app.Options) (*app.Engine, *blocker) {
	t.Helper()
	st := newBlocker(64)
	type textIn struct {
		Text string `json:"text"`
	}
	type noIn struct{}
	e := testtools.NewEngine(t, o,
		hexmcp.Func(func(ctx context.Context, in textIn) (string, error) { return "echo: " + in.Text, nil }, hexmcp.WithName("echo")),
		hexmcp.Func(func(ctx context.Context, in noIn) (string, error) { return st.wait(ctx) }, hexmcp.WithName("block")),
		hexmcp.Func(func(ctx context.Context, in noIn) (string, error) {
			who := "anonymous"
			if p := app.RequestFrom(ctx).Transport().Principal; p != nil {
				who = p.Subject
			}
			return who, nil
		}, hexmcp.WithName("whoami")),
		testtools.AskName(),
	)
	t.Cleanup(func() {
		st.releaseAll()
		_ = e.Close()
	})
	return e, st
}

// sseServe serves h at /sse and /message on a loopback test server, behind
// mw when not nil.
func sseServe(t *testing.T, h *mcphttp.SSEHandler, mw func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(mcphttp.DefaultSSEPath, h)
	mux.Handle(mcphttp.DefaultSSEMessagePath, h)
	var root http.Handler = mux
	if mw != nil {
		root = mw(mux)
	}
	srv := httptest.NewServer(root)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		srv.Close()
	})
	return srv
}

// asSubject is middleware that authenticates the X-Sub header as the
// principal's subject (none: anonymous).
func asSubject(expires time.Time) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if sub := r.Header.Get("X-Sub"); sub != "" {
				r = r.WithContext(ports.WithPrincipal(r.Context(), ports.Principal{Subject: sub, Expires: expires}))
			}
			next.ServeHTTP(w, r)
		})
	}
}

// sseConn is a client's stream: the GET's events and the POST URL of its
// endpoint event.
type sseConn struct {
	t       *testing.T
	resp    *http.Response
	br      *bufio.Reader
	post    string // the endpoint, resolved
	id      string // the session id
	headers http.Header
	events  chan sseRaw
}

// sseRaw is one event, or a comment, or the end of the stream.
type sseRaw struct {
	event, data, comment string
	err                  error
}

var sseIDRe = regexp.MustCompile(`^/message\?sessionId=([0-9a-f]{16}-[0-9a-f]{32})$`)

// sseOpen opens a stream with headers h and reads its endpoint event.
func sseOpen(t *testing.T, srv *httptest.Server, h http.Header) *sseConn {
	t.Helper()
	resp, err := sseGet(srv.URL+"/sse", h)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET /sse: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	c := &sseConn{t: t, resp: resp, br: bufio.NewReader(resp.Body), headers: h, events: make(chan sseRaw, 1024)}
	t.Cleanup(func() { resp.Body.Close() })
	go c.read()
	ev := c.next()
	m := sseIDRe.FindStringSubmatch(ev.data)
	if ev.event != "endpoint" || m == nil {
		t.Fatalf("first event %+v, want the endpoint", ev)
	}
	c.id, c.post = m[1], srv.URL+ev.data
	return c
}

// sseGet opens a stream at url: a GET with h and Accept: text/event-stream.
func sseGet(url string, h http.Header) (*http.Response, error) {
	return sseDo(http.MethodGet, url, nil, h, "Accept", "text/event-stream")
}

// sseDo sends a request of method to url with h, and the header key set
// to value.
func sseDo(method, url string, body io.Reader, h http.Header, key, value string) (*http.Response, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set(key, value)
	return http.DefaultClient.Do(req)
}

// read parses the stream into c.events until it ends.
func (c *sseConn) read() {
	var ev sseRaw
	for {
		line, err := c.br.ReadString('\n')
		if err != nil {
			c.events <- sseRaw{err: err}
			close(c.events)
			return
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if ev.event != "" || ev.data != "" {
				c.events <- ev
			}
			ev = sseRaw{}
		case strings.HasPrefix(line, ":"):
			c.events <- sseRaw{comment: line}
		case strings.HasPrefix(line, "event:"):
			ev.event = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			if ev.data != "" {
				ev.data += "\n"
			}
			ev.data += strings.TrimPrefix(line[5:], " ")
		}
	}
}

// next returns the next event (comments skipped).
func (c *sseConn) next() sseRaw {
	c.t.Helper()
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				c.t.Fatal("the stream has ended")
			}
			if ev.err != nil {
				c.t.Fatalf("the stream ended: %v", ev.err)
			}
			if ev.comment != "" {
				continue
			}
			return ev
		case <-time.After(20 * time.Second):
			c.t.Fatal("no event within 20 s")
		}
	}
}

// message returns the next event, which must be a message, decoded.
func (c *sseConn) message() sseMsg {
	c.t.Helper()
	ev := c.next()
	if ev.event != "message" {
		c.t.Fatalf("event %+v, want a message", ev)
	}
	var m sseMsg
	if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
		c.t.Fatalf("message %q: %v", ev.data, err)
	}
	m.raw = ev.data
	return m
}

// reply returns the next message that is not a list_changed notification.
// Instances sharing a bus tell each other's sessions when a tool list
// changes, and the registrations of a test's second engine reach the first
// asynchronously: such a notification may come at any point of a
// cross-instance test.
func (c *sseConn) reply() sseMsg {
	c.t.Helper()
	for {
		m := c.message()
		c.t.Logf("got %s", m.raw)
		if !strings.HasSuffix(m.Method, "/list_changed") {
			return m
		}
	}
}

// ended waits for the end of the stream, skipping what comes before.
func (c *sseConn) ended() {
	c.t.Helper()
	for {
		select {
		case ev, ok := <-c.events:
			if !ok || ev.err != nil {
				return
			}
		case <-time.After(20 * time.Second):
			c.t.Fatal("the stream did not end within 20 s")
		}
	}
}

type sseMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result *struct {
		ProtocolVersion string `json:"protocolVersion"`
		Tools           []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

func (m sseMsg) text() string {
	if m.Result == nil || len(m.Result.Content) == 0 {
		return ""
	}
	return m.Result.Content[0].Text
}

// send POSTs body to the stream's endpoint and returns the status.
func (c *sseConn) send(body string) int {
	c.t.Helper()
	resp, err := ssePost(c.post, body, c.headers)
	if err != nil {
		c.t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// mustSend POSTs body and expects 202.
func (c *sseConn) mustSend(body string) {
	c.t.Helper()
	if got := c.send(body); got != http.StatusAccepted {
		c.t.Fatalf("POST %s: %d, want 202", body, got)
	}
}

// ssePost posts body to url with h and Content-Type: application/json.
func ssePost(url, body string, h http.Header) (*http.Response, error) {
	return sseDo(http.MethodPost, url, strings.NewReader(body), h, "Content-Type", "application/json")
}

// initialize runs the handshake at rev with caps.
func (c *sseConn) initialize(rev, caps string) {
	c.t.Helper()
	c.mustSend(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + rev + `","capabilities":` + caps + `,"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := c.message(); m.Result == nil || m.Result.ProtocolVersion != rev {
		c.t.Fatalf("initialize: %s", m.raw)
	}
	c.mustSend(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func sseCall(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

func TestSSEStreamServesASession(t *testing.T) {
	e, _ := newSSEEngine(t, app.Options{})
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{}), nil)
	c := sseOpen(t, srv, nil)
	c.initialize("2024-11-05", `{}`)

	c.mustSend(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	m := c.message()
	if string(m.ID) != "1" || m.Result == nil || len(m.Result.Tools) != 4 {
		t.Fatalf("tools/list: %s", m.raw)
	}
	c.mustSend(sseCall(2, "echo", `{"text":"hi"}`))
	if m := c.message(); string(m.ID) != "2" || m.text() != "echo: hi" {
		t.Fatalf("tools/call: %s", m.raw)
	}
	// A parse error is the engine's answer, on the stream.
	c.mustSend(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
	if m := c.message(); string(m.ID) != "3" || (m.Error == nil && (m.Result == nil || !m.Result.IsError)) {
		t.Fatalf("unknown tool: %s", m.raw)
	}
}

// Every handshake-era revision is served; a stateless (2026-07-28) request
// POSTed to a stream is served as on any connection, on the stream.
func TestSSERevisions(t *testing.T) {
	e, _ := newSSEEngine(t, app.Options{})
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{}), nil)
	for _, rev := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		c := sseOpen(t, srv, nil)
		c.initialize(rev, `{}`)
		c.mustSend(sseCall(1, "echo", `{"text":"`+rev+`"}`))
		if m := c.message(); m.text() != "echo: "+rev {
			t.Fatalf("%s: %s", rev, m.raw)
		}
	}
	c := sseOpen(t, srv, nil)
	c.mustSend(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"now"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}}}`)
	if m := c.message(); string(m.ID) != "7" || m.text() != "echo: now" {
		t.Fatalf("a stateless call: %s", m.raw)
	}
}

func TestSSEConcurrentCalls(t *testing.T) {
	e, _ := newSSEEngine(t, app.Options{})
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{}), nil)
	c := sseOpen(t, srv, nil)
	c.initialize("2025-06-18", `{}`)
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			resp, err := ssePost(c.post, sseCall(i, "echo", fmt.Sprintf(`{"text":"%d"}`, i)), nil)
			if err != nil {
				errs <- err.Error()
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				errs <- fmt.Sprintf("call %d: %d", i, resp.StatusCode)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	seen := map[string]bool{}
	for range n {
		m := c.message()
		if want := "echo: " + string(m.ID); m.text() != want {
			t.Fatalf("answer %s, want %q", m.raw, want)
		}
		seen[string(m.ID)] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct answers, want %d", len(seen), n)
	}
}

func TestSSEElicitationAnsweredByPOST(t *testing.T) {
	e, _ := newSSEEngine(t, app.Options{})
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{}), nil)
	c := sseOpen(t, srv, nil)
	c.initialize("2025-11-25", `{"elicitation":{}}`)
	c.mustSend(sseCall(1, "ask_name", `{}`))
	q := c.message()
	if q.Method != "elicitation/create" || len(q.ID) == 0 {
		t.Fatalf("want an elicitation/create, got %s", q.raw)
	}
	c.mustSend(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
	if m := c.message(); string(m.ID) != "1" || m.text() != "Hello, Ada!" {
		t.Fatalf("result: %s", m.raw)
	}
}

// A POST to an unknown session and one to another principal's session get
// the same 404; a POST without sessionId gets 400; the sessionid spelling
// is accepted.
func TestSSESessionBinding(t *testing.T) {
	e, _ := newSSEEngine(t, app.Options{})
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{}), asSubject(time.Time{}))
	alice := http.Header{"X-Sub": {"alice"}}
	c := sseOpen(t, srv, alice)
	c.initialize("2025-06-18", `{}`)

	body := sseCall(1, "whoami", `{}`)
	for name, tc := range map[string]struct {
		url string
		h   http.Header
	}{
		"unknown session":   {srv.URL + "/message?sessionId=0123456789abcdef0123456789abcdef", alice},
		"another principal": {c.post, http.Header{"X-Sub": {"bob"}}},
		"no principal":      {c.post, nil},
	} {
		resp, err := ssePost(tc.url, body, tc.h)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "no such session") {
			t.Errorf("%s: %d %s, want 404", name, resp.StatusCode, b)
		}
	}
	resp, err := ssePost(srv.URL+"/message", body, alice)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("without sessionId: %d, want 400", resp.StatusCode)
	}
	resp, err = ssePost(srv.URL+"/message?sessionid="+c.id, body, alice)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("sessionid: %d, want 202", resp.StatusCode)
	}
	if m := c.message(); m.text() != "alice" {
		t.Fatalf("whoami: %s", m.raw)
	}
}

// The Host and Origin rules of Streamable HTTP: 403 on GET and POST.
func TestSSEGuard(t *testing.T) {
	e, _ := newSSEEngine(t, app.Options{})
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{}), nil)
	c := sseOpen(t, srv, nil)
	for name, h := range map[string]http.Header{
		"rebound Host":   {"Host": {"evil.example"}},
		"foreign Origin": {"Origin": {"https://evil.example"}},
	} {
		get, _ := http.NewRequest(http.MethodGet, srv.URL+"/sse", nil)
		post, _ := http.NewRequest(http.MethodPost, c.post, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		for _, req := range []*http.Request{get, post} {
			for k, v := range h {
				req.Header[k] = v
			}
			if host := h.Get("Host"); host != "" {
				req.Host = host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s, %s: %d, want 403", name, req.Method, resp.StatusCode)
			}
		}
	}
	// The stream's own origin passes.
	resp, err := ssePost(c.post, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.Header{"Origin": {srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("own origin: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPut, c.post, nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, POST" {
		t.Fatalf("PUT: %d %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func expectRefusal(t *testing.T, what string, resp *http.Response, err error, status int) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("%s: %d %s, want %d", what, resp.StatusCode, b, status)
	}
	if (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) && resp.Header.Get("Retry-After") == "" {
		t.Fatalf("%s: no Retry-After", what)
	}
}

func TestSSEStreamLimits(t *testing.T) {
	e, _ := newSSEEngine(t, app.Options{})
	h := mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{MaxStreams: 2, MaxStreamsPerClient: 1})
	srv := sseServe(t, h, asSubject(time.Time{}))
	alice := http.Header{"X-Sub": {"alice"}}
	sseOpen(t, srv, alice)
	resp, err := sseGet(srv.URL+"/sse", alice)
	expectRefusal(t, "alice's second stream", resp, err, http.StatusTooManyRequests)
	sseOpen(t, srv, http.Header{"X-Sub": {"bob"}})
	resp, err = sseGet(srv.URL+"/sse", http.Header{"X-Sub": {"carol"}})
	expectRefusal(t, "a third stream", resp, err, http.StatusServiceUnavailable)
	if n := h.Streams(); n != 2 {
		t.Fatalf("Streams() = %d, want 2", n)
	}
}

// Without a principal a client is its IP address, an IPv6 one by its /64
// (DefaultClientKey, the rule sessions count by): a host cannot multiply its
// share by taking more addresses of its network.
func TestSSEStreamsPerClientByIPv6Network(t *testing.T) {
	e, _ := newSSEEngine(t, app.Options{})
	from := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a := r.Header.Get("X-Remote"); a != "" {
				r.RemoteAddr = a
			}
			next.ServeHTTP(w, r)
		})
	}
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{MaxStreamsPerClient: 1}), from)
	sseOpen(t, srv, http.Header{"X-Remote": {"[2001:db8::1]:40000"}})
	resp, err := sseGet(srv.URL+"/sse", http.Header{"X-Remote": {"[2001:db8::2]:40001"}})
	expectRefusal(t, "a second address of the same /64", resp, err, http.StatusTooManyRequests)
	sseOpen(t, srv, http.Header{"X-Remote": {"[2001:db8:0:1::1]:40002"}})
}

func TestSSEMessageLimits(t *testing.T) {
	e, _ := newSSEEngine(t, app.Options{})
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{MaxMessageBytes: 200}), nil)
	c := sseOpen(t, srv, nil)
	big := sseCall(1, "echo", `{"text":"`+strings.Repeat("x", 300)+`"}`)
	for _, tc := range []struct {
		what, body string
		status     int
	}{
		{"a body over MaxMessageBytes", big, http.StatusRequestEntityTooLarge},
		{"an empty body", "", http.StatusBadRequest},
		{"a body that is not JSON", "hello", http.StatusBadRequest},
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,`, http.StatusBadRequest},
	} {
		if got := c.send(tc.body); got != tc.status {
			t.Errorf("%s: %d, want %d", tc.what, got, tc.status)
		}
	}
	// The stream goes on.
	c.initialize("2025-06-18", `{}`)

	srv = sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{}), nil)
	c = sseOpen(t, srv, nil)
	if got := c.send(strings.Repeat("[", 10001) + strings.Repeat("]", 10001)); got != http.StatusBadRequest {
		t.Errorf("nesting past 10,000 levels: %d, want 400", got)
	}
}

// connFunc is a ConnHandler of a test.
type connFunc func(ctx context.Context, c ports.Conn) error

func (f connFunc) ServeConn(ctx context.Context, c ports.Conn) error { return f(ctx, c) }

// A stream whose engine does not read fills its incoming queue: in
// messages, then in bytes, 429 with Retry-After.
func TestSSEIncomingQueue(t *testing.T) {
	idle := connFunc(func(ctx context.Context, c ports.Conn) error {
		<-ctx.Done()
		return nil
	})
	srv := sseServe(t, mcphttp.NewSSEHandler(idle, mcphttp.SSEOptions{IncomingQueue: 2}), nil)
	c := sseOpen(t, srv, nil)
	c.mustSend(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	c.mustSend(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	resp, err := ssePost(c.post, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil)
	expectRefusal(t, "a third message", resp, err, http.StatusTooManyRequests)

	srv = sseServe(t, mcphttp.NewSSEHandler(idle, mcphttp.SSEOptions{MaxMessageBytes: 600, MaxIncomingBytes: 1000}), nil)
	c = sseOpen(t, srv, nil)
	pad := func(n int) string {
		s := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"`
		return s + strings.Repeat("x", n-len(s)-4) + `"}}`
	}
	c.mustSend(pad(500))
	resp, err = ssePost(c.post, pad(600), nil)
	expectRefusal(t, "600 bytes more", resp, err, http.StatusTooManyRequests)
	c.mustSend(pad(400))
}

// A message that does not fit in the outgoing queue ends the stream, and
// the engine's writes fail with net.ErrClosed.
func TestSSEOutgoingQueue(t *testing.T) {
	for _, tc := range []struct {
		what string
		opts mcphttp.SSEOptions
		size int
	}{
		{"one message over MaxQueueBytes", mcphttp.SSEOptions{MaxQueueBytes: 1000}, 2000},
		{"a client that does not read", mcphttp.SSEOptions{SendQueue: 4}, 64 << 10},
	} {
		t.Run(tc.what, func(t *testing.T) {
			failed := make(chan error, 1)
			writer := connFunc(func(ctx context.Context, c ports.Conn) error {
				msg := []byte(`{"jsonrpc":"2.0","method":"x","params":{"p":"` + strings.Repeat("x", tc.size) + `"}}`)
				for range 100000 {
					if err := c.WriteMessage(ctx, msg); err != nil {
						failed <- err
						return nil
					}
				}
				failed <- nil
				return nil
			})
			srv := sseServe(t, mcphttp.NewSSEHandler(writer, tc.opts), nil)
			resp, err := sseGet(srv.URL+"/sse", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var werr error
			select {
			case werr = <-failed:
			case <-time.After(60 * time.Second):
				t.Fatal("the writes did not fail")
			}
			if !errors.Is(werr, net.ErrClosed) {
				t.Fatalf("write error %v, want net.ErrClosed", werr)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil && !strings.Contains(err.Error(), "EOF") {
				t.Logf("the stream ended with %v", err)
			}
		})
	}
}

func TestSSEIdleTimeout(t *testing.T) {
	e, _ := newSSEEngine(t, app.Options{})
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{IdleTimeout: 300 * time.Millisecond}), nil)
	c := sseOpen(t, srv, nil)
	c.ended()
	if got := c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); got != http.StatusNotFound {
		t.Fatalf("POST after the idle timeout: %d, want 404", got)
	}
}

func TestSSEKeepAlive(t *testing.T) {
	e, _ := newSSEEngine(t, app.Options{})
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{KeepAlive: 50 * time.Millisecond}), nil)
	c := sseOpen(t, srv, nil)
	select {
	case ev := <-c.events:
		if ev.comment == "" {
			t.Fatalf("got %+v, want a keep-alive comment", ev)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no keep-alive")
	}
}

// A stream ends when the principal's credential expires, and its calls are
// cancelled.
func TestSSETokenExpiry(t *testing.T) {
	e, tools := newSSEEngine(t, app.Options{})
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{}), asSubject(time.Now().Add(2*time.Second)))
	c := sseOpen(t, srv, http.Header{"X-Sub": {"alice"}})
	c.initialize("2025-06-18", `{}`)
	c.mustSend(sseCall(1, "block", `{}`))
	tools.waitStarted(t)
	c.ended()
	select {
	case err := <-tools.stopped:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the call ended with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call was not cancelled")
	}
}

// Shutdown refuses new streams and messages, lets the call in flight
// answer on its stream, then ends it.
func TestSSEShutdownLetsCallsFinish(t *testing.T) {
	e, tools := newSSEEngine(t, app.Options{})
	h := mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{})
	srv := sseServe(t, h, nil)
	c := sseOpen(t, srv, nil)
	c.initialize("2025-06-18", `{}`)
	c.mustSend(sseCall(1, "block", `{}`))
	tools.waitStarted(t)

	done := make(chan error, 1)
	go func() { done <- h.Shutdown(context.Background()) }()
	for h.Streams() == 1 && c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`) == http.StatusAccepted {
		time.Sleep(10 * time.Millisecond) // until the stream stops reading
	}
	resp, err := sseGet(srv.URL+"/sse", nil)
	expectRefusal(t, "a stream during shutdown", resp, err, http.StatusServiceUnavailable)
	tools.releaseAll()
	if m := c.message(); string(m.ID) != "1" || m.text() != "released" {
		t.Fatalf("the call's answer: %s", m.raw)
	}
	c.ended()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Shutdown did not return")
	}
}

// The Server that serves the handler shuts its streams down too.
func TestSSEServerShutdown(t *testing.T) {
	e, tools := newSSEEngine(t, app.Options{})
	h := mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{})
	mux := http.NewServeMux()
	mux.Handle("/sse", h)
	mux.Handle("/message", h)
	srv := mcphttp.NewServer("127.0.0.1:0", mux, mcphttp.ServerOptions{})
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := sseOpen(t, &httptest.Server{URL: "http://" + srv.Addr()}, nil)
	c.initialize("2025-06-18", `{}`)
	c.mustSend(sseCall(1, "block", `{}`))
	tools.waitStarted(t)
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()
	for {
		// Until the stream stops reading (404) or the listener is closed.
		resp, err := ssePost(c.post, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
		if err != nil {
			break
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	tools.releaseAll()
	if m := c.message(); string(m.ID) != "1" || m.text() != "released" {
		t.Fatalf("the call's answer: %s", m.raw)
	}
	c.ended()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Two instances: a POST reaching the one that does not hold the stream is
// delivered to the one that does through the bus of the server's shared
// state, and refused with a 404 saying so when there is none.
func TestSSEForwardedBetweenInstances(t *testing.T) {
	bus := memory.NewBus(memory.BusOptions{})
	shared := app.Options{Shared: ports.SharedState{Bus: bus}}
	ea, _ := newSSEEngine(t, shared)
	eb, _ := newSSEEngine(t, shared)
	a := sseServe(t, mcphttp.NewSSEHandler(ea, mcphttp.SSEOptions{}), asSubject(time.Time{}))
	b := sseServe(t, mcphttp.NewSSEHandler(eb, mcphttp.SSEOptions{}), asSubject(time.Time{}))
	alice := http.Header{"X-Sub": {"alice"}}
	c := sseOpen(t, a, alice)
	atB := b.URL + strings.TrimPrefix(c.post, a.URL)
	viaB := func(body string, h http.Header) {
		t.Helper()
		resp, err := ssePost(atB, body, h)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s at the other instance: %d, want 202", body, resp.StatusCode)
		}
	}
	viaB(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`, alice)
	if m := c.reply(); m.Result == nil || m.Result.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize: %s", m.raw)
	}
	viaB(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, alice)
	viaB(sseCall(1, "whoami", `{}`), alice)
	if m := c.reply(); string(m.ID) != "1" || m.text() != "alice" {
		t.Fatalf("whoami: %s", m.raw)
	}
	// An elicitation asked on the stream, answered through the other
	// instance.
	c.mustSend(sseCall(2, "ask_name", `{}`))
	q := c.reply()
	if q.Method != "elicitation/create" {
		t.Fatalf("want an elicitation/create, got %s", q.raw)
	}
	viaB(`{"jsonrpc":"2.0","id":`+string(q.ID)+`,"result":{"action":"accept","content":{"name":"Ada"}}}`, alice)
	if m := c.reply(); string(m.ID) != "2" || m.text() != "Hello, Ada!" {
		t.Fatalf("ask_name: %s", m.raw)
	}
	// Another principal's message is accepted (the other instance cannot
	// tell) and dropped where the stream is: the next answer is alice's.
	viaB(sseCall(3, "whoami", `{}`), http.Header{"X-Sub": {"bob"}})
	viaB(sseCall(4, "whoami", `{}`), alice)
	if m := c.reply(); string(m.ID) != "4" || m.text() != "alice" {
		t.Fatalf("after bob's message: %s", m.raw)
	}

	// Without shared state: a clear 404.
	ec, _ := newSSEEngine(t, app.Options{})
	ed, _ := newSSEEngine(t, app.Options{})
	cs := sseServe(t, mcphttp.NewSSEHandler(ec, mcphttp.SSEOptions{}), nil)
	d := sseServe(t, mcphttp.NewSSEHandler(ed, mcphttp.SSEOptions{}), nil)
	c2 := sseOpen(t, cs, nil)
	resp, err := ssePost(d.URL+strings.TrimPrefix(c2.post, cs.URL), `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "another instance") {
		t.Fatalf("without shared state: %d %s", resp.StatusCode, body)
	}
}

// An event the client does not take within WriteTimeout ends the stream.
func TestSSEWriteTimeout(t *testing.T) {
	failed := make(chan error, 1)
	writer := connFunc(func(ctx context.Context, c ports.Conn) error {
		msg := []byte(`{"jsonrpc":"2.0","method":"x","params":{"p":"` + strings.Repeat("x", 64<<10) + `"}}`)
		for {
			if err := c.WriteMessage(ctx, msg); err != nil {
				failed <- err
				return nil
			}
			time.Sleep(5 * time.Millisecond) // the queue never fills first
		}
	})
	srv := sseServe(t, mcphttp.NewSSEHandler(writer, mcphttp.SSEOptions{WriteTimeout: 200 * time.Millisecond, SendQueue: 1 << 14, MaxQueueBytes: -1}), nil)
	resp, err := sseGet(srv.URL+"/sse", nil) // never read
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	select {
	case err := <-failed:
		if !errors.Is(err, net.ErrClosed) || !strings.Contains(err.Error(), "writing an event failed") {
			t.Fatalf("write error %v, want the failed write", err)
		}
	case <-time.After(120 * time.Second):
		t.Fatal("the writes did not fail")
	}
}

// Every event of an HTTP+SSE stream is written under a deadline of
// WriteTimeout from when it is written: 10 s when zero, as documented.
func TestSSEWriteTimeoutIsApplied(t *testing.T) {
	for _, tc := range []struct{ set, want time.Duration }{
		{0, 10 * time.Second},
		{time.Minute, time.Minute},
	} {
		idle := connFunc(func(ctx context.Context, c ports.Conn) error {
			<-ctx.Done()
			return nil
		})
		h := mcphttp.NewSSEHandler(idle, mcphttp.SSEOptions{WriteTimeout: tc.set})
		w := newDeadlineWriter()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			r := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1"+mcphttp.DefaultSSEPath, nil)
			r.RemoteAddr = "127.0.0.1:40000"
			r.Header.Set("Accept", "text/event-stream")
			h.ServeHTTP(w, r)
		}()
		select {
		case <-w.wrote: // the endpoint event
		case <-time.After(10 * time.Second):
			t.Fatal("the stream wrote nothing")
		}
		cancel()
		<-done
		if _, writes := w.deadlines(); len(writes) == 0 || !within(writes, tc.want) {
			t.Fatalf("WriteTimeout %v: write deadlines %v, want each %v from the write", tc.set, writes, tc.want)
		}
	}
}

// The bodies being read for streams of other instances are bounded:
// past MaxForwardingBytes a POST gets 429.
func TestSSEForwardingBytes(t *testing.T) {
	bus := memory.NewBus(memory.BusOptions{})
	ea, _ := newSSEEngine(t, app.Options{Shared: ports.SharedState{Bus: bus}})
	eb, _ := newSSEEngine(t, app.Options{Shared: ports.SharedState{Bus: bus}})
	a := sseServe(t, mcphttp.NewSSEHandler(ea, mcphttp.SSEOptions{}), nil)
	b := sseServe(t, mcphttp.NewSSEHandler(eb, mcphttp.SSEOptions{MaxMessageBytes: 1000, MaxForwardingBytes: 1000}), nil)
	c := sseOpen(t, a, nil)
	atB := b.URL + strings.TrimPrefix(c.post, a.URL)

	// A body that arrives slowly holds 600 bytes of the budget.
	pr, pw := io.Pipe()
	slow := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, atB, pr)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			slow <- 0
			return
		}
		resp.Body.Close()
		slow <- resp.StatusCode
	}()
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"p":"`
	if _, err := pw.Write([]byte(ping + strings.Repeat("x", 600-len(ping)))); err != nil {
		t.Fatal(err)
	}
	// Until the server has read it: a 600-byte body that is not JSON is
	// refused 400 when it fits in the budget, 429 when it does not.
	if resp := awaitForwardingFull(t, atB, 600, "a second body while the first is read"); resp.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	if _, err := pw.Write([]byte(`"}}}`)); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if got := <-slow; got != http.StatusAccepted {
		t.Fatalf("the slow body: %d, want 202", got)
	}
	if m := c.reply(); string(m.ID) != "1" {
		t.Fatalf("the forwarded ping's answer: %s", m.raw)
	}
}

// A client that goes away loses its stream: the calls are cancelled, and
// the stream counts against the client's streams until they have ended.
func TestSSELostStreamCancelsCalls(t *testing.T) {
	e, tools := newSSEEngine(t, app.Options{})
	srv := sseServe(t, mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{MaxStreamsPerClient: 1}), nil)
	c := sseOpen(t, srv, nil)
	c.initialize("2025-06-18", `{}`)
	c.mustSend(sseCall(1, "block", `{}`))
	tools.waitStarted(t)
	c.resp.Body.Close()
	select {
	case err := <-tools.stopped:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the call ended with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call of a lost stream was not cancelled")
	}
	// The place comes back once the call has ended.
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := sseGet(srv.URL+"/sse", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("a new stream: %d", resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A message POSTed to a stream holds no more memory than its length while
// the engine keeps it (the budget of the stream's incoming bytes counts
// its length), whatever the body's framing. The buffer it is read into
// grows as it fills; handed over as it was (slices.Clip keeps the whole
// array), a message of 2.3 MiB held 5.6 MiB. Measured as the live heap
// after a collection: the test's server runs in this process.
func TestSSEMessageKeptAtItsSize(t *testing.T) {
	// One byte past a capacity the buffer grows to (from 64 KiB, as
	// append grows: 160 KiB, 392 KiB, 960 KiB, 2,408,448 bytes), where
	// the next step takes it to 2.44 times the message.
	const n, count = 2408449, 8
	var (
		mu   sync.Mutex
		kept [][]byte
	)
	got := make(chan struct{}, count)
	srv := sseServe(t, mcphttp.NewSSEHandler(connFunc(func(ctx context.Context, c ports.Conn) error {
		for {
			m, err := c.ReadMessage(ctx)
			if err != nil {
				return nil
			}
			mu.Lock()
			kept = append(kept, m)
			mu.Unlock()
			got <- struct{}{}
		}
	}), mcphttp.SSEOptions{MaxIncomingBytes: 64 << 20}), nil)
	c := sseOpen(t, srv, nil)
	msg := `{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"` + strings.Repeat("x", n-62) + `"}}`
	before := liveHeap()
	for i := range count {
		var body io.Reader = strings.NewReader(msg)
		if i%2 == 1 { // no Content-Length
			body = io.MultiReader(strings.NewReader(msg[:n/2]), strings.NewReader(msg[n/2:]))
		}
		resp, err := http.Post(c.post, "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("message %d: status %d", i, resp.StatusCode)
		}
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d did not arrive", i)
		}
	}
	grown := liveHeap() - before
	t.Logf("%d messages of %d bytes kept: %d bytes more live heap", count, n, grown)
	mu.Lock()
	defer mu.Unlock()
	if len(kept) != count || len(kept[0]) != n {
		t.Fatalf("%d messages kept, the first of %d bytes", len(kept), len(kept[0]))
	}
	if limit := int64(count*n + count*n/4); grown > limit {
		t.Errorf("%d messages of %d bytes kept take %d bytes of live heap, more than %d", count, n, grown, limit)
	}
}

// By default the bodies being read for streams of other instances hold
// at most 32 MiB together: with eight bodies of almost 4 MiB still
// arriving (33,552,000 bytes), a POST of 3,000 bytes for another
// instance's stream is refused with 429 until they are read.
func TestSSEForwardingBytesDefault(t *testing.T) {
	bus := memory.NewBus(memory.BusOptions{})
	ea, _ := newSSEEngine(t, app.Options{Shared: ports.SharedState{Bus: bus}})
	eb, _ := newSSEEngine(t, app.Options{Shared: ports.SharedState{Bus: bus}})
	a := sseServe(t, mcphttp.NewSSEHandler(ea, mcphttp.SSEOptions{}), nil)
	b := sseServe(t, mcphttp.NewSSEHandler(eb, mcphttp.SSEOptions{}), nil)
	c := sseOpen(t, a, nil)
	atB := b.URL + strings.TrimPrefix(c.post, a.URL)

	const bodies, each = 8, 4_194_000 // 2,432 bytes short of 32 MiB
	chunk := []byte(`{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"` + strings.Repeat("x", each-60))
	var writers []*io.PipeWriter
	var wg sync.WaitGroup
	answered := make(chan int, bodies)
	t.Cleanup(func() {
		for _, pw := range writers {
			pw.CloseWithError(errors.New("test over"))
		}
		wg.Wait()
	})
	for i := range bodies {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, atB, pr)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				answered <- resp.StatusCode
			}
		}()
		if _, err := pw.Write(chunk); err != nil {
			t.Fatalf("body %d of %d bytes was cut off (%v): the budget is less than %d such bodies", i+1, each, err, bodies)
		}
	}
	awaitForwardingFull(t, atB, 3000, fmt.Sprintf("a POST while %d bodies of %d bytes arrive (the default 32 MiB)", bodies, each))
	select {
	case code := <-answered:
		t.Fatalf("a body still arriving was answered %d: the budget is less than %d bodies of %d bytes", code, bodies, each)
	default:
	}
}

// awaitForwardingFull posts n bytes that are not JSON to url, a stream of
// another instance, until they are refused with 429 because the bodies
// being read for other instances fill the budget, and returns that
// response. Until then they fit and are refused 400; anything else, or no
// 429 within 60 s, fails the test, saying what.
func awaitForwardingFull(t *testing.T, url string, n int, what string) *http.Response {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := ssePost(url, strings.Repeat("x", n), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			return resp
		}
		if resp.StatusCode != http.StatusBadRequest || time.Now().After(deadline) {
			t.Fatalf("%s: %d, want 429", what, resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// By default a stream keeps 8 MiB of messages its engine has not read: two
// messages of almost 4 MiB (the default largest) fit, a third is refused
// with 429.
func TestSSEIncomingBytesDefault(t *testing.T) {
	idle := connFunc(func(ctx context.Context, c ports.Conn) error {
		<-ctx.Done()
		return nil
	})
	srv := sseServe(t, mcphttp.NewSSEHandler(idle, mcphttp.SSEOptions{}), nil)
	c := sseOpen(t, srv, nil)
	msg := `{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"` + strings.Repeat("x", 4<<20-200) + `"}}`
	c.mustSend(msg)
	c.mustSend(msg)
	resp, err := ssePost(c.post, msg, nil)
	expectRefusal(t, "a third message of almost 4 MiB", resp, err, http.StatusTooManyRequests)
}
