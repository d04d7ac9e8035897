package stdio_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

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
	if err := e.AddTool(app.NewTool(func() string { <-release; return "done" }, app.WithName("slow"))); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr := stdio.New(stdio.Options{In: inR, Out: outW, MaxMessageSize: 1024})
	served := make(chan error, 1)
	go func() { served <- tr.Serve(context.Background(), e) }()
	lines := bufio.NewReader(outR)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() string {
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(l, "\n") || strings.Count(l, "\n") != 1 {
			t.Fatalf("not one line: %q", l)
		}
		return strings.TrimSuffix(l, "\n")
	}
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
	inW.Close() // EOF while the call is in flight
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) before the call in flight answered", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if got := recv(); got != `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}]}}` {
		t.Fatal(got)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return on EOF")
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
