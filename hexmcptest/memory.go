package hexmcptest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/ports"
)

// closeGrace is how long Close lets the server finish the calls still in
// flight on a connection before it cancels them.
const closeGrace = 5 * time.Second

// memoryTransport serves the engine on a new in-memory connection
// (Engine.ServeConn), one JSON-RPC message per pipe message.
type memoryTransport struct{ srv *hexmcp.Server }

func (t memoryTransport) Connect(context.Context, client.ConnOptions) (client.Conn, error) {
	c, s := memory.NewPipe()
	abortCtx, abort := context.WithCancel(context.Background())
	mc := &memoryConn{pipe: c, served: make(chan error, 1), abort: abort}
	// The connection's own hard stop: Close cancels this connection's
	// calls only, never the engine's others.
	ctx := ports.WithAbort(context.Background(), abortCtx)
	go func() { mc.served <- t.srv.Engine().ServeConn(ctx, s) }()
	return mc, nil
}

// memoryConn is the client end of an in-memory connection.
type memoryConn struct {
	pipe   ports.Conn
	served chan error // ServeConn's error
	abort  context.CancelFunc
}

func (mc *memoryConn) Read(ctx context.Context) ([]byte, error) { return mc.pipe.ReadMessage(ctx) }

func (mc *memoryConn) Write(ctx context.Context, msg []byte) error {
	return mc.pipe.WriteMessage(ctx, msg)
}

// Close closes the pipe, which ends ServeConn once the calls in flight
// have answered; after closeGrace it cancels them.
func (mc *memoryConn) Close() error {
	_ = mc.pipe.Close()
	var err error
	select {
	case err = <-mc.served:
	case <-time.After(closeGrace):
		mc.abort()
		err = <-mc.served
		err = errors.Join(errors.New("hexmcp: calls still running when the client closed were cancelled"), err)
	}
	mc.abort()
	if err != nil {
		return fmt.Errorf("hexmcp: serving the connection: %w", err)
	}
	return nil
}
