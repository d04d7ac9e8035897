package memstore

import (
	"context"
	"testing"
)

// A group whose streams are all gone is forgotten: the store keeps no
// entry for every session that ever had a stream.
func TestEventGroupForgottenWithItsStreams(t *testing.T) {
	s := NewEventStore(EventStoreOptions{})
	ctx := context.Background()
	for _, id := range []string{"sess1/a", "sess1/b", "sess2/a"} {
		if _, err := s.Append(ctx, id, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"sess1/a", "sess1/b"} {
		if err := s.DeleteStream(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	_, kept := s.groups["sess1"]
	n := len(s.groups)
	s.mu.Unlock()
	if kept || n != 1 {
		t.Fatalf("after its streams were deleted the group sess1 is kept: %v (%d groups, want 1)", kept, n)
	}
}
