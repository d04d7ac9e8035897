package hexmcp

import (
	"context"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// A listener is exposed (and warned of) beyond loopback without an
// Authenticator only.
func TestExposed(t *testing.T) {
	auth := HTTPOptions{Authenticator: mcphttp.StaticTokens{}}
	for _, c := range []struct {
		opts HTTPOptions
		addr string
		want bool
	}{
		{HTTPOptions{}, "0.0.0.0:8080", true},
		{HTTPOptions{}, "127.0.0.1:8080", false},
		{auth, "0.0.0.0:8080", false},
		{auth, "127.0.0.1:8080", false},
	} {
		if got := exposed(c.opts, c.addr); got != c.want {
			t.Errorf("exposed(authenticator %v, %s) = %v, want %v", c.opts.Authenticator != nil, c.addr, got, c.want)
		}
	}
}

// ListenAndServe on a loopback address without an Authenticator warns of
// nothing: the address is the protection.
func TestListenAndServeLoopbackQuiet(t *testing.T) {
	rec := &testtools.LogRecorder{}
	srv, err := New(Options{Logger: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- srv.ListenAndServe(ctx, "127.0.0.1:0", HTTPOptions{OnListen: func(string) { close(listening) }})
	}()
	select {
	case <-listening:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("ListenAndServe did not listen")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rec.Has("without an Authenticator") {
		t.Fatalf("a loopback listener was warned of: %v", rec.Messages())
	}
}
