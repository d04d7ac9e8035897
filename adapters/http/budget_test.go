package mcphttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// The budget of POST bodies in flight (Options.MaxInFlightBytes) against
// clients that announce large bodies and send them slowly, and against
// calls that wait for the client (an elicitation) after their body was
// read: neither may keep every other client out.

// budgetEnv is a handler whose engine has the tools "echo" and "ask_name"
// (which elicits), behind a wrapper that tells when the handler has read
// the first X-Slow bytes of a POST's body. Requests name their client in X-Client
// (Options.ClientKey; without it the remote address).
type budgetEnv struct {
	t       *testing.T
	client  *http.Client
	url     string
	host    string
	path    string
	reading chan struct{} // the handler has read the first X-Slow bytes of a body
}

func newBudgetEnv(t *testing.T, opts mcphttp.Options) *budgetEnv {
	t.Helper()
	return newBudgetEnvOver(t, opts, false)
}

// newBudgetEnvOver is newBudgetEnv over HTTP/2 (with TLS) when h2.
func newBudgetEnvOver(t *testing.T, opts mcphttp.Options, h2 bool) *budgetEnv {
	t.Helper()
	e := testtools.NewEngine(t, app.Options{Info: testtools.Info})
	type textIn struct {
		Text string `json:"text"`
	}
	if err := e.AddTools(testtools.AskName(),
		hexmcp.Func(func(ctx context.Context, in textIn) (string, error) { return "echo: " + in.Text, nil }, hexmcp.WithName("echo"))); err != nil {
		t.Fatal(err)
	}
	if opts.ClientKey == nil {
		opts.ClientKey = func(r *http.Request) string { return r.Header.Get("X-Client") }
	}
	h := mcphttp.NewHandler(e, opts)
	be := &budgetEnv{t: t, reading: make(chan struct{}, 64)}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, _ := strconv.Atoi(r.Header.Get("X-Slow")); n > 0 {
			r.Body = &readCount{ReadCloser: r.Body, after: n, ch: be.reading}
		}
		if h2 && r.ProtoMajor != 2 {
			http.Error(w, "not HTTP/2", http.StatusHTTPVersionNotSupported)
			return
		}
		h.ServeHTTP(w, r)
	}))
	if h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	be.client = srv.Client()
	be.url = srv.URL + "/mcp"
	be.host = srv.Listener.Addr().String()
	be.path = "/mcp"
	t.Cleanup(func() {
		h.CloseStreams()
		h.Abort() // ends the calls still waiting for the client
		srv.Close()
		_ = e.Close()
	})
	return be
}

// readCount signals on ch once the handler has read after bytes of the
// body: it has passed whatever it does before reading them.
type readCount struct {
	io.ReadCloser
	after, read int
	ch          chan<- struct{}
}

func (c *readCount) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if c.read < c.after && c.read+n >= c.after {
		c.ch <- struct{}{}
	}
	c.read += n
	return n, err
}

// slowPost opens a connection that announces a body of announce bytes
// (Content-Length), sends sent of it and stops, as a slow or malicious
// client does; it waits until the handler has read what was sent.
func (be *budgetEnv) slowPost(announce int, sent string, h hdr) net.Conn {
	be.t.Helper()
	c := be.dialSlow(announce, sent, h)
	select {
	case <-be.reading:
	case <-time.After(20 * time.Second):
		be.t.Fatal("the handler did not start reading a slow body")
	}
	return c
}

// dialSlow is slowPost without waiting for the handler.
func (be *budgetEnv) dialSlow(announce int, sent string, h hdr) net.Conn {
	be.t.Helper()
	c, err := net.Dial("tcp", be.host)
	if err != nil {
		be.t.Fatal(err)
	}
	be.t.Cleanup(func() { c.Close() })
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nX-Slow: %d\r\n", be.path, be.host, announce, len(sent))
	for k, v := range h {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	b.WriteString(sent)
	if _, err := io.WriteString(c, b.String()); err != nil {
		be.t.Fatal(err)
	}
	return c
}

func (be *budgetEnv) post(body string, h hdr) *http.Response {
	be.t.Helper()
	return be.request(context.Background(), strings.NewReader(body), -1, h)
}

// request posts body (of length n; -1: the reader's, when it tells) with
// the headers a conforming client sends, then h.
func (be *budgetEnv) request(ctx context.Context, body io.Reader, n int64, h hdr) *http.Response {
	be.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, be.url, body)
	if err != nil {
		be.t.Fatal(err)
	}
	if n >= 0 {
		req.ContentLength = n
	}
	testtools.MCPHeaders(req, h)
	return testtools.Do(be.t, be.client, req)
}

// Item 1 of issue 18: connections that announce whole bodies
// (Content-Length) and send a few bytes take no more of the budget than
// what arrived: eight of them, announcing four times the budget between
// them, are all read, and every other client is served beside them, a
// body as large as MaxBodyBytes included.
func TestInFlightBytesCountArrivedBytes(t *testing.T) {
	be := newBudgetEnv(t, mcphttp.Options{MaxBodyBytes: 64 << 10, MaxInFlightBytes: 256 << 10})
	head := fmt.Sprintf(initBody, "2025-11-25")[:100]
	for range 8 {
		be.slowPost(64<<10, head, hdr{"X-Client": "slow"})
	}

	victim := hdr{"X-Client": "victim"}
	expect(t, be.post(fmt.Sprintf(initBody, "2025-11-25"), victim), http.StatusOK, `"protocolVersion":"2025-11-25"`)
	expect(t, be.post(padded(statelessCall(2, "echo", `{"text":"big"}`), 60<<10), mergeHdr(statelessHdr("tools/call", "echo"), victim)),
		http.StatusOK, "echo: big")
}

// Item 2 of issue 18: calls waiting for the client (an elicitation never
// answered) do not hold their bodies in the budget: eight calls of a
// session, each padded to nearly MaxBodyBytes and four times the budget
// between them, all reach their elicitation, and every other client is
// served meanwhile, initialize included.
func TestInFlightBytesNotHeldByCallsWaitingForTheClient(t *testing.T) {
	const rev = "2025-11-25"
	be := newBudgetEnv(t, mcphttp.Options{MaxBodyBytes: 64 << 10, MaxInFlightBytes: 128 << 10})
	attacker := hdr{"X-Client": "attacker"}
	sid := be.initializeCaps(rev, `{"elicitation":{}}`, attacker)
	for i := range 8 {
		resp := be.post(padded(callBody(10+i, "ask_name", `{}`), 60<<10), mergeHdr(sessHdr(sid, rev), attacker))
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d: status %d: %s", i, resp.StatusCode, readAll(t, resp))
		}
		elicitRequest(t, newSSE(t, resp).nextMessage(t).data)
	}

	victim := hdr{"X-Client": "victim"}
	expect(t, be.post(fmt.Sprintf(initBody, rev), victim), http.StatusOK, `"protocolVersion":"`+rev+`"`)
	expect(t, be.post(padded(statelessCall(2, "echo", `{"text":"big"}`), 60<<10), mergeHdr(statelessHdr("tools/call", "echo"), victim)),
		http.StatusOK, "echo: big")
}

// initializeCaps opens a session whose client declares caps, sending h
// with both requests.
func (be *budgetEnv) initializeCaps(rev, caps string, h hdr) string {
	be.t.Helper()
	return initSession(be.t, be.post, rev, caps, h)
}

// bigInit is an initialize request padded with whitespace to n bytes.
func bigInit(n int) string {
	b := fmt.Sprintf(initBody, "2025-11-25")
	return padded(b, n-len(b))
}

// finish sends the rest of a slowPost's body and returns the response.
func (be *budgetEnv) finish(c net.Conn, rest string) *http.Response {
	be.t.Helper()
	if _, err := io.WriteString(c, rest); err != nil {
		be.t.Fatal(err)
	}
	return readResponse(be.t, c)
}

// readResponse reads an HTTP response from c.
func readResponse(t *testing.T, c net.Conn) *http.Response {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// Bodies being read that take the whole budget make the others wait, then
// refuse them with 503 and Retry-After (a JSON-RPC error without id: the
// body was not read); once they have been read, the others are served.
func TestInFlightBytesRefuseWithBusy(t *testing.T) {
	be := newBudgetEnv(t, mcphttp.Options{MaxBodyBytes: 64 << 10, MaxInFlightBytes: 128 << 10})
	body := bigInit(64 << 10)
	// Two clients send all of their bodies but the last byte: each holds
	// 64 KiB, the two the whole budget.
	a := be.slowPost(len(body), body[:len(body)-1], hdr{"X-Client": "a"})
	b := be.slowPost(len(body), body[:len(body)-1], hdr{"X-Client": "b"})

	resp := be.post(statelessCall(2, "echo", `{"text":"hi"}`), mergeHdr(statelessHdr("tools/call", "echo"), hdr{"X-Client": "c"}))
	got := expect(t, resp, http.StatusServiceUnavailable)
	if resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	equalJSONBody(t, got, `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Service unavailable: the server is busy"}}`)

	expect(t, be.finish(a, body[len(body)-1:]), http.StatusOK, `"protocolVersion":"2025-11-25"`)
	expect(t, be.finish(b, body[len(body)-1:]), http.StatusOK, `"protocolVersion":"2025-11-25"`)
	expect(t, be.post(padded(statelessCall(3, "echo", `{"text":"big"}`), 60<<10), mergeHdr(statelessHdr("tools/call", "echo"), hdr{"X-Client": "c"})),
		http.StatusOK, "echo: big")
}

// One client's bodies being read take at most its share of the budget
// (Options.MaxInFlightBytesPerClient): past it, that client is refused at
// once with 429 and Retry-After, and every other client is served.
func TestInFlightBytesPerClientShare(t *testing.T) {
	be := newBudgetEnv(t, mcphttp.Options{MaxBodyBytes: 64 << 10, MaxInFlightBytes: 1 << 20, MaxInFlightBytesPerClient: 128 << 10})
	body := bigInit(64 << 10)
	greedy := hdr{"X-Client": "greedy"}
	a := be.slowPost(len(body), body[:len(body)-1], greedy)
	b := be.slowPost(len(body), body[:len(body)-1], greedy)

	resp := be.post(statelessCall(2, "echo", `{"text":"hi"}`), mergeHdr(statelessHdr("tools/call", "echo"), greedy))
	got := expect(t, resp, http.StatusTooManyRequests)
	if resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if code, id := rpcError(t, got); code != domain.CodeInvalidRequest || id != "" {
		t.Fatalf("error %d with id %q: %s", code, id, got)
	}
	if !strings.Contains(got, "131072 bytes") {
		t.Fatalf("the error does not name the share: %s", got)
	}

	// Others are served meanwhile, a large body included.
	expect(t, be.post(padded(statelessCall(3, "echo", `{"text":"big"}`), 60<<10), mergeHdr(statelessHdr("tools/call", "echo"), hdr{"X-Client": "other"})),
		http.StatusOK, "echo: big")

	// Once its bodies have arrived, the client is served again.
	expect(t, be.finish(a, body[len(body)-1:]), http.StatusOK)
	expect(t, be.finish(b, body[len(body)-1:]), http.StatusOK)
	expect(t, be.post(statelessCall(4, "echo", `{"text":"again"}`), mergeHdr(statelessHdr("tools/call", "echo"), greedy)), http.StatusOK, "echo: again")
}

// What calls being served keep of their requests counts in their client's
// share, not in the budget: a client whose calls waiting for an
// elicitation keep its share (their params are padded, so the calls keep
// them) is refused a further call with 429, Retry-After and the call's
// id; its answers to the elicitations are still accepted, which frees its
// share; other clients are served throughout.
func TestInFlightBytesCallsKeepTheirClientsShare(t *testing.T) {
	const rev = "2025-11-25"
	be := newBudgetEnv(t, mcphttp.Options{MaxBodyBytes: 64 << 10, MaxInFlightBytes: 128 << 10, MaxInFlightBytesPerClient: 128 << 10})
	attacker := hdr{"X-Client": "attacker"}
	sid := be.initializeCaps(rev, `{"elicitation":{}}`, attacker)
	call := func(id int) string {
		return callBody(id, "ask_name", `{},"_meta":{"pad":"`+strings.Repeat("x", 60<<10)+`"}`)
	}
	var streams []*sse
	var asks []string
	for i := range 2 {
		resp := be.post(call(10+i), mergeHdr(sessHdr(sid, rev), attacker))
		defer resp.Body.Close()
		s := newSSE(t, resp)
		asks = append(asks, elicitRequest(t, s.nextMessage(t).data))
		streams = append(streams, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel() // a call served instead would wait for its elicitation
	resp := be.request(ctx, strings.NewReader(call(12)), -1, mergeHdr(sessHdr(sid, rev), attacker))
	got := expect(t, resp, http.StatusTooManyRequests)
	if resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if code, id := rpcError(t, got); code != domain.CodeInvalidRequest || id != "12" {
		t.Fatalf("error %d with id %q: %s", code, id, got)
	}

	// Other clients are served, with bodies as large as the attacker's.
	victim := hdr{"X-Client": "victim"}
	expect(t, be.post(fmt.Sprintf(initBody, rev), victim), http.StatusOK)
	expect(t, be.post(padded(statelessCall(2, "echo", `{"text":"big"}`), 60<<10), mergeHdr(statelessHdr("tools/call", "echo"), victim)),
		http.StatusOK, "echo: big")

	// The attacker's answer is accepted; its call ends, which frees room
	// for another.
	expect(t, be.post(acceptAda(asks[0]), mergeHdr(sessHdr(sid, rev), attacker)), http.StatusAccepted)
	if res := streams[0].nextMessage(t); !strings.Contains(res.data, "Hello, Ada!") {
		t.Fatalf("the call answered %s", res.data)
	}
	streams[0].endsWithin(t, 20*time.Second)
	resp = be.post(call(13), mergeHdr(sessHdr(sid, rev), attacker))
	defer resp.Body.Close()
	elicitRequest(t, newSSE(t, resp).nextMessage(t).data)
}

// A body that does not arrive within Options.BodyTimeout is answered 408
// (a JSON-RPC error without id), and its connection closed; what it held
// of the budget is given back.
func TestBodyTimeout(t *testing.T) {
	be := newBudgetEnv(t, mcphttp.Options{MaxBodyBytes: 64 << 10, MaxInFlightBytes: 64 << 10, BodyTimeout: time.Second})
	body := bigInit(64 << 10)
	c := be.dialSlow(len(body), body[:len(body)-1], hdr{"X-Client": "slow"})
	resp := readResponse(t, c)
	got := expect(t, resp, http.StatusRequestTimeout)
	if code, id := rpcError(t, got); code != domain.CodeInvalidRequest || id != "" {
		t.Fatalf("error %d with id %q: %s", code, id, got)
	}
	if !strings.Contains(got, "within 1s") || !resp.Close {
		t.Fatalf("close %t: %s", resp.Close, got)
	}
	if n, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the connection is still open (read %d bytes)", n)
	}
	// The whole budget is free again.
	expect(t, be.post(body, hdr{"X-Client": "slow"}), http.StatusOK)
}

// Over HTTP/2 too, a body that does not arrive within BodyTimeout is
// answered 408; the stream is reset, the connection serves on.
func TestBodyTimeoutHTTP2(t *testing.T) {
	be := newBudgetEnvOver(t, mcphttp.Options{MaxBodyBytes: 64 << 10, BodyTimeout: time.Second}, true)
	body := bigInit(64 << 10)
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = io.WriteString(pw, body[:100]) }()
	resp := be.request(context.Background(), pr, int64(len(body)), hdr{"X-Client": "slow"})
	got := expect(t, resp, http.StatusRequestTimeout)
	if resp.ProtoMajor != 2 {
		t.Fatalf("served over HTTP/%d", resp.ProtoMajor)
	}
	if code, id := rpcError(t, got); code != domain.CodeInvalidRequest || id != "" || !strings.Contains(got, "within 1s") {
		t.Fatalf("error %d with id %q: %s", code, id, got)
	}
	expect(t, be.post(body, nil), http.StatusOK)
}

// BodyTimeout bounds the body only: a call that goes on longer once its
// body has arrived (here, waiting for the answer to an elicitation, which
// travels on the session's GET stream while the POST, accepting JSON only,
// waits without a stream: its client going away would cancel the call) is
// served to the end, over HTTP/1 and HTTP/2.
func TestBodyTimeoutEndsWithTheBody(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("h2=%t", h2), func(t *testing.T) {
			const rev = "2025-11-25"
			timeout := 500 * time.Millisecond // bodies are small: they arrive with their headers
			be := newBudgetEnvOver(t, mcphttp.Options{BodyTimeout: timeout}, h2)
			sid := be.initializeCaps(rev, `{"elicitation":{}}`, nil)
			req, err := http.NewRequest(http.MethodGet, be.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range sessHdr(sid, rev) {
				req.Header.Set(k, v)
			}
			req.Header.Set("Accept", "text/event-stream")
			get := testtools.Do(t, be.client, req)
			defer get.Body.Close()
			gs := newSSE(t, get)
			if p := gs.nextEvent(t); p.data != "" {
				t.Fatalf("priming event %+v", p)
			}

			done := make(chan string, 1)
			call, err := http.NewRequest(http.MethodPost, be.url, strings.NewReader(callBody(2, "ask_name", `{}`)))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range sessHdr(sid, rev) {
				call.Header.Set(k, v)
			}
			call.Header.Set("Content-Type", "application/json")
			call.Header.Set("Accept", "application/json")
			go func() {
				resp, err := be.client.Do(call)
				if err != nil {
					done <- err.Error()
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				done <- fmt.Sprintf("%d %s", resp.StatusCode, b)
			}()
			id := elicitRequest(t, gs.nextMessage(t).data)
			time.Sleep(3 * timeout) // the body's deadline, had it stayed, has passed
			expect(t, be.post(acceptAda(id), sessHdr(sid, rev)), http.StatusAccepted)
			select {
			case got := <-done:
				if !strings.HasPrefix(got, "200 ") {
					t.Fatalf("the call answered %s", got)
				}
				sameJSON(t, strings.TrimPrefix(got, "200 "), helloAda2)
			case <-time.After(20 * time.Second):
				t.Fatal("the call was not answered")
			}
		})
	}
}

// With the per-client share turned off by name (hexmcp.Unlimited), one
// client's bodies count in the whole budget alone: it is served while
// five of its bodies are being read, and every one of them is answered.
func TestInFlightBytesPerClientUnlimited(t *testing.T) {
	be := newBudgetEnv(t, mcphttp.Options{MaxBodyBytes: 64 << 10, MaxInFlightBytes: 1 << 20, MaxInFlightBytesPerClient: hexmcp.Unlimited})
	body := bigInit(64 << 10)
	greedy := hdr{"X-Client": "greedy"}
	var slow []net.Conn
	for range 5 {
		slow = append(slow, be.slowPost(len(body), body[:len(body)-1], greedy))
	}
	expect(t, be.post(padded(statelessCall(2, "echo", `{"text":"more"}`), 60<<10), mergeHdr(statelessHdr("tools/call", "echo"), greedy)),
		http.StatusOK, "echo: more")
	for _, c := range slow {
		expect(t, be.finish(c, body[len(body)-1:]), http.StatusOK)
	}
}
