package stdio_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// Over stdio too, an initialize whose capabilities and clientInfo are
// larger than a session keeps is refused with -32602 naming the limit and
// its id; the connection stays usable and a smaller initialize succeeds.
func TestInitializeDeclarationBoundedOverStdio(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr := stdio.New(stdio.Options{In: inR, Out: outW})
	served := make(chan error, 1)
	go func() { served <- tr.Serve(context.Background(), e) }()
	lines := bufio.NewReaderSize(outR, 1<<20)
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
		return l
	}
	send(`{"jsonrpc":"2.0","id":"big","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"pad":{"x":"` +
		strings.Repeat("a", 200<<10) + `"}}},"clientInfo":{"name":"c","version":"1"}}}`)
	if got := recv(); !strings.Contains(got, `"id":"big"`) || !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, `"limit":"maxClientDeclarationBytes"`) {
		t.Fatalf("oversized initialize answered %.300s", got)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if got := recv(); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize after the refusal answered %.300s", got)
	}
	inW.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
