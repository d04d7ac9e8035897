package loggertest

import (
	"context"
	"strings"
	"sync"

	"github.com/hexmcp/hexmcp/ports"
)

// Recorder is a ports.Logger that keeps the messages of every record, at
// every level, for tests that check what a part logged and through which
// logger. It is safe for concurrent use.
type Recorder struct {
	mu   sync.Mutex
	msgs []string
}

var _ ports.Logger = (*Recorder)(nil)

// Enabled is true for every level.
func (r *Recorder) Enabled(context.Context, ports.Level) bool { return true }

// Log keeps msg.
func (r *Recorder) Log(_ context.Context, _ ports.Level, msg string, _ ...ports.Field) {
	r.mu.Lock()
	r.msgs = append(r.msgs, msg)
	r.mu.Unlock()
}

// Messages returns the messages kept so far, in order.
func (r *Recorder) Messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// Has reports whether a message kept so far contains sub.
func (r *Recorder) Has(sub string) bool {
	for _, m := range r.Messages() {
		if strings.Contains(m, sub) {
			return true
		}
	}
	return false
}
