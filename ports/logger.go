package ports

import "context"

// Level is the severity of a log record.
type Level int

// Levels, in increasing severity (the same numbers as log/slog).
const (
	LevelDebug Level = -4
	LevelInfo  Level = 0
	LevelWarn  Level = 4
	LevelError Level = 8
)

// String returns DEBUG, INFO, WARN or ERROR.
func (l Level) String() string {
	switch {
	case l < LevelInfo:
		return "DEBUG"
	case l < LevelWarn:
		return "INFO"
	case l < LevelError:
		return "WARN"
	}
	return "ERROR"
}

// Field is one key-value pair of a log record.
type Field struct {
	Key   string
	Value any
}

// F returns a Field.
func F(key string, value any) Field { return Field{Key: key, Value: value} }

// Logger receives the server's own log records (never sent to clients).
// The engine logs internal errors with their details, recovered panics,
// output-schema warnings and transport problems through it.
type Logger interface {
	// Enabled reports whether records of the level are wanted, so callers can
	// skip building fields.
	Enabled(ctx context.Context, level Level) bool
	// Log writes one record.
	Log(ctx context.Context, level Level, msg string, fields ...Field)
}

// NopLogger discards everything.
type NopLogger struct{}

// Enabled returns false.
func (NopLogger) Enabled(context.Context, Level) bool { return false }

// Log does nothing.
func (NopLogger) Log(context.Context, Level, string, ...Field) {}
