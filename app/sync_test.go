package app_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/ports"
)

// A session served through the exchange port (Streamable HTTP's) writes
// its state to the store when a request changed it, whichever part
// changed, and only then.
func TestExchangeSessionSyncsEachChange(t *testing.T) {
	ctx := context.Background()
	e := stateEngine(t)
	store := memory.NewSessionStore(memory.SessionStoreOptions{})
	port, ok := exchange.PortOf(e, store)
	if !ok {
		t.Fatal("no exchange port")
	}
	st := ports.SessionState{ID: "s-1", Peer: "ip:192.0.2.1", Initialized: true, Ready: true, Revision: domain.Revision20251125,
		Client: domain.Implementation{Name: "c", Version: "1"}, Capabilities: json.RawMessage(`{}`), ResourcesAdvertised: true, PromptsAdvertised: true}
	if err := store.Create(ctx, st); err != nil {
		t.Fatal(err)
	}
	s := port.RestoreSession(st)
	defer s.Close()
	serve := func(raw string) {
		t.Helper()
		if a := port.Serve(ctx, s, port.Inspect([]byte(raw)), nil); !strings.Contains(string(a.Response), `"result"`) {
			t.Fatalf("%s answered %s", raw, a.Response)
		}
	}
	sync := func(what string, want bool) ports.SessionState {
		t.Helper()
		changed, err := s.Sync(ctx)
		if err != nil || changed != want {
			t.Fatalf("Sync after %s = %v, %v; want %v", what, changed, err, want)
		}
		got, err := store.Get(ctx, "s-1")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	sync("nothing", false)
	serve(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	sync("a request that changes nothing", false)
	serve(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://static-text"}}`)
	if got := sync("a subscription", true); !slices.Equal(got.Subscriptions, []string{"test://static-text"}) {
		t.Fatalf("stored subscriptions %q", got.Subscriptions)
	}
	sync("the subscription again", false)
	serve(`{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"error"}}`)
	if got := sync("a log level", true); got.LogLevel != domain.LogError {
		t.Fatalf("stored log level %q", got.LogLevel)
	}
	serve(`{"jsonrpc":"2.0","id":4,"method":"resources/unsubscribe","params":{"uri":"test://static-text"}}`)
	if got := sync("an unsubscription", true); got.Subscriptions != nil {
		t.Fatalf("stored subscriptions %q after unsubscribing", got.Subscriptions)
	}
}

// Derive refuses params that are not a JSON object, and a method the
// engine does not know.
func TestDeriveRefuses(t *testing.T) {
	errs := make(chan string, 2)
	mw := func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, r *app.Request) (json.RawMessage, error) {
			if r.Method == "tools/list" {
				for _, d := range []struct{ method, params string }{{"tools/call", `["work"]`}, {"tools/frobnicate", `{}`}} {
					if _, err := r.Derive(d.method, json.RawMessage(d.params)); err != nil {
						errs <- err.Error()
					} else {
						errs <- "none"
					}
				}
			}
			return next(ctx, r)
		}
	}
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{mw}}))
	c.initialize("2025-11-25")
	c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if got := <-errs; got != "hexmcp: Derive: params must be a JSON object" {
		t.Errorf("Derive with array params: %s", got)
	}
	if got := <-errs; !strings.Contains(got, `unknown method "tools/frobnicate"`) {
		t.Errorf("Derive of an unknown method: %s", got)
	}
}

// Outside a request (RequestFrom of a bare context) there is nothing to
// require, and no panic.
func TestRequireURLElicitationOutsideARequest(t *testing.T) {
	rc := app.RequestFrom(context.Background())
	if err := rc.RequireURLElicitation(domain.ElicitParams{Mode: domain.ElicitModeURL, Message: "m", URL: "https://example.com", ElicitationID: "e"}); err == nil || !strings.Contains(err.Error(), "outside a request") {
		t.Fatalf("RequireURLElicitation outside a request = %v", err)
	}
}
