package mcphttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

func TestSessionLifecycle(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-11-25")

	// 200 JSON for a call that sends nothing before its response.
	resp := ev.post(callBody(2, "echo", `{"text":"hi"}`), sessHdr(sid, "2025-11-25"))
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	expect(t, resp, http.StatusOK, `"id":2`, `echo: hi`)

	// The header may be left out: the session knows its revision.
	resp = ev.post(callBody(3, "echo", `{"text":"again"}`), hdr{"Mcp-Session-Id": sid})
	expect(t, resp, http.StatusOK, `echo: again`)

	// DELETE ends the session: 204, then 404 for everything.
	resp = request(t, context.Background(), http.MethodDelete, ev.url, "", sessHdr(sid, "2025-11-25"))
	expect(t, resp, http.StatusNoContent)
	resp = ev.post(callBody(4, "echo", `{"text":"x"}`), sessHdr(sid, "2025-11-25"))
	body := expect(t, resp, http.StatusNotFound)
	if code, id := rpcError(t, body); code != -32600 || id != "4" {
		t.Fatalf("404 body %s", body)
	}
	resp = request(t, context.Background(), http.MethodDelete, ev.url, "", sessHdr(sid, "2025-11-25"))
	expect(t, resp, http.StatusNotFound)
	resp = request(t, context.Background(), http.MethodGet, ev.url, "", sessHdr(sid, "2025-11-25"))
	expect(t, resp, http.StatusNotFound)
}

func TestUnknownSession(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	resp := ev.post(callBody(1, "echo", `{}`), hdr{"Mcp-Session-Id": "0123456789abcdef0123456789abcdef"})
	expect(t, resp, http.StatusNotFound)
	resp = ev.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr{"Mcp-Session-Id": "bad id"})
	expect(t, resp, http.StatusNotFound)
}

func TestProgressSwitchesToSSE(t *testing.T) {
	for _, rev := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			ev := newEnv(t, mcphttp.Options{})
			sid := ev.initialize(rev)
			resp := ev.post(progressCallBody(2, "progress"), sessHdr(sid, rev))
			defer resp.Body.Close()
			if resp.Header.Get("X-Accel-Buffering") != "no" || resp.Header.Get("Cache-Control") != "no-cache" {
				t.Fatalf("SSE headers %v", resp.Header)
			}
			s := newSSE(t, resp)
			p := s.nextEvent(t)
			if !strings.Contains(p.data, `"method":"notifications/progress"`) || !strings.Contains(p.data, `"message":"half"`) || p.id == "" {
				t.Fatalf("first event %+v", p)
			}
			r := s.nextEvent(t)
			if !strings.Contains(r.data, `"id":2`) || !strings.Contains(r.data, `done`) || r.id == "" || r.id == p.id {
				t.Fatalf("second event %+v", r)
			}
			if _, err := s.next(); err == nil {
				t.Fatal("the stream goes on after the response")
			}
		})
	}
}

func TestStatelessProgressSSE(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	body := statelessBody(5, "tools/call", `"name":"progress","arguments":{}`)
	body = strings.Replace(body, `"_meta":{`, `"_meta":{"progressToken":7,`, 1)
	resp := ev.post(body, statelessHdr("tools/call", "progress"))
	defer resp.Body.Close()
	s := newSSE(t, resp)
	if p := s.nextEvent(t); !strings.Contains(p.data, "notifications/progress") || p.id != "" {
		t.Fatalf("progress event %+v (stateless streams carry no ids)", p)
	}
	if r := s.nextEvent(t); !strings.Contains(r.data, `"id":5`) || !strings.Contains(r.data, `"resultType":"complete"`) {
		t.Fatalf("response event %+v", r)
	}
}

func TestSSEOnlyClientGetsAStream(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	resp := ev.post(statelessCall(1, "echo", `{"text":"s"}`), mergeHdr(statelessHdr("tools/call", "echo"), hdr{"Accept": "text/event-stream"}))
	defer resp.Body.Close()
	s := newSSE(t, resp)
	if r := s.nextEvent(t); !strings.Contains(r.data, "echo: s") {
		t.Fatalf("event %+v", r)
	}
	// A JSON-only client gets JSON even when the call reports progress.
	sid := ev.initialize("2025-11-25")
	resp = ev.post(progressCallBody(2, "progress"), mergeHdr(sessHdr(sid, "2025-11-25"), hdr{"Accept": "application/json"}))
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	expect(t, resp, http.StatusOK, `"done"`)
}

func mergeHdr(a, b hdr) hdr {
	out := hdr{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestNotificationsAccepted(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-06-18")
	resp := ev.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`, sessHdr(sid, "2025-06-18"))
	if body := expect(t, resp, http.StatusAccepted); body != "" {
		t.Fatalf("202 with body %q", body)
	}
	// A client's response (to a server request) is accepted too.
	resp = ev.post(`{"jsonrpc":"2.0","id":"srv-1","result":{}}`, sessHdr(sid, "2025-06-18"))
	expect(t, resp, http.StatusAccepted)
	// A stateless notification.
	resp = ev.post(`{"jsonrpc":"2.0","method":"notifications/x","params":{`+fmt.Sprintf(statelessMeta, "2026-07-28")+`}}`, nil)
	expect(t, resp, http.StatusAccepted)
}

func TestBadRequests(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-11-25")
	cases := []refusedCase{
		{"missing session id", callBody(1, "echo", `{}`), nil, 400, -32600},
		// A notification without a session is accepted and ignored (202):
		// see TestPostBareNotificationAccepted.
		{"invalid JSON", `{"jsonrpc":`, hdr{"Mcp-Session-Id": sid}, 400, -32700},
		{"not JSON-RPC", `{"hello":1}`, nil, 400, -32600},
		{"empty body", ``, nil, 400, -32700},
		{"unsupported version header", callBody(1, "echo", `{}`), sessHdr(sid, "1999-01-01"), 400, -32022},
		{"repeated version header", callBody(1, "echo", `{}`), hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25, 2025-11-25"}, 400, -32022},
		{"stateless header without _meta", callBody(1, "echo", `{}`), hdr{"MCP-Protocol-Version": "2026-07-28"}, 400, -32602},
		{"batch without session", `[` + callBody(1, "echo", `{}`) + `]`, nil, 400, -32600},
		{"batch in a 2025-11-25 session", `[` + callBody(1, "echo", `{}`) + `]`, hdr{"Mcp-Session-Id": sid}, 400, -32600},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := expect(t, ev.post(c.body, c.h), c.status)
			if code, _ := rpcError(t, body); code != c.code {
				t.Fatalf("code %d, want %d: %s", code, c.code, body)
			}
		})
	}
	// The unsupported-version error lists the supported revisions.
	body := expect(t, ev.post(callBody(1, "echo", `{}`), sessHdr(sid, "1999-01-01")), 400, `"supported":[`, `"requested":"1999-01-01"`)
	_ = body
}

func TestStatelessHeaders(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	call := statelessCall(3, "echo", `{"text":"x"}`)
	ok := statelessHdr("tools/call", "echo")
	expect(t, ev.post(call, ok), http.StatusOK, `"id":3`, "echo: x")
	// An Mcp-Session-Id is ignored in the stateless era.
	expect(t, ev.post(call, mergeHdr(ok, hdr{"Mcp-Session-Id": "whatever"})), http.StatusOK, "echo: x")
	// The name may come base64-encoded.
	expect(t, ev.post(call, mergeHdr(ok, hdr{"Mcp-Name": "=?base64?ZWNobw==?="})), http.StatusOK, "echo: x")

	bad := map[string]hdr{
		"no MCP-Protocol-Version":  {"MCP-Protocol-Version": ""},
		"other MCP-Protocol-Ver":   {"MCP-Protocol-Version": "2025-11-25"},
		"no Mcp-Method":            {"Mcp-Method": ""},
		"other Mcp-Method":         {"Mcp-Method": "tools/list"},
		"method case":              {"Mcp-Method": "Tools/Call"},
		"no Mcp-Name":              {"Mcp-Name": ""},
		"other Mcp-Name":           {"Mcp-Name": "progress"},
		"broken base64 Mcp-Name":   {"Mcp-Name": "=?base64?!!!?="},
		"other base64 Mcp-Name":    {"Mcp-Name": "=?base64?ZWNobzI=?="},
		"non-ASCII Mcp-Name bytes": {"Mcp-Name": "ech\xc3\xb6"},
	}
	for name, h := range bad {
		t.Run(name, func(t *testing.T) {
			body := expect(t, ev.post(call, mergeHdr(ok, h)), http.StatusBadRequest)
			if code, id := rpcError(t, body); code != -32020 || id != "3" {
				t.Fatalf("body %s", body)
			}
		})
	}
	// tools/list needs no Mcp-Name.
	expect(t, ev.post(statelessBody(4, "tools/list", ""), statelessHdr("tools/list", "")), http.StatusOK, `"tools":[`)
}

func TestMcpParamHeaders(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	base := statelessHdr("tools/call", "sql")
	args := `{"region":"us-west1","count":42,"dry":true,"where":{"zone":"Zürich"},"query":"SELECT 1"}`
	good := hdr{"Mcp-Param-Region": "us-west1", "Mcp-Param-Count": "42", "Mcp-Param-Dry": "true", "Mcp-Param-Zone": "=?base64?WsO8cmljaA==?="}
	call := statelessCall(1, "sql", args)
	expect(t, ev.post(call, mergeHdr(base, good)), http.StatusOK, `"ok"`)
	// Header names are case-insensitive; a body integer compares as a
	// number with the canonical header ("42.0" in the body is 42).
	h := mergeHdr(base, good)
	delete(h, "Mcp-Param-Count")
	h["mcp-param-count"] = "42"
	expect(t, ev.post(statelessCall(1, "sql", strings.Replace(args, `"count":42`, `"count":42.0`, 1)), h), http.StatusOK)
	// Absent and null arguments need no header.
	expect(t, ev.post(statelessCall(2, "sql", `{"query":"q","region":null}`), base), http.StatusOK)

	bad := map[string]struct {
		args string
		h    hdr
	}{
		"missing header":           {args, hdr{"Mcp-Param-Region": ""}},
		"other value":              {args, hdr{"Mcp-Param-Region": "eu-west1"}},
		"other number":             {args, hdr{"Mcp-Param-Count": "43"}},
		"not a number":             {args, hdr{"Mcp-Param-Count": "forty-two"}},
		"non-canonical number":     {args, hdr{"Mcp-Param-Count": "42.0"}},
		"boolean case":             {args, hdr{"Mcp-Param-Dry": "True"}},
		"nested mismatch":          {args, hdr{"Mcp-Param-Zone": "Zurich"}},
		"non-ASCII plain value":    {args, hdr{"Mcp-Param-Zone": "Z\xc3\xbcrich"}},
		"header without argument":  {`{"query":"q"}`, hdr{"Mcp-Param-Region": "us-west1"}},
		"header for null argument": {`{"query":"q","region":null}`, hdr{"Mcp-Param-Region": "us-west1"}},
	}
	for name, c := range bad {
		t.Run(name, func(t *testing.T) {
			h := mergeHdr(base, good)
			if c.args != args {
				h = base
			}
			body := expect(t, ev.post(statelessCall(9, "sql", c.args), mergeHdr(h, c.h)), http.StatusBadRequest)
			if code, _ := rpcError(t, body); code != -32020 {
				t.Fatalf("body %s", body)
			}
		})
	}
}

func TestStatelessEngineErrors(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	// Unsupported version, with the header matching the body: 400, -32022.
	body := strings.ReplaceAll(statelessCall(1, "echo", `{}`), "2026-07-28", "2099-01-01")
	h := mergeHdr(statelessHdr("tools/call", "echo"), hdr{"MCP-Protocol-Version": "2099-01-01"})
	resp := expect(t, ev.post(body, h), http.StatusBadRequest, `"supported"`)
	if code, _ := rpcError(t, resp); code != -32022 {
		t.Fatalf("body %s", resp)
	}
	// Unknown method: 404, -32601.
	resp = expect(t, ev.post(statelessBody(2, "prompts/list", ""), statelessHdr("prompts/list", "")), http.StatusNotFound)
	if code, _ := rpcError(t, resp); code != -32601 {
		t.Fatalf("body %s", resp)
	}
	// Other JSON-RPC errors are answers: 200 (an unknown tool is -32602).
	resp = expect(t, ev.post(statelessCall(3, "nope", `{}`), statelessHdr("tools/call", "nope")), http.StatusOK)
	if code, _ := rpcError(t, resp); code != -32602 {
		t.Fatalf("body %s", resp)
	}
}

func TestBothErasOnOneURL(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-06-18")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			expect(t, ev.post(callBody(10+i, "echo", `{"text":"legacy"}`), sessHdr(sid, "2025-06-18")), 200, "echo: legacy")
		})
		wg.Go(func() {
			expect(t, ev.post(statelessCall(20+i, "echo", `{"text":"modern"}`), statelessHdr("tools/call", "echo")), 200, "echo: modern", `"resultType":"complete"`)
		})
	}
	wg.Wait()
	expect(t, ev.post(statelessBody(1, "server/discover", ""), statelessHdr("server/discover", "")), 200, `"supportedVersions":["2026-07-28"`)
}

func TestOrigin(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{AllowedOrigins: []string{"http://localhost:6274"}})
	call := statelessCall(1, "echo", `{"text":"o"}`)
	h := statelessHdr("tools/call", "echo")
	body := expect(t, ev.post(call, mergeHdr(h, hdr{"Origin": "http://evil.example"})), http.StatusForbidden, `"error"`)
	if code, id := rpcError(t, body); code != -32600 || id != "" {
		t.Fatalf("403 body %s", body)
	}
	expect(t, ev.post(call, mergeHdr(h, hdr{"Origin": "null"})), http.StatusForbidden)
	expect(t, ev.post(call, mergeHdr(h, hdr{"Origin": "http://localhost:6274"})), http.StatusOK, "echo: o")
	expect(t, ev.post(call, mergeHdr(h, hdr{"Origin": ev.url})), http.StatusOK, "echo: o") // same origin
	expect(t, ev.post(call, h), http.StatusOK)                                             // no Origin

	// GET and DELETE are checked too, before anything else.
	resp := request(t, context.Background(), http.MethodDelete, ev.url, "", hdr{"Origin": "http://evil.example"})
	expect(t, resp, http.StatusForbidden)

	any := newEnv(t, mcphttp.Options{AllowedOrigins: []string{"*"}})
	expect(t, any.post(call, mergeHdr(h, hdr{"Origin": "http://evil.example"})), http.StatusOK)
}

// A DNS-rebinding attack reaches the loopback listener with the attacker's
// host name in Host (and a matching Origin): refused.
func TestDNSRebinding(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	call := statelessCall(1, "echo", `{"text":"o"}`)
	send := func(host string, origin string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, ev.url, strings.NewReader(call))
		req.Host = host
		for k, v := range statelessHdr("tools/call", "echo") {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		return testtools.Do(t, nil, req)
	}
	_, port, _ := net.SplitHostPort(ev.srv.Listener.Addr().String())
	expect(t, send("evil.example:"+port, "http://evil.example:"+port), http.StatusForbidden)
	expect(t, send("evil.example:"+port, ""), http.StatusForbidden)
	expect(t, send("localhost:"+port, "http://localhost:"+port), http.StatusOK)

	allowed := newEnv(t, mcphttp.Options{AllowedHosts: []string{"mcp.internal"}})
	ev = allowed
	_, port, _ = net.SplitHostPort(ev.srv.Listener.Addr().String())
	expect(t, send("mcp.internal:"+port, ""), http.StatusOK)
}

func TestMethodsWithoutSession(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		resp := request(t, context.Background(), m, ev.url, "", nil)
		expect(t, resp, http.StatusMethodNotAllowed)
		if resp.Header.Get("Allow") != "POST" {
			t.Fatalf("%s: Allow %q", m, resp.Header.Get("Allow"))
		}
	}
	resp := request(t, context.Background(), http.MethodPut, ev.url, "{}", nil)
	expect(t, resp, http.StatusMethodNotAllowed)
	if resp.Header.Get("Allow") != "GET, POST, DELETE" {
		t.Fatalf("Allow %q", resp.Header.Get("Allow"))
	}
}

func TestNotAcceptable(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	call := statelessCall(1, "echo", `{}`)
	h := statelessHdr("tools/call", "echo")
	expect(t, ev.post(call, mergeHdr(h, hdr{"Accept": "text/html"})), http.StatusNotAcceptable)
	expect(t, ev.post(call, mergeHdr(h, hdr{"Accept": "application/json;q=0, text/event-stream;q=0"})), http.StatusNotAcceptable)
	// Lenient: no Accept at all, or */*, is fine.
	expect(t, ev.post(call, mergeHdr(h, hdr{"Accept": ""})), http.StatusOK)
	expect(t, ev.post(call, mergeHdr(h, hdr{"Accept": "*/*"})), http.StatusOK)

	sid := ev.initialize("2025-11-25")
	resp := request(t, context.Background(), http.MethodGet, ev.url, "", mergeHdr(sessHdr(sid, "2025-11-25"), hdr{"Accept": "application/json"}))
	expect(t, resp, http.StatusNotAcceptable)
}

func TestUnsupportedMediaTypeAndTooLarge(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{MaxBodyBytes: 256})
	call := statelessCall(1, "echo", `{"text":"x"}`)
	h := statelessHdr("tools/call", "echo")
	expect(t, ev.post(call, mergeHdr(h, hdr{"Content-Type": "text/plain"})), http.StatusUnsupportedMediaType)
	expect(t, ev.post(call, mergeHdr(h, hdr{"Content-Type": ""})), http.StatusUnsupportedMediaType)
	expect(t, ev.post(call, mergeHdr(h, hdr{"Content-Type": "application/json; charset=utf-8"})), http.StatusOK)

	big := statelessCall(1, "echo", `{"text":"`+strings.Repeat("x", 300)+`"}`)
	expect(t, ev.post(big, h), http.StatusRequestEntityTooLarge)
	// Without Content-Length (chunked), the limit holds while reading.
	req, _ := http.NewRequest(http.MethodPost, ev.url, struct{ ioReader }{strings.NewReader(big)})
	req.Header.Set("Content-Type", "application/json")
	resp := testtools.Do(t, nil, req)
	if req.ContentLength > 0 {
		t.Fatal("the request has a length")
	}
	expect(t, resp, http.StatusRequestEntityTooLarge)
}

type ioReader interface{ Read([]byte) (int, error) }

func TestTooManyInFlight(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{MaxInFlightPerSession: 1})
	sid, done := ev.blockedCall()
	resp := ev.post(callBody(3, "echo", `{}`), sessHdr(sid, "2025-11-25"))
	body := expect(t, resp, http.StatusTooManyRequests)
	if resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if code, id := rpcError(t, body); code != -32600 || id != "3" {
		t.Fatalf("body %s", body)
	}
	// Notifications still get through: cancel the blocked call.
	expect(t, ev.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`, sessHdr(sid, "2025-11-25")), http.StatusAccepted)
	ev.wantCancelled()
	if b := expect(t, <-done, http.StatusAccepted); b != "" {
		t.Fatalf("a cancelled request got %q", b)
	}
	expect(t, ev.post(callBody(4, "echo", `{}`), sessHdr(sid, "2025-11-25")), http.StatusOK)
}

func TestSessionExpiry(t *testing.T) {
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	store := memory.NewSessionStore(memory.SessionStoreOptions{IdleTimeout: time.Minute, Clock: clock})
	ev := newEnv(t, mcphttp.Options{SessionStore: store})
	sid := ev.initialize("2025-11-25")
	clock.Advance(50 * time.Second)
	expect(t, ev.post(callBody(2, "echo", `{}`), sessHdr(sid, "2025-11-25")), http.StatusOK) // activity
	clock.Advance(50 * time.Second)
	expect(t, ev.post(callBody(3, "echo", `{}`), sessHdr(sid, "2025-11-25")), http.StatusOK)
	clock.Advance(61 * time.Second)
	expect(t, ev.post(callBody(4, "echo", `{}`), sessHdr(sid, "2025-11-25")), http.StatusNotFound)
}

func TestTooManySessions(t *testing.T) {
	store := memory.NewSessionStore(memory.SessionStoreOptions{MaxSessions: 1})
	ev := newEnv(t, mcphttp.Options{SessionStore: store})
	ev.initialize("2025-11-25")
	resp := ev.post(fmt.Sprintf(initBody, "2025-11-25"), nil)
	expect(t, resp, http.StatusServiceUnavailable)
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatal("a refused session got an id")
	}
}

func TestFailedInitializeCreatesNoSession(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	resp := ev.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7}}`, nil)
	expect(t, resp, http.StatusOK, `"error"`)
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatal("a failed initialize got a session id")
	}
}

func TestBatch(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-03-26")
	batch := `[` + callBody(1, "echo", `{"text":"a"}`) + `,{"jsonrpc":"2.0","method":"notifications/x"},` + callBody(2, "echo", `{"text":"b"}`) + `]`
	body := expect(t, ev.post(batch, sessHdr(sid, "2025-03-26")), http.StatusOK)
	if !strings.HasPrefix(body, "[") || strings.Index(body, "echo: a") > strings.Index(body, "echo: b") {
		t.Fatalf("batch answer %s", body)
	}
	expect(t, ev.post(`[{"jsonrpc":"2.0","method":"notifications/x"}]`, sessHdr(sid, "2025-03-26")), http.StatusAccepted)
	expect(t, ev.post(`[]`, sessHdr(sid, "2025-03-26")), http.StatusBadRequest)
}

// The call's context ends when a stateless client goes away (2026-07-28:
// closing the stream is the cancellation), and when a handshake-era client
// goes away before anything was streamed.
func TestClientDisconnectCancels(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-11-25")
	for name, send := range map[string]func(ctx context.Context){
		"stateless": func(ctx context.Context) {
			if resp, err := doRaw(ctx, http.MethodPost, ev.url, statelessCall(1, "block", `{}`), statelessHdr("tools/call", "block")); err == nil {
				resp.Body.Close()
			}
		},
		"session, JSON": func(ctx context.Context) {
			if resp, err := doRaw(ctx, http.MethodPost, ev.url, callBody(2, "block", `{}`), sessHdr(sid, "2025-11-25")); err == nil {
				resp.Body.Close()
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan struct{})
			go func() {
				defer close(errc)
				send(ctx)
			}()
			ev.waitStarted()
			cancel()
			if err := ev.waitStopped(); !errors.Is(err, context.Canceled) {
				t.Fatalf("tool stopped with %v", err)
			}
			<-errc
		})
	}
}

// A session created on one instance is served by another that shares the
// stores (a load balancer in front of both).
func TestSharedStores(t *testing.T) {
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{})
	events := memory.NewEventStore(memory.EventStoreOptions{})
	a := newEnv(t, mcphttp.Options{SessionStore: sessions, EventStore: events})
	b := newEnv(t, mcphttp.Options{SessionStore: sessions, EventStore: events})
	sid := a.initialize("2025-06-18")
	expect(t, b.post(callBody(2, "echo", `{"text":"on b"}`), sessHdr(sid, "2025-06-18")), http.StatusOK, "echo: on b")
	// The restored session kept the negotiated revision, whatever the
	// header says: arguments that fail the input schema are -32602 in
	// 2025-06-18 (a tool result with isError from 2025-11-25 on).
	body := expect(t, b.post(callBody(3, "echo", `{"text":5}`), sessHdr(sid, "2025-11-25")), http.StatusOK)
	if code, _ := rpcError(t, body); code != -32602 {
		t.Fatalf("body %s", body)
	}

	// A POST stream cut on b is resumed on a.
	resp := b.post(progressCallBody(4, "progress_block"), sessHdr(sid, "2025-06-18"))
	s := newSSE(t, resp)
	p := s.nextEvent(t)
	b.waitStarted()
	resp.Body.Close()
	// While the call still runs on b, a replays what there is (nothing
	// yet) and tells the client to come back.
	resp = request(t, context.Background(), http.MethodGet, a.url, "", mergeHdr(sessHdr(sid, "2025-06-18"), hdr{"Last-Event-ID": p.id}))
	s = newSSE(t, resp)
	if e, err := s.next(); err != io.EOF || s.retry != "1000" {
		t.Fatalf("early resume: %+v %v, retry %q", e, err, s.retry)
	}
	resp.Body.Close()
	b.releaseAll()
	testtools.Eventually(t, 10*time.Second, "the released call's answer on a resumed stream", func() bool {
		r := request(t, context.Background(), http.MethodGet, a.url, "", mergeHdr(sessHdr(sid, "2025-06-18"), hdr{"Last-Event-ID": p.id}))
		body := readAll(t, r)
		return r.StatusCode == 200 && strings.Contains(body, `"id":4`) && strings.Contains(body, "released")
	})

	// Deleted on b: gone on a.
	expect(t, request(t, context.Background(), http.MethodDelete, b.url, "", sessHdr(sid, "2025-06-18")), http.StatusNoContent)
	expect(t, a.post(callBody(5, "echo", `{}`), sessHdr(sid, "2025-06-18")), http.StatusNotFound)
}

func TestDeleteCancelsCalls(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid, done := ev.blockedCall()
	expect(t, request(t, context.Background(), http.MethodDelete, ev.url, "", sessHdr(sid, "2025-11-25")), http.StatusNoContent)
	ev.wantCancelled()
	expect(t, <-done, http.StatusNotFound)
}

func TestTransportInfoReachesTools(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	resp := ev.post(statelessCall(1, "whoami", `{}`), mergeHdr(statelessHdr("tools/call", "whoami"), hdr{"X-Test": "hello", "Authorization": "Bearer secret"}))
	// Headers reach the tool, credentials do not; the peer address does.
	expect(t, resp, http.StatusOK, `anonymous|hello||true`)
}

func TestAbort(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-11-25")
	done := make(chan *http.Response, 2)
	go func() {
		done <- mustDo(http.MethodPost, ev.url, progressCallBody(2, "progress_block"), sessHdr(sid, "2025-11-25"))
	}()
	go func() {
		done <- mustDo(http.MethodPost, ev.url, statelessCall(3, "block", `{}`), statelessHdr("tools/call", "block"))
	}()
	ev.waitStarted()
	ev.waitStarted()
	ev.h.Abort()
	for range 2 {
		if err := ev.waitStopped(); !errors.Is(err, context.Canceled) {
			t.Fatalf("tool stopped with %v", err)
		}
	}
	for range 2 {
		r := <-done
		_ = readAll(t, r)
	}
	expect(t, ev.post(statelessCall(4, "echo", `{}`), statelessHdr("tools/call", "echo")), http.StatusServiceUnavailable)
}

func TestInitializeOverSSE(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	resp := ev.post(fmt.Sprintf(initBody, "2025-11-25"), hdr{"Accept": "text/event-stream"})
	defer resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	s := newSSE(t, resp)
	if e := s.nextEvent(t); !strings.Contains(e.data, `"protocolVersion":"2025-11-25"`) || sid == "" {
		t.Fatalf("event %+v, session %q", e, sid)
	}
	expect(t, ev.post(callBody(2, "echo", `{}`), sessHdr(sid, "2025-11-25")), http.StatusOK)
}

// A batch nested past the decoder's depth is valid JSON: refused with
// -32600 naming the limit, as the engine refuses it on stdio and
// WebSocket (not "not valid JSON"); one at the limit is read.
func TestBatchNestedTooDeep(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-03-26")
	nested := func(levels int) string { // the batch itself is level 1
		return `[` + callBody(1, "echo", `{"text":"a","x":`+strings.Repeat(`[`, levels-4)+strings.Repeat(`]`, levels-4)+`}`) + `]`
	}
	body := expect(t, ev.post(nested(10_001), sessHdr(sid, "2025-03-26")), http.StatusBadRequest)
	var m struct {
		ID    *json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Limit string `json:"limit"`
				Max   int    `json:"max"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.ID != nil || m.Error.Code != -32600 || m.Error.Data.Limit != "maxNestingDepth" ||
		m.Error.Data.Max != 10_000 || !strings.Contains(m.Error.Message, "deeper than 10000 levels") {
		t.Fatalf("a batch nested 10,001 levels: %s", body)
	}
	// Not JSON before the depth is passed, or brackets inside a string:
	// a parse error, not the depth.
	for _, bad := range []string{
		`[x` + strings.Repeat(`[`, 10_001),
		`[{"x":"` + strings.Repeat(`[`, 10_001) + `"},}]`,
	} {
		body := expect(t, ev.post(bad, sessHdr(sid, "2025-03-26")), http.StatusBadRequest)
		if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error.Code != -32700 {
			t.Fatalf("%.40s…: %s", bad, body)
		}
	}
	// At the limit the batch is read (its member answered on its own).
	if body := expect(t, ev.post(nested(10_000), sessHdr(sid, "2025-03-26")), http.StatusOK); !strings.HasPrefix(body, "[") {
		t.Fatalf("a batch nested 10,000 levels: %.300s", body)
	}
}
