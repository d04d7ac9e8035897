package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// Common harness: every benchmark drives one server over stdio framing
// (newline-delimited JSON-RPC, one message per line) carried by two io.Pipes:
//
//	client --(inW -> inR)--> server --(outW -> outR)--> client
//
// io.Pipe is synchronous and unbuffered: a Write blocks until the other side
// has read all of it, so there is no hidden buffering that could let the
// client run ahead of the server. Exactly one tools/call is in flight at a
// time; the handshake and the shutdown are outside the timed region.

const benchProtocolVersion = "2025-11-25"

// startFunc launches a server that reads requests from in and writes
// responses to out. It must return a channel that is closed once the
// server's serving goroutine has returned. The server must stop when in
// reaches EOF (the harness closes the client end) or when ctx is cancelled.
type startFunc func(ctx context.Context, in *io.PipeReader, out *io.PipeWriter) (done <-chan struct{})

var (
	initializeLine = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` +
		benchProtocolVersion + `","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n")
	initializedLine = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")

	// Cheap response checks (bytes.Contains only).
	wantResultText    = []byte(`"text":"3"`) // 1 + 2
	errorKey          = []byte(`"error"`)
	isErrorTrue       = []byte(`"isError":true`)
	notificationKey   = []byte(`"method":"notifications/`)
	protocolVerKey    = []byte(`"protocolVersion"`)
	maxResponseLength = 64 << 10
)

// callLine is one pre-encoded tools/call request plus the id fragment its
// response must carry.
type callLine struct {
	line []byte // request, newline terminated
	id   []byte // `"id":N`
}

// callLines holds 128 pre-encoded tools/call requests with ids 100..227. Every
// id has three digits, so all lines have the same length and the cost of
// producing them is identical for every implementation (nothing is formatted
// inside the timed loop). Ids are reused only after their response was read.
var callLines = func() []callLine {
	lines := make([]callLine, 128)
	for i := range lines {
		id := strconv.Itoa(100 + i)
		lines[i] = callLine{
			line: []byte(`{"jsonrpc":"2.0","id":` + id +
				`,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1,"b":2,"operation":"add"}}}` + "\n"),
			id: []byte(`"id":` + id),
		}
	}
	return lines
}()

// client is the client side of one benchmark (or test) connection.
type client struct {
	inW      *io.PipeWriter // client -> server
	outR     *io.PipeReader // server -> client
	br       *bufio.Reader
	done     <-chan struct{}
	cancel   context.CancelFunc
	baseline int // goroutines running before the server was started
}

// connect starts the server with start and performs the MCP handshake:
// initialize, its response, notifications/initialized.
func connect(tb testing.TB, start startFunc) *client {
	tb.Helper()
	baseline := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()   // client -> server (server's stdin)
	outR, outW := io.Pipe() // server -> client (server's stdout)
	c := &client{
		inW:      inW,
		outR:     outR,
		br:       bufio.NewReaderSize(outR, maxResponseLength),
		done:     start(ctx, inR, outW),
		cancel:   cancel,
		baseline: baseline,
	}
	resp, err := c.roundTrip(initializeLine)
	if err != nil {
		c.close(tb)
		tb.Fatalf("initialize: %v", err)
	}
	if !bytes.Contains(resp, protocolVerKey) || bytes.Contains(resp, errorKey) {
		c.close(tb)
		tb.Fatalf("unexpected initialize response: %s", resp)
	}
	if _, err := inW.Write(initializedLine); err != nil {
		c.close(tb)
		tb.Fatalf("write notifications/initialized: %v", err)
	}
	return c
}

// roundTrip writes one request line and returns the next line from the
// server that is not a notification. The returned slice is only valid until
// the next read.
func (c *client) roundTrip(line []byte) ([]byte, error) {
	if _, err := c.inW.Write(line); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	for {
		resp, err := c.br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, fmt.Errorf("response line longer than %d bytes", maxResponseLength)
			}
			return nil, fmt.Errorf("read: %w", err)
		}
		if bytes.Contains(resp, notificationKey) {
			continue
		}
		return resp, nil
	}
}

// close closes both pipes, waits for the server to return and then for
// every goroutine started since connect to exit, so nothing leaks into the
// next benchmark (or the next b.N round of the same one).
func (c *client) close(tb testing.TB) {
	tb.Helper()
	_ = c.inW.Close()  // server sees EOF on its stdin
	_ = c.outR.Close() // any write still pending on the server side fails
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.cancel()
		tb.Errorf("server did not return within 5s after its input was closed")
		return
	}
	c.cancel()

	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > c.baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			tb.Errorf("goroutine leak: %d goroutines running, %d before the server started\n%s",
				runtime.NumGoroutine(), c.baseline, buf[:n])
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// runBench measures one sequential tools/call round trip against the server
// launched by start. Handshake and shutdown are not timed.
func runBench(b *testing.B, start startFunc) {
	c := connect(b, start)
	defer c.close(b)

	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		call := &callLines[i%len(callLines)]
		resp, err := c.roundTrip(call.line)
		if err != nil {
			b.Fatalf("tools/call: %v", err)
		}
		if !bytes.Contains(resp, call.id) || !bytes.Contains(resp, wantResultText) ||
			bytes.Contains(resp, errorKey) || bytes.Contains(resp, isErrorTrue) {
			b.Fatalf("unexpected tools/call response (want %s): %s", call.id, resp)
		}
	}
	b.StopTimer()
	cpu.report(b)
}
