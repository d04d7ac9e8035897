package bench

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Harness of the Streamable HTTP benchmarks.
//
// Every server is an http.Handler run by its own httptest.Server (bound to
// 127.0.0.1) and driven by ONE raw net/http client shared by all of them:
// the same keep-alive transport, the same pre-encoded request bodies and,
// per era, the same request headers, so that only the server differs. Per
// iteration the client POSTs one tools/call of calculate, reads the whole
// response (application/json, or text/event-stream whose data: line is then
// taken) and checks it cheaply with bytes.Contains. One call in flight at a
// time, over one TCP connection (a server that makes the client open a
// second connection fails the benchmark: that would measure dialling).

const (
	eraHandshake = "2025-11-25" // initialize, then requests in a session (Mcp-Session-Id)
	eraStateless = "2026-07-28" // no initialize, no session: the version travels in every request's _meta
)

// statelessMeta is the _meta every 2026-07-28 request carries.
const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + eraStateless +
	`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}`

// httpEra is one protocol era as the client speaks it: the pre-encoded
// tools/call bodies and the headers of every call.
type httpEra struct {
	name      string
	handshake bool        // initialize + notifications/initialized first; calls carry Mcp-Session-Id
	calls     []callLine  // line = request body (no newline); id = `"id":N`
	header    http.Header // headers of a call (the session id is added after initialize)
}

var httpEras = []*httpEra{
	{
		name:      eraHandshake,
		handshake: true,
		calls:     httpCallBodies(""),
		header: httpHeader(map[string]string{
			"MCP-Protocol-Version": eraHandshake,
		}),
	},
	{
		name:  eraStateless,
		calls: httpCallBodies("," + statelessMeta),
		header: httpHeader(map[string]string{
			"MCP-Protocol-Version": eraStateless,
			"Mcp-Method":           "tools/call",
			"Mcp-Name":             calcToolName,
		}),
	},
}

// httpCallBodies pre-encodes 128 tools/call bodies with ids 100..227 (all of
// the same length); extraParams is appended inside params.
func httpCallBodies(extraParams string) []callLine {
	lines := make([]callLine, 128)
	for i := range lines {
		id := strconv.Itoa(100 + i)
		lines[i] = callLine{
			line: []byte(`{"jsonrpc":"2.0","id":` + id +
				`,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1,"b":2,"operation":"add"}` + extraParams + `}}`),
			id: []byte(`"id":` + id),
		}
	}
	return lines
}

// httpHeader returns the headers every POST carries (Content-Type, and an
// Accept that lists both types, as clients must) plus extra.
func httpHeader(extra map[string]string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	for k, v := range extra {
		h.Set(k, v)
	}
	return h
}

var (
	httpInitializeBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` +
		eraHandshake + `","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	httpInitializedBody = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	httpInitHeader      = httpHeader(nil) // initialize negotiates the version: no MCP-Protocol-Version yet

	sseContentType = "text/event-stream"
	ssePrefixData  = []byte("data:")
)

// benchHTTPClient is the one client of every HTTP benchmark: keep-alive (the
// default), no proxy, no compression (nothing varies with Accept-Encoding),
// HTTP/1.1 over plain TCP to 127.0.0.1.
var benchHTTPClient = &http.Client{
	Transport: &http.Transport{
		Proxy:               nil,
		DisableCompression:  true,
		MaxIdleConns:        16,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	},
}

// httpHandlerFunc builds a server under test. cleanup (may be nil) runs after
// the httptest server has been closed.
type httpHandlerFunc func(tb testing.TB) (h http.Handler, cleanup func())

// httpClient is the client side of one benchmark (or test) against one
// server.
type httpClient struct {
	srv     *httptest.Server
	cleanup func()
	url     *url.URL
	header  http.Header // headers of a call in this era (with the session id)
	session string
	conns   atomic.Int64 // TCP connections the server accepted
	closing int          // responses that announced Connection: close
	body    bytes.Buffer // response body, reused
	sse     []byte       // scratch for multi-line SSE data
}

// connectHTTP starts the server and, for the handshake era, performs
// initialize and notifications/initialized.
func connectHTTP(tb testing.TB, era *httpEra, newHandler httpHandlerFunc) *httpClient {
	tb.Helper()
	h, cleanup := newHandler(tb)
	c := &httpClient{cleanup: cleanup}
	c.body.Grow(maxResponseLength)
	c.srv = httptest.NewUnstartedServer(h)
	c.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	c.srv.Start()
	u, err := url.Parse(c.srv.URL + "/mcp")
	if err != nil {
		c.close(tb)
		tb.Fatal(err)
	}
	c.url = u
	c.header = era.header
	if !era.handshake {
		return c
	}

	status, hdr, resp, err := c.post(httpInitializeBody, httpInitHeader)
	if err != nil || status != http.StatusOK || !bytes.Contains(resp, protocolVerKey) || bytes.Contains(resp, errorKey) {
		c.close(tb)
		tb.Fatalf("initialize: status %d, err %v, response %s", status, err, resp)
	}
	c.session = hdr.Get("Mcp-Session-Id")
	if c.session == "" {
		c.close(tb)
		tb.Fatalf("initialize: no Mcp-Session-Id in the response")
	}
	c.header = era.header.Clone()
	c.header.Set("Mcp-Session-Id", c.session)
	status, _, resp, err = c.post(httpInitializedBody, c.header)
	if err != nil || status/100 != 2 {
		c.close(tb)
		tb.Fatalf("notifications/initialized: status %d, err %v, response %s", status, err, resp)
	}
	return c
}

// post sends one POST and reads the whole response. For an SSE response
// the returned data is that of the first event that is not a notification.
// data is only valid until the next call.
func (c *httpClient) post(body []byte, header http.Header) (status int, respHeader http.Header, data []byte, err error) {
	req := &http.Request{
		Method:        http.MethodPost,
		URL:           c.url,
		Host:          c.url.Host,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
	}
	resp, err := benchHTTPClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	if resp.Close {
		c.closing++
	}
	c.body.Reset()
	_, err = c.body.ReadFrom(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return resp.StatusCode, resp.Header, nil, fmt.Errorf("read body: %w", err)
	}
	data = c.body.Bytes()
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, sseContentType) {
		data = c.sseMessage(data)
	}
	return resp.StatusCode, resp.Header, data, nil
}

// sseMessage returns the data of the first event of an SSE body whose data
// is not empty (a priming event) nor a notification; nil if there is none.
func (c *httpClient) sseMessage(body []byte) []byte {
	var data []byte
	lines := 0
	for len(body) > 0 {
		line, rest, _ := bytes.Cut(body, []byte{'\n'})
		body = rest
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 { // end of event
			if len(data) > 0 && !bytes.Contains(data, notificationKey) {
				return data
			}
			data, lines = nil, 0
			continue
		}
		v, ok := bytes.CutPrefix(line, ssePrefixData)
		if !ok {
			continue // event:, id:, retry:, comments
		}
		v = bytes.TrimPrefix(v, []byte{' '})
		switch lines {
		case 0:
			data = v
		case 1:
			c.sse = append(append(append(c.sse[:0], data...), '\n'), v...)
			data = c.sse
		default:
			c.sse = append(append(c.sse, '\n'), v...)
			data = c.sse
		}
		lines++
	}
	if len(data) > 0 && !bytes.Contains(data, notificationKey) {
		return data // last event without its blank line
	}
	return nil
}

// call performs one tools/call and checks its response.
func (c *httpClient) call(call *callLine) error {
	status, _, resp, err := c.post(call.line, c.header)
	if err != nil {
		return err
	}
	if status != http.StatusOK || !bytes.Contains(resp, call.id) || !bytes.Contains(resp, wantResultText) ||
		bytes.Contains(resp, errorKey) || bytes.Contains(resp, isErrorTrue) {
		return fmt.Errorf("unexpected tools/call response (status %d, want %s): %s", status, call.id, resp)
	}
	return nil
}

// close ends the session (DELETE, for the servers that keep one) and stops
// the server; both outside the timed region.
func (c *httpClient) close(tb testing.TB) {
	tb.Helper()
	if c.session != "" && c.url != nil {
		req, _ := http.NewRequest(http.MethodDelete, c.url.String(), nil)
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", eraHandshake)
		if resp, err := benchHTTPClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}
	c.srv.Close()
	benchHTTPClient.CloseIdleConnections()
	if c.cleanup != nil {
		c.cleanup()
	}
}

// runHTTPBench measures one sequential tools/call over Streamable HTTP.
// Starting the server and the handshake are not timed.
func runHTTPBench(b *testing.B, era *httpEra, newHandler httpHandlerFunc) {
	c := connectHTTP(b, era, newHandler)
	defer c.close(b)

	timeCalls(b, era, c)
	// Keep-alive: no response may announce Connection: close, and the
	// calls must share their connection. On a loaded machine net/http
	// itself (the floors too) now and then replaces an idle connection,
	// so a few more connections are tolerated; a server that loses
	// keep-alive on more than one call in a hundred is not.
	if c.closing != 0 {
		b.Fatalf("%d responses announced Connection: close: keep-alive was lost", c.closing)
	}
	if n := c.conns.Load(); n > 1+int64(b.N)/100 {
		b.Fatalf("the client opened %d connections for %d calls: keep-alive was lost", n, b.N)
	} else if n > 1 {
		b.Logf("the client opened %d connections for %d calls", n, b.N)
	}
}

// timeCalls times b.N sequential tools/calls of era's, made by c; the
// timer is stopped when it returns.
func timeCalls(b *testing.B, era *httpEra, c interface{ call(*callLine) error }) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		if err := c.call(&era.calls[i%len(era.calls)]); err != nil {
			b.Fatalf("tools/call: %v", err)
		}
	}
	b.StopTimer()
	cpu.report(b)
}

// benchHTTPEras runs one sub-benchmark per era. Every implementation
// measured here serves both eras; one that did not would b.Skip the era
// with the reason in its newHandler.
func benchHTTPEras(b *testing.B, newHandler func(era string) httpHandlerFunc) {
	for _, era := range httpEras {
		b.Run(era.name, func(b *testing.B) { runHTTPBench(b, era, newHandler(era.name)) })
	}
}
