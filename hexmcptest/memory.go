package hexmcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/ports"
)

// closeGrace is how long Close lets the server finish the calls still in
// flight on a connection before it cancels them.
const closeGrace = 5 * time.Second

// memoryConn is the client end of an in-memory connection served by the
// engine (Engine.ServeConn), one JSON-RPC message per pipe message.
type memoryConn struct {
	pipe      ports.Conn
	in        *inbound
	handshake bool
	ids       atomic.Int64
	mu        sync.Mutex
	pending   map[string]chan message
	readDone  chan struct{} // closed when the pipe is closed and drained
	served    chan error    // ServeConn's error
	abort     context.CancelFunc
}

// dialMemory serves srv on a new in-memory connection and reads it.
func dialMemory(srv *hexmcp.Server, in *inbound, handshake bool) *memoryConn {
	client, server := memory.NewPipe()
	abortCtx, abort := context.WithCancel(context.Background())
	mc := &memoryConn{
		pipe:      client,
		in:        in,
		handshake: handshake,
		pending:   map[string]chan message{},
		readDone:  make(chan struct{}),
		served:    make(chan error, 1),
		abort:     abort,
	}
	// The connection's own hard stop: Close cancels this connection's
	// calls only, never the engine's others.
	ctx := app.WithAbort(context.Background(), abortCtx)
	go func() { mc.served <- srv.Engine().ServeConn(ctx, server) }()
	go mc.read()
	return mc
}

// read dispatches the server's messages until the pipe closes.
func (mc *memoryConn) read() {
	defer close(mc.readDone)
	for {
		raw, err := mc.pipe.ReadMessage(context.Background())
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(raw, &m) != nil {
			continue // not for a client to answer
		}
		switch {
		case m.isRequest():
			mc.in.request(m, mc.pipe.WriteMessage)
		case m.isNotification():
			mc.in.notification(m)
		default:
			mc.mu.Lock()
			ch, ok := mc.pending[string(m.ID)]
			delete(mc.pending, string(m.ID))
			mc.mu.Unlock()
			if ok {
				ch <- m
			}
		}
	}
}

func (mc *memoryConn) call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	id := strconv.FormatInt(mc.ids.Add(1), 10)
	body, err := encodeRequest(json.RawMessage(id), method, params)
	if err != nil {
		return nil, err
	}
	ch := make(chan message, 1)
	mc.mu.Lock()
	mc.pending[id] = ch
	mc.mu.Unlock()
	defer func() {
		mc.mu.Lock()
		delete(mc.pending, id)
		mc.mu.Unlock()
	}()
	if err := mc.pipe.WriteMessage(ctx, body); err != nil {
		return nil, fmt.Errorf("hexmcptest: sending %s: %w", method, err)
	}
	select {
	case m := <-ch:
		return m.outcome(method)
	case <-mc.readDone:
		select {
		case m := <-ch:
			return m.outcome(method)
		default:
		}
		return nil, fmt.Errorf("hexmcptest: the connection closed before the server answered %s", method)
	case <-ctx.Done():
		if mc.handshake {
			mc.cancelRequest(id)
		}
		return nil, fmt.Errorf("hexmcptest: %s: %w", method, context.Cause(ctx))
	}
}

// cancelRequest tells the server the client no longer waits for request
// id (notifications/cancelled).
func (mc *memoryConn) cancelRequest(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = mc.notify(ctx, "notifications/cancelled", map[string]any{"requestId": json.RawMessage(id), "reason": "the test stopped waiting"})
}

func (mc *memoryConn) notify(ctx context.Context, method string, params map[string]any) error {
	body, err := encodeRequest(nil, method, params)
	if err != nil {
		return err
	}
	if err := mc.pipe.WriteMessage(ctx, body); err != nil {
		return fmt.Errorf("hexmcptest: sending %s: %w", method, err)
	}
	return nil
}

// close closes the pipe, which ends ServeConn once the calls in flight
// have answered; after closeGrace it cancels them.
func (mc *memoryConn) close() error {
	_ = mc.pipe.Close()
	<-mc.readDone
	var err error
	select {
	case err = <-mc.served:
	case <-time.After(closeGrace):
		mc.abort()
		err = <-mc.served
		err = errors.Join(errors.New("hexmcptest: calls still running when the client closed were cancelled"), err)
	}
	mc.abort()
	if err != nil {
		return fmt.Errorf("hexmcptest: serving the connection: %w", err)
	}
	return nil
}
