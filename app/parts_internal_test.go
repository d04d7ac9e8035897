package app

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// The engine's parts are made here alone, each with only what it reaches
// of the others: what they do is seen without an engine around them.

// recordingBus records what is published to it and keeps the subscriber,
// for a test to hand it notices.
type recordingBus struct {
	mu        sync.Mutex
	published []ports.Notice
	sent      chan struct{}
	fn        func(ports.Notice)
}

func newRecordingBus() *recordingBus { return &recordingBus{sent: make(chan struct{}, 16)} }

func (b *recordingBus) Publish(_ context.Context, n ports.Notice) error {
	b.mu.Lock()
	b.published = append(b.published, n)
	b.mu.Unlock()
	b.sent <- struct{}{}
	return nil
}

func (b *recordingBus) Subscribe(fn func(ports.Notice)) func() {
	b.mu.Lock()
	b.fn = fn
	b.mu.Unlock()
	return func() {}
}

// waitPublished waits (generously: the machine may be slow) for the
// publisher's goroutine to publish one more notice.
func (b *recordingBus) waitPublished(t *testing.T) ports.Notice {
	t.Helper()
	select {
	case <-b.sent:
	case <-time.After(30 * time.Second):
		t.Fatal("nothing was published")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.published[len(b.published)-1]
}

func TestNoticeBusRaisesHereAndPublishes(t *testing.T) {
	var delivered []ports.Notice
	rb := newRecordingBus()
	b := noticeBus{bus: rb, deliver: func(n ports.Notice) int {
		delivered = append(delivered, n)
		return 3
	}}
	b.start(defaultMaxBusQueue, defaultMaxBusQueueBytes, slog.New(slog.DiscardHandler))
	defer b.close()
	if len(b.instance) != 2*instanceBytes {
		t.Fatalf("instance %q", b.instance)
	}
	if told := b.raise(ports.Notice{Kind: ports.NoticeResourceUpdated, URI: "x://a"}); told != 3 {
		t.Fatalf("raise told %d, want what delivery told (3)", told)
	}
	if len(delivered) != 1 || delivered[0].Origin != b.instance || delivered[0].ID == "" {
		t.Fatalf("delivered here: %+v", delivered)
	}
	if got := rb.waitPublished(t); got.ID != delivered[0].ID || got.Origin != b.instance || got.URI != "x://a" {
		t.Fatalf("published %+v, delivered %+v", got, delivered[0])
	}
}

func TestNoticeBusDeliversOnlyWhatIsForIt(t *testing.T) {
	var delivered []string
	rb := newRecordingBus()
	b := noticeBus{bus: rb, deliver: func(n ports.Notice) int {
		delivered = append(delivered, n.ID)
		return 0
	}}
	b.start(defaultMaxBusQueue, defaultMaxBusQueueBytes, slog.New(slog.DiscardHandler))
	defer b.close()
	for _, n := range []ports.Notice{
		{ID: "own", Origin: b.instance},
		{ID: "elsewhere", Origin: "other", To: "another"},
		{ID: "to-me", Origin: "other", To: b.instance},
		{ID: "to-all", Origin: "other"},
	} {
		rb.fn(n)
	}
	if len(delivered) != 2 || delivered[0] != "to-me" || delivered[1] != "to-all" {
		t.Fatalf("delivered %v, want [to-me to-all]", delivered)
	}
}

func TestNoticeBusWithoutBusDeliversHereOnly(t *testing.T) {
	told := 0
	b := noticeBus{deliver: func(n ports.Notice) int {
		if n.ID != "" || n.Origin != "" {
			t.Errorf("a notice of one instance got an ID or origin: %+v", n)
		}
		told++
		return told
	}}
	b.start(defaultMaxBusQueue, defaultMaxBusQueueBytes, slog.New(slog.DiscardHandler))
	defer b.close()
	if n := b.raise(ports.Notice{Kind: ports.NoticeToolsChanged}); n != 1 || b.pub != nil {
		t.Fatalf("told %d, publisher %v", n, b.pub)
	}
}

func TestSessionSetEndsAnInitializedSessionOnce(t *testing.T) {
	var ends []handlerapi.SessionEnd
	ss := sessionSet{onEnd: func(e handlerapi.SessionEnd) { ends = append(ends, e) }, clock: ports.SystemClock{}, log: slog.New(slog.DiscardHandler)}
	fresh := &session{set: &ss, id: "fresh"}
	done := &session{set: &ss, id: "done", initialized: true, rev: domain.Revision("2025-06-18")}
	ss.track(fresh)
	ss.track(done)
	if n := len(ss.list()); n != 2 {
		t.Fatalf("%d sessions held, want 2", n)
	}
	ss.ended(fresh, handlerapi.SessionClosed)
	ss.ended(done, handlerapi.SessionDeleted)
	ss.ended(done, handlerapi.SessionRemoved)
	if len(ends) != 1 || ends[0].ID != "done" || ends[0].Reason != handlerapi.SessionDeleted || ends[0].Revision != "2025-06-18" {
		t.Fatalf("ends %+v, want the initialized session's once, deleted", ends)
	}
	ss.untrack(fresh)
	if l := ss.list(); len(l) != 1 || l[0] != done {
		t.Fatalf("held after untrack: %v", l)
	}
}

func TestSessionSetSurvivesAPanickingOnSessionEnd(t *testing.T) {
	ss := sessionSet{onEnd: func(handlerapi.SessionEnd) { panic("boom") }, clock: ports.SystemClock{}, log: slog.New(slog.DiscardHandler)}
	ss.ended(&session{set: &ss, initialized: true}, handlerapi.SessionClosed) // must not panic
}

func TestForwarderBudgetPerMessage(t *testing.T) {
	rb := newRecordingBus()
	f := forwarder{bus: &noticeBus{bus: rb}, perMessage: 2, perClient: handlerapi.Unlimited, clock: ports.SystemClock{}, log: slog.New(slog.DiscardHandler)}
	ctx := f.withBudget(context.Background())
	for i := range 2 {
		if !f.mayForward(ctx, ports.NoticeClientCancel, "s", "peer") {
			t.Fatalf("forward %d refused within the budget", i+1)
		}
	}
	if f.mayForward(ctx, ports.NoticeClientCancel, "s", "peer") {
		t.Fatal("a third forward of one message went past MaxForwardsPerMessage")
	}
	if got := f.gate.dropped.Load(); got != 1 {
		t.Fatalf("dropped %d, want 1", got)
	}
	if !f.mayForward(f.withBudget(context.Background()), ports.NoticeClientCancel, "s", "peer") {
		t.Fatal("the next message has a budget of its own")
	}
}

func TestResultsTail(t *testing.T) {
	r := results{policy: domain.RevisionPolicy{}, info: domain.Implementation{Name: "n", Version: "1"}, ttlMs: 5000, scope: "public"}
	ci := callInfo{era: domain.EraStateless, rev: "2026-07-28"}
	ci.features = r.policy.Features(ci.rev)
	got := string(r.appendStatelessTail(nil, ci, true))
	want := `,"ttlMs":5000,"cacheScope":"private","_meta":` + string(r.metaJSON(ci.rev))
	if got != want {
		t.Fatalf("tail %s, want %s", got, want)
	}
	ci = callInfo{era: domain.EraHandshake, rev: "2025-06-18"}
	ci.features = r.policy.Features(ci.rev)
	if got := r.appendStatelessTail(nil, ci, false); len(got) != 0 {
		t.Fatalf("a handshake-era result got a tail: %s", got)
	}
}

// An engine with a bus bounds what waits to be published as the README's
// table of limits says when Options leave it: 1,024 notices, 16 MiB; a
// smaller byte bound is raised to one notice's worth, and Unlimited turns
// both off.
func TestBusQueueDefaults(t *testing.T) {
	for _, c := range []struct {
		name                 string
		queue, bytes         int
		wantQueue, wantBytes int
	}{
		{"defaults", 0, 0, 1_024, 16 << 20},
		{"set", 10, 8 << 20, 10, 8 << 20},
		{"too small", 10, 1, 10, minBusQueueBytes},
		{"unlimited", handlerapi.Unlimited, handlerapi.Unlimited, handlerapi.Unlimited, handlerapi.Unlimited},
	} {
		e, err := NewEngine(Options{ToolRegistry: memory.NewRegistry(), DisableValidation: true, Bus: newRecordingBus(), MaxBusQueue: c.queue, MaxBusQueueBytes: c.bytes})
		if err != nil {
			t.Fatal(err)
		}
		if p := e.bus.pub; p.maxQueue != c.wantQueue || p.maxBytes != c.wantBytes {
			t.Errorf("%s: queue %d notices, %d bytes; want %d, %d", c.name, p.maxQueue, p.maxBytes, c.wantQueue, c.wantBytes)
		}
		_ = e.Close()
	}
}
