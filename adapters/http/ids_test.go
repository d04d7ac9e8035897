package mcphttp_test

import (
	"net/http"
	"testing"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
)

// A POST refused for what its params hold is answered with the request's
// id, in either era and in a session (issue 10, "No lost ids").
func TestPostRefusedRequestAnswersItsID(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-11-25")
	for _, tc := range []struct {
		name, body string
		h          hdr
		code       int
		id         string
	}{
		{"no session, duplicate in params", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","name":"x"}}`, nil, -32600, `5`},
		{"stateless, duplicate in arguments", statelessCall(6, "echo", `{"text":"a","text":"b"}`), statelessHdr("tools/call", "echo"), -32600, `6`},
		{"session, duplicate in arguments", `{"jsonrpc":"2.0","id":"s-7","method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}}`, sessHdr(sid, "2025-11-25"), -32600, `"s-7"`},
		{"session, invalid UTF-8 in arguments", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"\xff\"}}}", sessHdr(sid, "2025-11-25"), -32700, `8`},
		{"id twice: none", `{"jsonrpc":"2.0","id":9,"id":10,"method":"ping"}`, sessHdr(sid, "2025-11-25"), -32600, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := expect(t, ev.post(tc.body, tc.h), http.StatusBadRequest)
			code, id := rpcError(t, body)
			if code != tc.code || id != tc.id {
				t.Fatalf("code %d id %q, want %d %q: %s", code, id, tc.code, tc.id, body)
			}
		})
	}
	// The session goes on.
	expect(t, ev.post(callBody(11, "echo", `{"text":"hi"}`), sessHdr(sid, "2025-11-25")), http.StatusOK, `echo: hi`)
}

// A notification or response that names no session and no stateless-era
// version has nowhere to go: 202, ignored. This is the exact POST the
// official Go SDK (v1.8.0) sends after cancelling a 2026-07-28 call: no
// Mcp-Session-Id, no MCP-Protocol-Version, no _meta.
func TestPostBareNotificationAccepted(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	for _, tc := range []struct {
		name, body string
		h          hdr
	}{
		{"go-sdk's cancel", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, nil},
		{"cancel with a stateless version header", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"ctx"}}`, hdr{"MCP-Protocol-Version": "2026-07-28"}},
		{"other notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`, nil},
		{"response", `{"jsonrpc":"2.0","id":3,"result":{}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if body := expect(t, ev.post(tc.body, tc.h), http.StatusAccepted); body != "" {
				t.Fatalf("202 with a body: %q", body)
			}
		})
	}
	// Header checks still apply: an unsupported version is refused.
	expect(t, ev.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, hdr{"MCP-Protocol-Version": "1999-01-01"}), http.StatusBadRequest)
	// A request without a session is still refused.
	expect(t, ev.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil), http.StatusBadRequest, `"id":1`, `Mcp-Session-Id`)
}
