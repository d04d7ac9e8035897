package ports

import (
	"context"
	"log/slog"
)

// Logger receives the server's own log records (never sent to clients).
// The engine logs internal errors with their details, recovered panics,
// output-schema warnings and transport problems through it.
//
// It has the shape of log/slog: a *slog.Logger satisfies it as it is, so
// any slog.Handler serves (zap's through go.uber.org/zap/exp/zapslog, for
// example), and slog.New(slog.DiscardHandler) discards everything.
type Logger interface {
	// Enabled reports whether records of the level are wanted, so callers
	// can skip building attributes.
	Enabled(ctx context.Context, level slog.Level) bool
	// LogAttrs writes one record.
	LogAttrs(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr)
}

var _ Logger = (*slog.Logger)(nil)
