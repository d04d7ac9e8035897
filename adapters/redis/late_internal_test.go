package mcpredis

import (
	"context"
	"errors"
	"testing"
	"time"
)

// late says "deadline exceeded" (or "canceled") only of a call that ctx
// ended: the error Redis answered before ctx's deadline passes through as
// it is, whatever the deadline.
func TestLate(t *testing.T) {
	reply := errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")
	soon, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := late(soon, reply); err != reply {
		t.Errorf("an answer before the deadline: %v, want it as it is", err)
	}
	if err := late(context.Background(), reply); err != reply {
		t.Errorf("an answer without a deadline: %v, want it as it is", err)
	}
	if err := late(soon, nil); err != nil {
		t.Errorf("no error: %v", err)
	}
	gone, stop := context.WithCancel(context.Background())
	stop()
	if err := late(gone, reply); !errors.Is(err, context.Canceled) || !errors.Is(err, reply) {
		t.Errorf("a call its context cancelled: %v, want both context.Canceled and the reply", err)
	}
	over, cancelOver := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelOver()
	if err := late(over, reply); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, reply) {
		t.Errorf("a call past its deadline: %v, want both context.DeadlineExceeded and the reply", err)
	}
}
