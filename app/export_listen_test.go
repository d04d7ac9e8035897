package app

// ListenQueueLengths returns, for each open subscriptions/listen stream,
// how many notifications wait to be written to it (for tests of the
// per-stream queue's bound).
func ListenQueueLengths(e *Engine) []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]int, 0, len(e.listeners))
	for l := range e.listeners {
		out = append(out, l.pending())
	}
	return out
}
