package serving_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/serving"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

func roundTrip(t *testing.T, c ports.Conn, msg string) string {
	t.Helper()
	if err := c.WriteMessage(t.Context(), []byte(msg)); err != nil {
		t.Fatal(err)
	}
	out, err := c.ReadMessage(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// Run serves until the transport ends, then returns its error (none);
// starting a server twice is refused; Done and Err tell the end.
func TestRunUntilTheTransportEnds(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{})
	defer e.Close()
	tr, c := memory.NewTransport()
	srv := serving.New(e, tr)
	if srv.Done() != nil || srv.Shutdown(t.Context()) != nil {
		t.Fatal("a server not started has a Done channel or fails to shut down")
	}
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(context.Background()) }()
	if got := roundTrip(t, c, ping); !strings.Contains(got, `"result":{}`) {
		t.Fatalf("ping: %s", got)
	}
	if err := srv.Start(context.Background()); !errors.Is(err, serving.ErrAlreadyStarted) {
		t.Fatalf("Start of a running server = %v, want ErrAlreadyStarted", err)
	}
	// A second Run is refused at once too; it does not wait for the first.
	second := make(chan error, 1)
	go func() { second <- srv.Run(context.Background()) }()
	if err := testtools.Recv(t, second, 20*time.Second, "a second Run did not return"); !errors.Is(err, serving.ErrAlreadyStarted) {
		t.Fatalf("Run of a running server = %v, want ErrAlreadyStarted", err)
	}
	select {
	case err := <-ran:
		t.Fatalf("Run returned %v while its transport was open", err)
	default:
	}
	c.Close()
	if err := testtools.Recv(t, ran, 20*time.Second, "Run did not return"); err != nil {
		t.Fatalf("Run = %v", err)
	}
	<-srv.Done()
	if srv.Err() != nil || srv.Engine() != e {
		t.Fatalf("Err %v, Engine %p", srv.Err(), srv.Engine())
	}
}

// Shutdown waits for the calls in flight; at its deadline it cancels this
// server's calls and reports the deadline.
func TestShutdownDeadline(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan struct{})
	tool := hexmcp.NewTool(func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return ctx.Err()
	}, hexmcp.WithName("forever"))
	e := testtools.NewEngine(t, app.Options{}, tool)
	defer e.Close()
	tr, c := memory.NewTransport()
	srv := serving.New(e, tr)
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, c, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if err := c.WriteMessage(t.Context(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMessage(t.Context(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forever"}}`)); err != nil {
		t.Fatal(err)
	}
	testtools.Recv(t, started, 20*time.Second, "the call did not start")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want the deadline", err)
	}
	testtools.Recv(t, cancelled, 20*time.Second, "the call was not cancelled")
	<-srv.Done()
}
