package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// boundTool is the tool "work": a call sleeps ms milliseconds or, with
// hold, waits until release(n) or its cancellation. It counts the calls
// running at once (peak).
type boundTool struct {
	running, peak atomic.Int32
	started       chan int // the n of each call as it starts
	cancelled     chan int // the n of each held call that saw its cancellation
	stop          chan struct{}

	mu      sync.Mutex
	release map[int]chan struct{}
}

func newBoundTool() *boundTool {
	return &boundTool{started: make(chan int, 1024), cancelled: make(chan int, 64), stop: make(chan struct{}), release: make(map[int]chan struct{})}
}

func (b *boundTool) gate(n int) chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	g, ok := b.release[n]
	if !ok {
		g = make(chan struct{})
		b.release[n] = g
	}
	return g
}

// let lets the held call n end.
func (b *boundTool) let(n int) { close(b.gate(n)) }

func (b *boundTool) tool() hexmcp.Tool {
	return hexmcp.Func(func(ctx context.Context, in struct {
		N    int  `json:"n"`
		Ms   int  `json:"ms,omitempty"`
		Hold bool `json:"hold,omitempty"`
	}) (int, error) {
		r := b.running.Add(1)
		defer b.running.Add(-1)
		for p := b.peak.Load(); r > p && !b.peak.CompareAndSwap(p, r); p = b.peak.Load() {
		}
		b.started <- in.N
		if in.Hold {
			select {
			case <-b.gate(in.N):
			case <-b.stop:
				return 0, errors.New("test over")
			case <-ctx.Done():
				b.cancelled <- in.N
				return 0, ctx.Err()
			}
		} else {
			t := time.NewTimer(time.Duration(in.Ms) * time.Millisecond)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		return in.N, nil
	}, hexmcp.WithName("work"))
}

// fill sends the held calls 1 to n on c and waits until all n have started.
func (b *boundTool) fill(t *testing.T, c *client, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		c.send(heldCall(i))
	}
	for range n {
		b.wait(t)
	}
}

func (b *boundTool) serve(t *testing.T, opts app.Options) *client {
	t.Helper()
	opts.Validator = jsonschema.New()
	c := serve(t, newEngine(t, opts, b.tool()))
	t.Cleanup(func() { close(b.stop) }) // runs before serve's cleanup
	c.initialize("2025-11-25")
	return c
}

// wait returns the n of the next call that starts (5 s at most).
func (b *boundTool) wait(t *testing.T) int {
	t.Helper()
	return testtools.Recv(t, b.started, 5*time.Second, "no call started")
}

// waitFor waits until call n starts, among the next max calls that start.
func (b *boundTool) waitFor(t *testing.T, n, max int) {
	t.Helper()
	for range max {
		if b.wait(t) == n {
			return
		}
	}
	t.Fatalf("call %d did not start", n)
}

// notStarted fails if a call starts within a short time.
func (b *boundTool) notStarted(t *testing.T) {
	t.Helper()
	select {
	case n := <-b.started:
		t.Fatalf("call %d started beyond the bound", n)
	case <-time.After(150 * time.Millisecond):
	}
}

// checkPeak fails unless at most max calls have run at once, and exactly
// max if reached is set.
func (b *boundTool) checkPeak(t *testing.T, max int32, reached bool) {
	t.Helper()
	if p := b.peak.Load(); p > max || reached && p != max {
		t.Fatalf("%d calls ran at once, bound %d", p, max)
	}
}

func workCall(n, ms int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"work","arguments":{"n":%d,"ms":%d}}}`, n, n, ms)
}

func heldCall(n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"work","arguments":{"n":%d,"hold":true}}}`, n, n)
}

func cancelOf(n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, n)
}

// responseID returns the id of a response, "p" for the ping's.
func responseID(t *testing.T, raw string) string {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m.Error != nil {
		t.Fatalf("response %s (%v)", raw, err)
	}
	if string(m.ID) == `"p"` {
		return "p"
	}
	return string(m.ID)
}

// fillBound sends n calls of a 200 ms tool (ids 1..n) and one held call,
// id 1000, beyond the bound of n.
func fillBound(c *client, n int) {
	for i := 1; i <= n; i++ {
		c.send(workCall(i, 200))
	}
	c.send(heldCall(1000))
}

// At the bound (64 calls in flight, held until the test lets them go), a
// long call read next does not stop the reading: a ping sent after it is
// answered while it waits, and it runs once a place is free. (The calls
// were 200 ms sleeps: on a loaded machine the first ended before the last
// started, and the bound was not always reached.)
func TestBoundPingNotBehindLongCall(t *testing.T) {
	b := newBoundTool()
	c := b.serve(t, app.Options{}) // MaxConcurrentRequests: 64
	b.fill(t, c, 64)
	c.send(heldCall(1000))
	c.send(ping)
	if id := responseID(t, c.recv()); id != "p" { // 5 s at most
		t.Fatalf("response %s came before the ping's", id)
	}
	for i := 1; i <= 64; i++ {
		b.let(i)
	}
	seen := map[string]bool{}
	for len(seen) < 64 {
		id := responseID(t, c.recv())
		if id == "1000" {
			t.Fatal("the held call answered")
		}
		seen[id] = true
	}
	b.waitFor(t, 1000, 1)
	b.let(1000)
	equalJSON(t, c.recv(), slowResult(1000))
	b.checkPeak(t, 64, true)
}

// At the bound, a cancellation of a long call read after it reaches that
// call while it runs.
func TestBoundCancelNotBehindLongCall(t *testing.T) {
	b := newBoundTool()
	c := b.serve(t, app.Options{}) // MaxConcurrentRequests: 64
	fillBound(c, 64)
	b.waitFor(t, 1000, 65)
	c.send(cancelOf(1000))
	if n := testtools.Recv(t, b.cancelled, 5*time.Second, "the cancellation did not reach the long call"); n != 1000 {
		t.Fatalf("call %d cancelled", n)
	}
	for range 64 { // a cancelled call is not answered
		if id := responseID(t, c.recv()); id == "1000" {
			t.Fatal("the cancelled call answered")
		}
	}
	equalJSON(t, c.roundTrip(ping), pingResp)
	// Not "exactly 64": the first 200 ms calls may end before the last
	// start on a loaded machine.
	b.checkPeak(t, 64, false)
}

// MaxConcurrentRequests bounds the calls running at once. The call read at
// the bound waits, parked, while the reader goes on (a ping is answered);
// the next call waits with the reader (a ping after it is not read); when
// a call ends, the parked call takes its place and reading resumes.
func TestBoundHolds(t *testing.T) {
	b := newBoundTool()
	c := b.serve(t, app.Options{MaxConcurrentRequests: 4})
	b.fill(t, c, 4)
	c.send(heldCall(5))
	b.notStarted(t)
	equalJSON(t, c.roundTrip(ping), pingResp) // call 5 is parked, reading goes on

	c.send(heldCall(6))
	c.send(ping)
	c.expectNothing() // the reader holds call 6 while call 5 is parked
	b.notStarted(t)

	b.let(1)
	equalJSON(t, c.recv(), slowResult(1))
	if n := b.wait(t); n != 5 {
		t.Fatalf("call %d started in the place of call 1", n)
	}
	equalJSON(t, c.recv(), pingResp) // call 6 is parked now, reading goes on
	b.notStarted(t)

	b.let(2)
	equalJSON(t, c.recv(), slowResult(2))
	if n := b.wait(t); n != 6 {
		t.Fatalf("call %d started in the place of call 2", n)
	}
	for _, n := range []int{3, 4, 5, 6} {
		b.let(n)
		equalJSON(t, c.recv(), slowResult(n))
	}
	b.checkPeak(t, 4, true)
}

// At the bound, with a call parked, a cancellation of a running call is
// read: that call ends and the parked call takes its place.
func TestBoundCancelFreesPlace(t *testing.T) {
	b := newBoundTool()
	c := b.serve(t, app.Options{MaxConcurrentRequests: 2})
	c.send(heldCall(1))
	c.send(heldCall(2))
	b.wait(t)
	b.wait(t)
	c.send(heldCall(3))
	b.notStarted(t)
	c.send(cancelOf(1))
	if n := b.wait(t); n != 3 {
		t.Fatalf("call %d started", n)
	}
	b.let(2)
	equalJSON(t, c.recv(), slowResult(2))
	b.let(3)
	equalJSON(t, c.recv(), slowResult(3))
	equalJSON(t, c.roundTrip(ping), pingResp)
	b.checkPeak(t, 2, true)
}

// Many short calls and pings, well beyond the bound, from several
// writers: every call is answered once, and the bound holds throughout.
func TestBoundHoldsUnderLoad(t *testing.T) {
	b := newBoundTool()
	c := b.serve(t, app.Options{MaxConcurrentRequests: 8})
	const writers, calls = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				n := w*calls + i + 1
				if err := c.pipe.WriteMessage(context.Background(), []byte(workCall(n, n%3))); err != nil {
					t.Errorf("send: %v", err)
					return
				}
			}
		}()
	}
	seen := map[string]bool{}
	for range writers * calls {
		id := responseID(t, c.recv())
		if seen[id] {
			t.Fatalf("call %s answered twice", id)
		}
		seen[id] = true
	}
	wg.Wait()
	equalJSON(t, c.roundTrip(ping), pingResp)
	b.checkPeak(t, 8, false)
}

// A graceful stop at the bound: the parked call, read and registered, is
// still run and answered once a place frees; the call the reader held
// behind it is dropped unanswered, as messages not yet read are; then
// ServeConn returns.
func TestBoundGracefulStop(t *testing.T) {
	b := newBoundTool()
	t.Cleanup(func() { close(b.stop) })
	e := newEngine(t, app.Options{MaxConcurrentRequests: 1, Validator: jsonschema.New()}, b.tool())
	cl, s := memory.NewPipe()
	t.Cleanup(func() { cl.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.ServeConn(ctx, s) }()
	c := &client{t: t, pipe: cl}
	c.initialize("2025-11-25")
	c.send(heldCall(1))
	b.waitFor(t, 1, 1)
	c.send(heldCall(2))
	equalJSON(t, c.roundTrip(ping), pingResp) // call 2 is parked
	c.send(heldCall(3))                       // the reader holds it
	b.notStarted(t)
	cancel() // stop reading
	select {
	case err := <-done:
		t.Fatalf("ServeConn returned (%v) with calls in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	b.let(1)
	equalJSON(t, c.recv(), slowResult(1))
	b.waitFor(t, 2, 1)
	b.let(2)
	equalJSON(t, c.recv(), slowResult(2))
	if err := testtools.Recv(t, done, 5*time.Second, "ServeConn did not return"); err != nil {
		t.Fatal(err)
	}
	b.notStarted(t)
	c.expectNothing()
	b.checkPeak(t, 1, true)
}

// A call that starts to wait for the client's answer gives its place to
// the parked call, which runs meanwhile.
func TestBoundWaitingCallGivesPlace(t *testing.T) {
	b := newBoundTool()
	entered, gate := make(chan struct{}), make(chan struct{})
	ask := hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		close(entered)
		<-gate
		res, err := rc.Elicit(ctx, "user_name", hexmcp.ElicitForm("What is your name?", json.RawMessage(testtools.NameSchema)))
		if err != nil {
			return "", err
		}
		return "answered " + string(res.Action), nil
	}, hexmcp.WithName("ask_later"))
	c := serve(t, newEngine(t, app.Options{MaxConcurrentRequests: 1, Validator: jsonschema.New()}, b.tool(), ask))
	t.Cleanup(func() { close(b.stop) }) // runs before serve's cleanup
	initializeWith(c, "2025-11-25", `{"elicitation":{}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_later","arguments":{}}}`)
	<-entered
	c.send(heldCall(2))
	b.notStarted(t) // parked behind call 1
	close(gate)
	id, method, _ := serverRequest(t, c.recv())
	if method != "elicitation/create" {
		t.Fatalf("server request %s", method)
	}
	b.waitFor(t, 2, 1) // in the place call 1 gave back
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"decline"}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"answered decline"}]}}`)
	b.let(2)
	equalJSON(t, c.recv(), slowResult(2))
	equalJSON(t, c.roundTrip(ping), pingResp)
}
