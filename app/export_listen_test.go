package app

// ListenQueueLengths returns, for each open subscriptions/listen stream,
// how many notifications wait to be written to it (for tests of the
// per-stream queue's bound).
func ListenQueueLengths(e *Engine) []int {
	e.listen.mu.Lock()
	defer e.listen.mu.Unlock()
	out := make([]int, 0, len(e.listen.open))
	for l := range e.listen.open {
		out = append(out, l.pending())
	}
	return out
}
