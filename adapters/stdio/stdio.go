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

// defaultMaxMessageSize is the largest line accepted unless Options say
// otherwise: 4 MiB.
const defaultMaxMessageSize = 4 << 20

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
	return &Transport{opts: opts} // NewConn applies MaxMessageSize's default
}

// Serve serves the streams until the input ends (EOF: the client is gone)
// or ctx is cancelled, and returns once the requests in flight have
// answered. It returns nil on EOF.
func (t *Transport) Serve(ctx context.Context, h ports.ConnHandler) error {
	c := NewConn(t.opts.In, t.opts.Out, t.opts.MaxMessageSize)
	defer c.Close()
	return h.ServeConn(ctx, c)
}

// lineConn is the [ports.Conn] of [NewConn].
type lineConn struct {
	r   *bufio.Reader
	max int
	w   io.Writer

	// Reading. ReadMessage reads a line itself when the reader's buffer
	// holds a whole one, which cannot block; otherwise it asks the reading
	// goroutine (want), whose blocking read a cancelled ctx need not wait
	// for, and takes its answer from lines. The goroutine then reads on,
	// line after line, for as long as its last read left no whole line in
	// the buffer (the lines come one at a time: it waits for the next, as
	// the reader would); once one is there, it says so in its answer (more
	// false) and waits to be asked again, the buffered lines being
	// ReadMessage's. asked: the goroutine owns r (it was asked, or reads
	// on), and ReadMessage takes its next answer; a ReadMessage ended by
	// its ctx leaves that answer for the next. ended: the input ended or
	// failed, every later read is io.EOF. asked and ended belong to
	// ReadMessage, which is called from one goroutine at a time
	// (ports.Conn).
	asked bool
	ended bool
	// nmu guards notify, the function NotifyReadable armed, and answers,
	// the goroutine's answers so far; taken counts those ReadMessage took
	// (it is ReadMessage's): one is waiting while they differ.
	nmu     sync.Mutex
	notify  func()
	answers uint64
	taken   uint64
	want    chan struct{}
	lines   chan lineResult
	start   sync.Once
	closed  chan struct{}
	close   sync.Once

	wmu sync.Mutex
	wb  []byte
}

type lineResult struct {
	msg  []byte
	err  error
	more bool // the goroutine reads on: it still owns the reader
}

// NewConn returns a [ports.Conn] that is a newline-delimited message stream
// reading r and writing w, accepting lines of at most max bytes. Its
// ReadMessage returns the next line without its newline; a line over the
// size limit yields a *ports.MessageTooLargeError holding the line's first
// bytes, so that its id can still be answered, and the next call goes on
// with the following line.
func NewConn(r io.Reader, w io.Writer, max int) ports.Conn {
	if max <= 0 {
		max = defaultMaxMessageSize
	}
	return &lineConn{r: bufio.NewReaderSize(r, readBufferSize), max: max, w: w, want: make(chan struct{}, 1), lines: make(chan lineResult), closed: make(chan struct{})}
}

// ReadMessage returns the next line without its newline. A line over the
// size limit yields a *ports.MessageTooLargeError (it wraps
// ports.ErrMessageTooLarge) holding the line's first bytes, up to
// ports.MaxMessageHead, so that its id can still be answered; the next call
// goes on with the following line.
func (c *lineConn) ReadMessage(ctx context.Context) ([]byte, error) {
	if c.ended {
		return nil, io.EOF
	}
	if !c.asked {
		if c.lineBuffered() {
			// A whole line is in the buffer: read here, without waking the
			// goroutine and being woken by it.
			return c.readLine()
		}
		// The blocking read runs in its own goroutine so that a cancelled
		// ctx ends ReadMessage even while the input is silent.
		c.start.Do(func() { go c.readLoop() })
		c.asked = true
		c.want <- struct{}{} // never blocks: the goroutine has no ask
	}
	select {
	case l := <-c.lines:
		c.asked = l.more
		c.taken++
		if l.err != nil && !errors.Is(l.err, ports.ErrMessageTooLarge) {
			c.ended = true
			return nil, io.EOF
		}
		return l.msg, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	}
}

// lineBuffered reports whether the reader's buffer holds a whole line
// (its newline included), which readLine then reads without blocking.
func (c *lineConn) lineBuffered() bool {
	n := c.r.Buffered()
	if n == 0 {
		return false
	}
	b, _ := c.r.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}

// NotifyReadable arms f to be called once, from the reading goroutine, as
// soon as ReadMessage would return without waiting; it reports false,
// arming nothing, when ReadMessage would return at once already (a whole
// line is buffered, an answer is waiting, the input has ended). nil
// disarms. The engine (app.Engine.ServeConn) calls it instead of waiting
// in ReadMessage while it runs a call, so that a client that waits for
// each answer costs no goroutine hand-off per call. Like ReadMessage, it
// is called from the goroutine that may read.
func (c *lineConn) NotifyReadable(f func()) bool {
	if f == nil {
		c.nmu.Lock()
		c.notify = nil
		c.nmu.Unlock()
		return false
	}
	if c.ended {
		return false
	}
	if !c.asked {
		if c.lineBuffered() {
			return false
		}
		c.start.Do(func() { go c.readLoop() })
		c.asked = true
		c.want <- struct{}{} // never blocks: the goroutine has no ask
	}
	c.nmu.Lock()
	defer c.nmu.Unlock()
	select {
	case <-c.closed:
		return false
	default:
	}
	if c.answers != c.taken {
		return false
	}
	c.notify = f
	return true
}

// readLoop reads lines each time it is asked (want) and answers them on
// lines, reading on while no whole line is left in the buffer (see
// lineConn); it ends after the input has ended or failed (that answer is
// the error), or once the connection is closed.
func (c *lineConn) readLoop() {
	for {
		select {
		case <-c.want:
		case <-c.closed:
			return
		}
		for {
			msg, err := c.readLine()
			if err == io.EOF && len(msg) > 0 {
				err = nil // a last line without newline
			}
			final := err != nil && !errors.Is(err, ports.ErrMessageTooLarge)
			more := !final && !c.lineBuffered()
			c.nmu.Lock()
			c.answers++
			f := c.notify
			c.notify = nil
			c.nmu.Unlock()
			if f != nil {
				f()
			}
			select {
			case c.lines <- lineResult{msg, err, more}:
			case <-c.closed:
				return
			}
			if final {
				return
			}
			if !more {
				break
			}
		}
	}
}

// readBufferSize is the size of the reader's buffer: a line that fits is
// read in one fragment.
const readBufferSize = 64 << 10

// chunks holds copies of the full fragments of a long line while it is
// read (each readBufferSize bytes), shared by every connection: the line
// is then copied once into a buffer of its exact size, so that reading a
// line of n bytes allocates n bytes, not the doublings of a growing slice.
var chunks = sync.Pool{New: func() any { b := make([]byte, 0, readBufferSize); return &b }}

// readLine reads one line, copying it out of the reader's buffer. A line
// over the limit is consumed whole but not kept, so memory stays bounded.
func (c *lineConn) readLine() ([]byte, error) {
	var (
		parts []*[]byte // the full fragments kept so far, copied
		kept  int       // their bytes
		size  int       // the line's bytes so far
	)
	defer func() {
		for _, p := range parts {
			*p = (*p)[:0]
			chunks.Put(p)
		}
	}()
	for {
		frag, err := c.r.ReadSlice('\n')
		size += len(frag)
		// Kept: the whole line within the limit (room for a CRLF), else
		// only its head, for the error.
		keep := frag
		if size > c.max+2 {
			keep = frag[:max(0, min(len(frag), ports.MaxMessageHead-kept))]
		}
		if err == bufio.ErrBufferFull {
			if len(keep) > 0 {
				p := chunks.Get().(*[]byte)
				*p = append((*p)[:0], keep...)
				parts = append(parts, p)
				kept += len(keep)
			}
			continue
		}
		switch {
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
			head := join(parts, keep, min(kept+len(keep), n, ports.MaxMessageHead))
			return nil, &ports.MessageTooLargeError{Size: int64(n), Limit: int64(c.max), Unit: "line", Head: head}
		}
		return trimEOL(join(parts, keep, kept+len(keep))), err
	}
}

// join returns a new slice of the first n bytes of parts followed by last.
func join(parts []*[]byte, last []byte, n int) []byte {
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, (*p)[:min(len(*p), n-len(b))]...)
	}
	return append(b, last[:min(len(last), n-len(b))]...)
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// WriteMessage writes msg and a newline. A message that holds a raw
// newline (possible only in JSON whitespace) is compacted first, since a
// line is a message.
func (c *lineConn) WriteMessage(ctx context.Context, msg []byte) error {
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, msg); err != nil {
			return fmt.Errorf("hexmcp: stdio: refusing to write a message that is not valid JSON: %w", err)
		}
		msg = buf.Bytes()
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if len(msg) >= largeMessage {
		// Not copied to add the newline: the write of a large message
		// costs far more than a second, one-byte write.
		if _, err := c.w.Write(msg); err != nil {
			return err
		}
		_, err := c.w.Write(newline)
		return err
	}
	c.wb = append(append(c.wb[:0], msg...), '\n')
	_, err := c.w.Write(c.wb)
	return err
}

// largeMessage is the size from which WriteMessage writes the message and
// its newline apart rather than copying the message into its buffer (which
// therefore stays below it).
const largeMessage = 64 << 10

var newline = []byte{'\n'}

// Close stops reading. It does not close the underlying streams.
func (c *lineConn) Close() error {
	c.close.Do(func() {
		c.nmu.Lock()
		close(c.closed)
		f := c.notify
		c.notify = nil
		c.nmu.Unlock()
		if f != nil {
			f() // ReadMessage returns at once now
		}
	})
	return nil
}

var (
	_ ports.Conn      = (*lineConn)(nil)
	_ ports.Transport = (*Transport)(nil)
)
