package testtools

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"
)

// SSEData returns the data of the events of the SSE stream r as they
// come, each trimmed, those without data left out; the channel is closed
// when r ends.
func SSEData(r io.Reader) <-chan string {
	ch := make(chan string, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				if d = strings.TrimSpace(d); d != "" {
					ch <- d
				}
			}
		}
	}()
	return ch
}

// NextData returns the next data of ch (see [SSEData]), failing t when the
// stream ended or no event came within d.
func NextData(t testing.TB, ch <-chan string, d time.Duration) string {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case data, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended")
		}
		return data
	case <-timer.C:
		t.Fatalf("no event within %v", d)
		panic("unreachable")
	}
}
