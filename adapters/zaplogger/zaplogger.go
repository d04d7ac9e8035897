// Package zaplogger implements [ports.Logger] with go.uber.org/zap.
//
// zap has four of the port's levels: a level below ports.LevelInfo is
// zap's Debug, below ports.LevelWarn Info, below ports.LevelError Warn, and
// the rest Error (as ports.Level.String names them). Fields become
// zap.Any fields, so errors are logged as zap.Error logs them.
package zaplogger

import (
	"context"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/hexmcp/hexmcp/ports"
)

// Logger adapts a *zap.Logger to [ports.Logger]. It is safe for concurrent
// use.
type Logger struct {
	l *zap.Logger
}

var _ ports.Logger = (*Logger)(nil)

// New returns a Logger writing to l, or discarding everything if l is nil.
// The caller annotation (zap.AddCaller) names the caller of [Logger.Log].
func New(l *zap.Logger) *Logger {
	if l == nil {
		l = zap.NewNop()
	}
	return &Logger{l: l.WithOptions(zap.AddCallerSkip(1))}
}

// zapLevel maps a port level to zap's.
func zapLevel(level ports.Level) zapcore.Level {
	switch {
	case level < ports.LevelInfo:
		return zapcore.DebugLevel
	case level < ports.LevelWarn:
		return zapcore.InfoLevel
	case level < ports.LevelError:
		return zapcore.WarnLevel
	}
	return zapcore.ErrorLevel
}

// Enabled reports whether l's core wants records of the level.
func (x *Logger) Enabled(_ context.Context, level ports.Level) bool {
	return x.l.Core().Enabled(zapLevel(level))
}

// fieldsOnStack is how many fields Log converts without allocating.
const fieldsOnStack = 8

// Log writes one record, unless its level is disabled; then it returns
// without allocating.
func (x *Logger) Log(_ context.Context, level ports.Level, msg string, fields ...ports.Field) {
	ce := x.l.Check(zapLevel(level), msg)
	if ce == nil {
		return
	}
	var buf [fieldsOnStack]zap.Field
	zf := buf[:0]
	for _, f := range fields {
		zf = append(zf, zap.Any(f.Key, f.Value))
	}
	ce.Write(zf...)
}
