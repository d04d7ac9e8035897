package websocket

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/ports"
)

// TestTokenExpiryClosesConnection upgrades with a principal that expires
// in a few seconds (as mcphttp.RequireBearer puts one in the context), and
// leaves a call running: when the principal expires, the call's context is
// cancelled, its answer is not sent, and the connection is closed with
// 4401 and a reason that says what to do.
func TestTokenExpiryClosesConnection(t *testing.T) {
	started := make(chan struct{})
	cancelled := make(chan struct{})
	e := newEngine(t, app.NewTool(func(ctx context.Context) (string, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return "late", nil
	}, app.WithName("wait")))
	h := NewHandler(e, Options{Logger: slog.New(slog.DiscardHandler)})
	expires := make(chan time.Time, 1)
	mux := http.NewServeMux()
	mux.Handle("/ws", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exp := time.Now().Add(3 * time.Second)
		expires <- exp
		h.ServeHTTP(w, r.WithContext(ports.WithPrincipal(r.Context(), ports.Principal{Subject: "alice", Expires: exp})))
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer func() { _ = h.Shutdown(context.Background()) }()

	c := dial(t, srv)
	exp := <-expires
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi",`+meta2026+`}}`)
	if got := text(t, recv(t, c)); got != "hi" {
		t.Fatalf("call: %q", got)
	}
	send(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait",`+meta2026+`}}`)
	select {
	case <-started:
	case <-time.After(testDeadline):
		t.Fatal("the call did not start")
	}
	if time.Now().After(exp) {
		t.Fatal("the machine is too slow for this test: the call started after the principal expired")
	}

	_ = c.SetReadDeadline(time.Now().Add(testDeadline))
	_, msg, err := c.ReadMessage()
	ce, ok := err.(*gws.CloseError)
	if !ok || ce.Code != CloseTokenExpired || !strings.Contains(ce.Text, "token expired") {
		t.Fatalf("after the expiry: %s %v, want close %d", msg, err, CloseTokenExpired)
	}
	if time.Now().Before(exp) {
		t.Fatalf("closed before the principal expired")
	}
	select {
	case <-cancelled:
	case <-time.After(testDeadline):
		t.Fatal("the call in flight was not cancelled")
	}
	eventually(t, "the connection to be dropped", func() bool { return h.Conns() == 0 })
}
