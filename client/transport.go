package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/hexmcp/hexmcp/ports"
)

// DefaultMaxMessageBytes bounds one message read from the server unless
// [Options.MaxMessageBytes] says otherwise: 4 MiB.
const DefaultMaxMessageBytes = 4 << 20

// Transport opens a connection to a server: [CommandTransport] (stdio),
// [IOTransport], [HTTPTransport] (Streamable HTTP) and
// [WebSocketTransport]. [Client.Connect] calls Connect once per session.
type Transport interface {
	Connect(ctx context.Context, opts ConnOptions) (Conn, error)
}

// ConnOptions are what a [Client] asks of the connections it opens.
type ConnOptions struct {
	// MaxMessageBytes bounds one message read from the server (always
	// set by the Client). A connection that reads a longer one fails its
	// Read with an error that wraps ports.ErrMessageTooLarge: the session
	// ends, and its calls fail with that error.
	MaxMessageBytes int64
}

// maxMessage is MaxMessageBytes, or DefaultMaxMessageBytes when it is not
// set (a Transport used without a Client).
func (o ConnOptions) maxMessage() int64 {
	if o.MaxMessageBytes <= 0 {
		return DefaultMaxMessageBytes
	}
	return o.MaxMessageBytes
}

// httpClientOr returns c, or http.DefaultClient when c is nil.
func httpClientOr(c *http.Client) *http.Client {
	if c == nil {
		return http.DefaultClient
	}
	return c
}

// Conn is one connection to a server: JSON-RPC messages each way. A
// session reads it from one goroutine and writes it from several.
type Conn interface {
	// Read returns the next message of the server; io.EOF when the
	// server ended the connection. Close makes a Read in progress return.
	Read(ctx context.Context) ([]byte, error)
	// Write sends one message. It returns when ctx ends, even when the
	// server does not read.
	Write(ctx context.Context, msg []byte) error
	// Close ends the connection.
	Close() error
}

// IOTransport is a connection over a pair of streams, one JSON-RPC message
// per line, as on stdio: r is read for the server's messages and w
// written with the client's. Close closes both. It serves one session.
func IOTransport(r io.ReadCloser, w io.WriteCloser) Transport {
	return &ioTransport{r: r, w: w}
}

type ioTransport struct {
	r    io.ReadCloser
	w    io.WriteCloser
	used sync.Once
}

func (t *ioTransport) Connect(_ context.Context, opts ConnOptions) (Conn, error) {
	first := false
	t.used.Do(func() { first = true })
	if !first {
		return nil, errors.New("hexmcp: an IOTransport serves one session")
	}
	return newLineConn(t.r, t.w, opts.maxMessage(), nil), nil
}

// lineConn is a connection of newline-delimited messages.
type lineConn struct {
	br      *bufio.Reader
	r       io.Closer
	w       io.WriteCloser
	max     int64
	wsem    chan struct{} // one write at a time
	onClose func() error  // instead of closing r on Close (a process to end)
	once    sync.Once
	err     error
}

func newLineConn(r io.ReadCloser, w io.WriteCloser, max int64, onClose func() error) *lineConn {
	return &lineConn{br: bufio.NewReaderSize(r, 64<<10), r: r, w: w, max: max, wsem: make(chan struct{}, 1), onClose: onClose}
}

// Read returns the next non-empty line; a line over max fails with
// ports.ErrMessageTooLarge.
func (c *lineConn) Read(context.Context) ([]byte, error) {
	for {
		var line []byte
		for {
			chunk, err := c.br.ReadSlice('\n')
			if int64(len(line)+len(chunk)) > c.max+2 { // the line's \r\n
				return nil, fmt.Errorf("hexmcp: %w (over %d bytes)", ports.ErrMessageTooLarge, c.max)
			}
			line = append(line, chunk...)
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if len(bytes.TrimSpace(line)) > 0 && err == io.EOF {
				return bytes.TrimSpace(line), nil
			}
			return nil, err
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
	}
}

// Write writes msg and a newline; a write the server does not take before
// ctx ends is left to finish in the background, and the next Write waits
// for it.
func (c *lineConn) Write(ctx context.Context, msg []byte) error {
	if bytes.ContainsAny(msg, "\r\n") {
		return errors.New("hexmcp: a message on a line transport must not contain a newline")
	}
	return writeAlone(ctx, c.wsem, func() error {
		b := make([]byte, 0, len(msg)+1)
		b = append(append(b, msg...), '\n')
		_, err := c.w.Write(b)
		return err
	})
}

// writeAlone runs write once the semaphore sem (capacity 1) is free, in a
// goroutine that holds it until write returns: the caller returns when
// write does or ctx ends, and a write left running makes the next one
// wait.
func writeAlone(ctx context.Context, sem chan struct{}, write func() error) error {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-sem }()
		done <- write()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (c *lineConn) Close() error {
	c.once.Do(func() {
		errW := c.w.Close()
		if c.onClose != nil {
			c.err = errors.Join(errW, c.onClose()) // it closes r
			return
		}
		c.err = errors.Join(errW, c.r.Close())
	})
	return c.err
}
