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
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
)

// Large payloads, this SDK only, over the stdio harness (two io.Pipes, one
// call in flight, handshake not timed):
//
//   - BenchmarkLargeArgument: tools/call of a tool whose one string
//     argument is 1 MiB of text (largeText: ASCII words, a newline every 64
//     bytes, so the request carries \n escapes); the tool answers the
//     length as text. Input validation on.
//   - BenchmarkLargeResult: tools/call of a tool without arguments that
//     returns the same 1 MiB text, which the SDK escapes into a text block.
//   - BenchmarkLargeToolsList: tools/list of 1000 tools (one page,
//     PageSize 1000), each with a description and an input schema of two
//     properties.
//
// Besides ns/op, B/op and allocs/op, each reports payload-B (the size of
// the payload: the argument's 1 MiB, the result's 1 MiB, the tools/list
// answer's length) and alloc/payload, the bytes allocated per call (client
// and server; the client allocates nothing per call) divided by payload-B.
// The client writes pre-encoded lines and reads each answer into one reused
// buffer.

// largeSize is the size of the large text: 1 MiB.
const largeSize = 1 << 20

// largeText is 1 MiB of ASCII text: words and spaces, a newline as every
// 64th byte.
var largeText = func() string {
	const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
	var b strings.Builder
	b.Grow(largeSize)
	for i := 0; b.Len() < largeSize; i++ {
		if b.Len()%64 == 63 {
			b.WriteByte('\n')
			continue
		}
		b.WriteByte(words[i%len(words)])
	}
	return b.String()
}()

// largeInput is the argument of the large-argument tool.
type largeInput struct {
	Text string `json:"text" description:"Any text"`
}

// smallInput is the input of each tool of the tools/list benchmark.
type smallInput struct {
	Query string  `json:"query" description:"What to look for"`
	Limit float64 `json:"limit,omitempty" description:"At most this many answers"`
}

// startLarge starts this SDK over stdio with the large-payload tools and
// that many small ones (tools/list answers them all in one page).
func startLarge(tools int) startFunc {
	return func(ctx context.Context, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
		all := []hexmcp.Tool{
			hexmcp.Func(func(_ context.Context, in largeInput) (int, error) {
				return len(in.Text), nil
			}, hexmcp.WithName("measure"), hexmcp.WithDescription("Counts the bytes of a text.")),
			hexmcp.Func(func(context.Context, struct{}) (string, error) {
				return largeText, nil
			}, hexmcp.WithName("produce"), hexmcp.WithDescription("Returns a long text.")),
		}
		for i := range tools {
			all = append(all, hexmcp.Func(func(context.Context, smallInput) (string, error) { return "", nil },
				hexmcp.WithName(fmt.Sprintf("tool%04d", i)), hexmcp.WithDescription("Searches the archive number "+strconv.Itoa(i)+".")))
		}
		return serveStdio(ctx, in, out, app.Options{PageSize: tools + 2}, all...)
	}
}

// readLong reads one whole line of any length into buf (reused) and
// returns it; notifications are skipped.
func (c *client) readLong(buf []byte) ([]byte, error) {
	for {
		buf = buf[:0]
		for {
			frag, err := c.br.ReadSlice('\n')
			buf = append(buf, frag...)
			if err == nil {
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return buf, fmt.Errorf("read: %w", err)
			}
		}
		if !bytes.Contains(buf[:min(len(buf), 64)], notificationKey) {
			return buf, nil
		}
	}
}

// runLarge times one request line per iteration (the same line each time:
// one call in flight, so the id is free again). The answer to a first call,
// not timed, is checked with check; every timed answer must be byte for
// byte the same. payload is the size reported as payload-B; 0 means the
// length of that first answer (without its newline).
func runLarge(b *testing.B, tools int, line []byte, payload int, check func([]byte) error) {
	c := connect(b, startLarge(tools))
	defer c.close(b)
	// The first call also fills what is cached on first use (the encoded
	// tools of tools/list), which is then not counted.
	if _, err := c.inW.Write(line); err != nil {
		b.Fatal(err)
	}
	first, err := c.readLong(nil)
	if err == nil {
		err = check(first)
	}
	if err != nil {
		b.Fatalf("first call: %v", err)
	}
	buf := make([]byte, 0, 2*len(first))
	if payload == 0 {
		payload = len(first) - 1
	}

	var before, after runtime.MemStats
	b.ReportAllocs()
	b.ResetTimer()
	runtime.ReadMemStats(&before)
	for i := 0; i < b.N; i++ {
		if _, err := c.inW.Write(line); err != nil {
			b.Fatal(err)
		}
		resp, err := c.readLong(buf)
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Equal(resp, first) {
			b.Fatalf("answer %d differs from the first one: %.200s", i, resp)
		}
		buf = resp[:0]
	}
	runtime.ReadMemStats(&after)
	b.StopTimer()
	b.ReportMetric(float64(payload), "payload-B")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(payload), "alloc/payload")
}

func wantCallResult(id int, text string) func([]byte) error {
	idKey := []byte(`"id":` + strconv.Itoa(id) + `,`)
	textKey := []byte(`"text":` + strconv.Quote(text))
	return func(resp []byte) error {
		if !bytes.Contains(resp[:min(len(resp), 64)], idKey) || bytes.Contains(resp, errorKey) || bytes.Contains(resp, isErrorTrue) {
			return fmt.Errorf("unexpected answer %.200s", resp)
		}
		if !bytes.Contains(resp, textKey) {
			return fmt.Errorf("answer without the text %.40q: %.200s", text, resp)
		}
		return nil
	}
}

// BenchmarkLargeArgument: a 1 MiB string argument in (see the top of this
// file).
func BenchmarkLargeArgument(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"measure","arguments":{"text":` +
		strconv.Quote(largeText) + `}}}` + "\n")
	runLarge(b, 0, line, largeSize, wantCallResult(100, strconv.Itoa(largeSize)))
}

// BenchmarkLargeResult: a 1 MiB text result out.
func BenchmarkLargeResult(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"produce","arguments":{}}}` + "\n")
	runLarge(b, 0, line, largeSize, wantCallResult(100, largeText))
}

// BenchmarkLargeToolsList: tools/list of 1000 tools (and the two above).
func BenchmarkLargeToolsList(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":100,"method":"tools/list"}` + "\n")
	runLarge(b, 1000, line, 0, func(resp []byte) error {
		if got := bytes.Count(resp, []byte(`"name":"tool`)); got != 1000 || bytes.Contains(resp, []byte(`"nextCursor"`)) {
			return fmt.Errorf("unexpected tools/list answer, %d tools: %.200s", got, resp)
		}
		return nil
	})
}
