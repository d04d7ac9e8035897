package stdio

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestNotifyReadableWithALineWaiting: when the reading goroutine already
// holds the next line (read ahead while the engine ran a call),
// NotifyReadable arms nothing and reports false, since ReadMessage would
// return at once and f would never be called for that line; with nothing
// waiting it arms f, which is called when the next line comes.
func TestNotifyReadableWithALineWaiting(t *testing.T) {
	r, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	c := NewConn(r, io.Discard, 0).(*lineConn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	write := func(line string) {
		go func() { _, _ = w.Write([]byte(line)) }()
	}
	read := func(want string) {
		t.Helper()
		if got, err := c.ReadMessage(ctx); err != nil || string(got) != want {
			t.Fatalf("ReadMessage = %q, %v; want %q", got, err, want)
		}
	}
	write("{\"a\":1}\n")
	read(`{"a":1}`) // the goroutine reads on: nothing more was buffered
	write("{\"b\":2}\n")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		c.nmu.Lock()
		ahead := c.answers > c.taken
		c.nmu.Unlock()
		if ahead {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the goroutine never read the second line")
		}
	}
	if c.NotifyReadable(func() { t.Error("f called for a line that was waiting already") }) {
		t.Fatal("NotifyReadable armed f while a line was waiting")
	}
	read(`{"b":2}`)

	called := make(chan struct{})
	if !c.NotifyReadable(func() { close(called) }) {
		t.Fatal("NotifyReadable armed nothing while no line was waiting")
	}
	write("{\"c\":3}\n")
	select {
	case <-called:
	case <-ctx.Done():
		t.Fatal("f was not called when the next line came")
	}
	c.NotifyReadable(nil)
	read(`{"c":3}`)
}

// Two lines that come in one read: after the first, the second is in the
// reader's buffer, so NotifyReadable arms nothing (ReadMessage returns it
// at once, without the reading goroutine), and ReadMessage does.
func TestNotifyReadableWithALineBuffered(t *testing.T) {
	c := NewConn(strings.NewReader("{\"a\":1}\n{\"b\":2}\n"), io.Discard, 0).(*lineConn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := c.ReadMessage(ctx); err != nil || string(got) != `{"a":1}` {
		t.Fatalf("first ReadMessage = %q, %v", got, err)
	}
	if !c.lineBuffered() {
		t.Fatal("the second line, read with the first, is not seen as buffered")
	}
	if c.NotifyReadable(func() { t.Error("f called for a buffered line") }) {
		t.Fatal("NotifyReadable armed f while a whole line was buffered")
	}
	if got, err := c.ReadMessage(ctx); err != nil || string(got) != `{"b":2}` {
		t.Fatalf("second ReadMessage = %q, %v", got, err)
	}
}
