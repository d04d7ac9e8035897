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
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr := stdio.New(stdio.Options{In: inR, Out: outW, MaxMessageSize: 1024})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- tr.Serve(ctx, e) }()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return")
		}
	})
	lines := bufio.NewReader(outR)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() string {
		t.Helper()
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(l, "\n")
	}
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
