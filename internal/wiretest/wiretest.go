// Package wiretest drives a server over its three transports (stdio on
// in-memory pipes, Streamable HTTP and WebSocket on httptest servers) with
// one small client interface, for the SDK's own tests that must hold on
// every transport.
package wiretest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/adapters/websocket"
)

// Client sends one request and returns its response (the first decoded
// JSON-RPC message with an id), or sends a notification. Messages without
// an id that arrive meanwhile are kept for Notifications (stdio,
// WebSocket) or dropped (HTTP POST streams).
type Client interface {
	Send(t *testing.T, msg string) map[string]any
	Notify(t *testing.T, msg string)
	// Notifications returns the server's messages without an id received
	// so far and forgets them.
	Notifications() []string
}

// Transport makes a Client of a server.
type Transport struct {
	Name string
	Dial func(*testing.T, *hexmcp.Server) Client
}

// Transports are stdio, Streamable HTTP and WebSocket.
var Transports = []Transport{{"stdio", Stdio}, {"http", HTTP}, {"websocket", WebSocket}}

// stdioClient speaks over in-memory pipes; a goroutine reads the
// server's lines as they come, as an OS pipe's buffer would take them.
type stdioClient struct {
	in    io.Writer
	lines chan []byte
	notes []string
}

func (c *stdioClient) Notifications() []string {
	n := c.notes
	c.notes = nil
	return n
}

func (c *stdioClient) Notify(t *testing.T, msg string) {
	if _, err := io.WriteString(c.in, msg+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (c *stdioClient) Send(t *testing.T, msg string) map[string]any {
	t.Helper()
	c.Notify(t, msg)
	for {
		var line []byte
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("no answer to %s: the server closed its output", short(msg))
			}
			line = l
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to %s", short(msg))
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["id"]; ok {
			return m
		}
		c.notes = append(c.notes, string(line))
	}
}

// short is msg cut for a test's failure message.
func short(msg string) string {
	if len(msg) > 300 {
		return msg[:300] + "..."
	}
	return msg
}

// Stdio serves srv on in-memory pipes.
func Stdio(t *testing.T, srv *hexmcp.Server) Client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go srv.Serve(context.Background(), stdio.New(stdio.Options{In: inR, Out: outW}))
	t.Cleanup(func() { inW.Close() })
	c := &stdioClient{in: inW, lines: make(chan []byte, 1024)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	return c
}

// wsClient speaks over a real WebSocket connection.
type wsClient struct {
	c     *gws.Conn
	notes []string
}

func (c *wsClient) Notifications() []string {
	n := c.notes
	c.notes = nil
	return n
}

func (c *wsClient) Notify(t *testing.T, msg string) {
	if err := c.c.WriteMessage(gws.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

func (c *wsClient) Send(t *testing.T, msg string) map[string]any {
	t.Helper()
	c.Notify(t, msg)
	for {
		_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, b, err := c.c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["id"]; ok {
			return m
		}
		c.notes = append(c.notes, string(b))
	}
}

// WebSocket serves srv on an httptest server and dials it.
func WebSocket(t *testing.T, srv *hexmcp.Server) Client {
	h := srv.WebSocketHandler(websocket.Options{})
	hs := httptest.NewServer(h)
	t.Cleanup(func() { h.Shutdown(context.Background()); hs.Close() })
	c, _, err := (&gws.Dialer{Subprotocols: []string{"mcp"}}).Dial("ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &wsClient{c: c}
}

// httpClient speaks Streamable HTTP: a session once initialize has
// answered, the stateless headers otherwise.
type httpClient struct {
	t       *testing.T
	url     string
	session string

	mu     sync.Mutex
	notes  []string
	stream bool // the session's GET stream is open
}

// Notifications returns what the session's GET stream (opened after
// notifications/initialized) carried. The stream is not ordered with the
// POST responses, so it first gives the stream a moment (200 ms).
func (c *httpClient) Notifications() []string {
	time.Sleep(200 * time.Millisecond)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.notes
	c.notes = nil
	return n
}

// openStream opens the session's GET stream and collects its messages.
func (c *httpClient) openStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" {
				c.mu.Lock()
				c.notes = append(c.notes, data)
				c.mu.Unlock()
			}
		}
	}()
}

func (c *httpClient) post(t *testing.T, msg string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", c.url, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
			Meta *struct {
				V string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal([]byte(msg), &m)
	if m.Params.Meta != nil {
		req.Header.Set("MCP-Protocol-Version", m.Params.Meta.V)
		req.Header.Set("Mcp-Method", m.Method)
		if m.Params.Name != "" {
			req.Header.Set("Mcp-Name", m.Params.Name)
		}
	} else if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.session = sid
	}
	return resp
}

func (c *httpClient) Notify(t *testing.T, msg string) {
	resp := c.post(t, msg)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if c.session != "" && !c.stream && strings.Contains(msg, `"notifications/initialized"`) {
		c.stream = true
		c.openStream(t)
	}
}

func (c *httpClient) Send(t *testing.T, msg string) map[string]any {
	t.Helper()
	resp := c.post(t, msg)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(body), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"id"`) {
				body = []byte(data)
			}
		}
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%d %s: %v", resp.StatusCode, body, err)
	}
	return m
}

// HTTP serves srv on an httptest server, speaking Streamable HTTP.
func HTTP(t *testing.T, srv *hexmcp.Server) Client {
	hs := httptest.NewServer(srv.HTTPHandler(mcphttp.Options{}))
	t.Cleanup(hs.Close) // after the streams' cancels, registered later
	return &httpClient{t: t, url: hs.URL}
}
