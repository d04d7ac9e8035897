package mcphttp_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// newResourceEnv is an instance whose engine has a resource and a tool
// that logs at every level from debug to error.
func newResourceEnv(t *testing.T, opts mcphttp.Options) *env {
	t.Helper()
	e := testtools.NewEngine(t, app.Options{Info: testtools.Info, ResourceRegistry: memory.NewResourceRegistry()})
	if err := e.AddResource(app.TextResource("test://doc", "doc", "text")); err != nil {
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
	if err := b.e.AddResource(app.TextResource("test://other", "other", "x")); err != nil {
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
