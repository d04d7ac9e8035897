package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	gws "github.com/gorilla/websocket"
	"github.com/hexmcp/hexmcp/ports"
)

// WebSocketOptions configure a [WebSocketTransport].
type WebSocketOptions struct {
	// Dialer opens the connection (default gorilla/websocket's
	// DefaultDialer). Its Subprotocols are replaced by "mcp".
	Dialer *gws.Dialer
	// Header is sent with the opening handshake (Authorization, say).
	Header http.Header
}

// WebSocketTransport reaches a server over WebSocket at url
// ("ws://127.0.0.1:8080/ws"), one JSON-RPC message per text frame, with
// the subprotocol "mcp" (as the official TypeScript SDK's
// WebSocketClientTransport). WebSocket is in no released MCP revision
// (proposal SEP-1288); both eras are spoken over it as over stdio.
func WebSocketTransport(url string, opts WebSocketOptions) Transport {
	return &wsTransport{url: url, opts: opts}
}

type wsTransport struct {
	url  string
	opts WebSocketOptions
}

func (t *wsTransport) Connect(ctx context.Context, opts ConnOptions) (Conn, error) {
	d := gws.DefaultDialer
	if t.opts.Dialer != nil {
		d = t.opts.Dialer
	}
	dd := *d
	dd.Subprotocols = []string{"mcp"}
	ws, resp, err := dd.DialContext(ctx, t.url, t.opts.Header)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("hexmcp: websocket %s: %w (%w)", t.url, err, &HTTPError{StatusCode: resp.StatusCode, Header: resp.Header})
		}
		return nil, fmt.Errorf("hexmcp: websocket %s: %w", t.url, err)
	}
	if ws.Subprotocol() != "mcp" {
		ws.Close()
		return nil, fmt.Errorf("hexmcp: websocket %s: the server did not select the subprotocol mcp", t.url)
	}
	ws.SetReadLimit(opts.maxMessage())
	return &wsConn{ws: ws, wsem: make(chan struct{}, 1)}, nil
}

// wsConn is a WebSocket connection.
type wsConn struct {
	ws       *gws.Conn
	wsem     chan struct{}
	once     sync.Once
	closeErr error
}

func (c *wsConn) Read(context.Context) ([]byte, error) {
	for {
		typ, b, err := c.ws.ReadMessage()
		if err != nil {
			if errors.Is(err, gws.ErrReadLimit) {
				return nil, fmt.Errorf("hexmcp: %w: %w", ports.ErrMessageTooLarge, err)
			}
			return nil, err
		}
		if typ == gws.TextMessage {
			return b, nil
		}
	}
}

// Write sends msg as a text frame; a write the server does not take
// before ctx ends is left to finish in the background (or to fail when
// the connection closes), and the next Write waits for it.
func (c *wsConn) Write(ctx context.Context, msg []byte) error {
	return writeAlone(ctx, c.wsem, func() error { return c.ws.WriteMessage(gws.TextMessage, msg) })
}

func (c *wsConn) Close() error {
	c.once.Do(func() {
		// WriteControl may run beside a Write in progress.
		_ = c.ws.WriteControl(gws.CloseMessage, gws.FormatCloseMessage(gws.CloseNormalClosure, ""), time.Now().Add(time.Second))
		c.closeErr = c.ws.Close()
	})
	return c.closeErr
}
