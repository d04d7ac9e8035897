package porttest

import (
	"sync"
	"time"
)

// FakeClock is a [ports.Clock] that only moves when told to, so that expiry
// is tested without sleeping. It is safe for concurrent use.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock returns a clock that reads start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start} }

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Start is the time the clocks the suites hand to a store's constructor
// start at: a whole second in UTC, so that a store that keeps times at a
// coarser precision still round-trips them.
var Start = time.Date(2025, 6, 18, 12, 0, 0, 0, time.UTC)

// newClock returns a clock at [Start].
func newClock() *FakeClock { return NewFakeClock(Start) }
