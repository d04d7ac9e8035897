package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/app"
)

// Streamed stdio: the CPU cost of a tools/call without the wake-ups of a
// round trip. The sequential benchmarks (harness_test.go) wait for each
// response before writing the next request, so every call costs two
// goroutine wake-ups through io.Pipe on each side, which dominate and hide
// what the server itself costs. Here the server's input is a reader that
// yields the handshake, then b.N tools/call lines (streamLine with its id
// filled in, copied into the server's buffer as fast as it reads), then
// EOF; its
// output is a writer that counts and checks the responses in place. No
// pipe, no client goroutine: ns/op is the server's own work per call
// (reading, decoding, dispatch, validation, the tool, encoding, writing),
// with whatever concurrency the server uses (run with -cpu 1 for the CPU
// cost alone). The benchmark ends when the server has returned after EOF,
// every response written.
//
// BenchmarkStreamFloor and BenchmarkStreamFloorStructured run the floor
// loop of BenchmarkFloor and BenchmarkFloorStructured (serveFloor: one
// bufio.Reader.ReadSlice per line, json.Unmarshal of the request and its
// arguments into floorRequest, calculate, json.Encoder.Encode of the
// response, text "3" and for Structured structuredContent {"result":3},
// the bytes this SDK writes: TestFairFloors). BenchmarkStreamHexMCP and
// BenchmarkStreamHexMCPStructured run this SDK's stdio transport over the
// engine of BenchmarkHexMCP and BenchmarkHexMCPStructured.

// BenchmarkStreamFloor is the floor loop of BenchmarkFloor over the
// streamed input (text "3").
func BenchmarkStreamFloor(b *testing.B) { runStreamBench(b, streamFloor(false)) }

// BenchmarkStreamFloorStructured is the floor loop of
// BenchmarkFloorStructured over the streamed input (text "3" and
// structuredContent {"result":3}).
func BenchmarkStreamFloorStructured(b *testing.B) { runStreamBench(b, streamFloor(true)) }

// BenchmarkStreamHexMCP is this SDK's stdio transport over the engine of
// BenchmarkHexMCP, over the streamed input.
func BenchmarkStreamHexMCP(b *testing.B) { runStreamBench(b, streamHexMCP(false)) }

// BenchmarkStreamHexMCPStructured is this SDK's stdio transport over the
// engine of BenchmarkHexMCPStructured (input and output validated), over
// the streamed input.
func BenchmarkStreamHexMCPStructured(b *testing.B) { runStreamBench(b, streamHexMCP(true)) }

// streamServe serves in and out until in ends, and returns then (all
// responses written).
type streamServe func(in io.Reader, out io.Writer) error

func streamFloor(structured bool) streamServe {
	return func(in io.Reader, out io.Writer) error {
		if err := serveFloor(in, out, structured); err != io.EOF {
			return err
		}
		return nil
	}
}

func streamHexMCP(structured bool) streamServe {
	return func(in io.Reader, out io.Writer) error {
		e, err := newEngine(app.Options{}, hexTool(structured))
		if err != nil {
			return err
		}
		defer e.Close()
		return stdio.New(stdio.Options{In: in, Out: out}).Serve(context.Background(), e)
	}
}

// callFeed is the server's input: the handshake lines, then (once go is
// closed) n tools/call lines, then EOF.
type callFeed struct {
	head  []byte        // handshake lines not yet read
	start chan struct{} // closed when the timed calls may be read
	n     int           // call lines left
	id    uint64        // id of the next line
	line  []byte        // the line being written (streamLine, its id filled in)
	part  []byte        // rest of it not yet read
}

// streamLine is a tools/call line whose id is the six digits at
// streamIDAt, 100000 to 999999 in turn: calls may overlap (the server may
// read ahead), so no id comes back before 900,000 others, and every line
// has the same length.
var streamLine = []byte(`{"jsonrpc":"2.0","id":100000,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1,"b":2,"operation":"add"}}}` + "\n")

const streamIDAt = len(`{"jsonrpc":"2.0","id":`)

func (f *callFeed) Read(p []byte) (int, error) {
	if len(f.head) > 0 {
		n := copy(p, f.head)
		f.head = f.head[n:]
		return n, nil
	}
	<-f.start
	w := 0
	for w < len(p) {
		if len(f.part) == 0 {
			if f.n == 0 {
				break
			}
			id := f.id
			for i := streamIDAt + 5; i >= streamIDAt; i-- {
				f.line[i] = byte('0' + id%10)
				id /= 10
			}
			if f.id++; f.id > 999999 {
				f.id = 100000
			}
			f.part = f.line
			f.n--
		}
		c := copy(p[w:], f.part)
		f.part = f.part[c:]
		w += c
	}
	if w == 0 {
		return 0, io.EOF
	}
	return w, nil
}

// responseSink is the server's output: it checks each write holds whole
// response lines, counts them, and reports the initialize response.
type responseSink struct {
	mu      sync.Mutex
	inited  chan struct{}
	calls   int
	err     error
	partial []byte
}

func (s *responseSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inited != nil {
		if !bytes.Contains(p, protocolVerKey) {
			s.err = fmt.Errorf("want the initialize response first, got %s", p)
			return 0, s.err
		}
		close(s.inited)
		s.inited = nil
		return len(p), nil
	}
	// A response may come in more than one write; check whole lines.
	buf := p
	if len(s.partial) > 0 {
		s.partial = append(s.partial, p...)
		buf = s.partial
	}
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		line := buf[:i]
		buf = buf[i+1:]
		if bytes.Contains(line, notificationKey) {
			continue
		}
		if !bytes.Contains(line, wantResultText) || bytes.Contains(line, errorKey) || bytes.Contains(line, isErrorTrue) {
			s.err = fmt.Errorf("unexpected tools/call response: %s", line)
			return 0, s.err
		}
		s.calls++
	}
	s.partial = append(s.partial[:0], buf...)
	return len(p), nil
}

func runStreamBench(b *testing.B, serve streamServe) {
	start := make(chan struct{})
	feed := &callFeed{
		head:  append(append([]byte(nil), initializeLine...), initializedLine...),
		start: start,
		n:     b.N,
		id:    100000,
		line:  bytes.Clone(streamLine),
	}
	inited := make(chan struct{})
	sink := &responseSink{inited: inited}
	done := make(chan error, 1)
	go func() { done <- serve(feed, sink) }()
	select {
	case <-inited:
	case err := <-done:
		b.Fatalf("server returned before initialize was answered: %v (%v)", err, sink.err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	close(start)
	err := <-done
	b.StopTimer()
	cpu.report(b)
	if err != nil {
		b.Fatalf("serve: %v", err)
	}
	if sink.err != nil {
		b.Fatal(sink.err)
	}
	if sink.calls != b.N {
		b.Fatalf("%d responses, want %d", sink.calls, b.N)
	}
}
