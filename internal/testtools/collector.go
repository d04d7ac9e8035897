package testtools

import "sync"

// Collector gathers values from any goroutine (a callback, a handler, a
// transport) for a test to read; the zero value is empty and ready.
type Collector[T any] struct {
	mu  sync.Mutex
	got []T
}

// Add keeps v.
func (c *Collector[T]) Add(v T) {
	c.mu.Lock()
	c.got = append(c.got, v)
	c.mu.Unlock()
}

// All returns a copy of what was added, in order.
func (c *Collector[T]) All() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]T(nil), c.got...)
}

// Take returns what was added, in order, and forgets it.
func (c *Collector[T]) Take() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.got
	c.got = nil
	return got
}

// Count returns how many of the values added match.
func (c *Collector[T]) Count(match func(T) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.got {
		if match(v) {
			n++
		}
	}
	return n
}
