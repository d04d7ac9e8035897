package memory

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/hexmcp/hexmcp/ports"
)

// pipe is one end of an in-memory message stream. Messages are copied, so
// both sides may reuse their buffers.
type pipe struct {
	in     <-chan []byte
	out    chan<- []byte
	closed chan struct{}
	once   *sync.Once
	peer   *pipe
}

// NewPipe returns the two connected ends of an in-memory message stream,
// each a [ports.Conn]. Messages are copied, so both sides may reuse their
// buffers. ReadMessage returns the next message, or io.EOF once the stream
// is closed and drained; WriteMessage sends a copy of a message to the
// other end, or returns [ErrClosed]; Close, on either end, closes both.
func NewPipe() (client, server ports.Conn) { return newPipe() }

// newPipe is [NewPipe] of the concrete ends.
func newPipe() (client, server *pipe) {
	a, b := make(chan []byte, 64), make(chan []byte, 64)
	closed := make(chan struct{})
	once := new(sync.Once)
	client = &pipe{in: b, out: a, closed: closed, once: once}
	server = &pipe{in: a, out: b, closed: closed, once: once}
	client.peer, server.peer = server, client
	return client, server
}

// ErrClosed is returned for writes on a closed pipe.
var ErrClosed = errors.New("hexmcp: memory: pipe closed")

// ReadMessage returns the next message, or io.EOF once the pipe is closed
// and drained.
func (p *pipe) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case m := <-p.in:
		return m, nil
	default:
	}
	select {
	case m := <-p.in:
		return m, nil
	case <-p.closed:
		select {
		case m := <-p.in:
			return m, nil
		default:
			return nil, io.EOF
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// WriteMessage sends a copy of msg to the other end.
func (p *pipe) WriteMessage(ctx context.Context, msg []byte) error {
	cp := append([]byte(nil), msg...)
	select {
	case <-p.closed:
		return ErrClosed
	default:
	}
	select {
	case p.out <- cp:
		return nil
	case <-p.closed:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes both ends: reads drain what was sent, then return io.EOF.
func (p *pipe) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

// pipeTransport is the [ports.Transport] of [NewTransport].
type pipeTransport struct {
	server *pipe
}

// NewTransport returns a [ports.Transport] that serves one in-memory
// connection until the client closes it or ctx ends, and the client end of
// that connection.
func NewTransport() (ports.Transport, ports.Conn) {
	c, s := newPipe()
	return &pipeTransport{server: s}, c
}

// Serve serves the connection until the client closes it or ctx ends.
func (t *pipeTransport) Serve(ctx context.Context, h ports.ConnHandler) error {
	return h.ServeConn(ctx, t.server)
}

var (
	_ ports.Conn      = (*pipe)(nil)
	_ ports.Transport = (*pipeTransport)(nil)
)
