package app_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/ports"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// stateEngine is an engine with resources, prompts and a tool that logs at
// every level from debug to error.
func stateEngine(t *testing.T) *app.Engine {
	t.Helper()
	logs := testtools.LogEveryLevel()
	e := newEngine(t, app.Options{Validator: jsonschema.New(),
		Info:             domain.Implementation{Name: "srv", Version: "1"},
		ResourceRegistry: memory.NewResourceRegistry(),
		PromptRegistry:   memory.NewPromptRegistry(),
	}, logs)
	if err := e.AddResources(sampleResources()...); err != nil {
		t.Fatal(err)
	}
	if err := e.AddPrompts(samplePrompts()...); err != nil {
		t.Fatal(err)
	}
	return e
}

// handle serves one message in sess and checks the response (want "" for
// a notification).
func handle(t *testing.T, e *app.Engine, sess *app.Session, raw, want string) {
	t.Helper()
	got := e.HandleMessage(context.Background(), sess, []byte(raw), nil)
	if want == "" {
		if got != nil {
			t.Fatalf("%s answered %s", raw, got)
		}
		return
	}
	equalJSON(t, string(got), want)
}

// readNote reads the next message of p (10 s at most).
func readNote(t *testing.T, p ports.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := p.ReadMessage(ctx)
	if err != nil {
		t.Fatalf("no message: %v", err)
	}
	return string(m)
}

func expectNoNote(t *testing.T, p ports.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if m, err := p.ReadMessage(ctx); err == nil {
		t.Fatalf("unexpected message: %s", m)
	}
}

const stateInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// TestSessionStateKeepsSubscriptionsFlagsAndLogLevel: the resource
// subscriptions, the advertised capabilities and the log level survive
// State and RestoreSession on another engine.
func TestSessionStateKeepsSubscriptionsFlagsAndLogLevel(t *testing.T) {
	ctx := context.Background()
	a := stateEngine(t)
	sess := a.NewSession(ctx, "s-1", nil)
	defer sess.Close()
	if got := a.HandleMessage(ctx, sess, []byte(stateInit), nil); got == nil {
		t.Fatal("initialize got no answer")
	}
	handle(t, a, sess, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
	st := sess.State()
	if st.Subscriptions != nil || !st.ResourcesAdvertised || !st.PromptsAdvertised || st.LogLevel != "" {
		t.Fatalf("State after initialize = %+v", st)
	}
	handle(t, a, sess, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://template/z/data"}}`, `{"jsonrpc":"2.0","id":2,"result":{}}`)
	handle(t, a, sess, `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"test://static-text"}}`, `{"jsonrpc":"2.0","id":3,"result":{}}`)
	handle(t, a, sess, `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"test://template/gone/data"}}`, `{"jsonrpc":"2.0","id":4,"result":{}}`)
	handle(t, a, sess, `{"jsonrpc":"2.0","id":5,"method":"resources/unsubscribe","params":{"uri":"test://template/gone/data"}}`, `{"jsonrpc":"2.0","id":5,"result":{}}`)
	handle(t, a, sess, `{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":"warning"}}`, `{"jsonrpc":"2.0","id":6,"result":{}}`)

	st = sess.State()
	if want := []string{"test://static-text", "test://template/z/data"}; !slices.Equal(st.Subscriptions, want) {
		t.Fatalf("Subscriptions = %q, want %q (sorted)", st.Subscriptions, want)
	}
	if !st.ResourcesAdvertised || !st.PromptsAdvertised || st.LogLevel != domain.LogWarning {
		t.Fatalf("State = %+v", st)
	}
	// A State is a snapshot: later changes do not alter it (its slice is
	// shared with the session, which replaces it on a change).
	handle(t, a, sess, `{"jsonrpc":"2.0","id":61,"method":"resources/subscribe","params":{"uri":"test://static-binary"}}`, `{"jsonrpc":"2.0","id":61,"result":{}}`)
	handle(t, a, sess, `{"jsonrpc":"2.0","id":62,"method":"resources/unsubscribe","params":{"uri":"test://static-binary"}}`, `{"jsonrpc":"2.0","id":62,"result":{}}`)
	if want := []string{"test://static-text", "test://template/z/data"}; !slices.Equal(st.Subscriptions, want) {
		t.Fatalf("an earlier State changed: %q", st.Subscriptions)
	}

	b := stateEngine(t)
	client, srv := memory.NewPipe()
	restored := b.RestoreSession(ctx, st, srv)
	defer restored.Close()
	if got := restored.State(); !reflect.DeepEqual(got, st) {
		t.Errorf("restored State = %+v\nwant %+v", got, st)
	}

	// The subscriptions: notifications/resources/updated reaches the
	// restored session for the URIs it subscribed to, and only those.
	if n := b.NotifyResourceUpdated("test://static-text"); n != 1 {
		t.Fatalf("NotifyResourceUpdated told %d sessions, want 1", n)
	}
	equalJSON(t, readNote(t, client), `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://static-text"}}`)
	if n := b.NotifyResourceUpdated("test://template/z/data"); n != 1 {
		t.Fatalf("NotifyResourceUpdated(z) told %d sessions, want 1", n)
	}
	equalJSON(t, readNote(t, client), `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://template/z/data"}}`)
	if n := b.NotifyResourceUpdated("test://template/gone/data"); n != 0 {
		t.Fatalf("NotifyResourceUpdated of an unsubscribed URI told %d sessions", n)
	}
	expectNoNote(t, client)

	// The log level: warning and above reach the session's writer.
	handle(t, b, restored, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"logs"}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"(null)"}]}}`)
	equalJSON(t, readNote(t, client), `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"state","data":"warning"}}`)
	equalJSON(t, readNote(t, client), `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"state","data":"error"}}`)
	expectNoNote(t, client)

	// The advertised capabilities: list-changed notifications of resources
	// and prompts.
	if err := b.AddResource(hexmcp.TextResource("test://new", "new", "x")); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, readNote(t, client), `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`)
	if err := b.AddPrompt(hexmcp.NewPrompt("new", func(context.Context, map[string]string) (*domain.GetPromptResult, error) { return nil, nil })); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, readNote(t, client), `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)

	// Unsubscribing on the restored session shows in its state.
	handle(t, b, restored, `{"jsonrpc":"2.0","id":8,"method":"resources/unsubscribe","params":{"uri":"test://template/z/data"}}`, `{"jsonrpc":"2.0","id":8,"result":{}}`)
	handle(t, b, restored, `{"jsonrpc":"2.0","id":9,"method":"resources/unsubscribe","params":{"uri":"test://static-text"}}`, `{"jsonrpc":"2.0","id":9,"result":{}}`)
	if got := restored.State(); got.Subscriptions != nil {
		t.Fatalf("Subscriptions after unsubscribing from all = %q, want nil", got.Subscriptions)
	}
}

// TestSessionStateFlagsAreNotRecomputed: a session whose initialize
// advertised neither resources nor prompts gets no list-changed
// notification of them after a restore on an engine that has them.
func TestSessionStateFlagsAreNotRecomputed(t *testing.T) {
	ctx := context.Background()
	bare := newEngine(t, app.Options{Validator: jsonschema.New(), Info: domain.Implementation{Name: "srv", Version: "1"}})
	sess := bare.NewSession(ctx, "s-2", nil)
	defer sess.Close()
	if got := bare.HandleMessage(ctx, sess, []byte(stateInit), nil); got == nil {
		t.Fatal("initialize got no answer")
	}
	st := sess.State()
	if !st.Initialized || st.ResourcesAdvertised || st.PromptsAdvertised || st.LogLevel != "" || st.Subscriptions != nil {
		t.Fatalf("State = %+v", st)
	}

	b := stateEngine(t)
	client, srv := memory.NewPipe()
	restored := b.RestoreSession(ctx, st, srv)
	defer restored.Close()
	if err := b.AddResource(hexmcp.TextResource("test://new", "new", "x")); err != nil {
		t.Fatal(err)
	}
	if err := b.AddPrompt(hexmcp.NewPrompt("new", func(context.Context, map[string]string) (*domain.GetPromptResult, error) { return nil, nil })); err != nil {
		t.Fatal(err)
	}
	// No log level: nothing is logged.
	handle(t, b, restored, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"logs"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"(null)"}]}}`)
	// Tools list-changed is sent to every initialized session.
	if err := b.AddTool(addTool()); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, readNote(t, client), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	expectNoNote(t, client)
}

// TestRestoredSessionEndStartsWhenStored: a session restored from a stored
// state ends with Started = the state's Created (when the store made it,
// on whichever instance), not when this engine restored it; with no Created
// in the state, Started is when the session initialized here.
func TestRestoredSessionEndStartsWhenStored(t *testing.T) {
	ctx := context.Background()
	ends := make(chan hexmcp.SessionEnd, 2)
	e := newEngine(t, app.Options{Validator: jsonschema.New(), OnSessionEnd: func(end hexmcp.SessionEnd) { ends <- end }})
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := ports.SessionState{ID: "s-stored", Initialized: true, Ready: true, Revision: domain.Revision20251125,
		Client: domain.Implementation{Name: "c", Version: "1"}, Created: created}
	restored := e.RestoreSession(ctx, st, nil)
	restored.Delete()
	restored.Close()
	end := <-ends
	if end.ID != "s-stored" || end.Reason != hexmcp.SessionDeleted || !end.Started.Equal(created) || end.Ended.Before(created) {
		t.Fatalf("restored session's end = %+v, want ID s-stored, deleted, Started %v", end, created)
	}

	before := time.Now()
	fresh := e.NewSession(ctx, "s-here", nil)
	if got := string(e.HandleMessage(ctx, fresh, []byte(stateInit), nil)); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize = %s", got)
	}
	fresh.Delete()
	fresh.Close()
	end = <-ends
	if end.ID != "s-here" || end.Started.Before(before) || end.Ended.Before(end.Started) {
		t.Fatalf("fresh session's end = %+v, want Started at or after %v", end, before)
	}
}
