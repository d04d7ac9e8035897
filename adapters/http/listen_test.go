package mcphttp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/app"
)

const listenParams = `"notifications":{"toolsListChanged":true}`

// A POST subscriptions/listen becomes an SSE stream that starts with the
// acknowledgement and carries the list changes, tagged with the request id,
// until the client goes away.
func TestListenStream(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := request(t, ctx, http.MethodPost, ev.url, statelessBody(5, "subscriptions/listen", listenParams), statelessHdr("subscriptions/listen", ""))
	defer resp.Body.Close()
	stream := newSSE(t, resp)
	if ev0 := stream.nextEvent(t); ev0.data != `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5},"notifications":{"toolsListChanged":true}}}` {
		t.Fatalf("first event %q", ev0.data)
	}
	if err := ev.e.AddTool(app.NewTool(func() string { return "x" }, app.WithName("late"))); err != nil {
		t.Fatal(err)
	}
	if ev1 := stream.nextEvent(t); ev1.data != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5}}}` {
		t.Fatalf("second event %q", ev1.data)
	}
	// other requests are served meanwhile
	expect(t, ev.post(statelessCall(6, "echo", `{"text":"hi"}`), statelessHdr("tools/call", "echo")), http.StatusOK, "echo: hi")
}

// A client that accepts only JSON cannot listen.
func TestListenNeedsSSE(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	h := statelessHdr("subscriptions/listen", "")
	h["Accept"] = "application/json"
	expect(t, ev.post(statelessBody(5, "subscriptions/listen", listenParams), h), http.StatusNotAcceptable, "text/event-stream")
}

// Server.Shutdown ends the listen streams (they never end by themselves)
// and returns without waiting for its deadline.
func TestListenEndsOnShutdown(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	srv, url := startServer(t, ev)
	resp := request(t, context.Background(), http.MethodPost, url, statelessBody(5, "subscriptions/listen", listenParams), statelessHdr("subscriptions/listen", ""))
	defer resp.Body.Close()
	stream := newSSE(t, resp)
	stream.nextEvent(t) // the acknowledgement
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
	if _, err := stream.next(); err != io.EOF {
		t.Fatalf("stream after Shutdown: %v", err)
	}
}

// CloseStreams (for a handler on a server of one's own) ends them too.
func TestListenEndsOnCloseStreams(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	resp := ev.post(statelessBody(5, "subscriptions/listen", listenParams), statelessHdr("subscriptions/listen", ""))
	defer resp.Body.Close()
	stream := newSSE(t, resp)
	stream.nextEvent(t)
	ev.h.CloseStreams()
	rest, err := io.ReadAll(resp.Body)
	if err != nil || strings.Contains(string(rest), `"id":5`) {
		t.Fatalf("after CloseStreams: %q, %v", rest, err)
	}
}
