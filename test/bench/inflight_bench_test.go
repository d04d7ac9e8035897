package bench

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
)

// BenchmarkHexMCPInFlight64 keeps 64 calls of a 5 ms tool in flight on one
// stdio connection (the default MaxConcurrentRequests): the client writes a
// new call as soon as an answer comes back. It reports calls/s; the ideal is
// 64 / 5 ms = 12.8k. BenchmarkHexMCPInFlight63 is one below the bound.
func BenchmarkHexMCPInFlight64(b *testing.B) { runInFlight(b, 64, 5*time.Millisecond) }

// BenchmarkHexMCPInFlight63 is BenchmarkHexMCPInFlight64 with 63 calls in
// flight.
func BenchmarkHexMCPInFlight63(b *testing.B) { runInFlight(b, 63, 5*time.Millisecond) }

func startSleeper(d time.Duration) startFunc {
	return func(ctx context.Context, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
		tool := hexmcp.Func(func(ctx context.Context, _ struct{}) (float64, error) {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			return 3, nil
		}, hexmcp.WithName("sleep"))
		return serveStdio(ctx, in, out, app.Options{}, tool)
	}
}

func runInFlight(b *testing.B, window int, d time.Duration) {
	c := connect(b, startSleeper(d))
	defer c.close(b)
	lines := make([][]byte, window)
	for i := range lines {
		lines[i] = []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(1000+i) +
			`,"method":"tools/call","params":{"name":"sleep","arguments":{}}}` + "\n")
	}
	free := make(chan int, window) // ids whose answer has come back
	var wmu sync.Mutex
	write := func(i int) error {
		wmu.Lock()
		defer wmu.Unlock()
		_, err := c.inW.Write(lines[i])
		return err
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	readErr := make(chan error, 1)
	go func() {
		for n := 0; n < b.N; {
			resp, err := c.br.ReadSlice('\n')
			if err != nil {
				readErr <- err
				return
			}
			if bytes.Contains(resp, notificationKey) {
				continue
			}
			if !bytes.Contains(resp, wantResultText) {
				readErr <- io.ErrUnexpectedEOF
				return
			}
			k := bytes.Index(resp, []byte(`"id":`))
			id, _ := strconv.Atoi(string(resp[k+5 : k+9]))
			n++
			free <- id - 1000
		}
		readErr <- nil
	}()
	sent := 0
	for i := 0; i < window && sent < b.N; i++ {
		if err := write(i); err != nil {
			b.Fatal(err)
		}
		sent++
	}
	for sent < b.N {
		select {
		case i := <-free:
			if err := write(i); err != nil {
				b.Fatal(err)
			}
			sent++
		case err := <-readErr:
			b.Fatalf("read: %v", err)
		}
	}
	if err := <-readErr; err != nil {
		b.Fatalf("read: %v", err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}
