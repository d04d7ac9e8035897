package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/jsontest"
	"github.com/hexmcp/hexmcp/ports"
)

// client drives an engine over an in-memory connection.
type client struct {
	t    *testing.T
	pipe ports.Conn
	done chan error
}

func serve(t *testing.T, e *app.Engine) *client {
	t.Helper()
	return serveAs(t, e, hexmcp.TransportInfo{})
}

// serveAs serves e on a new in-memory connection whose requests carry info,
// as a transport that knows its client does.
func serveAs(t *testing.T, e *app.Engine, info hexmcp.TransportInfo) *client {
	t.Helper()
	c, s := memory.NewPipe()
	ctx, cancel := context.WithCancel(app.WithTransportInfo(context.Background(), info))
	cl := &client{t: t, pipe: c, done: make(chan error, 1)}
	go func() { cl.done <- e.ServeConn(ctx, s) }()
	t.Cleanup(func() {
		c.Close()
		select {
		case <-cl.done:
		case <-time.After(5 * time.Second):
			t.Error("ServeConn did not return after the client closed")
		}
		cancel()
	})
	return cl
}

func (c *client) send(raw string) {
	c.t.Helper()
	if err := c.pipe.WriteMessage(context.Background(), []byte(raw)); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *client) recv() string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := c.pipe.ReadMessage(ctx)
	if err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	return string(m)
}

// expectNothing checks that no message arrives within a short time.
func (c *client) expectNothing() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if m, err := c.pipe.ReadMessage(ctx); err == nil {
		c.t.Fatalf("unexpected message: %s", m)
	}
}

// roundTrip sends a request and returns the response.
func (c *client) roundTrip(raw string) string {
	c.t.Helper()
	c.send(raw)
	return c.recv()
}

func (c *client) initialize(rev string) string {
	c.t.Helper()
	resp := c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + rev + `","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return resp
}

// equalJSON fails unless got and want are the same JSON (member order aside).
func equalJSON(t *testing.T, got, want string) {
	t.Helper()
	jsontest.Equal(t, got, want)
}
