package mcphttp_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
)

// dialFrom opens a TCP connection to addr from the loopback address ip.
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// statusOf sends a GET on c and returns the response's status and
// Retry-After.
func statusOf(t *testing.T, c net.Conn) (int, string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	// A refused connection may be answered and closed before the request
	// is written: the write's error does not matter, the answer does.
	_, _ = c.Write([]byte("GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// Connections past MaxConnsPerClient from one address get 429, past MaxConns
// 503, while other addresses are still served; a closed connection frees its
// slot.
func TestServerConnectionBounds(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := mcphttp.NewServer("127.0.0.1:0", mux, mcphttp.ServerOptions{MaxConns: 3, MaxConnsPerClient: 2})
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	addr := srv.Addr()

	a1 := dialFrom(t, "127.0.0.1", addr)
	if st, _ := statusOf(t, a1); st != http.StatusNoContent {
		t.Fatalf("first connection: %d", st)
	}
	a2 := dialFrom(t, "127.0.0.1", addr)
	if st, _ := statusOf(t, a2); st != http.StatusNoContent {
		t.Fatalf("second connection: %d", st)
	}
	if st, ra := statusOf(t, dialFrom(t, "127.0.0.1", addr)); st != http.StatusTooManyRequests || ra == "" {
		t.Fatalf("third connection from one address: %d (Retry-After %q), want 429 with Retry-After", st, ra)
	}
	b1 := dialFrom(t, "127.0.0.2", addr)
	if st, _ := statusOf(t, b1); st != http.StatusNoContent {
		t.Fatalf("a connection from another address: %d, want it served", st)
	}
	if st, ra := statusOf(t, dialFrom(t, "127.0.0.3", addr)); st != http.StatusServiceUnavailable || ra == "" {
		t.Fatalf("a connection past MaxConns: %d (Retry-After %q), want 503", st, ra)
	}
	a1.Close()
	// The slot comes back once the server has seen the close.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _ := statusOf(t, dialFrom(t, "127.0.0.3", addr))
		if st == http.StatusNoContent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed connection's slot was not given back (still %d)", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The per-address bound is on with zero options.
func TestServerConnectionBoundsDefault(t *testing.T) {
	srv := mcphttp.NewServer("127.0.0.1:0", http.NotFoundHandler(), mcphttp.ServerOptions{})
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	for range mcphttp.DefaultMaxConnsPerClient {
		dialFrom(t, "127.0.0.4", srv.Addr())
	}
	if st, _ := statusOf(t, dialFrom(t, "127.0.0.4", srv.Addr())); st != http.StatusTooManyRequests {
		t.Fatalf("connection %d from one address: %d, want 429", mcphttp.DefaultMaxConnsPerClient+1, st)
	}
}
