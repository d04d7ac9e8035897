package slogger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/loggertest"
	"github.com/hexmcp/hexmcp/adapters/slogger"
	"github.com/hexmcp/hexmcp/ports"
)

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// parse decodes the JSON lines of a slog.JSONHandler.
func parse(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(text) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestContract(t *testing.T) {
	loggertest.Run(t, func(t *testing.T) (ports.Logger, func() []loggertest.Record) {
		buf := &syncBuffer{}
		l := slogger.New(slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
		return l, func() []loggertest.Record {
			var rs []loggertest.Record
			for _, m := range parse(t, buf.String()) {
				var lvl slog.Level
				if err := lvl.UnmarshalText([]byte(m["level"].(string))); err != nil {
					t.Fatal(err)
				}
				r := loggertest.Record{Level: ports.Level(lvl), Message: m["msg"].(string), Fields: map[string]any{}}
				for k, v := range m {
					if k != "time" && k != "level" && k != "msg" {
						r.Fields[k] = v
					}
				}
				rs = append(rs, r)
			}
			return rs
		}
	})
}

func TestLevelsKeepTheirNumbers(t *testing.T) {
	for _, c := range []struct {
		level ports.Level
		want  slog.Level
	}{
		{ports.LevelDebug, slog.LevelDebug},
		{ports.LevelInfo, slog.LevelInfo},
		{ports.LevelWarn, slog.LevelWarn},
		{ports.LevelError, slog.LevelError},
		{ports.LevelWarn + 2, slog.LevelWarn + 2},
	} {
		var buf bytes.Buffer
		l := slogger.New(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
		l.Log(context.Background(), c.level, "m")
		m := parse(t, buf.String())
		if len(m) != 1 || m[0]["level"] != c.want.String() {
			t.Errorf("level %d logged as %v, want %s", c.level, m, c.want)
		}
	}
}

func TestRecordContents(t *testing.T) {
	var buf bytes.Buffer
	l := slogger.New(slog.New(slog.NewJSONHandler(&buf, nil)))
	l.Log(context.Background(), ports.LevelError, "mcp: tool failed", ports.F("tool", "calc"), ports.F("error", errors.New("division by zero")), ports.F("n", 3))
	got := parse(t, buf.String())
	if len(got) != 1 {
		t.Fatalf("got %d records", len(got))
	}
	m := got[0]
	if m["msg"] != "mcp: tool failed" || m["level"] != "ERROR" || m["tool"] != "calc" || m["error"] != "division by zero" || m["n"] != 3.0 {
		t.Errorf("record %v", m)
	}
}

func TestSourceIsTheCaller(t *testing.T) {
	var buf bytes.Buffer
	l := slogger.New(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{AddSource: true})))
	l.Log(context.Background(), ports.LevelInfo, "here")
	m := parse(t, buf.String())
	src, _ := m[0]["source"].(map[string]any)
	if file, _ := src["file"].(string); filepath.Base(file) != "slogger_test.go" {
		t.Errorf("source = %v, want this test file", src)
	}
}

func TestNilIsDefault(t *testing.T) {
	var buf bytes.Buffer
	prev := slog.Default()
	defer slog.SetDefault(prev)
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	slogger.New(nil).Log(context.Background(), ports.LevelWarn, "to default")
	if !strings.Contains(buf.String(), "to default") {
		t.Errorf("default logger got %q", buf.String())
	}
}

func TestHandlerAttrs(t *testing.T) {
	// Attributes and groups of the slog.Logger are kept.
	var buf bytes.Buffer
	sl := slog.New(slog.NewJSONHandler(&buf, nil)).With("server", "calc").WithGroup("mcp")
	slogger.New(sl).Log(context.Background(), ports.LevelInfo, "m", ports.F("tool", "add"))
	m := parse(t, buf.String())[0]
	if m["server"] != "calc" || m["mcp"].(map[string]any)["tool"] != "add" {
		t.Errorf("record %v", m)
	}
}

func TestNoAllocsWhenDisabled(t *testing.T) {
	l := slogger.New(slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})))
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
	b.Run("disabled", func(b *testing.B) {
		l := slogger.New(slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})))
		b.ReportAllocs()
		for b.Loop() {
			l.Log(ctx, ports.LevelInfo, "m", fields...)
		}
	})
	b.Run("enabled", func(b *testing.B) {
		l := slogger.New(slog.New(slog.NewJSONHandler(io.Discard, nil)))
		b.ReportAllocs()
		for b.Loop() {
			l.Log(ctx, ports.LevelInfo, "m", fields...)
		}
	})
}
