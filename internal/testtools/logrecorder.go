package testtools

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/hexmcp/hexmcp/ports"
)

// LogRecorder keeps the message of every log record it receives, at every
// level, for tests that check what a part logged and through which logger.
// It is a [ports.Logger] as it is and a slog.Handler (use
// slog.New(rec) where a *slog.Logger is wanted). It is safe for concurrent
// use; its zero value is ready.
type LogRecorder struct {
	mu   sync.Mutex
	msgs []string
}

var (
	_ ports.Logger = (*LogRecorder)(nil)
	_ slog.Handler = (*LogRecorder)(nil)
)

// Enabled is true for every level.
func (r *LogRecorder) Enabled(context.Context, slog.Level) bool { return true }

// LogAttrs keeps msg.
func (r *LogRecorder) LogAttrs(_ context.Context, _ slog.Level, msg string, _ ...slog.Attr) {
	r.keep(msg)
}

// Handle keeps the record's message.
func (r *LogRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.keep(rec.Message)
	return nil
}

// WithAttrs returns r: attributes are not kept.
func (r *LogRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup returns r: groups are not kept.
func (r *LogRecorder) WithGroup(string) slog.Handler { return r }

func (r *LogRecorder) keep(msg string) {
	r.mu.Lock()
	r.msgs = append(r.msgs, msg)
	r.mu.Unlock()
}

// Messages returns the messages kept so far, in order.
func (r *LogRecorder) Messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// Has reports whether a message kept so far contains sub.
func (r *LogRecorder) Has(sub string) bool {
	for _, m := range r.Messages() {
		if strings.Contains(m, sub) {
			return true
		}
	}
	return false
}
