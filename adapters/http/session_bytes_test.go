package mcphttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// paddedCaps is a capabilities object of about n bytes.
func paddedCaps(n int) string {
	return `{"roots":{},"experimental":{"pad":{"x":"` + strings.Repeat("a", n) + `"}}}`
}

// paddedInit is an initialize whose capabilities and clientInfo name are
// padded.
func paddedInit(id, capsPad, namePad int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":%s,"clientInfo":{"name":"c%s","version":"1"}}}`,
		id, paddedCaps(capsPad), strings.Repeat("n", namePad))
}

// errorData reads a JSON-RPC error's code, id and data.limit.
func errorData(t *testing.T, body string) (code int, id, limit string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int `json:"code"`
			Data struct {
				Limit string `json:"limit"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %.300s", body)
	}
	return m.Error.Code, string(m.ID), m.Error.Data.Limit
}

// An initialize whose capabilities and clientInfo are larger than a
// session may keep is refused with -32602 naming the limit, with its id,
// and creates no session; one within the bound is served. A stateless
// request declaring as much is refused the same way (a listen stream
// would keep the client's identity).
func TestClientDeclarationBounded(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	for _, tc := range []struct {
		name           string
		capsPad, names int
	}{{"capabilities", 100 << 10, 0}, {"clientInfo", 0, 100 << 10}, {"both", 40 << 10, 40 << 10}} {
		t.Run(tc.name, func(t *testing.T) {
			resp := request(t, context.Background(), http.MethodPost, ev.url, paddedInit(7, tc.capsPad, tc.names), nil)
			body := readAll(t, resp)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %.300s", resp.StatusCode, body)
			}
			if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
				t.Fatalf("a session was created for %d bytes of capabilities and clientInfo", tc.capsPad+tc.names)
			}
			if code, id, limit := errorData(t, body); code != domain.CodeInvalidParams || id != "7" || limit != "maxClientDeclarationBytes" {
				t.Fatalf("error %d, id %s, limit %q; want -32602, 7, maxClientDeclarationBytes: %.300s", code, id, limit, body)
			}
		})
	}
	// The session keeps its initialize's headers too (for Viewer.Transport
	// and SessionEnd.Transport): they count.
	resp := request(t, context.Background(), http.MethodPost, ev.url, paddedInit(9, 0, 0), hdr{"X-Pad": strings.Repeat("h", 70<<10)})
	body := readAll(t, resp)
	if code, id, limit := errorData(t, body); resp.Header.Get("Mcp-Session-Id") != "" || code != domain.CodeInvalidParams || id != "9" || limit != "maxClientDeclarationBytes" {
		t.Fatalf("initialize with 70 KiB of headers: %d, error %d, id %s, limit %q: %.300s", resp.StatusCode, code, id, limit, body)
	}
	// Within the bound: served.
	resp = request(t, context.Background(), http.MethodPost, ev.url, paddedInit(1, 60<<10, 0), nil)
	expect(t, resp, http.StatusOK, `"protocolVersion":"2025-11-25"`)
	if resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatal("no session for 60 KiB of capabilities")
	}

	// Stateless: the client's identity in _meta is bounded alike.
	big := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"` + strings.Repeat("n", 100<<10) + `","version":"1"}}}}`
	resp = request(t, context.Background(), http.MethodPost, ev.url, big, statelessHdr("tools/call", "echo"))
	body = readAll(t, resp)
	if code, id, limit := errorData(t, body); code != domain.CodeInvalidParams || id != "8" || limit != "maxClientDeclarationBytes" {
		t.Fatalf("stateless: status %d, error %d, id %s, limit %q: %.300s", resp.StatusCode, code, id, limit, body)
	}
}

// perClientBudget is the in-memory store's default budget of one client's
// sessions.
const perClientBudget = portlimits.DefaultMaxSessionBytesPerClient

// openPadded opens ready sessions from c, each with pad bytes of
// capabilities, until the store refuses one or max are open; it returns
// the ids and the refusal's response (nil: none).
func openPadded(t *testing.T, c *http.Client, url string, pad, max int) (sids []string, refused *http.Response, body string) {
	t.Helper()
	for range max {
		resp := postFrom(t, c, url, paddedInit(1, pad, 0), nil)
		body = readAll(t, resp)
		if resp.StatusCode != http.StatusOK {
			return sids, resp, body
		}
		sid := resp.Header.Get("Mcp-Session-Id")
		if sid == "" {
			t.Fatalf("initialize answered 200 without a session: %.300s", body)
		}
		expect(t, postFrom(t, c, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessHdr(sid, "2025-11-25")), http.StatusAccepted)
		sids = append(sids, sid)
	}
	return sids, nil, ""
}

// One client's sessions are bounded in bytes, not only in number: past
// its budget a new session evicts its own idle ones or, when none may go,
// is refused with 429 and Retry-After; another client is not touched.
// Before, 40 sessions of 3.5 MiB of capabilities from one address took
// the showcase up by 370 MiB.
func TestSessionBytesPerClient(t *testing.T) {
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	store := memory.NewSessionStore(memory.SessionStoreOptions{Clock: clock})
	ev := newEnv(t, mcphttp.Options{SessionStore: store})
	greedy, other := peerClient(t, "127.0.0.1"), peerClient(t, "127.0.0.2")
	const pad = 60 << 10

	sids, refused, body := openPadded(t, greedy, ev.url, pad, 40)
	if refused == nil {
		t.Fatalf("one client opened %d sessions of %d KiB of capabilities (%d KiB), past the %d KiB budget", len(sids), pad>>10, len(sids)*pad>>10, perClientBudget>>10)
	}
	if len(sids)*pad > perClientBudget || len(sids) < perClientBudget/(pad+4<<10)-1 {
		t.Fatalf("one client held %d sessions of %d KiB before the refusal; the budget is %d KiB", len(sids), pad>>10, perClientBudget>>10)
	}
	if refused.StatusCode != http.StatusTooManyRequests || refused.Header.Get("Retry-After") == "" {
		t.Fatalf("refusal %d (Retry-After %q): %.300s", refused.StatusCode, refused.Header.Get("Retry-After"), body)
	}
	if code, id := rpcError(t, body); code != domain.CodeInvalidRequest || id != "1" {
		t.Fatalf("refusal: error %d, id %s: %.300s", code, id, body)
	}
	for _, sid := range sids {
		if st := ping(t, greedy, ev.url, sid); st != http.StatusOK {
			t.Fatalf("ping of a live session: %d", st)
		}
	}

	// Another client is not touched.
	if mine, refused, body := openPadded(t, other, ev.url, pad, 2); refused != nil || len(mine) != 2 {
		t.Fatalf("another client refused: %v %.300s", refused.StatusCode, body)
	}

	// Ending a session makes room for one more.
	expect(t, request(t, context.Background(), http.MethodDelete, ev.url, "", sessHdr(sids[0], "2025-11-25")), http.StatusNoContent)
	more, _, body := openPadded(t, greedy, ev.url, pad, 1)
	if len(more) != 1 {
		t.Fatalf("after a DELETE, the client is still refused: %.300s", body)
	}

	// Idle long enough, its own oldest sessions make room (they are
	// evicted, nobody else's).
	clock.Advance(memory.DefaultMinIdleForEviction)
	if st := ping(t, greedy, ev.url, more[0]); st != http.StatusOK {
		t.Fatalf("ping: %d", st)
	}
	if again, refused, body := openPadded(t, greedy, ev.url, pad, 1); refused != nil || len(again) != 1 {
		t.Fatalf("with idle sessions to evict, the client is refused: %.300s", body)
	}
	if st := ping(t, greedy, ev.url, sids[1]); st != http.StatusNotFound {
		t.Fatalf("ping of the oldest idle session: %d, want 404 (evicted)", st)
	}
	if st := ping(t, greedy, ev.url, more[0]); st != http.StatusOK {
		t.Fatalf("ping of the session in use: %d, want 200", st)
	}
}

// newTemplateEnv is an instance whose engine serves the resource template
// x://items/{id}, with the store given.
func newTemplateEnv(t *testing.T, opts mcphttp.Options) *env {
	t.Helper()
	e := testtools.NewEngine(t, app.Options{Info: testtools.Info, ResourceRegistry: memory.NewResourceRegistry()})
	err := e.AddResourceTemplate(hexmcp.NewResourceTemplate("x://items/{id}", "item", func(_ context.Context, uri string, vars map[string]string) ([]domain.ResourceContents, error) {
		return []domain.ResourceContents{{URI: uri, Text: vars["id"]}}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return envFor(t, e, opts)
}

// A session grows after initialize by its resource subscriptions: they
// count against its client's budget too. A subscription past it is
// refused with -32602 naming the limit and is not kept.
func TestSubscriptionsCountAgainstSessionBytes(t *testing.T) {
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	store := memory.NewSessionStore(memory.SessionStoreOptions{Clock: clock})
	ev := newTemplateEnv(t, mcphttp.Options{SessionStore: store})
	c := peerClient(t, "127.0.0.1")
	sids, refused, body := openPadded(t, c, ev.url, 60<<10, 40)
	if refused == nil {
		t.Fatalf("one client opened %d sessions of 60 KiB (%d KiB), past the %d KiB budget", len(sids), len(sids)*60, perClientBudget>>10)
	}
	sid := sids[len(sids)-1]
	// 2,000-byte URIs: the engine's own bound (64 KiB of URIs) would stop
	// the 33rd; the client's budget has less room than that left.
	for i := range 40 {
		uri := fmt.Sprintf("x://items/%03d%s", i, strings.Repeat("u", 1980))
		resp := postFrom(t, c, ev.url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`, 100+i, uri), sessHdr(sid, "2025-11-25"))
		body = expect(t, resp, http.StatusOK)
		if !strings.Contains(body, `"error"`) {
			continue
		}
		code, id, limit := errorData(t, body)
		if code != domain.CodeInvalidParams || id != fmt.Sprint(100+i) || limit != "maxSessionBytesPerClient" {
			t.Fatalf("subscription %d refused with %d, id %s, limit %q: %.300s", i, code, id, limit, body)
		}
		if n := ev.e.NotifyResourceUpdated(uri); n != 0 {
			t.Fatalf("the refused subscription was kept: %d sessions told", n)
		}
		st := storedState(t, store, sid)
		if len(st.Subscriptions) != i {
			t.Fatalf("stored %d subscriptions, want the %d accepted", len(st.Subscriptions), i)
		}
		return
	}
	t.Fatal("40 subscriptions of 2,000 bytes accepted in a session whose client is at its budget")
}

// Past the store's total byte budget a new session, whatever its client,
// is refused with 503 and Retry-After when no idle session may go.
func TestSessionBytesTotal(t *testing.T) {
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	store := memory.NewSessionStore(memory.SessionStoreOptions{MaxSessionBytes: 300 << 10, Clock: clock})
	ev := newEnv(t, mcphttp.Options{SessionStore: store})
	opened := 0
	for i := range 8 {
		c := peerClient(t, fmt.Sprintf("127.0.0.%d", i+1))
		sids, refused, body := openPadded(t, c, ev.url, 60<<10, 2)
		opened += len(sids)
		if refused == nil {
			continue
		}
		if refused.StatusCode != http.StatusServiceUnavailable || refused.Header.Get("Retry-After") == "" {
			t.Fatalf("refusal %d (Retry-After %q): %.300s", refused.StatusCode, refused.Header.Get("Retry-After"), body)
		}
		if code, id := rpcError(t, body); code != domain.CodeInternalError || id != "1" {
			t.Fatalf("refusal: error %d, id %s: %.300s", code, id, body)
		}
		if opened*60<<10 > 300<<10 || opened < 4 {
			t.Fatalf("the store held %d sessions of 60 KiB before refusing; its budget is 300 KiB", opened)
		}
		return
	}
	t.Fatalf("%d sessions of 60 KiB from 8 clients accepted past a total budget of 300 KiB", opened)
}

// A session keeps a compact copy of its client's capabilities, not the
// request's text: whitespace the client sent costs nothing after
// initialize.
func TestSessionKeepsCompactCapabilities(t *testing.T) {
	store := memory.NewSessionStore(memory.SessionStoreOptions{})
	ev := newEnv(t, mcphttp.Options{SessionStore: store})
	caps := `{ "roots" : { "listChanged" : true }` + strings.Repeat(" ", 60<<10) + `}`
	resp := request(t, context.Background(), http.MethodPost, ev.url,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"c","version":"1"}}}`, nil)
	expect(t, resp, http.StatusOK)
	st := storedState(t, store, resp.Header.Get("Mcp-Session-Id"))
	if got := string(st.Capabilities); got != `{"roots":{"listChanged":true}}` {
		t.Fatalf("the session keeps %d bytes of capabilities: %.100q", len(got), got)
	}
}

// newResourceEnv is an instance whose engine has a resource and a tool
// that logs at every level from debug to error.
func newResourceEnv(t *testing.T, opts mcphttp.Options) *env {
	t.Helper()
	e := testtools.NewEngine(t, app.Options{Info: testtools.Info, ResourceRegistry: memory.NewResourceRegistry()})
	if err := e.AddResource(hexmcp.TextResource("test://doc", "doc", "text")); err != nil {
		t.Fatal(err)
	}
	logs := testtools.LogEveryLevel()
	if err := e.AddTool(logs); err != nil {
		t.Fatal(err)
	}
	return envFor(t, e, opts)
}

func storedState(t *testing.T, store ports.SessionStore, sid string) ports.SessionState {
	t.Helper()
	st, err := store.Get(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A resource subscription, the log level and the advertised resources
// capability of a session set on one instance hold on another that shares
// the session store.
func TestSessionStateAcrossInstances(t *testing.T) {
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{})
	events := memory.NewEventStore(memory.EventStoreOptions{})
	a := newResourceEnv(t, mcphttp.Options{SessionStore: sessions, EventStore: events})
	b := newResourceEnv(t, mcphttp.Options{SessionStore: sessions, EventStore: events})
	const rev = "2025-11-25"
	sid := a.initialize(rev)
	if st := storedState(t, sessions, sid); !st.ResourcesAdvertised || st.PromptsAdvertised || st.Subscriptions != nil || st.LogLevel != "" {
		t.Fatalf("stored after initialize: %+v", st)
	}

	// Subscribed and leveled on a: written to the store.
	expect(t, a.post(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://doc"}}`, sessHdr(sid, rev)),
		http.StatusOK, `"result":{}`)
	if st := storedState(t, sessions, sid); !slices.Equal(st.Subscriptions, []string{"test://doc"}) {
		t.Fatalf("stored Subscriptions after subscribe = %q", st.Subscriptions)
	}
	expect(t, a.post(`{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"warning"}}`, sessHdr(sid, rev)),
		http.StatusOK, `"result":{}`)
	if st := storedState(t, sessions, sid); st.LogLevel != domain.LogWarning {
		t.Fatalf("stored LogLevel after setLevel = %q", st.LogLevel)
	}

	// b has never seen the session: its GET stream gets the updates of
	// the subscribed resource.
	resp, s := b.openGet(sid, rev, nil)
	defer resp.Body.Close()
	if p := s.nextEvent(t); p.id == "" || p.data != "" {
		t.Fatalf("priming event %+v", p)
	}
	if n := b.e.NotifyResourceUpdated("test://doc"); n != 1 {
		t.Fatalf("NotifyResourceUpdated on b told %d sessions, want 1", n)
	}
	if e := s.nextEvent(t); e.data != `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://doc"}}` {
		t.Fatalf("event %+v", e)
	}
	// resources was advertised: list changes are sent too.
	if err := b.e.AddResource(hexmcp.TextResource("test://other", "other", "x")); err != nil {
		t.Fatal(err)
	}
	if e := s.nextEvent(t); e.data != `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}` {
		t.Fatalf("event %+v", e)
	}

	// The log level holds on b: warning and above, nothing below.
	body := expect(t, b.post(callBody(4, "logs", `{}`), sessHdr(sid, rev)), http.StatusOK,
		`"level":"warning"`, `"level":"error"`, `"id":4`)
	if strings.Contains(body, `"level":"info"`) || strings.Contains(body, `"level":"debug"`) {
		t.Fatalf("messages below the level were sent: %s", body)
	}

	// Unsubscribed on b: written to the store, and a third instance that
	// restores the session does not notify it.
	expect(t, b.post(`{"jsonrpc":"2.0","id":5,"method":"resources/unsubscribe","params":{"uri":"test://doc"}}`, sessHdr(sid, rev)),
		http.StatusOK, `"result":{}`)
	if st := storedState(t, sessions, sid); len(st.Subscriptions) != 0 || st.LogLevel != domain.LogWarning {
		t.Fatalf("stored after unsubscribe: %+v", st)
	}
	c := newResourceEnv(t, mcphttp.Options{SessionStore: sessions, EventStore: events})
	expect(t, c.post(`{"jsonrpc":"2.0","id":6,"method":"ping"}`, sessHdr(sid, rev)), http.StatusOK, `"result":{}`)
	if n := c.e.NotifyResourceUpdated("test://doc"); n != 0 {
		t.Fatalf("NotifyResourceUpdated after unsubscribe told %d sessions", n)
	}
	// a still holds the session in memory: its next request takes the
	// state b wrote instead of keeping (and later writing back) its own.
	expect(t, a.post(`{"jsonrpc":"2.0","id":7,"method":"ping"}`, sessHdr(sid, rev)), http.StatusOK, `"result":{}`)
	if n := a.e.NotifyResourceUpdated("test://doc"); n != 0 {
		t.Fatalf("a kept its stale subscription: told %d sessions", n)
	}
	expect(t, a.post(`{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"error"}}`, sessHdr(sid, rev)),
		http.StatusOK, `"result":{}`)
	if st := storedState(t, sessions, sid); len(st.Subscriptions) != 0 || st.LogLevel != domain.LogError {
		t.Fatalf("a wrote back stale state: %+v", st)
	}
}
