package mcphttp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
)

// startServer runs the env's handler at /mcp on a Server bound to a free
// loopback port.
func startServer(t *testing.T, ev *env) (*mcphttp.Server, string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", ev.h)
	srv := mcphttp.NewServer("127.0.0.1:0", mux, mcphttp.ServerOptions{})
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); !errors.Is(err, mcphttp.ErrServerStarted) {
		t.Fatalf("second Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return srv, "http://" + srv.Addr() + "/mcp"
}

// Shutdown ends the GET streams, lets the calls in flight answer, and
// returns once they have.
func TestServerGracefulShutdown(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	srv, url := startServer(t, ev)
	sid := initializeAt(t, url, "2025-11-25")

	get := request(t, context.Background(), http.MethodGet, url, "", sessHdr(sid, "2025-11-25"))
	stream := newSSE(t, get)
	stream.nextEvent(t) // priming
	calls := make(chan *http.Response, 2)
	go func() { calls <- mustDo(http.MethodPost, url, callBody(2, "block", `{}`), sessHdr(sid, "2025-11-25")) }()
	go func() {
		calls <- mustDo(http.MethodPost, url, statelessCall(3, "block", `{}`), statelessHdr("tools/call", "block"))
	}()
	ev.waitStarted()
	ev.waitStarted()

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- srv.Shutdown(ctx)
	}()
	if _, err := stream.next(); err != io.EOF || stream.retry != "1000" { // the GET stream ends at once
		t.Fatalf("GET stream: %v, retry %q", err, stream.retry)
	}
	get.Body.Close()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with calls in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	ev.releaseAll()
	for range 2 {
		expect(t, <-calls, http.StatusOK, "released")
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	<-srv.Done()
	if srv.Err() != nil {
		t.Fatal(srv.Err())
	}
	if _, err := net.DialTimeout("tcp", srv.Addr(), time.Second); err == nil {
		t.Fatal("the server still accepts connections")
	}
}

// When the deadline passes, Shutdown cancels the calls still running, in
// both eras and whether or not they stream.
func TestServerShutdownDeadline(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	srv, url := startServer(t, ev)
	sid := initializeAt(t, url, "2025-11-25")
	done := make(chan *http.Response, 2)
	go func() {
		done <- mustDo(http.MethodPost, url, progressCallBody(2, "progress_block"), sessHdr(sid, "2025-11-25"))
	}()
	go func() {
		done <- mustDo(http.MethodPost, url, statelessCall(3, "block", `{}`), statelessHdr("tools/call", "block"))
	}()
	ev.waitStarted()
	ev.waitStarted()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v", err)
	}
	for range 2 {
		if err := ev.waitStopped(); !errors.Is(err, context.Canceled) {
			t.Fatalf("tool stopped with %v", err)
		}
	}
	for range 2 {
		resp := <-done // cut: the connections were closed
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func TestServerAddressInUse(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	first, _ := startServer(t, ev)
	second := mcphttp.NewServer(first.Addr(), ev.h, mcphttp.ServerOptions{})
	if err := second.Start(context.Background()); err == nil {
		t.Fatal("two servers on one address")
	}
	if err := second.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
