package mcphttp_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
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
	srv := serveOn(t, mux, mcphttp.ServerOptions{})
	if err := srv.Start(context.Background()); !errors.Is(err, mcphttp.ErrServerStarted) {
		t.Fatalf("second Start: %v", err)
	}
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
	srv := serveOn(t, mux, mcphttp.ServerOptions{MaxConns: 3, MaxConnsPerClient: 2})
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
	srv := serveOn(t, http.NotFoundHandler(), mcphttp.ServerOptions{})
	for range mcphttp.DefaultMaxConnsPerClient {
		dialFrom(t, "127.0.0.4", srv.Addr())
	}
	if st, _ := statusOf(t, dialFrom(t, "127.0.0.4", srv.Addr())); st != http.StatusTooManyRequests {
		t.Fatalf("connection %d from one address: %d, want 429", mcphttp.DefaultMaxConnsPerClient+1, st)
	}
}

// TrustProxies takes the client's address from X-Forwarded-For only for
// requests that come from a trusted proxy, right-most untrusted hop first.
func TestTrustProxies(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}
	var got string
	h := mcphttp.TrustProxies(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.RemoteAddr }), trusted...)
	for _, c := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"untrusted peer keeps its address", "192.0.2.7:5000", []string{"198.51.100.1"}, "192.0.2.7:5000"},
		{"trusted peer, one hop", "127.0.0.1:5000", []string{"198.51.100.1"}, "198.51.100.1:0"},
		{"a client's own header is not believed", "127.0.0.1:5000", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1:0"},
		{"trusted hops are skipped", "127.0.0.1:5000", []string{"198.51.100.1, 10.1.2.3"}, "198.51.100.1:0"},
		{"several header lines", "127.0.0.1:5000", []string{"6.6.6.6", "198.51.100.2"}, "198.51.100.2:0"},
		{"IPv6 client", "127.0.0.1:5000", []string{"2001:db8::1"}, "[2001:db8::1]:0"},
		{"garbage hop: nothing trusted", "127.0.0.1:5000", []string{"198.51.100.1, not-an-ip"}, "127.0.0.1:5000"},
		{"no header", "127.0.0.1:5000", nil, "127.0.0.1:5000"},
		{"only trusted hops", "127.0.0.1:5000", []string{"10.0.0.1"}, "127.0.0.1:5000"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if got != c.want {
			t.Errorf("%s: RemoteAddr %q, want %q", c.name, got, c.want)
		}
	}
}

// Connections from a trusted proxy do not count against the per-address
// bound; others still do.
func TestServerTrustedProxiesExempt(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := serveOn(t, mux, mcphttp.ServerOptions{MaxConnsPerClient: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})
	for i := range 3 {
		if st, _ := statusOf(t, dialFrom(t, "127.0.0.2", srv.Addr())); st != http.StatusNoContent {
			t.Fatalf("connection %d from the trusted proxy: %d", i, st)
		}
	}
	if st, _ := statusOf(t, dialFrom(t, "127.0.0.3", srv.Addr())); st != http.StatusNoContent {
		t.Fatalf("first connection from a client: %d", st)
	}
	if st, _ := statusOf(t, dialFrom(t, "127.0.0.3", srv.Addr())); st != http.StatusTooManyRequests {
		t.Fatalf("second connection from a client: %d, want 429", st)
	}
}

// serveOn starts a Server of h with o on a free loopback port and
// shuts it down (within a second) at the end of the test.
func serveOn(t *testing.T, h http.Handler, o mcphttp.ServerOptions) *mcphttp.Server {
	t.Helper()
	srv := mcphttp.NewServer("127.0.0.1:0", h, o)
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return srv
}

// MaxConns holds alone when the per-address bound is off: the connection
// past it gets 503, from any address.
func TestServerConnectionBoundWithoutPerClient(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := serveOn(t, mux, mcphttp.ServerOptions{MaxConns: 2, MaxConnsPerClient: -1})
	addr := srv.Addr()
	for i := range 2 {
		if st, _ := statusOf(t, dialFrom(t, "127.0.0.1", addr)); st != http.StatusNoContent {
			t.Fatalf("connection %d: %d", i+1, st)
		}
	}
	if st, ra := statusOf(t, dialFrom(t, "127.0.0.1", addr)); st != http.StatusServiceUnavailable || ra == "" {
		t.Fatalf("a connection past MaxConns: %d (Retry-After %q), want 503", st, ra)
	}
}
