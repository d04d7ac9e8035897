package mcphttp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// The budget of POST bodies in flight (Options.MaxInFlightBytes) against
// clients that announce large bodies and send them slowly, and against
// calls that wait for the client (an elicitation) after their body was
// read: neither may keep every other client out.

// budgetEnv is a handler whose engine has the tools "echo" and "ask_name"
// (which elicits), behind a wrapper that tells when a POST marked X-Slow
// starts reading its body. Requests name their client in X-Client
// (Options.ClientKey; without it the remote address).
type budgetEnv struct {
	t       *testing.T
	url     string
	host    string
	path    string
	reading chan struct{} // a POST marked X-Slow began reading its body
}

func newBudgetEnv(t *testing.T, opts mcphttp.Options) *budgetEnv {
	t.Helper()
	e, err := app.NewEngine(app.Options{
		Info:         domain.Implementation{Name: "test", Version: "1.0.0"},
		ToolRegistry: memory.NewRegistry(),
		Validator:    jsonschema.New(),
	})
	if err != nil {
		t.Fatal(err)
	}
	type textIn struct {
		Text string `json:"text"`
	}
	if err := e.AddTools(testtools.AskName(),
		app.Func(func(ctx context.Context, in textIn) (string, error) { return "echo: " + in.Text, nil }, app.WithName("echo"))); err != nil {
		t.Fatal(err)
	}
	if opts.ClientKey == nil {
		opts.ClientKey = func(r *http.Request) string { return r.Header.Get("X-Client") }
	}
	h := mcphttp.NewHandler(e, opts)
	be := &budgetEnv{t: t, reading: make(chan struct{}, 64)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Slow") != "" {
			r.Body = &firstRead{ReadCloser: r.Body, ch: be.reading}
		}
		h.ServeHTTP(w, r)
	}))
	be.url = srv.URL + "/mcp"
	be.host = strings.TrimPrefix(srv.URL, "http://")
	be.path = "/mcp"
	t.Cleanup(func() {
		h.CloseStreams()
		h.Abort() // ends the calls still waiting for the client
		srv.Close()
		_ = e.Close()
	})
	return be
}

// firstRead signals on ch when its first Read begins: the handler has
// passed whatever it does before reading the body.
type firstRead struct {
	io.ReadCloser
	once sync.Once
	ch   chan<- struct{}
}

func (f *firstRead) Read(p []byte) (int, error) {
	f.once.Do(func() { f.ch <- struct{}{} })
	return f.ReadCloser.Read(p)
}

// slowPost opens a connection that announces a body of announce bytes
// (Content-Length), sends sent of it and stops, as a slow or malicious
// client does; it waits until the handler reads the body.
func (be *budgetEnv) slowPost(announce int, sent string, h hdr) net.Conn {
	be.t.Helper()
	c, err := net.Dial("tcp", be.host)
	if err != nil {
		be.t.Fatal(err)
	}
	be.t.Cleanup(func() { c.Close() })
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nX-Slow: 1\r\n", be.path, be.host, announce)
	for k, v := range h {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	b.WriteString(sent)
	if _, err := io.WriteString(c, b.String()); err != nil {
		be.t.Fatal(err)
	}
	select {
	case <-be.reading:
	case <-time.After(20 * time.Second):
		be.t.Fatal("the handler did not start reading a slow body")
	}
	return c
}

func (be *budgetEnv) post(body string, h hdr) *http.Response {
	be.t.Helper()
	return request(be.t, context.Background(), http.MethodPost, be.url, body, h)
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
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + rev + `","capabilities":` + caps + `,"clientInfo":{"name":"c","version":"1"}}}`
	resp := be.post(body, h)
	expect(be.t, resp, http.StatusOK, `"protocolVersion":"`+rev+`"`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		be.t.Fatal("no Mcp-Session-Id")
	}
	expect(be.t, be.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, mergeHdr(sessHdr(sid, rev), h)), http.StatusAccepted)
	return sid
}
