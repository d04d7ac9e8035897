package mcphttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// 2025-11-25, "Protocol Version Header": the client SHOULD send the
// negotiated revision, and the server MUST answer 400 only for an invalid
// or unsupported one. A supported revision other than the session's is
// served at the session's revision (0.1.16's server-sse-multiple-streams
// sends 2025-03-26 in a 2025-11-25 session).
func TestSessionAcceptsAnySupportedVersionHeader(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-11-25")
	for _, pv := range []string{"2025-03-26", "2025-06-18", "2024-11-05", "2026-07-28"} {
		t.Run(pv, func(t *testing.T) {
			if pv == "2026-07-28" {
				// A stateless revision in the header of a body without
				// _meta: a stateless request that lacks its version (see
				// TestStatelessHeaderWithoutVersionInBody).
				body := expect(t, ev.post(callBody(2, "echo", `{"text":"x"}`), sessHdr(sid, pv)), http.StatusBadRequest)
				if code, id := rpcError(t, body); code != -32602 || id != "2" {
					t.Fatalf("body %s", body)
				}
				return
			}
			expect(t, ev.post(callBody(2, "echo", `{"text":"x"}`), sessHdr(sid, pv)), http.StatusOK, `"id":2`, "echo: x")
			// Served at 2025-11-25: a schema failure is a tool result with
			// isError (SEP-1303), not -32602 as in 2025-06-18.
			expect(t, ev.post(callBody(3, "echo", `{"text":5}`), sessHdr(sid, pv)), http.StatusOK, `"isError":true`)
			// Notifications take it too.
			expect(t, ev.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`, sessHdr(sid, pv)), http.StatusAccepted)
		})
	}
	// GET too, and the stream is the session's: a 2025-11-25 stream starts
	// with its priming event.
	resp, s := ev.openGet(sid, "2025-03-26", nil)
	if p := s.nextEvent(t); p.id == "" || p.data != "" {
		t.Fatalf("priming event %+v", p)
	}
	resp.Body.Close()
	// Unsupported or invalid values are still refused.
	for _, pv := range []string{"2099-01-01", "1999-01-01", "latest", ""} {
		h := sessHdr(sid, pv)
		if pv == "" {
			h = hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": " "}
		}
		body := expect(t, ev.post(callBody(4, "echo", `{}`), h), http.StatusBadRequest, `"supported":[`)
		if code, id := rpcError(t, body); code != -32022 || id != "4" {
			t.Fatalf("%q: body %s", pv, body)
		}
		expect(t, request(t, context.Background(), http.MethodGet, ev.url, "", h), http.StatusBadRequest)
		expect(t, request(t, context.Background(), http.MethodDelete, ev.url, "", h), http.StatusBadRequest)
	}
	expect(t, request(t, context.Background(), http.MethodDelete, ev.url, "", sessHdr(sid, "2025-03-26")), http.StatusNoContent)
}

// 2026-07-28 basic, "Per-request protocol fields": a request missing a
// required _meta field is malformed: -32602 with HTTP 400. A body without
// the version under a stateless MCP-Protocol-Version header lacks a field;
// it is not a header mismatch (server-stateless,
// sep-2575-request-meta-invalid-missing-meta and -missing-protocol-version).
func TestStatelessHeaderWithoutVersionInBody(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-11-25")
	cases := map[string]struct {
		method, params string
		h              hdr
	}{
		"discover without _meta":                {"server/discover", `{}`, nil},
		"discover without params":               {"server/discover", ``, nil},
		"_meta without protocolVersion":         {"server/discover", `{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}`, nil},
		"protocolVersion not a string":          {"server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}`, nil},
		"tools/call without _meta":              {"tools/call", `{"name":"echo","arguments":{"text":"x"}}`, hdr{"Mcp-Name": "echo"}},
		"tools/list with a session id":          {"tools/list", `{}`, hdr{"Mcp-Session-Id": sid}},
		"tools/list with an unknown session id": {"tools/list", `{}`, hdr{"Mcp-Session-Id": "0123456789abcdef0123456789abcdef"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":101,"method":"` + c.method + `"`
			if c.params != "" {
				body += `,"params":` + c.params
			}
			body += `}`
			resp := ev.post(body, mergeHdr(statelessHdr(c.method, ""), c.h))
			got := expect(t, resp, http.StatusBadRequest, `protocolVersion`)
			if code, id := rpcError(t, got); code != -32602 || id != "101" {
				t.Fatalf("body %s", got)
			}
		})
	}
	// A notification cannot be answered: without a session or _meta it
	// has nowhere to go, and is accepted and ignored (202), as for
	// clients that send their cancellations that way (issue 10).
	expect(t, ev.post(`{"jsonrpc":"2.0","method":"notifications/x"}`, statelessHdr("notifications/x", "")), http.StatusAccepted)
	// An unsupported version in the header is still -32022.
	got := expect(t, ev.post(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, mergeHdr(statelessHdr("server/discover", ""), hdr{"MCP-Protocol-Version": "2099-01-01"})), http.StatusBadRequest)
	if code, _ := rpcError(t, got); code != -32022 {
		t.Fatalf("body %s", got)
	}
}

// A stateless request whose _meta lacks clientCapabilities is answered
// -32602 by the engine, with HTTP 400 (server-stateless,
// sep-2575-http-server-meta-invalid-400). Other -32602 answers stay 200.
func TestStatelessMissingCapabilitiesIs400(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	for name, meta := range map[string]string{
		"absent": `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`,
		"null":   `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}`,
		"array":  `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":104,"method":"server/discover","params":{"_meta":` + meta + `}}`
			got := expect(t, ev.post(body, statelessHdr("server/discover", "")), http.StatusBadRequest, `clientCapabilities`)
			if code, id := rpcError(t, got); code != -32602 || id != "104" {
				t.Fatalf("body %s", got)
			}
			call := `{"jsonrpc":"2.0","id":105,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":` + meta + `}}`
			got = expect(t, ev.post(call, mergeHdr(statelessHdr("tools/call", "progress"), hdr{"Accept": "text/event-stream"})), http.StatusBadRequest)
			if code, _ := rpcError(t, got); code != -32602 {
				t.Fatalf("body %s", got)
			}
		})
	}
	// clientInfo is optional.
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	expect(t, ev.post(body, statelessHdr("server/discover", "")), http.StatusOK, `"supportedVersions"`)
	// An unknown tool is an answer, not a malformed request.
	got := expect(t, ev.post(statelessCall(3, "nope", `{}`), statelessHdr("tools/call", "nope")), http.StatusOK)
	if code, _ := rpcError(t, got); code != -32602 {
		t.Fatalf("body %s", got)
	}
}

// SEP-2243's test-case table: an Mcp-Param value whose base64 lacks its
// padding is invalid: 400 with -32020 (http-custom-header-server-validation,
// ServerRejectsInvalidBase64Padding).
func TestUnpaddedBase64ParamRejected(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	base := statelessHdr("tools/call", "sql")
	call := statelessCall(1, "sql", `{"region":"Hello"}`)
	expect(t, ev.post(call, mergeHdr(base, hdr{"Mcp-Param-Region": "=?base64?SGVsbG8=?="})), http.StatusOK, `"ok"`)
	expect(t, ev.post(call, mergeHdr(base, hdr{"Mcp-Param-Region": "Hello"})), http.StatusOK, `"ok"`)
	for _, v := range []string{"=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="} {
		got := expect(t, ev.post(call, mergeHdr(base, hdr{"Mcp-Param-Region": v})), http.StatusBadRequest)
		if code, id := rpcError(t, got); code != -32020 || id != "1" {
			t.Fatalf("%s: body %s", v, got)
		}
	}
	// Mcp-Name too.
	echo := statelessCall(2, "echo", `{"text":"x"}`)
	got := expect(t, ev.post(echo, statelessHdr("tools/call", "=?base64?ZWNobw?=")), http.StatusBadRequest)
	if code, _ := rpcError(t, got); code != -32020 {
		t.Fatalf("body %s", got)
	}
}

// resources/read checks Mcp-Name against params.uri (as the engine's
// Inspect reads it) before the engine answers.
func TestResourcesReadName(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	body := statelessBody(1, "resources/read", `"uri":"file:///a b.txt"`)
	got := expect(t, ev.post(body, statelessHdr("resources/read", "other")), http.StatusBadRequest, "params.uri")
	if code, _ := rpcError(t, got); code != -32020 {
		t.Fatalf("body %s", got)
	}
	expect(t, ev.post(body, statelessHdr("resources/read", "")), http.StatusBadRequest, "Mcp-Name")
	// The name matches: the engine has no resources yet (-32601, 404).
	got = expect(t, ev.post(body, statelessHdr("resources/read", "file:///a b.txt")), http.StatusNotFound)
	if code, _ := rpcError(t, got); code != -32601 {
		t.Fatalf("body %s", got)
	}
	expect(t, ev.post(body, statelessHdr("resources/read", "=?base64?ZmlsZTovLy9hIGIudHh0?=")), http.StatusNotFound)
}

// A session belongs to the principal that initialized it: on every
// instance that shares the store, another principal (or an anonymous
// request) gets 404 as if it did not exist, and cannot end it.
func TestSessionOwner(t *testing.T) {
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{})
	events := memory.NewEventStore(memory.EventStoreOptions{})
	tokens := mcphttp.StaticTokens{"alice-token": {Subject: "alice"}, "bob-token": {Subject: "bob"}}
	var urls []string
	for range 2 {
		ev := newEnv(t, mcphttp.Options{SessionStore: sessions, EventStore: events})
		srv := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{})(ev.h))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	anon := newEnv(t, mcphttp.Options{SessionStore: sessions, EventStore: events}) // no authentication
	as := func(token string) hdr { return hdr{"Authorization": "Bearer " + token} }

	resp := request(t, context.Background(), http.MethodPost, urls[0], strings.Replace(initBody, "%s", "2025-11-25", 1), as("alice-token"))
	expect(t, resp, http.StatusOK)
	sid := resp.Header.Get("Mcp-Session-Id")
	st, err := sessions.Get(context.Background(), sid)
	if err != nil || st.Owner != "alice" {
		t.Fatalf("stored state %+v, %v", st, err)
	}
	h := func(token string) hdr { return mergeHdr(sessHdr(sid, "2025-11-25"), as(token)) }
	expect(t, request(t, context.Background(), http.MethodPost, urls[0], `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h("alice-token")), http.StatusAccepted)

	for i, url := range urls {
		// Bob, on either instance: the session does not exist for him.
		body := expect(t, request(t, context.Background(), http.MethodPost, url, callBody(2, "whoami", `{}`), h("bob-token")), http.StatusNotFound)
		if code, id := rpcError(t, body); code != -32600 || id != "2" {
			t.Fatalf("instance %d: body %s", i, body)
		}
		expect(t, request(t, context.Background(), http.MethodPost, url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, h("bob-token")), http.StatusNotFound)
		expect(t, request(t, context.Background(), http.MethodGet, url, "", h("bob-token")), http.StatusNotFound)
		expect(t, request(t, context.Background(), http.MethodDelete, url, "", h("bob-token")), http.StatusNotFound)
		// Alice, on either instance (the second restores it from the store).
		expect(t, request(t, context.Background(), http.MethodPost, url, callBody(3, "whoami", `{}`), h("alice-token")), http.StatusOK, "alice|")
	}
	// An unauthenticated request (a handler without RequireBearer) neither.
	expect(t, anon.post(callBody(4, "echo", `{}`), sessHdr(sid, "2025-11-25")), http.StatusNotFound)
	expect(t, request(t, context.Background(), http.MethodDelete, anon.url, "", sessHdr(sid, "2025-11-25")), http.StatusNotFound)

	// Only Alice ends it.
	expect(t, request(t, context.Background(), http.MethodDelete, urls[1], "", h("alice-token")), http.StatusNoContent)
	expect(t, request(t, context.Background(), http.MethodPost, urls[0], callBody(5, "whoami", `{}`), h("alice-token")), http.StatusNotFound)

	// A session initialized without authentication is anyone's who comes
	// without authentication, and nobody's with it.
	sid2 := anon.initialize("2025-11-25")
	expect(t, anon.post(callBody(6, "echo", `{}`), sessHdr(sid2, "2025-11-25")), http.StatusOK)
	expect(t, request(t, context.Background(), http.MethodPost, urls[0], callBody(7, "whoami", `{}`), mergeHdr(sessHdr(sid2, "2025-11-25"), as("alice-token"))), http.StatusNotFound)
}

// sessionEvents opens a session with a resumable POST stream and its GET
// stream, and returns the session and an event id of each stream.
func sessionEvents(t *testing.T, ev *env) (sid, postEvent, getEvent string) {
	t.Helper()
	sid = ev.initialize("2025-11-25")
	resp := ev.post(progressCallBody(2, "progress"), sessHdr(sid, "2025-11-25"))
	s := newSSE(t, resp)
	postEvent = s.nextEvent(t).id
	readAll(t, resp)
	resp, s = ev.openGet(sid, "2025-11-25", nil)
	getEvent = s.nextEvent(t).id // the priming event
	resp.Body.Close()
	if postEvent == "" || getEvent == "" {
		t.Fatalf("event ids %q %q", postEvent, getEvent)
	}
	return sid, postEvent, getEvent
}

func replayable(events ports.EventStore, id string) bool {
	_, err := events.Replay(context.Background(), id, func(ports.Event) error { return nil })
	return !errors.Is(err, ports.ErrEventNotFound)
}

// When a session ends, the events of its streams leave the event store
// (ports.EventStore.DeleteStream); other sessions' stay.
func TestEndedSessionStreamsDeleted(t *testing.T) {
	t.Run("DELETE", func(t *testing.T) {
		events := memory.NewEventStore(memory.EventStoreOptions{})
		ev := newEnv(t, mcphttp.Options{EventStore: events})
		sid, post, get := sessionEvents(t, ev)
		_, otherPost, otherGet := sessionEvents(t, ev)
		expect(t, request(t, context.Background(), http.MethodDelete, ev.url, "", sessHdr(sid, "2025-11-25")), http.StatusNoContent)
		if replayable(events, post) || replayable(events, get) {
			t.Fatal("the deleted session's events are still in the store")
		}
		if !replayable(events, otherPost) || !replayable(events, otherGet) {
			t.Fatal("another session's events were deleted")
		}
		if n := events.Len(); n != 2 {
			t.Fatalf("%d streams left, want 2", n)
		}
	})
	t.Run("DELETE on another instance", func(t *testing.T) {
		sessions := memory.NewSessionStore(memory.SessionStoreOptions{})
		events := memory.NewEventStore(memory.EventStoreOptions{})
		a := newEnv(t, mcphttp.Options{SessionStore: sessions, EventStore: events})
		b := newEnv(t, mcphttp.Options{SessionStore: sessions, EventStore: events})
		sid, post, get := sessionEvents(t, a)
		expect(t, request(t, context.Background(), http.MethodDelete, b.url, "", sessHdr(sid, "2025-11-25")), http.StatusNoContent)
		if replayable(events, get) {
			t.Fatal("the standalone stream's events outlive the session")
		}
		// a learns it at the session's next request, and deletes the POST
		// streams it opened.
		expect(t, a.post(callBody(3, "echo", `{}`), sessHdr(sid, "2025-11-25")), http.StatusNotFound)
		if replayable(events, post) {
			t.Fatal("the POST stream's events outlive the session")
		}
	})
	t.Run("expiry", func(t *testing.T) {
		clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
		sessions := memory.NewSessionStore(memory.SessionStoreOptions{IdleTimeout: time.Minute, Clock: clock})
		events := memory.NewEventStore(memory.EventStoreOptions{})
		ev := newEnv(t, mcphttp.Options{SessionStore: sessions, EventStore: events})
		sid, post, get := sessionEvents(t, ev)
		clock.Advance(2 * time.Minute)
		expect(t, ev.post(callBody(3, "echo", `{}`), sessHdr(sid, "2025-11-25")), http.StatusNotFound)
		if replayable(events, post) || replayable(events, get) {
			t.Fatal("the expired session's events are still in the store")
		}
	})
	t.Run("DELETE during a streamed call", func(t *testing.T) {
		events := memory.NewEventStore(memory.EventStoreOptions{})
		ev := newEnv(t, mcphttp.Options{EventStore: events})
		sid := ev.initialize("2025-11-25")
		resp := ev.post(progressCallBody(2, "progress_block"), sessHdr(sid, "2025-11-25"))
		s := newSSE(t, resp)
		p := s.nextEvent(t)
		ev.waitStarted()
		expect(t, request(t, context.Background(), http.MethodDelete, ev.url, "", sessHdr(sid, "2025-11-25")), http.StatusNoContent)
		if err := ev.waitStopped(); !errors.Is(err, context.Canceled) {
			t.Fatalf("tool stopped with %v", err)
		}
		// The call's last event (404: the session is gone) is delivered
		// but not kept.
		last := s.nextEvent(t)
		if !strings.Contains(last.data, `"id":2`) || !strings.Contains(last.data, "Session not found") || last.id != "" {
			t.Fatalf("last event %+v", last)
		}
		if _, err := s.next(); err != io.EOF {
			t.Fatalf("stream: %v", err)
		}
		resp.Body.Close()
		if replayable(events, p.id) || events.Len() != 0 {
			t.Fatalf("events left in the store (%d streams)", events.Len())
		}
	})
}

// countingEvents counts DeleteStream calls.
type countingEvents struct {
	ports.EventStore
	mu      sync.Mutex
	deleted []string
}

func (c *countingEvents) DeleteStream(ctx context.Context, id string) error {
	c.mu.Lock()
	c.deleted = append(c.deleted, id)
	c.mu.Unlock()
	return c.EventStore.DeleteStream(ctx, id)
}

// Requests for unknown sessions, and sessions that only leave this
// instance's memory, delete nothing.
func TestUnknownSessionDeletesNothing(t *testing.T) {
	events := &countingEvents{EventStore: memory.NewEventStore(memory.EventStoreOptions{})}
	ev := newEnv(t, mcphttp.Options{EventStore: events})
	expect(t, ev.post(callBody(1, "echo", `{}`), hdr{"Mcp-Session-Id": "0123456789abcdef0123456789abcdef"}), http.StatusNotFound)
	expect(t, request(t, context.Background(), http.MethodDelete, ev.url, "", hdr{"Mcp-Session-Id": "0123456789abcdef0123456789abcdef"}), http.StatusNotFound)
	ev.h.Abort()
	events.mu.Lock()
	defer events.mu.Unlock()
	if len(events.deleted) != 0 {
		t.Fatalf("deleted %v", events.deleted)
	}
}

// The engine ends a session's calls served over HTTP on Engine.Abort (and
// Handler.Abort ends them through the engine's sessions).
func TestEngineAbortEndsSessionCalls(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	_, done := ev.blockedCall()
	ev.e.Abort()
	ev.wantCancelled()
	// Cancelled: no response.
	if body := expect(t, <-done, http.StatusAccepted); body != "" {
		t.Fatalf("body %q", body)
	}
}
