// Package slogger implements [ports.Logger] with the standard library's
// log/slog.
//
// Levels keep their numbers (ports.LevelInfo is slog.LevelInfo, and so on),
// fields become attributes with slog.Any, and a record's source location
// (with slog.HandlerOptions.AddSource) is the caller of [Logger.Log], not
// this package.
package slogger

import (
	"log/slog"

	"github.com/hexmcp/hexmcp/internal/slogport"
	"github.com/hexmcp/hexmcp/ports"
)

// Logger adapts a *slog.Logger to [ports.Logger]. It is safe for concurrent
// use, as its slog.Handler must be. Enabled reports whether the handler
// wants records of a level; Log writes one record, and returns without
// allocating when the level is disabled.
type Logger = slogport.Logger

var _ ports.Logger = (*Logger)(nil)

// New returns a Logger writing to l, or to slog.Default() if l is nil.
func New(l *slog.Logger) *Logger { return slogport.New(l) }
