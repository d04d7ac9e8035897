package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/app"
)

// WebSocket: one connection (subprotocol "mcp"), one JSON-RPC message per
// text frame, sequential calls: per iteration the client writes one
// pre-encoded tools/call frame (the bodies of the HTTP benchmarks) and
// reads frames until the response, skipping notifications. The client is
// gorilla/websocket; the server runs in an httptest.Server on 127.0.0.1.
// The peers (go-sdk, mcp-go) have no WebSocket transport, so this SDK is
// compared with its own floor only.
//
// Sub-benchmarks: 2025-11-25 (initialize and notifications/initialized on
// the connection first, not timed) and 2026-07-28 (no handshake: every
// request carries the version in _meta) on the same kind of connection.

// BenchmarkWSHexMCP is this SDK's WebSocket adapter with default options
// over the engine of BenchmarkHTTPHexMCP (memory registry, input
// validation, text "3").
func BenchmarkWSHexMCP(b *testing.B) {
	benchWSEras(b, newWSHexMCP)
}

// BenchmarkWSFloor is the lower bound: a bare gorilla upgrade handler that
// reads a text frame into a reused buffer, decodes it with encoding/json,
// calls calculate, encodes the response with encoding/json and writes it
// as one text frame, on the handler's goroutine. No validation, no dispatch.
// It writes the bytes this SDK writes in each era (floorCall: at
// 2026-07-28, which it reads in _meta, with "resultType":"complete" and
// the server's _meta), which TestFairFloors checks.
func BenchmarkWSFloor(b *testing.B) {
	benchWSEras(b, newWSFloor)
}

func benchWSEras(b *testing.B, newHandler httpHandlerFunc) {
	for _, era := range httpEras {
		b.Run(era.name, func(b *testing.B) { runWSBench(b, era, newHandler) })
	}
}

// wsClient is the client side of one WebSocket benchmark (or test).
type wsClient struct {
	srv     *httptest.Server
	ws      *gws.Conn
	h       http.Handler
	cleanup func()
	buf     bytes.Buffer // response frame, reused
}

// connectWS starts the server, dials it and, for the handshake era, sends
// initialize (reading its response) and notifications/initialized.
func connectWS(tb testing.TB, era *httpEra, newHandler httpHandlerFunc) *wsClient {
	tb.Helper()
	h, cleanup := newHandler(tb)
	c := &wsClient{h: h, cleanup: cleanup, srv: httptest.NewServer(h)}
	c.buf.Grow(maxResponseLength)
	d := gws.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: 5 * time.Second}
	ws, _, err := d.Dial("ws"+strings.TrimPrefix(c.srv.URL, "http")+"/ws", nil)
	if err != nil {
		c.close(tb)
		tb.Fatalf("dial: %v", err)
	}
	c.ws = ws
	if ws.Subprotocol() != "mcp" {
		c.close(tb)
		tb.Fatalf("subprotocol %q, want mcp", ws.Subprotocol())
	}
	if !era.handshake {
		return c
	}
	resp, err := c.roundTrip(httpInitializeBody)
	if err != nil || !bytes.Contains(resp, protocolVerKey) || bytes.Contains(resp, errorKey) {
		c.close(tb)
		tb.Fatalf("initialize: err %v, response %s", err, resp)
	}
	if err := ws.WriteMessage(gws.TextMessage, httpInitializedBody); err != nil {
		c.close(tb)
		tb.Fatalf("notifications/initialized: %v", err)
	}
	return c
}

// roundTrip writes one frame and returns the next frame that is not a
// notification; it is only valid until the next read.
func (c *wsClient) roundTrip(msg []byte) ([]byte, error) {
	if err := c.ws.WriteMessage(gws.TextMessage, msg); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	for {
		typ, r, err := c.ws.NextReader()
		if err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
		c.buf.Reset()
		if _, err := c.buf.ReadFrom(r); err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
		if typ != gws.TextMessage {
			return nil, fmt.Errorf("frame type %d, want text", typ)
		}
		if resp := c.buf.Bytes(); !bytes.Contains(resp, notificationKey) {
			return resp, nil
		}
	}
}

func (c *wsClient) call(call *callLine) error {
	resp, err := c.roundTrip(call.line)
	if err != nil {
		return err
	}
	if !bytes.Contains(resp, call.id) || !bytes.Contains(resp, wantResultText) ||
		bytes.Contains(resp, errorKey) || bytes.Contains(resp, isErrorTrue) {
		return fmt.Errorf("unexpected tools/call response (want %s): %s", call.id, resp)
	}
	return nil
}

// close sends a close frame, waits for the server's answer, and stops the
// server; all outside the timed region.
func (c *wsClient) close(tb testing.TB) {
	tb.Helper()
	if c.ws != nil {
		_ = c.ws.WriteControl(gws.CloseMessage, gws.FormatCloseMessage(gws.CloseNormalClosure, ""), time.Now().Add(time.Second))
		_ = c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			if _, _, err := c.ws.NextReader(); err != nil {
				var ce *gws.CloseError
				if !errors.As(err, &ce) {
					tb.Errorf("closing: want the server's close frame, got %v", err)
				}
				break
			}
		}
		_ = c.ws.Close()
	}
	if sh, ok := c.h.(interface{ Shutdown(context.Context) error }); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := sh.Shutdown(ctx); err != nil {
			tb.Errorf("shutdown: %v", err)
		}
		cancel()
	}
	c.srv.Close()
	if c.cleanup != nil {
		c.cleanup()
	}
}

func runWSBench(b *testing.B, era *httpEra, newHandler httpHandlerFunc) {
	c := connectWS(b, era, newHandler)
	defer c.close(b)
	timeCalls(b, era, c)
}

// --- this SDK ---

func newWSHexMCP(tb testing.TB) (http.Handler, func()) {
	e, err := newEngine(app.Options{}, hexTool(false))
	if err != nil {
		tb.Fatal(err)
	}
	return websocket.NewHandler(e, websocket.Options{}), func() { _ = e.Close() }
}

// --- floor ---

type wsFloor struct{ up gws.Upgrader }

func newWSFloor(testing.TB) (http.Handler, func()) {
	return &wsFloor{up: gws.Upgrader{Subprotocols: []string{"mcp"}}}, nil
}

func (f *wsFloor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := f.up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	defer ws.Close()
	var buf bytes.Buffer
	for {
		_, rd, err := ws.NextReader() // the peer's close frame is answered by gorilla
		if err != nil {
			return
		}
		buf.Reset()
		if _, err := buf.ReadFrom(rd); err != nil {
			return
		}
		var req floorRequest
		if err := json.Unmarshal(buf.Bytes(), &req); err != nil {
			return
		}
		if len(req.ID) == 0 {
			continue // notification
		}
		var out []byte
		if req.Method == "initialize" {
			out, err = json.Marshal(struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
			}{"2.0", req.ID, floorInitResult})
		} else {
			resp := floorCall(&req, false)
			out, err = json.Marshal(&resp)
		}
		if err != nil || ws.WriteMessage(gws.TextMessage, out) != nil {
			return
		}
	}
}
