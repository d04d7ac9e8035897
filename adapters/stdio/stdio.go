// Package stdio is the stdio transport: one JSON-RPC message per line on
// standard input and output, as the MCP stdio binding prescribes. Standard
// output carries nothing but MCP messages; logs belong on standard error.
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/hexmcp/hexmcp/ports"
)

// DefaultMaxMessageSize is the largest line accepted unless Options say
// otherwise: 4 MiB.
const DefaultMaxMessageSize = 4 << 20

// Options configure a [Transport].
type Options struct {
	// In is read for messages (default os.Stdin).
	In io.Reader
	// Out receives messages (default os.Stdout).
	Out io.Writer
	// MaxMessageSize bounds one incoming line in bytes (default 4 MiB).
	// A longer line is skipped whole and answered with a JSON-RPC error
	// (-32600), with the request's id when the line's first 64 KiB
	// (ports.MaxMessageHead) name it; the connection goes on.
	MaxMessageSize int
}

// Transport serves one connection over a pair of streams.
type Transport struct {
	opts Options
}

// New returns a stdio transport.
func New(opts Options) *Transport {
	if opts.In == nil {
		opts.In = os.Stdin
	}
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	return &Transport{opts: opts}
}

// Serve serves the streams until the input ends (EOF: the client is gone)
// or ctx is cancelled, and returns once the requests in flight have
// answered. It returns nil on EOF.
func (t *Transport) Serve(ctx context.Context, h ports.ConnHandler) error {
	c := NewConn(t.opts.In, t.opts.Out, t.opts.MaxMessageSize)
	defer c.Close()
	return h.ServeConn(ctx, c)
}

// Conn is a newline-delimited message stream over a reader and a writer.
type Conn struct {
	r   *bufio.Reader
	max int
	w   io.Writer

	lines  chan lineResult
	start  sync.Once
	closed chan struct{}
	close  sync.Once

	wmu sync.Mutex
	wb  []byte
}

type lineResult struct {
	msg []byte
	err error
}

// NewConn returns a Conn reading r and writing w, accepting lines of at most
// max bytes.
func NewConn(r io.Reader, w io.Writer, max int) *Conn {
	if max <= 0 {
		max = DefaultMaxMessageSize
	}
	return &Conn{r: bufio.NewReaderSize(r, 64<<10), max: max, w: w, lines: make(chan lineResult), closed: make(chan struct{})}
}

// ReadMessage returns the next line without its newline. A line over the
// size limit yields a *ports.MessageTooLargeError (it wraps
// ports.ErrMessageTooLarge) holding the line's first bytes, up to
// ports.MaxMessageHead, so that its id can still be answered; the next call
// goes on with the following line.
func (c *Conn) ReadMessage(ctx context.Context) ([]byte, error) {
	// The blocking read runs in its own goroutine so that a cancelled ctx
	// ends ReadMessage even while the input is silent.
	c.start.Do(func() { go c.readLoop() })
	select {
	case l, ok := <-c.lines:
		if !ok {
			return nil, io.EOF
		}
		return l.msg, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *Conn) readLoop() {
	defer close(c.lines)
	for {
		msg, err := c.readLine()
		if err == io.EOF && len(msg) > 0 {
			err = nil // a last line without newline
		}
		if err != nil && !errors.Is(err, ports.ErrMessageTooLarge) {
			return
		}
		select {
		case c.lines <- lineResult{msg, err}:
		case <-c.closed:
			return
		}
	}
}

// readLine reads one line, copying it out of the reader's buffer. A line
// over the limit is consumed whole but not kept, so memory stays bounded.
func (c *Conn) readLine() ([]byte, error) {
	var buf []byte
	size := 0
	for {
		frag, err := c.r.ReadSlice('\n')
		size += len(frag)
		switch {
		case size <= c.max+2: // room for a CRLF
			if buf == nil && err != bufio.ErrBufferFull {
				buf = bytes.Clone(frag) // the common case: one fragment
			} else {
				buf = append(buf, frag...)
			}
		case len(buf) < ports.MaxMessageHead:
			// over the limit: keep only the head, for the error
			buf = append(buf, frag[:min(len(frag), ports.MaxMessageHead-len(buf))]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && size == 0:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			return nil, err
		}
		n := size
		if bytes.HasSuffix(frag, []byte("\r\n")) {
			n -= 2
		} else if bytes.HasSuffix(frag, []byte("\n")) {
			n--
		}
		if n > c.max {
			// The head goes with the error, so that the engine can
			// answer the request's id when the line names it first.
			head := buf[:min(len(buf), n, ports.MaxMessageHead)]
			if len(buf) > ports.MaxMessageHead {
				head = bytes.Clone(head) // do not keep the whole line
			}
			return nil, &ports.MessageTooLargeError{Size: int64(n), Limit: int64(c.max), Unit: "line", Head: head}
		}
		return trimEOL(buf), err
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// WriteMessage writes msg and a newline. A message that holds a raw
// newline (possible only in JSON whitespace) is compacted first, since a
// line is a message.
func (c *Conn) WriteMessage(ctx context.Context, msg []byte) error {
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, msg); err != nil {
			return fmt.Errorf("stdio: refusing to write a message that is not valid JSON: %w", err)
		}
		msg = buf.Bytes()
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wb = append(append(c.wb[:0], msg...), '\n')
	_, err := c.w.Write(c.wb)
	if cap(c.wb) > 64<<10 {
		c.wb = nil // do not keep a huge buffer after one large message
	}
	return err
}

// Close stops reading. It does not close the underlying streams.
func (c *Conn) Close() error {
	c.close.Do(func() { close(c.closed) })
	return nil
}

var (
	_ ports.Conn      = (*Conn)(nil)
	_ ports.Transport = (*Transport)(nil)
)
