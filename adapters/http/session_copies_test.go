package mcphttp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/app"
)

// Past Options.MaxLocalSessionBytes the idle copies of sessions leave the
// handler's memory, but never one with a GET stream attached: that stream
// goes on (it gets the session's notifications), while the sessions that
// left are restored from the store by their next request.
func TestLocalCopyBudgetKeepsSessionsWithAGETStream(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{MaxLocalSessionBytes: 1}) // every copy is past it
	const rev = "2025-11-25"
	streaming := ev.initialize(rev)
	quiet := ev.initialize(rev)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := request(t, ctx, http.MethodGet, ev.url, "", sessHdr(streaming, rev))
	defer resp.Body.Close()
	s := newSSE(t, resp)
	if ev := s.nextEvent(t); ev.data != "" {
		t.Fatalf("first event of the GET stream: %+v, want the priming event", ev)
	}
	// A copy leaves only once unused for a second (localMinIdle); the
	// next request of any session trims the copies.
	time.Sleep(1100 * time.Millisecond)
	other := ev.initialize(rev)
	expect(t, ev.post(`{"jsonrpc":"2.0","id":7,"method":"ping"}`, sessHdr(other, rev)), http.StatusOK, `"result":{}`)

	if err := ev.e.AddTool(app.NewTool(func(context.Context) (string, error) { return "", nil }, app.WithName("added"))); err != nil {
		t.Fatal(err)
	}
	if got := s.nextEvent(t); !strings.Contains(got.data, "notifications/tools/list_changed") {
		t.Fatalf("the GET stream got %+v, want the list change", got)
	}
	// The session without a stream left memory and comes back.
	expect(t, ev.post(`{"jsonrpc":"2.0","id":8,"method":"ping"}`, sessHdr(quiet, rev)), http.StatusOK, `"result":{}`)
}
