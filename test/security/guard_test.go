// Package security holds tests that hold every network endpoint of the SDK
// to the same security rules, on the wire.
package security

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/httpguard/guardtest"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

const (
	deadline = 10 * time.Second
	served   = "probe-served" // the probe tool's answer
	callBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"probe","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
)

// endpoints is one loopback listener serving the Streamable HTTP handler at
// /mcp and the WebSocket handler at /ws, both configured alike, on an
// engine whose tool "probe" counts its calls.
type endpoints struct {
	addr, port, otherPort string
	calls                 *atomic.Int64
}

func serve(t *testing.T, cfg guardtest.Config) endpoints {
	t.Helper()
	calls := new(atomic.Int64)
	e := testtools.NewEngine(t, app.Options{})
	probe := hexmcp.NewTool(func() string { calls.Add(1); return served }, hexmcp.WithName("probe"))
	if err := e.AddTool(probe); err != nil {
		t.Fatal(err)
	}
	ws := websocket.NewHandler(e, websocket.Options{AllowedOrigins: cfg.AllowedOrigins, AllowedHosts: cfg.AllowedHosts})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcphttp.NewHandler(e, mcphttp.Options{AllowedOrigins: cfg.AllowedOrigins, AllowedHosts: cfg.AllowedHosts}))
	mux.Handle("/ws", ws)
	srv := httptest.NewUnstartedServer(mux)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := contextWithTimeout()
		defer cancel()
		_ = ws.Shutdown(ctx)
		srv.Close()
		_ = e.Close()
	})
	_, port, _ := net.SplitHostPort(l.Addr().String())
	p, _ := strconv.Atoi(port)
	return endpoints{addr: l.Addr().String(), port: port, otherPort: strconv.Itoa(p + 1), calls: calls}
}

// rawRequest writes head (an HTTP request head without the blank line),
// the Host and Origin headers (Origin only when set), and then body on a
// new connection, and returns the connection and the parsed response. The
// request is written by hand so that Host and Origin go out exactly as
// given.
func rawRequest(t *testing.T, addr, head, host, origin string, body []byte) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, deadline)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(deadline))
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, "Host: %s\r\n", host)
	if origin != "" {
		fmt.Fprintf(&b, "Origin: %s\r\n", origin)
	}
	b.WriteString("\r\n")
	if _, err := c.Write(append([]byte(b.String()), body...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	return c, br, resp
}

// postMCP sends a stateless tools/call of "probe" to /mcp; it returns the
// status and the body.
func postMCP(t *testing.T, ep endpoints, host, origin string) (int, string) {
	t.Helper()
	head := "POST /mcp HTTP/1.1\r\n" +
		"Content-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\n" +
		"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: probe\r\n" +
		"Connection: close\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n", len(callBody))
	_, _, resp := rawRequest(t, ep.addr, head, host, origin, []byte(callBody))
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(body)
}

// maskedText is a client's text frame (masked, as RFC 6455 requires).
func maskedText(payload []byte) []byte {
	frame := []byte{0x81}
	switch n := len(payload); {
	case n < 126:
		frame = append(frame, 0x80|byte(n))
	default:
		frame = append(frame, 0x80|126, byte(n>>8), byte(n))
	}
	var key [4]byte
	_, _ = rand.Read(key[:])
	frame = append(frame, key[:]...)
	for i, c := range payload {
		frame = append(frame, c^key[i%4])
	}
	return frame
}

// readFrame reads one server frame (unmasked) and returns its opcode and
// payload.
func readFrame(br *bufio.Reader) (byte, []byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(br, ext[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(br, ext[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(ext[:])
	}
	if n > 1<<20 {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	p := make([]byte, n)
	_, err := io.ReadFull(br, p)
	return h[0] & 0x0f, p, err
}

// dialWS sends the upgrade request for /ws and then, whatever the answer,
// a tools/call of "probe" in a text frame on the same connection, as a
// hostile page's client would try. It returns the status and, after a 101,
// the payload of the first frame; after a refusal, everything else the
// server sent on the connection until it closed it.
func dialWS(t *testing.T, ep endpoints, host, origin string) (int, string) {
	t.Helper()
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	head := "GET /ws HTTP/1.1\r\n" +
		"Upgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Version: 13\r\n" +
		"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key) + "\r\n" +
		"Sec-WebSocket-Protocol: mcp\r\n"
	c, br, resp := rawRequest(t, ep.addr, head, host, origin, nil)
	if _, err := c.Write(maskedText([]byte(callBody))); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		op, payload, err := readFrame(br)
		if err != nil {
			t.Fatalf("reading the first frame: %v", err)
		}
		if op != 1 {
			return resp.StatusCode, fmt.Sprintf("opcode %d: %q", op, payload)
		}
		return resp.StatusCode, string(payload)
	}
	// Refused: the frame reaches net/http as a next request, which it
	// refuses; read everything until the server closes the connection.
	body, _ := io.ReadAll(resp.Body)
	_ = c.(*net.TCPConn).CloseWrite()
	rest, _ := io.ReadAll(br)
	return resp.StatusCode, string(body) + string(rest)
}

// TestHostAndOriginOnEveryEndpoint runs every row of the shared table
// against /mcp and /ws of one listener. A refused row must get 403 on both
// and have no tools/call served (the probe tool counts its calls); an
// allowed row must be served on both.
func TestHostAndOriginOnEveryEndpoint(t *testing.T) {
	eps := make(map[string]endpoints)
	for _, cfg := range guardtest.Configs() {
		eps[cfg.Name] = serve(t, cfg)
	}
	for _, tc := range guardtest.Cases() {
		t.Run(tc.Config+"/"+tc.Name, func(t *testing.T) {
			ep, ok := eps[tc.Config]
			if !ok {
				t.Fatalf("no config %q", tc.Config)
			}
			host := guardtest.Expand(tc.Host, ep.port, ep.otherPort)
			origin := guardtest.Expand(tc.Origin, ep.port, ep.otherPort)
			before := ep.calls.Load()

			status, body := postMCP(t, ep, host, origin)
			if tc.Allowed {
				if status != http.StatusOK || !strings.Contains(body, served) {
					t.Errorf("/mcp Host %q Origin %q: %d %.300s, want 200 and the tool's answer", host, origin, status, body)
				}
			} else if status != http.StatusForbidden {
				t.Errorf("/mcp Host %q Origin %q: %d %.300s, want 403", host, origin, status, body)
			}

			status, body = dialWS(t, ep, host, origin)
			if tc.Allowed {
				if status != http.StatusSwitchingProtocols || !strings.Contains(body, served) {
					t.Errorf("/ws Host %q Origin %q: %d %.300s, want 101 and the tool's answer", host, origin, status, body)
				}
			} else {
				if status != http.StatusForbidden {
					t.Errorf("/ws Host %q Origin %q: %d, want 403 before the upgrade", host, origin, status)
				}
				if strings.Contains(body, served) {
					t.Errorf("/ws Host %q Origin %q: refused, yet the call was answered: %.300s", host, origin, body)
				}
			}

			want := before
			if tc.Allowed {
				want += 2
			}
			if got := ep.calls.Load(); got != want {
				t.Errorf("Host %q Origin %q: the tool ran %d times, want %d", host, origin, got-before, want-before)
			}
		})
	}
}

func contextWithTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), deadline)
}
