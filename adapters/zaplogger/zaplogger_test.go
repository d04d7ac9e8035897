package zaplogger_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hexmcp/hexmcp/adapters/loggertest"
	"github.com/hexmcp/hexmcp/adapters/zaplogger"
	"github.com/hexmcp/hexmcp/ports"
)

func portLevel(l zapcore.Level) ports.Level {
	switch l {
	case zapcore.DebugLevel:
		return ports.LevelDebug
	case zapcore.InfoLevel:
		return ports.LevelInfo
	case zapcore.WarnLevel:
		return ports.LevelWarn
	}
	return ports.LevelError
}

func TestContract(t *testing.T) {
	loggertest.Run(t, func(t *testing.T) (ports.Logger, func() []loggertest.Record) {
		core, logs := observer.New(zapcore.InfoLevel)
		return zaplogger.New(zap.New(core)), func() []loggertest.Record {
			var rs []loggertest.Record
			for _, e := range logs.All() {
				rs = append(rs, loggertest.Record{Level: portLevel(e.Level), Message: e.Message, Fields: e.ContextMap()})
			}
			return rs
		}
	})
}

func TestLevels(t *testing.T) {
	for _, c := range []struct {
		level ports.Level
		want  zapcore.Level
	}{
		{ports.LevelDebug - 4, zapcore.DebugLevel},
		{ports.LevelDebug, zapcore.DebugLevel},
		{ports.LevelInfo, zapcore.InfoLevel},
		{ports.LevelInfo + 2, zapcore.InfoLevel},
		{ports.LevelWarn, zapcore.WarnLevel},
		{ports.LevelError, zapcore.ErrorLevel},
		{ports.LevelError + 4, zapcore.ErrorLevel},
	} {
		core, logs := observer.New(zapcore.DebugLevel)
		zaplogger.New(zap.New(core)).Log(context.Background(), c.level, "m")
		if all := logs.All(); len(all) != 1 || all[0].Level != c.want {
			t.Errorf("level %v logged as %v, want %v", c.level, all, c.want)
		}
	}
}

func TestFields(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	zaplogger.New(zap.New(core)).Log(context.Background(), ports.LevelError, "mcp: tool failed",
		ports.F("tool", "calc"), ports.F("error", errors.New("division by zero")), ports.F("n", 3))
	e := logs.All()[0]
	if e.Message != "mcp: tool failed" {
		t.Errorf("message %q", e.Message)
	}
	m := e.ContextMap()
	if m["tool"] != "calc" || m["error"] != "division by zero" || m["n"] != int64(3) {
		t.Errorf("fields %v", m)
	}
	// An error field is a real zap error field.
	for _, f := range e.Context {
		if f.Key == "error" && f.Type != zapcore.ErrorType {
			t.Errorf("error field has type %v", f.Type)
		}
	}
}

func TestCallerIsTheCaller(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	zaplogger.New(zap.New(core, zap.AddCaller())).Log(context.Background(), ports.LevelInfo, "here")
	if c := logs.All()[0].Caller; filepath.Base(c.File) != "zaplogger_test.go" {
		t.Errorf("caller %v, want this test file", c)
	}
}

func TestNil(t *testing.T) {
	l := zaplogger.New(nil)
	if l.Enabled(context.Background(), ports.LevelError) {
		t.Error("nil logger enabled")
	}
	l.Log(context.Background(), ports.LevelError, "discarded")
}

func TestNoAllocsWhenDisabled(t *testing.T) {
	core, _ := observer.New(zapcore.WarnLevel)
	l := zaplogger.New(zap.New(core))
	ctx := context.Background()
	fields := []ports.Field{ports.F("tool", "calc"), ports.F("n", 1)}
	if n := testing.AllocsPerRun(100, func() {
		l.Log(ctx, ports.LevelInfo, "dropped", fields...)
		_ = l.Enabled(ctx, ports.LevelDebug)
	}); n != 0 {
		t.Errorf("disabled Log: %v allocations, want 0", n)
	}
}

func BenchmarkLog(b *testing.B) {
	ctx := context.Background()
	fields := []ports.Field{ports.F("tool", "calc"), ports.F("error", errors.New("boom")), ports.F("n", 1)}
	newLogger := func(level zapcore.Level) *zaplogger.Logger {
		enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
		return zaplogger.New(zap.New(zapcore.NewCore(enc, zapcore.AddSync(discard{}), level)))
	}
	b.Run("disabled", func(b *testing.B) {
		l := newLogger(zapcore.WarnLevel)
		b.ReportAllocs()
		for b.Loop() {
			l.Log(ctx, ports.LevelInfo, "m", fields...)
		}
	})
	b.Run("enabled", func(b *testing.B) {
		l := newLogger(zapcore.InfoLevel)
		b.ReportAllocs()
		for b.Loop() {
			l.Log(ctx, ports.LevelInfo, "m", fields...)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
