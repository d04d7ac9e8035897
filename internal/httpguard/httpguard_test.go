package httpguard_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hexmcp/hexmcp/internal/httpguard"
	"github.com/hexmcp/hexmcp/internal/httpguard/guardtest"
)

// request builds a request as net/http's server hands it over: Host and
// Origin as sent, the local address in the context.
func request(host, origin string, local net.Addr) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Host = host
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	if local != nil {
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
	}
	return r
}

var loopback = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}

// TestTable runs the shared table against the guard directly (the
// transports run it on the wire in test/security).
func TestTable(t *testing.T) {
	for _, tc := range guardtest.Cases() {
		cfg, ok := guardtest.ConfigNamed(tc.Config)
		if !ok {
			t.Fatalf("%s: no config %q", tc.Name, tc.Config)
		}
		g := httpguard.New(cfg.AllowedOrigins, cfg.AllowedHosts)
		host, origin := guardtest.Expand(tc.Host, "8080", "8081"), guardtest.Expand(tc.Origin, "8080", "8081")
		err := g.Check(request(host, origin, loopback))
		if got := err == nil; got != tc.Allowed {
			t.Errorf("%s [%s] Host %q Origin %q: allowed=%v (%v), want %v", tc.Name, tc.Config, host, origin, got, err, tc.Allowed)
		}
		if err != nil && !errors.Is(err, httpguard.ErrHost) && !errors.Is(err, httpguard.ErrOrigin) {
			t.Errorf("%s: error %v wraps neither ErrHost nor ErrOrigin", tc.Name, err)
		}
	}
}

func TestHostRuleOnlyOnLoopback(t *testing.T) {
	g := httpguard.New(nil, nil)
	public := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 443}
	if err := g.CheckHost(request("mcp.example.com", "", public)); err != nil {
		t.Errorf("public listener: %v", err)
	}
	if err := g.CheckHost(request("mcp.example.com", "", nil)); err != nil {
		t.Errorf("no local address: %v", err)
	}
	mapped := &net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 8080}
	if err := g.CheckHost(request("evil.example:8080", "", mapped)); !errors.Is(err, httpguard.ErrHost) {
		t.Errorf("IPv4-mapped loopback listener: %v, want ErrHost", err)
	}
	if err := g.CheckHost(request("", "", loopback)); !errors.Is(err, httpguard.ErrHost) {
		t.Errorf("empty Host: %v, want ErrHost", err)
	}
	if err := g.CheckHost(request("[::ffff:127.0.0.1]:8080", "", loopback)); err != nil {
		t.Errorf("IPv4-mapped loopback Host: %v", err)
	}
	listed := httpguard.New(nil, []string{"MCP.internal.:9000", ""})
	if err := listed.CheckHost(request("mcp.internal:8080", "", loopback)); err != nil {
		t.Errorf("entry with case, dot and port: %v", err)
	}
	if err := listed.CheckHost(request("", "", loopback)); err == nil {
		t.Error("an empty entry allowed an empty Host")
	}
}

func TestOriginRule(t *testing.T) {
	g := httpguard.New([]string{"https://ui.example:443", "http://[::1]:80"}, nil)
	for _, tc := range []struct {
		host, origin string
		ok           bool
	}{
		{"127.0.0.1:8080", "https://ui.example", true},       // default port made implicit on the entry
		{"127.0.0.1:8080", "https://ui.example:443", true},   // and on the request
		{"127.0.0.1:8080", "http://[::1]", true},             // IPv6 entry with its default port
		{"mcp.example.com", "https://mcp.example.com", true}, // Host without port: the scheme's default
		{"mcp.example.com", "http://mcp.example.com", true},
		{"mcp.example.com", "http://mcp.example.com:8080", false},
		{"mcp.example.com:443", "https://mcp.example.com", true},
		{"mcp.example.com:443", "http://mcp.example.com", false},
		{"127.0.0.1:8080", "http://127.0.0.1:8080?x", false},
		{"127.0.0.1:8080", "http://127.0.0.1:8080#x", false},
		{"127.0.0.1:8080", "javascript:alert(1)", false},
	} {
		err := g.CheckOrigin(request(tc.host, tc.origin, nil))
		if got := err == nil; got != tc.ok {
			t.Errorf("Host %q Origin %q: allowed=%v (%v), want %v", tc.host, tc.origin, got, err, tc.ok)
		}
	}

	// Every Origin value is checked, not only the first.
	r := request("127.0.0.1:8080", "http://127.0.0.1:8080", nil)
	r.Header.Add("Origin", "http://evil.example")
	if err := g.CheckOrigin(r); !errors.Is(err, httpguard.ErrOrigin) {
		t.Errorf("second Origin value: %v, want ErrOrigin", err)
	}
}

// An allowed origin that is no bare origin (a path, a fragment, a query)
// matches nothing: it is not cut down to the origin it starts with.
func TestOriginEntryIsNotTrimmed(t *testing.T) {
	for _, entry := range []string{"https://app.example/ui", "https://app.example#x", "https://app.example?"} {
		g := httpguard.New([]string{entry}, nil)
		if err := g.CheckOrigin(request("127.0.0.1:8080", "https://app.example", nil)); !errors.Is(err, httpguard.ErrOrigin) {
			t.Errorf("entry %q: Origin https://app.example gave %v, want ErrOrigin", entry, err)
		}
	}
}

// LoopbackAddr tells a listener reachable from this machine only from one
// reachable beyond it, which ListenAndServe warns of without an
// Authenticator.
func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080":  true,
		"127.1.2.3:80":    true,
		"[::1]:8080":      true,
		"localhost:8080":  true,
		"0.0.0.0:8080":    false,
		"[::]:8080":       false,
		"10.0.0.5:8080":   false,
		"example.com:443": false,
		"no port":         false,
	} {
		if got := httpguard.LoopbackAddr(addr); got != want {
			t.Errorf("LoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
