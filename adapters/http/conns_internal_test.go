package mcphttp

import "testing"

// A GET stream's queue takes no event once the stream ended or failed:
// what a sender pushes then is refused, not queued for a writer that is
// gone.
func TestQueuedConnRefusesAfterItsEnd(t *testing.T) {
	for name, stop := range map[string]func(*queuedConn){"ended": (*queuedConn).end, "failed": (*queuedConn).fail} {
		c := newQueuedConn(nil, 1<<20)
		if !c.push(event{id: "1", data: []byte("a")}) || !c.alive() {
			t.Fatalf("%s: a live stream refused an event", name)
		}
		stop(c)
		if c.push(event{id: "2", data: []byte("b")}) {
			t.Errorf("the %s stream took an event", name)
		}
		if evs, _, _ := c.take(); len(evs) > 1 {
			t.Errorf("the %s stream queued %d events, want the one before its end at most", name, len(evs))
		}
	}
}

// A POST's own stream is alive until a write to it fails.
func TestDirectConnAlive(t *testing.T) {
	c := &directConn{}
	if !c.alive() {
		t.Fatal("a fresh response stream is not alive")
	}
	c.fail()
	if c.alive() {
		t.Fatal("a failed response stream is alive")
	}
}
