package testtools

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hexmcp/hexmcp/ports"
)

// AppendEvents appends one event a datum to stream, in order, and returns
// their ids; it fails t on the first error.
func AppendEvents(t testing.TB, s ports.EventStore, stream string, datas ...string) []string {
	t.Helper()
	ids := make([]string, len(datas))
	for i, d := range datas {
		id, err := s.Append(context.Background(), stream, []byte(d))
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		ids[i] = id
	}
	return ids
}

// Replayed replays the events after id and returns their data, or the
// error Replay returned.
func Replayed(s ports.EventStore, id string) ([]string, error) {
	var got []string
	_, err := s.Replay(context.Background(), id, func(e ports.Event) error {
		got = append(got, string(e.Data))
		return nil
	})
	return got, err
}

// WantReplay fails t unless the events after id are found and their data
// are want, in order.
func WantReplay(t testing.TB, s ports.EventStore, id string, want ...string) {
	t.Helper()
	got, err := Replayed(s, id)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Replay(%q) = %q, %v; want %q", id, got, err, want)
	}
}

// WantNotFound fails t unless a replay after id fails with
// [ports.ErrEventNotFound] and replays nothing.
func WantNotFound(t testing.TB, s ports.EventStore, id string) {
	t.Helper()
	got, err := Replayed(s, id)
	if !errors.Is(err, ports.ErrEventNotFound) || len(got) != 0 {
		t.Fatalf("Replay(%q) = %q, %v; want ErrEventNotFound and nothing", id, got, err)
	}
}
