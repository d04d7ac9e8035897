package mcphttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// TestMain fails the run when goroutines of this package (handlers, SSE
// pumps, tools) outlive the tests.
func TestMain(m *testing.M) {
	os.Exit(testtools.RunWithLeakCheck(m, "hexmcp/adapters/http", "net/http.(*conn).serve"))
}

// env is a handler on a test server, with an engine whose tools tests can
// steer.
type env struct {
	t   *testing.T
	e   *app.Engine
	h   *mcphttp.Handler
	srv *httptest.Server
	url string
	*blocker
}

// blocker steers the blocking tools of a test engine: each call reports
// on started, then waits until release is closed (and answers "released")
// or until its context ends (which it reports on stopped).
type blocker struct {
	started chan struct{} // a blocking tool began
	release chan struct{} // closed to let blocking tools return
	stopped chan error    // a blocking tool saw its context end
	once    sync.Once
}

func newBlocker(queue int) *blocker {
	return &blocker{started: make(chan struct{}, queue), release: make(chan struct{}), stopped: make(chan error, queue)}
}

// wait is the body of a blocking tool.
func (b *blocker) wait(ctx context.Context) (string, error) {
	b.started <- struct{}{}
	select {
	case <-b.release:
		return "released", nil
	case <-ctx.Done():
		b.stopped <- ctx.Err()
		return "", ctx.Err()
	}
}

// releaseAll lets every blocking tool return, now and from now on.
func (b *blocker) releaseAll() { b.once.Do(func() { close(b.release) }) }

// waitStarted fails t unless a blocking tool starts (20 s at most: a
// wait, not a bound).
func (b *blocker) waitStarted(t testing.TB) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the blocking tool did not start")
	}
}

func newEngine(t *testing.T, ev *env) *app.Engine {
	t.Helper()
	e := testtools.NewEngine(t, app.Options{Info: testtools.Info})
	type textIn struct {
		Text string `json:"text"`
	}
	type noIn struct{}
	err := e.AddTools(
		hexmcp.Func(func(ctx context.Context, in textIn) (string, error) { return "echo: " + in.Text, nil },
			hexmcp.WithName("echo")),
		hexmcp.Func(func(ctx context.Context, in noIn) (string, error) {
			if err := app.RequestFrom(ctx).ReportProgress(ctx, 1, 2, "half"); err != nil {
				return "", err
			}
			return "done", nil
		}, hexmcp.WithName("progress")),
		hexmcp.Func(func(ctx context.Context, in noIn) (string, error) { return ev.wait(ctx) }, hexmcp.WithName("block")),
		hexmcp.Func(func(ctx context.Context, in noIn) (string, error) {
			if err := app.RequestFrom(ctx).ReportProgress(ctx, 1, 2, "half"); err != nil {
				return "", err
			}
			return ev.wait(ctx)
		}, hexmcp.WithName("progress_block")),
		hexmcp.Func(func(ctx context.Context, in noIn) (string, error) {
			tr := app.RequestFrom(ctx).Transport()
			who := "anonymous"
			if tr.Principal != nil {
				who = tr.Principal.Subject
			}
			h := http.Header(tr.Header)
			return fmt.Sprintf("%s|%s|%s|%t", who, h.Get("X-Test"), h.Get("Authorization"), tr.RemoteAddr != ""), nil
		}, hexmcp.WithName("whoami")),
		hexmcp.NewRawTool("sql", json.RawMessage(`{"type":"object","properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"count":{"type":"integer","x-mcp-header":"Count"},
			"dry":{"type":"boolean","x-mcp-header":"Dry"},
			"where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
			"query":{"type":"string"}}}`),
			func(ctx context.Context, args json.RawMessage) (any, error) { return "ok", nil }),
	)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func newEnv(t *testing.T, opts mcphttp.Options) *env {
	t.Helper()
	ev := newBareEnv(t)
	ev.serve(newEngine(t, ev), opts)
	return ev
}

func newBareEnv(t *testing.T) *env {
	return &env{t: t, blocker: newBlocker(16)}
}

// envFor serves e through a Handler with opts, for tests that build their
// own engine.
func envFor(t *testing.T, e *app.Engine, opts mcphttp.Options) *env {
	t.Helper()
	ev := newBareEnv(t)
	ev.serve(e, opts)
	return ev
}

// serve starts the test server of e (on 127.0.0.1) and stops it at cleanup.
func (ev *env) serve(e *app.Engine, opts mcphttp.Options) {
	ev.e = e
	ev.h = mcphttp.NewHandler(e, opts)
	ev.srv = httptest.NewServer(ev.h) // listens on 127.0.0.1
	ev.url = ev.srv.URL
	ev.t.Cleanup(func() {
		ev.releaseAll()
		ev.h.CloseStreams()
		ev.srv.Close()
		_ = ev.e.Close()
	})
}

func (ev *env) waitStarted() {
	ev.t.Helper()
	ev.blocker.waitStarted(ev.t)
}

// blockedCall opens a handshake-era session and calls the blocking tool
// in it (id 2); it returns once the tool started, with the session and the
// channel that gets the call's response.
func (ev *env) blockedCall() (sid string, done <-chan *http.Response) {
	ev.t.Helper()
	sid = ev.initialize("2025-11-25")
	resp := make(chan *http.Response, 1)
	go func() {
		resp <- mustDo(http.MethodPost, ev.url, callBody(2, "block", `{}`), sessHdr(sid, "2025-11-25"))
	}()
	ev.waitStarted()
	return sid, resp
}

// wantCancelled waits for the blocking tool to stop, and fails the test
// unless its context was cancelled.
func (ev *env) wantCancelled() {
	ev.t.Helper()
	if err := ev.waitStopped(); !errors.Is(err, context.Canceled) {
		ev.t.Fatalf("tool stopped with %v", err)
	}
}

func (ev *env) waitStopped() error {
	ev.t.Helper()
	select {
	case err := <-ev.stopped:
		return err
	case <-time.After(10 * time.Second):
		ev.t.Fatal("the blocking tool's context was not cancelled")
	}
	return nil
}

// hdr is a set of request headers.
type hdr map[string]string

func request(t *testing.T, ctx context.Context, method, url, body string, h hdr) *http.Response {
	t.Helper()
	resp, err := doRaw(ctx, method, url, body, h)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// mustDo is doRaw for goroutines other than the test's: an error yields a
// response with status 0.
func mustDo(method, url, body string, h hdr) *http.Response {
	resp, err := doRaw(context.Background(), method, url, body, h)
	if err != nil {
		return &http.Response{Body: io.NopCloser(strings.NewReader(err.Error()))}
	}
	return resp
}

// doRaw sends a request with the headers a conforming client sends, then
// h (an empty value deletes a header).
func doRaw(ctx context.Context, method, url, body string, h hdr) (*http.Response, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if method == http.MethodPost {
		testtools.MCPHeaders(req)
	}
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	for k, v := range h {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return http.DefaultClient.Do(req)
}

func (ev *env) post(body string, h hdr) *http.Response {
	ev.t.Helper()
	return request(ev.t, context.Background(), http.MethodPost, ev.url, body, h)
}

// readAll reads and closes a response body.
func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// expect checks a response's status and that its body contains each of
// want; it returns the body.
func expect(t *testing.T, resp *http.Response, status int, want ...string) string {
	t.Helper()
	body := readAll(t, resp)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d; body %s", resp.StatusCode, status, body)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Fatalf("body %s\ndoes not contain %s", body, w)
		}
	}
	return body
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// initialize opens a session of the given revision and returns its id.
func (ev *env) initialize(rev string) string {
	ev.t.Helper()
	return initializeAt(ev.t, ev.url, rev)
}

func initializeAt(t *testing.T, url, rev string) string {
	t.Helper()
	resp := request(t, context.Background(), http.MethodPost, url, fmt.Sprintf(initBody, rev), nil)
	expect(t, resp, http.StatusOK, `"protocolVersion":"`+rev+`"`)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("initialize answered %q", ct)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if len(sid) < 32 {
		t.Fatalf("session id %q", sid)
	}
	resp = request(t, context.Background(), http.MethodPost, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": rev})
	expect(t, resp, http.StatusAccepted)
	return sid
}

func callBody(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

func progressCallBody(id int, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{"progressToken":"tok"}}}`, id, tool)
}

const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"%s","io.modelcontextprotocol/clientCapabilities":{}}`

func statelessBody(id int, method, params string) string {
	meta := fmt.Sprintf(statelessMeta, "2026-07-28")
	if params == "" {
		params = "{" + meta + "}"
	} else {
		params = "{" + params + "," + meta + "}"
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

func statelessCall(id int, tool, args string) string {
	return statelessBody(id, "tools/call", fmt.Sprintf(`"name":%q,"arguments":%s`, tool, args))
}

func statelessHdr(method, name string) hdr {
	h := hdr{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

func sessHdr(sid, rev string) hdr { return hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": rev} }

// sse reads server-sent events.
type sse struct {
	br    *bufio.Reader
	retry string // the last retry field
}

type sseEvent struct {
	id   string
	data string
}

func newSSE(t *testing.T, resp *http.Response) *sse {
	t.Helper()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("not an SSE stream: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), readAll(t, resp))
	}
	return &sse{br: bufio.NewReader(resp.Body)}
}

// next returns the next event (comments skipped).
func (s *sse) next() (sseEvent, error) {
	var ev sseEvent
	seen := false
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if seen {
				return ev, nil
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "retry:"):
			s.retry = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "id:"):
			ev.id, seen = strings.TrimSpace(line[3:]), true
		case strings.HasPrefix(line, "data:"):
			d := strings.TrimPrefix(line[5:], " ")
			if ev.data != "" {
				ev.data += "\n"
			}
			ev.data += d
			seen = true
		default:
			seen = true
		}
	}
}

// nextEvent is next with a deadline, failing the test on error.
func (s *sse) nextEvent(t *testing.T) sseEvent {
	t.Helper()
	type res struct {
		ev  sseEvent
		err error
	}
	ch := make(chan res, 1)
	go func() {
		ev, err := s.next()
		ch <- res{ev, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("reading the stream: %v", r.err)
		}
		return r.ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return sseEvent{}
}

// rpcError decodes the error of a JSON-RPC error response.
func rpcError(t *testing.T, body string) (code int, id string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %s", body)
	}
	return m.Error.Code, string(m.ID)
}

// initSession initializes, through post, a session at rev whose client
// declares caps, sending h with both requests, and returns its id.
func initSession(t *testing.T, post func(string, hdr) *http.Response, rev, caps string, h hdr) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + rev + `","capabilities":` + caps + `,"clientInfo":{"name":"c","version":"1"}}}`
	resp := post(body, h)
	expect(t, resp, http.StatusOK, `"protocolVersion":"`+rev+`"`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no Mcp-Session-Id")
	}
	expect(t, post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, mergeHdr(sessHdr(sid, rev), h)), http.StatusAccepted)
	return sid
}

// refusedCase is a request the server refuses: its body and headers, the
// HTTP status and the JSON-RPC error code it is answered with.
type refusedCase struct {
	name   string
	body   string
	h      hdr
	status int
	code   int
}
