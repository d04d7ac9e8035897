package app

import "testing"

// A client's connections share one budget while any of them is open, and
// the book forgets the client once the last one has left.
func TestFlightBookSharesAClientsBudget(t *testing.T) {
	b := newFlightBook(100, 0)
	first := b.join("alice")
	second := b.join("alice")
	if first == nil || first != second {
		t.Fatalf("two connections of one client have budgets %p and %p, want one", first, second)
	}
	if other := b.join("bob"); other == first {
		t.Fatal("two clients share a budget")
	} else {
		b.leave("bob", other)
	}
	b.leave("alice", first)
	if third := b.join("alice"); third != first {
		t.Fatalf("a connection joining while another is open got a budget of its own (%p, want %p)", third, first)
	} else {
		b.leave("alice", third)
	}
	b.leave("alice", second)
	if n := len(b.clients); n != 0 {
		t.Fatalf("%d clients left in the book after every connection left", n)
	}
	if cf := b.join("alice"); cf == first {
		t.Fatal("a client that came back got the budget of its ended connections")
	}
}
