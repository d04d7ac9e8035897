package mcphttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
)

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
	srv := mcphttp.NewServer("127.0.0.1:0", mux, mcphttp.ServerOptions{MaxConnsPerClient: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
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
