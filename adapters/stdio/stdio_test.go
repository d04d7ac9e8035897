package stdio_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

func TestConnReadsLines(t *testing.T) {
	in := strings.NewReader("{\"a\":1}\r\n\n{\"b\":2}\n{\"c\":3}")
	c := stdio.NewConn(in, io.Discard, 100)
	ctx := context.Background()
	for _, want := range []string{`{"a":1}`, ``, `{"b":2}`, `{"c":3}`} {
		got, err := c.ReadMessage(ctx)
		if err != nil || string(got) != want {
			t.Fatalf("ReadMessage = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := c.ReadMessage(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
}

func TestConnSkipsOversizedLines(t *testing.T) {
	big := strings.Repeat("x", 200<<10) // larger than the reader's buffer too
	in := strings.NewReader(`{"ok":1}` + "\n" + big + "\n" + `{"ok":2}` + "\n" + strings.Repeat("y", 150) + "\n" + strings.Repeat("z", 100) + "\n")
	c := stdio.NewConn(in, io.Discard, 100)
	ctx := context.Background()
	expect := func(want string, tooLarge bool) {
		t.Helper()
		got, err := c.ReadMessage(ctx)
		if tooLarge {
			if !errors.Is(err, ports.ErrMessageTooLarge) {
				t.Fatalf("want ErrMessageTooLarge, got %q, %v", got, err)
			}
			return
		}
		if err != nil || string(got) != want {
			t.Fatalf("got %q, %v; want %q", got, err, want)
		}
	}
	expect(`{"ok":1}`, false)
	expect("", true)
	expect(`{"ok":2}`, false)
	expect("", true)
	expect(strings.Repeat("z", 100), false)
}

func TestConnWriteCompactsNewlines(t *testing.T) {
	var b strings.Builder
	c := stdio.NewConn(strings.NewReader(""), &b, 0)
	if err := c.WriteMessage(context.Background(), []byte("{\n  \"a\": \"x\\ny\"\n}")); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMessage(context.Background(), []byte(`{"b":1}`)); err != nil {
		t.Fatal(err)
	}
	if b.String() != "{\"a\":\"x\\ny\"}\n{\"b\":1}\n" {
		t.Fatalf("wrote %q", b.String())
	}
	// A newline anywhere, the first byte included, is compacted away.
	b.Reset()
	if err := c.WriteMessage(context.Background(), []byte("\n{\"c\":2}")); err != nil || b.String() != "{\"c\":2}\n" {
		t.Fatalf("a message that begins with a newline: wrote %q, %v", b.String(), err)
	}
	// So is a carriage return (a reader that splits lines on CR or CRLF
	// would see two), the first byte included.
	b.Reset()
	if err := c.WriteMessage(context.Background(), []byte("\r{\"d\":\r3}")); err != nil || b.String() != "{\"d\":3}\n" {
		t.Fatalf("a message with carriage returns: wrote %q, %v", b.String(), err)
	}
	if err := c.WriteMessage(context.Background(), []byte("not\njson")); err == nil {
		t.Fatal("a message with a newline that is not JSON must be refused")
	}
}

func TestReadMessageHonoursContext(t *testing.T) {
	r, _ := io.Pipe()
	c := stdio.NewConn(r, io.Discard, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.ReadMessage(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
}

// TestServeOverPipes runs the engine on the stdio transport: an oversized
// line gets an error and the next request is answered; EOF ends Serve after
// the call in flight has answered.
func TestServeOverPipes(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{})
	release := make(chan struct{})
	if err := e.AddTool(hexmcp.NewTool(func() string { <-release; return "done" }, hexmcp.WithName("slow"))); err != nil {
		t.Fatal(err)
	}
	p := servePipes(context.Background(), t, e, stdio.Options{MaxMessageSize: 1024})
	send, recv, served := p.send, p.recv, p.served
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	if got := recv(); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatal(got)
	}
	send(strings.Repeat(" ", 2000))
	if got := recv(); got != `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: line of 2000 bytes exceeds the limit of 1024 bytes: message exceeds the transport's size limit"}}` {
		t.Fatal(got)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if got := recv(); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatal(got)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}`)
	p.in.Close() // EOF while the call is in flight
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) before the call in flight answered", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if got := recv(); got != `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}]}}` {
		t.Fatal(got)
	}
	if err := testtools.Recv(t, served, 5*time.Second, "Serve did not return on EOF"); err != nil {
		t.Fatal(err)
	}
}

// TestConnReadsLongLines reads lines longer than the reader's buffer
// (several fragments; a CRLF split between two of them: the first line's
// \r is the last byte of the reader's first 64 KiB; the last line at the
// end of the input, without a newline) whole.
func TestConnReadsLongLines(t *testing.T) {
	long := func(c byte, n int) string { return `"` + strings.Repeat(string(c), n-2) + `"` }
	lines := []string{long('f', 64<<10-1), long('a', 1<<20), long('b', 64<<10-1), long('c', 64<<10), long('d', 64<<10+1), `{"x":1}`, long('e', 200<<10)}
	in := lines[0] + "\r\n" + lines[1] + "\n" + lines[2] + "\r\n" + lines[3] + "\n" + lines[4] + "\n" + lines[5] + "\n" + lines[6]
	c := stdio.NewConn(strings.NewReader(in), io.Discard, 2<<20)
	ctx := context.Background()
	for _, want := range lines {
		got, err := c.ReadMessage(ctx)
		if err != nil || string(got) != want {
			t.Fatalf("ReadMessage = %.20q... (%d bytes), %v; want %.20q... (%d bytes)", got, len(got), err, want, len(want))
		}
	}
	if _, err := c.ReadMessage(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
}

// TestConnWritesLargeMessages writes messages below and above the size
// from which the newline is written apart: each is one line.
func TestConnWritesLargeMessages(t *testing.T) {
	var b strings.Builder
	c := stdio.NewConn(strings.NewReader(""), &b, 0)
	msgs := []string{`"` + strings.Repeat("a", 64<<10) + `"`, `{"b":1}`, `"` + strings.Repeat("c", 1<<20) + `"`}
	for _, m := range msgs {
		if err := c.WriteMessage(context.Background(), []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	if want := strings.Join(msgs, "\n") + "\n"; b.String() != want {
		t.Fatalf("wrote %d bytes, want %d", b.Len(), len(want))
	}
}

// pipeServer is an engine served over stdio on in-memory pipes: send
// writes a line to its input, recv reads the next line of its output, and
// served gets what Serve returned.
type pipeServer struct {
	t      *testing.T
	in     *io.PipeWriter
	out    *io.PipeReader
	lines  *bufio.Reader
	served chan error
}

// servePipes serves e over stdio with opts, its In and Out the pipes of
// the pipeServer it returns, until ctx ends or the input closes.
func servePipes(ctx context.Context, t *testing.T, e *app.Engine, opts stdio.Options) *pipeServer {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	opts.In, opts.Out = inR, outW
	tr := stdio.New(opts)
	p := &pipeServer{t: t, in: inW, out: outR, lines: bufio.NewReaderSize(outR, 1<<20), served: make(chan error, 1)}
	go func() { p.served <- tr.Serve(ctx, e) }()
	return p
}

// send writes s and a newline to the server's input.
func (p *pipeServer) send(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, s+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// recv reads one line of the server's output, without its newline.
func (p *pipeServer) recv() string {
	p.t.Helper()
	l, err := p.lines.ReadString('\n')
	if err != nil {
		p.t.Fatal(err)
	}
	if !strings.HasSuffix(l, "\n") || strings.Count(l, "\n") != 1 {
		p.t.Fatalf("not one line: %q", l)
	}
	return strings.TrimSuffix(l, "\n")
}

// A line over the limit comes back as a *ports.MessageTooLargeError that
// keeps the line's first bytes (at most ports.MaxMessageHead), and the
// next line reads whole.
func TestConnTooLargeKeepsHead(t *testing.T) {
	for _, size := range []int{2000, 3 * ports.MaxMessageHead} {
		line := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"s":"` + strings.Repeat("x", size) + `"}}`
		c := stdio.NewConn(strings.NewReader(line+"\n"+`{"ok":1}`+"\n"), io.Discard, 1024)
		_, err := c.ReadMessage(context.Background())
		var tl *ports.MessageTooLargeError
		if !errors.As(err, &tl) || !errors.Is(err, ports.ErrMessageTooLarge) {
			t.Fatalf("size %d: err %v", size, err)
		}
		if tl.Size != int64(len(line)) || tl.Limit != 1024 {
			t.Fatalf("size %d: Size %d Limit %d", size, tl.Size, tl.Limit)
		}
		if len(tl.Head) == 0 || len(tl.Head) > ports.MaxMessageHead || !strings.HasPrefix(line, string(tl.Head)) {
			t.Fatalf("size %d: head of %d bytes is not the line's start", size, len(tl.Head))
		}
		if got, err := c.ReadMessage(context.Background()); err != nil || string(got) != `{"ok":1}` {
			t.Fatalf("size %d: next line %q, %v", size, got, err)
		}
	}
}

// Over stdio, a request over the size limit whose id is in the line's
// first ports.MaxMessageHead bytes gets its error with that id; one whose
// id is past them, or missing, gets it without; the connection goes on.
func TestOverLimitLineAnswersItsID(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{})
	t.Cleanup(func() { _ = e.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	p := servePipes(ctx, t, e, stdio.Options{MaxMessageSize: 1024})
	t.Cleanup(func() {
		cancel()
		p.in.Close()
		p.out.Close()
		select {
		case <-p.served:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return")
		}
	})
	send, recv := p.send, p.recv
	pad := strings.Repeat("x", 5000)
	const msg = `"error":{"code":-32600,"message":"Invalid Request: line of `
	for _, tc := range []struct{ name, line, head string }{
		{"number id first", `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"t","arguments":{"s":"` + pad + `"}}}`, `{"jsonrpc":"2.0","id":41,`},
		{"string id first", `{"id":"call-9","jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"s":"` + pad + `"}}}`, `{"jsonrpc":"2.0","id":"call-9",`},
		{"id after params within the head", `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"s":"` + pad + `"}},"id":42}`, `{"jsonrpc":"2.0","id":42,`},
		{"id past the head", `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"s":"` + strings.Repeat("y", ports.MaxMessageHead) + `"}},"id":43}`, `{"jsonrpc":"2.0",` + msg},
		{"no id", `{"jsonrpc":"2.0","method":"notifications/x","params":{"s":"` + pad + `"}}`, `{"jsonrpc":"2.0",` + msg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send(tc.line)
			got := recv()
			if !strings.HasPrefix(got, tc.head) || !strings.Contains(got, msg) {
				t.Fatalf("got %s\nwant it to begin %s", got, tc.head)
			}
			send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
			if got := recv(); got != `{"jsonrpc":"2.0","id":"p","result":{}}` {
				t.Fatalf("after: %s", got)
			}
		})
	}
}

// Over stdio too, an initialize whose capabilities and clientInfo are
// larger than a session keeps is refused with -32602 naming the limit and
// its id; the connection stays usable and a smaller initialize succeeds.
func TestInitializeDeclarationBoundedOverStdio(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{})
	p := servePipes(context.Background(), t, e, stdio.Options{})
	send, recv := p.send, p.recv
	send(`{"jsonrpc":"2.0","id":"big","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"pad":{"x":"` +
		strings.Repeat("a", 200<<10) + `"}}},"clientInfo":{"name":"c","version":"1"}}}`)
	if got := recv(); !strings.Contains(got, `"id":"big"`) || !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, `"limit":"maxClientDeclarationBytes"`) {
		t.Fatalf("oversized initialize answered %.300s", got)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if got := recv(); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize after the refusal answered %.300s", got)
	}
	p.in.Close()
	if err := <-p.served; err != nil {
		t.Fatal(err)
	}
}

// TestConnReadsBufferedAndWaitedLines reads lines that arrive together
// (the second is already buffered when the first is returned), a line
// that arrives after a read ended by its context, and the end of input.
func TestConnReadsBufferedAndWaitedLines(t *testing.T) {
	r, w := io.Pipe()
	c := stdio.NewConn(r, io.Discard, 0)
	ctx := context.Background()
	go func() { _, _ = w.Write([]byte("{\"a\":1}\n{\"b\":2}\n{\"c\":")) }()
	for _, want := range []string{`{"a":1}`, `{"b":2}`} {
		if got, err := c.ReadMessage(ctx); err != nil || string(got) != want {
			t.Fatalf("ReadMessage = %q, %v; want %q", got, err, want)
		}
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := c.ReadMessage(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a read of a silent input: want its ctx's error, got %v", err)
	}
	go func() {
		_, _ = w.Write([]byte("3}\n{\"d\":4}\n"))
		_ = w.Close()
	}()
	for _, want := range []string{`{"c":3}`, `{"d":4}`} {
		if got, err := c.ReadMessage(ctx); err != nil || string(got) != want {
			t.Fatalf("ReadMessage = %q, %v; want %q", got, err, want)
		}
	}
	for range 2 {
		if _, err := c.ReadMessage(ctx); !errors.Is(err, io.EOF) {
			t.Fatalf("want EOF, got %v", err)
		}
	}
}

// TestMessagesReadWhileCallsRun checks that the messages a client sends
// while a call runs are read and served then (the engine has nobody wait
// to read during a call on stdio, and is woken when a line arrives): a
// ping, then the cancellation of the call, which ends it unanswered; and
// that cancelling Serve's ctx while a call runs, no message coming, ends
// reading: Serve returns once that call has answered, the input still
// open.
func TestMessagesReadWhileCallsRun(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{})
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	err := e.AddTool(hexmcp.Func(func(ctx context.Context, in struct {
		Until string `json:"until"`
	}) (string, error) {
		started <- struct{}{}
		if in.Until == "cancelled" {
			<-ctx.Done()
			return "cancelled", nil
		}
		<-release
		return "released", nil
	}, hexmcp.WithName("wait")))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	p := servePipes(ctx, t, e, stdio.Options{})
	defer p.in.Close()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	if got := p.recv(); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatal(got)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait","arguments":{"until":"cancelled"}}}`)
	<-started
	p.send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":6,"result":{}}` {
		t.Fatal(got)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	p.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Fatalf("want the ping's answer alone (the cancelled call gets none), got %s", got)
	}

	p.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"wait","arguments":{"until":"released"}}}`)
	<-started
	stop()
	select {
	case err := <-p.served:
		t.Fatalf("Serve returned (%v) before the call in flight answered", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"released"}]}}` {
		t.Fatal(got)
	}
	if err := testtools.Recv(t, p.served, 5*time.Second, "Serve did not return after its ctx was cancelled"); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// TestConnLineAtTheLimit: a line of exactly the limit is read whole, with
// either end of line, also when it spans several fragments of the reader's
// buffer and is longer than the head kept of an oversized line; one byte
// more is refused. The zero limit is the documented 4 MiB.
func TestConnLineAtTheLimit(t *testing.T) {
	for _, limit := range []int{100, 200 << 10, 4 << 20} {
		for _, eol := range []string{"\n", "\r\n"} {
			line := `"` + strings.Repeat("z", limit-2) + `"`
			max := limit
			if limit == 4<<20 {
				max = 0 // the default
			}
			c := stdio.NewConn(strings.NewReader(line+eol+line+"z"+eol+`{}`+eol), io.Discard, max)
			ctx := context.Background()
			if got, err := c.ReadMessage(ctx); err != nil || len(got) != limit || string(got) != line {
				t.Fatalf("limit %d, eol %q: a line of the limit read as %d bytes, %v", limit, eol, len(got), err)
			}
			var tooLarge *ports.MessageTooLargeError
			if _, err := c.ReadMessage(ctx); !errors.As(err, &tooLarge) || tooLarge.Size != int64(limit+1) || tooLarge.Limit != int64(limit) {
				t.Fatalf("limit %d, eol %q: one byte over: %v", limit, eol, err)
			}
			if got, err := c.ReadMessage(ctx); err != nil || string(got) != `{}` {
				t.Fatalf("limit %d, eol %q: the next line: %q, %v", limit, eol, got, err)
			}
		}
	}
}

// failOnce fails its first write and takes the others.
type failOnce struct{ failed bool }

func (f *failOnce) Write(p []byte) (int, error) {
	if !f.failed {
		f.failed = true
		return 0, errors.New("broken pipe")
	}
	return len(p), nil
}

// TestConnWriteReportsAFailedWrite: a write that fails is reported, for a
// small message and for a large one (written apart from its newline).
func TestConnWriteReportsAFailedWrite(t *testing.T) {
	for _, n := range []int{10, 64 << 10, 1 << 20} {
		c := stdio.NewConn(strings.NewReader(""), &failOnce{}, 0)
		msg := []byte(`"` + strings.Repeat("w", n-2) + `"`)
		if err := c.WriteMessage(context.Background(), msg); err == nil {
			t.Errorf("a message of %d bytes whose write failed: no error", n)
		}
	}
}
