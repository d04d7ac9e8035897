package app_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// gatedTool is the tool "slow": each call reports its n on started, then
// waits until release[n] is closed, and answers n. Its pad argument makes a
// call as large as a test needs.
type gatedTool struct {
	started chan int
	release map[int]chan struct{}
	stop    chan struct{} // closed when the test ends
}

func newGatedTool(ns ...int) *gatedTool {
	g := &gatedTool{started: make(chan int, 16), release: make(map[int]chan struct{}), stop: make(chan struct{})}
	for _, n := range ns {
		g.release[n] = make(chan struct{})
	}
	return g
}

func (g *gatedTool) tool() hexmcp.Tool {
	return hexmcp.Func(func(ctx context.Context, in struct {
		N   int    `json:"n"`
		Pad string `json:"pad"`
	}) (int, error) {
		g.started <- in.N
		select {
		case <-g.release[in.N]:
		case <-g.stop:
			return 0, errors.New("test over")
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		return in.N, nil
	}, hexmcp.WithName("slow"))
}

// serve serves an engine with the tool and opts over an in-memory pipe;
// calls still waiting when the test ends are let go first.
func (g *gatedTool) serve(t *testing.T, opts app.Options) *client {
	t.Helper()
	c := serve(t, newEngine(t, opts, g.tool()))
	t.Cleanup(func() { close(g.stop) }) // runs before serve's cleanup
	return c
}

// waitStarted returns the n of the next call that starts (30 s at most: a
// wait, not a bound; a 20 MiB call under -race on a loaded machine takes
// seconds).
func (g *gatedTool) waitStarted(t *testing.T) int {
	t.Helper()
	return testtools.Recv(t, g.started, 30*time.Second, "no call started")
}

// expectStarted fails unless the next call that starts is call want.
func (g *gatedTool) expectStarted(t *testing.T, want int) {
	t.Helper()
	if n := g.waitStarted(t); n != want {
		t.Fatalf("call %d started, want call %d", n, want)
	}
}

// finish lets call n answer and checks that c receives its result.
func (g *gatedTool) finish(t *testing.T, c *client, n int) {
	t.Helper()
	close(g.release[n])
	equalJSON(t, c.recv(), slowResult(n))
}

// notStarted fails if a call starts within a short time.
func (g *gatedTool) notStarted(t *testing.T) {
	t.Helper()
	select {
	case n := <-g.started:
		t.Fatalf("call %d started while the budget was full", n)
	case <-time.After(150 * time.Millisecond):
	}
}

func slowCall(n, pad int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{"n":%d,"pad":"%s"}}}`,
		n, n, strings.Repeat("x", pad))
}

func slowResult(n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%d"}]}}`, n, n)
}

// With calls in flight holding the connection's byte budget, the next call
// is not served and reading pauses: a ping sent after it is answered only
// once a call has finished and the waiting call has been admitted.
func TestInFlightBytesPauseReading(t *testing.T) {
	g := newGatedTool(1, 2)
	c := g.serve(t, app.Options{Validator: jsonschema.New(), MaxInFlightBytesPerConn: 4096})
	c.initialize("2025-11-25")
	c.send(slowCall(1, 3000))
	c.send(slowCall(2, 3000)) // does not fit beside call 1
	c.send(ping)
	g.expectStarted(t, 1)
	g.notStarted(t)
	c.expectNothing() // the ping is not read yet

	g.finish(t, c, 1)
	g.expectStarted(t, 2)
	// Reading has resumed, while call 2 still runs.
	equalJSON(t, c.recv(), pingResp)
	g.finish(t, c, 2)
}

// A small call that fits beside the calls in flight is served at once, and
// a call larger than the whole budget is served when nothing else is in
// flight (after the calls before it have finished).
func TestInFlightBytesAdmitsWhatFits(t *testing.T) {
	g := newGatedTool(1, 2, 3)
	c := g.serve(t, app.Options{Validator: jsonschema.New(), MaxInFlightBytesPerConn: 4096})
	c.initialize("2025-11-25")
	c.send(slowCall(1, 2000))
	c.send(slowCall(2, 100)) // fits beside call 1
	got := map[int]bool{g.waitStarted(t): true, g.waitStarted(t): true}
	if !got[1] || !got[2] {
		t.Fatalf("started %v, want calls 1 and 2", got)
	}
	c.send(slowCall(3, 10000)) // larger than the budget: waits for both
	g.notStarted(t)
	g.finish(t, c, 1)
	g.notStarted(t)
	g.finish(t, c, 2)
	g.expectStarted(t, 3)
	g.finish(t, c, 3)
	equalJSON(t, c.roundTrip(ping), pingResp)
}

// hexmcp.Unlimited turns the byte budget off: calls of any size run at once,
// up to MaxConcurrentRequests.
func TestInFlightBytesUnlimited(t *testing.T) {
	g := newGatedTool(1, 2)
	c := g.serve(t, app.Options{Validator: jsonschema.New(), MaxInFlightBytesPerConn: hexmcp.Unlimited})
	c.initialize("2025-11-25")
	c.send(slowCall(1, 20<<20)) // beyond the default budget, with another
	c.send(slowCall(2, 1000))
	got := map[int]bool{g.waitStarted(t): true, g.waitStarted(t): true}
	if !got[1] || !got[2] {
		t.Fatalf("started %v, want calls 1 and 2", got)
	}
	equalJSON(t, c.roundTrip(ping), pingResp)
	close(g.release[1])
	close(g.release[2])
	c.recv()
	c.recv()
}

// A subscriptions/listen stream gives its bytes back as it starts: streams
// whose requests add up to more than the budget are all opened, and the
// connection still serves calls.
func TestInFlightBytesListenStreamsGiveBack(t *testing.T) {
	g := newGatedTool(1)
	c := g.serve(t, app.Options{Validator: jsonschema.New(), MaxInFlightBytesPerConn: 4096})
	c.initialize("2025-11-25")
	for i := range 4 {
		id := fmt.Sprintf(`"%d-%s"`, i, strings.Repeat("x", 3000))
		c.send(listenReq(id, `{"toolsListChanged":true}`))
		if ack := c.recv(); !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
			t.Fatalf("listen %d: %s", i, ack)
		}
	}
	c.send(slowCall(1, 3000))
	g.expectStarted(t, 1)
	g.finish(t, c, 1)
}

// A call waiting for the client's answer (elicitation) gives its bytes
// back: a second such call that would not fit beside it is still read, and
// so are the answers.
func TestInFlightBytesWaitingCallsGiveBack(t *testing.T) {
	c := serve(t, inputEngine(t, app.Options{Validator: jsonschema.New(), MaxInFlightBytesPerConn: 4096}))
	initializeWith(c, "2025-11-25", `{"elicitation":{}}`)
	var ids []string
	for i := range 2 {
		id := fmt.Sprintf(`"%d-%s"`, i, strings.Repeat("x", 3000))
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}`)
		sid, method, _ := serverRequest(t, c.recv())
		if method != "elicitation/create" {
			t.Fatalf("call %d: %s", i, method)
		}
		ids = append(ids, sid)
	}
	for i, id := range ids {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"n%d"}}}`, id, i))
	}
	for range ids {
		if resp := c.recv(); !strings.Contains(resp, "Hello, n") {
			t.Fatalf("response: %.200s", resp)
		}
	}
	equalJSON(t, c.roundTrip(ping), pingResp)
}

// The bytes in flight are also bounded per client across its connections
// (MaxInFlightBytesPerClient): a second connection of the same client
// (the same IP address) pauses on a call that does not fit beside the
// first connection's, while another client's call is served at once; the
// paused call starts when the first one finishes.
func TestInFlightBytesPerClientAcrossConnections(t *testing.T) {
	g := newGatedTool(1, 2, 3)
	e := newEngine(t, app.Options{Validator: jsonschema.New(), MaxInFlightBytesPerClient: 4096}, g.tool())
	a := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "10.0.0.1:1001"})
	b := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "10.0.0.1:1002"})
	other := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "10.0.0.2:1001"})
	t.Cleanup(func() { close(g.stop) }) // runs before the connections' cleanups
	for _, c := range []*client{a, b, other} {
		c.initialize("2025-11-25")
	}
	a.send(slowCall(1, 3000))
	g.expectStarted(t, 1)
	b.send(slowCall(2, 3000)) // the client's budget holds call 1
	b.send(ping)
	g.notStarted(t)
	b.expectNothing() // b's reader waits: the ping is not read
	other.send(slowCall(3, 3000))
	g.expectStarted(t, 3)
	g.finish(t, a, 1)
	g.expectStarted(t, 2)
	equalJSON(t, b.recv(), pingResp)
	g.finish(t, b, 2)
	g.finish(t, other, 3)
}

// The total over every client (MaxInFlightBytes) pauses any connection
// whose call does not fit.
func TestInFlightBytesTotal(t *testing.T) {
	g := newGatedTool(1, 2)
	e := newEngine(t, app.Options{Validator: jsonschema.New(), MaxInFlightBytes: 4096}, g.tool())
	a := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "10.0.0.1:1001"})
	b := serveAs(t, e, hexmcp.TransportInfo{RemoteAddr: "10.0.0.2:1001"})
	t.Cleanup(func() { close(g.stop) })
	a.initialize("2025-11-25")
	b.initialize("2025-11-25")
	a.send(slowCall(1, 3000))
	g.expectStarted(t, 1)
	b.send(slowCall(2, 3000))
	g.notStarted(t)
	g.finish(t, a, 1)
	g.expectStarted(t, 2)
	g.finish(t, b, 2)
}
