package mcphttp_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// peerClient is an HTTP client whose connections come from the loopback
// address ip, as a client on another machine would from its own.
func peerClient(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// postFrom sends a POST with a conforming client's headers, then h.
func postFrom(t *testing.T, c *http.Client, url, body string, h hdr) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	testtools.MCPHeaders(req, h)
	return testtools.Do(t, c, req)
}

// openSession initializes a session from c (with the headers h) and, when
// ready, completes the handshake with notifications/initialized. It
// returns the session id, or "" and the refusal.
func openSession(t *testing.T, c *http.Client, url string, ready bool, h hdr) (sid string, refused *http.Response, body string) {
	t.Helper()
	resp := postFrom(t, c, url, fmt.Sprintf(initBody, "2025-11-25"), h)
	body = readAll(t, resp)
	if resp.StatusCode != http.StatusOK {
		if resp.Header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("a refused session (%d) got an id", resp.StatusCode)
		}
		return "", resp, body
	}
	sid = resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize answered 200 without a session: %s", body)
	}
	if ready {
		expect(t, postFrom(t, c, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, mergeHdr(h, sessHdr(sid, "2025-11-25"))), http.StatusAccepted)
	}
	return sid, nil, body
}

func mustOpen(t *testing.T, c *http.Client, url string, ready bool, h hdr) string {
	t.Helper()
	sid, refused, body := openSession(t, c, url, ready, h)
	if refused != nil {
		t.Fatalf("initialize refused: %d %s", refused.StatusCode, body)
	}
	return sid
}

// wantRefused checks a refused initialize: its status, Retry-After and
// JSON-RPC error (with the initialize's id).
func wantRefused(t *testing.T, c *http.Client, url string, h hdr, status, code int, retryAfter, message string) {
	t.Helper()
	_, refused, body := openSession(t, c, url, true, h)
	if refused == nil {
		t.Fatalf("initialize accepted, want %d", status)
	}
	if refused.StatusCode != status {
		t.Fatalf("initialize refused with %d, want %d; body %s", refused.StatusCode, status, body)
	}
	if got := refused.Header.Get("Retry-After"); got != retryAfter {
		t.Fatalf("Retry-After %q, want %q", got, retryAfter)
	}
	if got, id := rpcError(t, body); got != code || id != "1" || !strings.Contains(body, message) {
		t.Fatalf("body %s, want code %d, id 1, %q", body, code, message)
	}
}

func ping(t *testing.T, c *http.Client, url, sid string) int {
	t.Helper()
	resp := postFrom(t, c, url, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, sessHdr(sid, "2025-11-25"))
	readAll(t, resp)
	return resp.StatusCode
}

// One client (one remote address) opening session after session holds at
// most its own share: another client still gets sessions, and is refused
// only when the store is full.
func TestOneClientCannotLockOutAnother(t *testing.T) {
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	store := memory.NewSessionStore(memory.SessionStoreOptions{MaxSessions: 20, MaxSessionsPerClient: 10, Clock: clock})
	ev := newEnv(t, mcphttp.Options{SessionStore: store})
	greedy, other, third := peerClient(t, "127.0.0.1"), peerClient(t, "127.0.0.2"), peerClient(t, "127.0.0.3")

	var mine []string
	for range 10 {
		mine = append(mine, mustOpen(t, greedy, ev.url, true, nil))
	}
	wantRefused(t, greedy, ev.url, nil, http.StatusTooManyRequests, -32600, "30", "this client holds too many sessions")
	wantRefused(t, greedy, ev.url, nil, http.StatusTooManyRequests, -32600, "30", "this client holds too many sessions")

	// The other client is served, and the greedy one keeps its sessions.
	var theirs []string
	for range 10 {
		theirs = append(theirs, mustOpen(t, other, ev.url, true, nil))
	}
	for _, sid := range append(mine, theirs...) {
		if st := ping(t, greedy, ev.url, sid); st != http.StatusOK {
			t.Fatalf("ping of a session: %d", st)
		}
	}
	if st := storedState(t, store, mine[0]); st.Peer != "ip:127.0.0.1" || !st.Ready {
		t.Fatalf("stored Peer %q, Ready %v", st.Peer, st.Ready)
	}
	if st := storedState(t, store, theirs[0]); st.Peer != "ip:127.0.0.2" {
		t.Fatalf("stored Peer %q", st.Peer)
	}

	// The store is full and every session is in use: a third client is
	// refused, with the store's own error.
	wantRefused(t, third, ev.url, nil, http.StatusServiceUnavailable, -32603, "10", "too many sessions")

	// A client that ends one of its sessions gets a place back.
	expect(t, request(t, context.Background(), http.MethodDelete, ev.url, "", sessHdr(mine[0], "2025-11-25")), http.StatusNoContent)
	mustOpen(t, greedy, ev.url, true, nil)
}

// With the default limits, one client's sessions stop at
// 100, far below the store's limit.
func TestDefaultSessionsPerClient(t *testing.T) {
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	store := memory.NewSessionStore(memory.SessionStoreOptions{Clock: clock})
	ev := newEnv(t, mcphttp.Options{SessionStore: store})
	greedy, other := peerClient(t, "127.0.0.1"), peerClient(t, "127.0.0.2")
	for range portlimits.DefaultMaxSessionsPerClient {
		mustOpen(t, greedy, ev.url, true, nil)
	}
	wantRefused(t, greedy, ev.url, nil, http.StatusTooManyRequests, -32600, "30", "too many sessions")
	mustOpen(t, other, ev.url, true, nil)
	// Once the greedy client's oldest sessions have been idle for a
	// while, a new one replaces the oldest.
	clock.Advance(memory.DefaultMinIdleForEviction)
	mustOpen(t, greedy, ev.url, true, nil)
}

// A session whose client never sends notifications/initialized expires
// after the pending timeout; one that did is stored Ready and lives on.
func TestPendingSessionsExpire(t *testing.T) {
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	store := memory.NewSessionStore(memory.SessionStoreOptions{Clock: clock})
	ev := newEnv(t, mcphttp.Options{SessionStore: store})
	c := peerClient(t, "127.0.0.1")
	pending := mustOpen(t, c, ev.url, false, nil)
	ready := mustOpen(t, c, ev.url, true, nil)
	if st := storedState(t, store, pending); st.Ready || !st.Initialized || st.Peer != "ip:127.0.0.1" {
		t.Fatalf("stored pending session %+v", st)
	}
	if st := storedState(t, store, ready); !st.Ready {
		t.Fatalf("stored session after notifications/initialized: Ready %v", st.Ready)
	}

	clock.Advance(portlimits.DefaultSessionPendingTimeout + time.Second)
	if st := ping(t, c, ev.url, pending); st != http.StatusNotFound {
		t.Fatalf("ping of a pending session past the pending timeout: %d, want 404", st)
	}
	if st := ping(t, c, ev.url, ready); st != http.StatusOK {
		t.Fatalf("ping of a ready session: %d, want 200", st)
	}
}

// At the store's limit, a new session replaces the one idle longest (if
// it has been idle for a while) instead of being refused.
func TestIdleSessionEvictedAtTheLimit(t *testing.T) {
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	store := memory.NewSessionStore(memory.SessionStoreOptions{MaxSessions: 2, Clock: clock})
	ev := newEnv(t, mcphttp.Options{SessionStore: store})
	a, b := peerClient(t, "127.0.0.1"), peerClient(t, "127.0.0.2")
	s1 := mustOpen(t, a, ev.url, true, nil)
	s2 := mustOpen(t, b, ev.url, true, nil)
	wantRefused(t, b, ev.url, nil, http.StatusServiceUnavailable, -32603, "10", "too many sessions")

	clock.Advance(memory.DefaultMinIdleForEviction / 2)
	if st := ping(t, b, ev.url, s2); st != http.StatusOK {
		t.Fatalf("ping: %d", st)
	}
	clock.Advance(memory.DefaultMinIdleForEviction / 2)
	// s1 has been idle for the eviction floor, s2 for half of it.
	s3 := mustOpen(t, b, ev.url, true, nil)
	if st := ping(t, a, ev.url, s1); st != http.StatusNotFound {
		t.Fatalf("ping of the evicted session: %d, want 404", st)
	}
	for _, sid := range []string{s2, s3} {
		if st := ping(t, b, ev.url, sid); st != http.StatusOK {
			t.Fatalf("ping of a live session: %d, want 200", st)
		}
	}
	// The evicted client starts again (2025-11-25: a 404 means a new
	// initialize), and is refused while every session is in use.
	wantRefused(t, a, ev.url, nil, http.StatusServiceUnavailable, -32603, "10", "too many sessions")
}

// A session the store evicts or expires leaves the handler's memory at
// once, not when (if ever) its client comes back: the engine no longer
// holds it (it is not told of its subscription).
func TestRemovedSessionsLeaveMemory(t *testing.T) {
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	store := memory.NewSessionStore(memory.SessionStoreOptions{MaxSessions: 2, Clock: clock})
	ev := newResourceEnv(t, mcphttp.Options{SessionStore: store})
	c := peerClient(t, "127.0.0.1")
	subscribe := func(sid string) {
		t.Helper()
		expect(t, postFrom(t, c, ev.url, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://doc"}}`, sessHdr(sid, "2025-11-25")),
			http.StatusOK, `"result":{}`)
	}
	s1 := mustOpen(t, c, ev.url, true, nil)
	subscribe(s1)
	s2 := mustOpen(t, c, ev.url, true, nil)
	subscribe(s2)
	if n := ev.e.NotifyResourceUpdated("test://doc"); n != 2 {
		t.Fatalf("NotifyResourceUpdated told %d sessions, want 2", n)
	}

	// Evicted: s1, idle longest, makes room for s3.
	clock.Advance(memory.DefaultMinIdleForEviction)
	mustOpen(t, c, ev.url, true, nil)
	if n := ev.e.NotifyResourceUpdated("test://doc"); n != 1 {
		t.Fatalf("after an eviction, NotifyResourceUpdated told %d sessions, want 1 (s2)", n)
	}

	// Expired: s2 and s3 are found expired by the next Create.
	clock.Advance(portlimits.DefaultSessionIdleTimeout + time.Second)
	mustOpen(t, c, ev.url, true, nil)
	if n := ev.e.NotifyResourceUpdated("test://doc"); n != 0 {
		t.Fatalf("after the expiry, NotifyResourceUpdated told %d sessions, want 0", n)
	}
	for _, sid := range []string{s1, s2} {
		if st := ping(t, c, ev.url, sid); st != http.StatusNotFound {
			t.Fatalf("ping of a removed session: %d, want 404", st)
		}
	}
}

// Options.ClientKey decides which client a session counts against (here,
// as behind a proxy, a forwarded address); an empty key falls back to the
// default. With authentication the default is the principal, whatever
// the address.
func TestClientKey(t *testing.T) {
	t.Run("custom", func(t *testing.T) {
		clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
		store := memory.NewSessionStore(memory.SessionStoreOptions{MaxSessionsPerClient: 2, Clock: clock})
		ev := newEnv(t, mcphttp.Options{SessionStore: store, ClientKey: func(r *http.Request) string {
			if f := r.Header.Get("X-Forwarded-For"); f != "" {
				return "fwd:" + f
			}
			return ""
		}})
		proxy := peerClient(t, "127.0.0.1")
		one, two := hdr{"X-Forwarded-For": "198.51.100.1"}, hdr{"X-Forwarded-For": "198.51.100.2"}
		sid := mustOpen(t, proxy, ev.url, true, one)
		mustOpen(t, proxy, ev.url, true, one)
		wantRefused(t, proxy, ev.url, one, http.StatusTooManyRequests, -32600, "30", "too many sessions")
		mustOpen(t, proxy, ev.url, true, two)
		if st := storedState(t, store, sid); st.Peer != "fwd:198.51.100.1" {
			t.Fatalf("stored Peer %q", st.Peer)
		}
		// No header: the key function gives nothing, the address counts.
		sid = mustOpen(t, proxy, ev.url, true, nil)
		if st := storedState(t, store, sid); st.Peer != "ip:127.0.0.1" {
			t.Fatalf("stored Peer %q", st.Peer)
		}
	})
	t.Run("principal", func(t *testing.T) {
		clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
		store := memory.NewSessionStore(memory.SessionStoreOptions{MaxSessionsPerClient: 1, Clock: clock})
		ev := newEnv(t, mcphttp.Options{SessionStore: store})
		tokens := mcphttp.StaticTokens{"a": {Subject: "alice"}, "b": {Subject: "bob"}}
		srv := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{})(ev.h))
		t.Cleanup(srv.Close)
		c := peerClient(t, "127.0.0.1")
		alice, bob := hdr{"Authorization": "Bearer a"}, hdr{"Authorization": "Bearer b"}
		sid := mustOpen(t, c, srv.URL, true, alice)
		wantRefused(t, c, srv.URL, alice, http.StatusTooManyRequests, -32600, "30", "too many sessions")
		mustOpen(t, c, srv.URL, true, bob) // same address, another principal
		if st := storedState(t, store, sid); st.Peer != "sub:alice" || st.Owner != "alice" {
			t.Fatalf("stored Peer %q, Owner %q", st.Peer, st.Owner)
		}
	})
}

func TestDefaultClientKey(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7:4711":             "ip:192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443": "ip:2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443": "ip:2001:db8:1:2::/64", // the same /64
		"[fe80::1%eth0]:80":          "ip:fe80::/64",
		"[::ffff:192.0.2.7]:80":      "ip:192.0.2.7",
		"192.0.2.8":                  "ip:192.0.2.8",
		"@":                          "addr:@",
		"":                           "addr:",
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.RemoteAddr = addr
		if got := mcphttp.DefaultClientKey(r); got != want {
			t.Errorf("DefaultClientKey(%q) = %q, want %q", addr, got, want)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r = r.WithContext(ports.WithPrincipal(r.Context(), ports.Principal{Subject: "carol"}))
	if got := mcphttp.DefaultClientKey(r); got != "sub:carol" {
		t.Errorf("DefaultClientKey with a principal = %q", got)
	}
}
