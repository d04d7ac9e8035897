package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// fakeBus is a ports.NotificationBus in one process: Publish hands the
// notice to every subscriber at once, in the publisher's goroutine.
type fakeBus struct {
	mu   sync.Mutex
	subs map[int]func(ports.Notice)
	next int
	sent []ports.Notice
}

func (b *fakeBus) Publish(_ context.Context, n ports.Notice) error {
	b.mu.Lock()
	b.sent = append(b.sent, n)
	fns := make([]func(ports.Notice), 0, len(b.subs))
	for _, fn := range b.subs {
		fns = append(fns, fn)
	}
	b.mu.Unlock()
	for _, fn := range fns {
		fn(n)
	}
	return nil
}

func (b *fakeBus) Subscribe(fn func(ports.Notice)) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[int]func(ports.Notice){}
	}
	b.next++
	k := b.next
	b.subs[k] = fn
	return func() {
		b.mu.Lock()
		delete(b.subs, k)
		b.mu.Unlock()
	}
}

// keyedWriter records messages; several sessions may share one (a
// session held by several instances), and a key is written once.
type keyedWriter struct {
	msgs testtools.Collector[string]
	mu   sync.Mutex
	keys map[string]bool
}

func (w *keyedWriter) WriteMessage(_ context.Context, msg []byte) error {
	w.msgs.Add(string(msg))
	return nil
}

func (w *keyedWriter) WriteKeyedMessage(ctx context.Context, key string, msg []byte) error {
	w.mu.Lock()
	if w.keys == nil {
		w.keys = map[string]bool{}
	}
	seen := w.keys[key]
	w.keys[key] = true
	w.mu.Unlock()
	if seen {
		return nil
	}
	return w.WriteMessage(ctx, msg)
}

func (w *keyedWriter) count(substr string) int {
	return w.msgs.Count(func(m string) bool { return strings.Contains(m, substr) })
}

func (w *keyedWriter) wait(t *testing.T, substr string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range w.msgs.All() {
			if strings.Contains(m, substr) {
				return m
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no message with %q", substr)
	return ""
}

func busEngine(t *testing.T, bus ports.NotificationBus) *app.Engine {
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Bus: bus,
		ResourceRegistry: memory.NewResourceRegistry(), PromptRegistry: memory.NewPromptRegistry()})
	if err := e.AddResource(hexmcp.TextResource("test://r", "r", "text")); err != nil {
		t.Fatal(err)
	}
	return e
}

// initSession initializes a handshake-era session with id on e, writing
// to w, with the elicitation capability.
func initSession(t *testing.T, e *app.Engine, id string, w ports.MessageWriter) *app.Session {
	t.Helper()
	sess := e.NewSession(context.Background(), id, w)
	t.Cleanup(sess.Close)
	if got := e.HandleMessage(context.Background(), sess, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`), nil); got == nil {
		t.Fatal("initialize got no answer")
	}
	handle(t, e, sess, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
	return sess
}

// A list change, a resource update and a VisibilityChanged raised on one
// engine reach the sessions of the others; a session that two engines
// hold (one writer, as a shared session stream) gets each once.
func TestBusCarriesChangesToEveryInstance(t *testing.T) {
	bus := &fakeBus{}
	a, b := busEngine(t, bus), busEngine(t, bus)
	wa, wb, shared := &keyedWriter{}, &keyedWriter{}, &keyedWriter{}
	initSession(t, a, "only-a", wa)
	sb := initSession(t, b, "only-b", wb)
	initSession(t, a, "both", shared)
	sb2 := b.RestoreSession(context.Background(), func() ports.SessionState {
		st := sb.State()
		st.ID = "both"
		return st
	}(), shared)
	t.Cleanup(sb2.Close)

	// What the engines published when they started has gone through.
	flush(t, bus, a)
	flush(t, bus, b)
	if err := a.AddTool(hexmcp.NewRawTool("new", []byte(`{"type":"object"}`), func(context.Context, json.RawMessage) (any, error) { return "x", nil })); err != nil {
		t.Fatal(err)
	}
	// a's own sessions are told at once; b's once the bus carried it.
	for name, w := range map[string]*keyedWriter{"a": wa, "both": shared} {
		if n := w.count("notifications/tools/list_changed"); n != 1 {
			t.Errorf("session %s got %d tools/list_changed, want 1", name, n)
		}
	}
	// The other engine's tools/list answers from a fresh list (its cache
	// was dropped), though its own registry is its own.
	handle(t, b, sb, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://r"}}`, `{"jsonrpc":"2.0","id":2,"result":{}}`)
	if n := a.NotifyResourceUpdated("test://r"); n != 0 {
		t.Fatalf("a told %d of its own sessions, none subscribed", n)
	}
	wb.wait(t, `"uri":"test://r"`)
	if wa.count("resources/updated") != 0 {
		t.Fatal("an unsubscribed session got resources/updated")
	}
	// The update came after the tool change, over the same bus, in order.
	for name, w := range map[string]*keyedWriter{"a": wa, "b": wb, "both": shared} {
		if n := w.count("notifications/tools/list_changed"); n != 1 {
			t.Errorf("session %s got %d tools/list_changed, want 1", name, n)
		}
	}
	bus.mu.Lock()
	defer bus.mu.Unlock()
	// The last two notices.
	sent := bus.sent[len(bus.sent)-2:]
	if sent[0].Kind != ports.NoticeToolsChanged || sent[1].Kind != ports.NoticeResourceUpdated || sent[1].URI != "test://r" || sent[0].ID == "" || sent[0].ID == sent[1].ID {
		t.Fatalf("published %+v", bus.sent)
	}
}

// A client's response to a server request that reaches another instance
// is forwarded over the bus to the handler waiting for it; server request
// ids differ between instances holding the same session.
func TestBusForwardsClientResponses(t *testing.T) {
	bus := &fakeBus{}
	a, b := busEngine(t, bus), busEngine(t, bus)
	got := make(chan string, 1)
	if err := a.AddTool(hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext, _ struct{}) (string, error) {
		r, err := rc.Elicit(ctx, "k", domain.ElicitParams{Message: "name?", RequestedSchema: []byte(`{"type":"object","properties":{"n":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		got <- string(r.Content)
		return "ok", nil
	}, hexmcp.WithName("ask"))); err != nil {
		t.Fatal(err)
	}
	wa, wb := &keyedWriter{}, &keyedWriter{}
	sa := initSession(t, a, "s", wa)
	sb := b.RestoreSession(context.Background(), sa.State(), wb)
	t.Cleanup(sb.Close)
	done := make(chan []byte, 1)
	go func() {
		done <- a.HandleMessage(context.Background(), sa, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask","arguments":{}}}`), nil)
	}()
	req := wa.wait(t, `"method":"elicitation/create"`)
	i := strings.Index(req, `"id":`)
	j := strings.Index(req[i:], ",")
	id := req[i+5 : i+j]
	if !strings.HasPrefix(id, `"`) {
		t.Fatalf("with a bus, server request ids are strings unique to the instance: %s", req)
	}
	// The answer arrives at b, which sent nothing.
	if out := b.HandleMessage(context.Background(), sb, []byte(`{"jsonrpc":"2.0","id":`+id+`,"result":{"action":"accept","content":{"n":"Ada"}}}`), nil); out != nil {
		t.Fatalf("a response got an answer: %s", out)
	}
	if n := testtools.Recv(t, got, 5*time.Second, "the response forwarded through the bus never reached the handler"); n != `{"n":"Ada"}` {
		t.Fatalf("the handler got %q", n)
	}
	if r := <-done; !strings.Contains(string(r), `"text":"ok"`) {
		t.Fatalf("tools/call answered %s", r)
	}
}

// A client's notifications/cancelled that reaches another instance than
// the one running the request is forwarded to it.
func TestBusForwardsCancellation(t *testing.T) {
	bus := &fakeBus{}
	a, b := busEngine(t, bus), busEngine(t, bus)
	started, cancelled := make(chan struct{}), make(chan error, 1)
	if err := a.AddTool(hexmcp.NewTool(func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		cancelled <- ctx.Err()
		return "", ctx.Err()
	}, hexmcp.WithName("block"))); err != nil {
		t.Fatal(err)
	}
	sa := initSession(t, a, "s", &keyedWriter{})
	sb := b.RestoreSession(context.Background(), sa.State(), &keyedWriter{})
	t.Cleanup(sb.Close)
	go a.HandleMessage(context.Background(), sa, []byte(`{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"block","arguments":{}}}`), nil)
	<-started
	handle(t, b, sb, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1"}}`, "")
	if err := testtools.Recv(t, cancelled, 5*time.Second, "the cancellation sent through b never reached the call on a"); err == nil {
		t.Fatal("the handler's context was not cancelled")
	}
}

// NotifyElicitationComplete raised on any instance reaches the session it
// names, once on a stream that several instances share, and only it.
func TestBusElicitationComplete(t *testing.T) {
	bus := &fakeBus{}
	a, b := busEngine(t, bus), busEngine(t, bus)
	shared, other := &keyedWriter{}, &keyedWriter{}
	sa := initSession(t, a, "s", shared)
	sb := b.RestoreSession(context.Background(), sa.State(), shared)
	t.Cleanup(sb.Close)
	initSession(t, a, "other", other)
	if n := b.NotifyElicitationComplete("s", "el-1"); n != 1 {
		t.Fatalf("b told %d of its sessions, want 1", n)
	}
	shared.wait(t, `"elicitationId":"el-1"`)
	if n := shared.count("notifications/elicitation/complete"); n != 1 {
		t.Fatalf("the shared session stream got %d notifications, want 1", n)
	}
	if other.count("elicitation/complete") != 0 {
		t.Fatal("another session was told")
	}
}

// Middleware sees the _meta trace context of requests and of
// notifications alike (Request.Trace).
func TestMiddlewareSeesTrace(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	seen := make(chan app.TraceContext, 4)
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, r *app.Request) (json.RawMessage, error) {
			seen <- r.Trace
			return next(ctx, r)
		}
	}}})
	sess := initSession(t, e, "s", &keyedWriter{})
	for range 2 { // initialize, notifications/initialized
		<-seen
	}
	e.HandleMessage(context.Background(), sess, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"_meta":{"traceparent":"`+tp+`"}}}`), nil)
	e.HandleMessage(context.Background(), sess, []byte(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"traceparent":"`+tp+`","tracestate":"a=b"}}}`), nil)
	if n := <-seen; n.TraceParent != tp {
		t.Fatalf("a notification's trace: %+v", n)
	}
	if r := <-seen; r.TraceParent != tp || r.TraceState != "a=b" {
		t.Fatalf("a request's trace: %+v", r)
	}
}

// flush waits until what e queued for the bus before has been published:
// a marker of its own, published after them, went through.
func flush(t *testing.T, bus *fakeBus, e *app.Engine) {
	t.Helper()
	uri := "test://flush-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	e.NotifyResourceUpdated(uri)
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, n := range bus.sentOf(ports.NoticeResourceUpdated) {
			if n.URI == uri {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the engine's notices never reached the bus")
		}
		time.Sleep(time.Millisecond)
	}
}

// sentOf returns the notices of kind the bus carried.
func (b *fakeBus) sentOf(kind ports.NoticeKind) []ports.Notice {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []ports.Notice
	for _, n := range b.sent {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

// Only what can match elsewhere is forwarded: a response whose id names
// another instance, to that instance; a cancellation of a request id not
// in flight here. And no more than MaxForwardsPerMessage per message (a
// batch) and MaxForwardsPerClient per client and second; the rest is
// dropped, counted and logged at a bounded rate.
func TestBusForwardingBounds(t *testing.T) {
	bus := &fakeBus{}
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	log := &testtools.LogRecorder{}
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Bus: bus, Clock: clock, Logger: log,
		MaxForwardsPerMessage: 3, MaxForwardsPerClient: 5})
	sess := initSession(t, e, "s", &keyedWriter{})
	sess.SetPeer("ip:192.0.2.1")
	const other = "0123456789abcdef"
	var members []app.MessageInfo
	for i := range 10 {
		for _, id := range []string{fmt.Sprintf(`"%s-%d"`, other, i), strconv.Itoa(100 + i), fmt.Sprintf(`"x-%d"`, i), fmt.Sprintf(`"%s-%d"`, strings.ToUpper(other), i)} {
			members = append(members, app.Inspect([]byte(`{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)))
		}
	}
	e.HandleBatch(context.Background(), sess, members, nil)
	flush(t, bus, e)
	got := bus.sentOf(ports.NoticeClientResponse)
	if len(got) != 3 {
		t.Fatalf("a batch of 40 responses, 10 of them to requests of another instance, forwarded %d; want MaxForwardsPerMessage, 3", len(got))
	}
	for _, n := range got {
		if n.To != other || n.Session != "s" || !strings.Contains(string(n.Data), `"id":"`+other+`-`) {
			t.Fatalf("forwarded %+v: want it addressed to %s, for session s", n, other)
		}
	}
	if d := e.DroppedForwards(); d != 7 {
		t.Fatalf("DroppedForwards() = %d, want 7", d)
	}
	// Single cancellations: the client has 2 forwards left this second.
	for i := range 4 {
		handle(t, e, sess, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c-%d"}}`, i), "")
	}
	// Not a request id: nothing to forward, nothing counted.
	handle(t, e, sess, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"a":1}}}`, "")
	flush(t, bus, e)
	if got := bus.sentOf(ports.NoticeClientCancel); len(got) != 2 || string(got[0].Data) != `"c-0"` || string(got[1].Data) != `"c-1"` || got[0].To != "" {
		t.Fatalf("forwarded cancellations %+v, want c-0 and c-1 to every instance", got)
	}
	if d := e.DroppedForwards(); d != 9 {
		t.Fatalf("DroppedForwards() = %d, want 9", d)
	}
	clock.advance(time.Second)
	handle(t, e, sess, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, "")
	flush(t, bus, e)
	if got := bus.sentOf(ports.NoticeClientCancel); len(got) != 3 {
		t.Fatalf("a cancellation in the next second: %d forwarded in all, want 3", len(got))
	}
	// a warning at the 1st, 2nd, 4th and 8th drop
	warnings := 0
	for _, m := range log.Messages() {
		if strings.Contains(m, "not forwarded") {
			warnings++
		}
	}
	if warnings != 4 {
		t.Fatalf("%d warnings for 9 drops, want 4: %q", warnings, log.Messages())
	}
}

// A notice addressed to another instance, carried by a bus that cannot
// address notices, is dropped by the engines it is not for; a response
// forwarded to an engine whose id names another instance is not handed
// to its sessions.
func TestBusAddressedNoticeOnPlainBus(t *testing.T) {
	bus := &fakeBus{}
	e := busEngine(t, bus)
	w := &keyedWriter{}
	initSession(t, e, "s", w)
	if err := bus.Publish(context.Background(), ports.Notice{Kind: ports.NoticeToolsChanged, ID: "n1", Origin: "x", To: "fedcba9876543210"}); err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(context.Background(), ports.Notice{Kind: ports.NoticeResourcesChanged, ID: "n2", Origin: "x"}); err != nil {
		t.Fatal(err)
	}
	w.wait(t, "notifications/resources/list_changed")
	if w.count("notifications/tools/list_changed") != 0 {
		t.Fatal("a notice addressed to another instance was delivered")
	}
}

// heldBus holds every Publish until release (a bus that hangs), then
// fails it or hands it on.
type heldBus struct {
	fakeBus
	release chan struct{}
	fail    bool
	calls   atomic.Int64
}

func (b *heldBus) Publish(ctx context.Context, n ports.Notice) error {
	b.calls.Add(1)
	select {
	case <-b.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if b.fail {
		return errors.New("the bus is down")
	}
	return b.fakeBus.Publish(ctx, n)
}

// The engine never waits on its bus: registrations and notifications
// return while the bus holds a publish; list changes queued already are
// not queued again, the queue is bounded (MaxBusQueue), what it drops is
// counted, and a bus that keeps failing is logged about at a bounded
// rate.
func TestBusPublishNeverWaits(t *testing.T) {
	bus := &heldBus{release: make(chan struct{}), fail: true}
	log := &testtools.LogRecorder{}
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Bus: bus, Logger: log, MaxBusQueue: 8,
		ResourceRegistry: memory.NewResourceRegistry()})
	addTool := func(name string) error {
		return e.AddTool(hexmcp.NewRawTool(name, []byte(`{"type":"object"}`), func(context.Context, json.RawMessage) (any, error) { return "x", nil }))
	}
	// The first notice is taken by the bus, which holds it.
	if err := addTool("first"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); bus.calls.Load() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first notice never reached the bus")
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			if err := addTool(fmt.Sprintf("t%d", i)); err != nil {
				t.Error(err)
			}
			if err := e.AddResource(hexmcp.TextResource(fmt.Sprintf("test://r%d", i), "r", "text")); err != nil {
				t.Error(err)
			}
			e.NotifyResourceUpdated("test://r0") // the same URI: queued once
		}
		for i := range 20 {
			e.NotifyResourceUpdated(fmt.Sprintf("test://other%d", i)) // past the queue
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		close(bus.release)
		t.Fatal("registrations waited for the bus")
	}
	// One notice is held by the bus; the queue holds 8: a tools and a
	// resources list change, one update of test://r0, 5 other updates.
	if d := e.DroppedNotices(); d != 15 {
		t.Fatalf("DroppedNotices() = %d, want 15", d)
	}
	close(bus.release)
	deadline := time.Now().Add(30 * time.Second)
	for bus.calls.Load() < 9 {
		if time.Now().After(deadline) {
			t.Fatalf("%d publishes after the bus was released, want 9", bus.calls.Load())
		}
		time.Sleep(time.Millisecond)
	}
	e.Close()
	if n := bus.calls.Load(); n != 9 {
		t.Fatalf("%d publishes, want 9", n)
	}
	// 9 failures in a row: warnings at the 1st, 2nd, 4th and 8th; the
	// full queue: at the 1st, 2nd, 4th and 8th drop.
	var failed, full int
	for _, m := range log.Messages() {
		switch {
		case strings.Contains(m, "publishing a notice to the other instances failed"):
			failed++
		case strings.Contains(m, "queue of notices for the other instances is full"):
			full++
		}
	}
	if failed != 4 || full != 4 {
		t.Fatalf("%d warnings about failures (want 4), %d about the full queue (want 4): %q", failed, full, log.Messages())
	}
}
