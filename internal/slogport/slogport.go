// Package slogport implements ports.Logger with log/slog; adapters/slogger
// exports it, and the engine uses it for its default logger.
package slogport

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// Logger adapts a *slog.Logger to [ports.Logger]. It is safe for concurrent
// use, as its slog.Handler must be.
type Logger struct {
	l *slog.Logger
}

var _ ports.Logger = (*Logger)(nil)

// New returns a Logger writing to l, or to slog.Default() if l is nil.
func New(l *slog.Logger) *Logger {
	if l == nil {
		l = slog.Default()
	}
	return &Logger{l: l}
}

// Enabled reports whether l's handler wants records of the level.
func (x *Logger) Enabled(ctx context.Context, level ports.Level) bool {
	return x.l.Enabled(ctx, slog.Level(level))
}

// attrsOnStack is how many fields Log converts without allocating.
const attrsOnStack = 8

// Log writes one record, unless its level is disabled; then it returns
// without allocating.
func (x *Logger) Log(ctx context.Context, level ports.Level, msg string, fields ...ports.Field) {
	lvl := slog.Level(level)
	if !x.l.Enabled(ctx, lvl) {
		return
	}
	// As slog.Logger.LogAttrs does, but with the source location of our
	// caller rather than of this method.
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:]) // skip runtime.Callers and Log
	r := slog.NewRecord(time.Now(), lvl, msg, pcs[0])
	var buf [attrsOnStack]slog.Attr
	attrs := buf[:0]
	for _, f := range fields {
		attrs = append(attrs, slog.Any(f.Key, f.Value))
	}
	r.AddAttrs(attrs...)
	if ctx == nil {
		ctx = context.Background()
	}
	_ = x.l.Handler().Handle(ctx, r)
}

// Default is the SDK's logger when none is given: slog's text format on
// standard error (never standard output, which may be the MCP channel).
func Default() *Logger {
	return New(slog.New(slog.NewTextHandler(os.Stderr, nil)))
}
