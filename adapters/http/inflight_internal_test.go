package mcphttp

import (
	"context"
	"errors"
	"testing"
	"time"
)

// empty fails unless the budget counts nothing: the whole total is free
// and no client is remembered.
func (b *bodyBudget) empty(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	n := len(b.clients)
	b.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d clients still counted: %v", n, b.clients)
	}
	if b.sem != nil {
		if !b.sem.TryAcquire(b.size) {
			t.Fatal("the total is not free")
		}
		b.sem.Release(b.size)
	}
}

// Every path of a hold gives back exactly what it counted, in the total
// and in its client's share: a leak would lock a client out for good.
func TestBodyBudgetAccounting(t *testing.T) {
	ctx := context.Background()
	b := newBodyBudget(100, 40)
	if b.share != 40 || b.max != 40 {
		t.Fatalf("share %d, max %d", b.share, b.max)
	}

	// Read, decoded, served.
	h := b.hold("a")
	if err := h.grow(ctx, 30, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := h.grow(ctx, 30, time.Time{}); err != nil { // counted up to max: 40
		t.Fatal(err)
	}
	if h.n != 40 {
		t.Fatalf("holds %d, want the most a body counts (40)", h.n)
	}
	if err := b.hold("a").grow(ctx, 1, time.Time{}); !errors.Is(err, errClientShare) {
		t.Fatalf("past the share: %v", err)
	}
	bh := b.hold("b")
	if err := bh.grow(ctx, 40, time.Time{}); err != nil { // another client
		t.Fatal(err)
	}
	if !h.keepForCall(25) {
		t.Fatal("the call was refused")
	}
	other := b.hold("a")
	if err := other.grow(ctx, 30, time.Time{}); err != nil { // reading and calls count apart
		t.Fatal(err)
	}
	if other.keepForCall(20) { // 25 + 20 > 40
		t.Fatal("a call past the client's share was kept")
	}
	other.release()
	h.release()
	h.release() // twice: nothing more
	b.mu.Lock()
	if c := b.clients["a"]; c != (clientBytes{}) {
		t.Fatalf("client a still counts %+v", c)
	}
	b.mu.Unlock()

	// A hold taken along by a call that outlives its request.
	h = b.hold("a")
	if err := h.grow(ctx, 10, time.Time{}); err != nil {
		t.Fatal(err)
	}
	h.keepForCall(10)
	own := h.take()
	h.release() // holds nothing now
	b.mu.Lock()
	if c := b.clients["a"]; c.calls != 10 {
		t.Fatalf("the call's bytes were given back by the request: %+v", c)
	}
	b.mu.Unlock()
	own.release()

	// The client b, still reading, is the only one left; its release
	// empties the budget.
	b.mu.Lock()
	if c := b.clients["b"]; c.reading != 40 {
		t.Fatalf("client b counts %+v", c)
	}
	b.mu.Unlock()
	bh.release()
	b.empty(t)
}

// A body that finds no room in the total waits, then gives up: errBusy,
// or errBodyTimeout when its deadline is what ended the wait; either way
// nothing stays counted.
func TestBodyBudgetWaitGivesUp(t *testing.T) {
	b := newBodyBudget(10, 10)
	full := b.hold("a")
	if err := full.grow(context.Background(), 10, time.Time{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.hold("b").grow(ctx, 1, time.Time{}); !errors.Is(err, errBusy) {
		t.Fatalf("with the request gone: %v", err)
	}
	if err := b.hold("b").grow(context.Background(), 1, time.Now().Add(-time.Second)); !errors.Is(err, errBodyTimeout) {
		t.Fatalf("past the deadline: %v", err)
	}
	full.release()
	b.empty(t)
}
