// Package loggertest is the contract test of [ports.Logger]: every adapter
// of the port runs [Run] from its own tests, with a constructor that
// captures what the logger writes.
//
//	func TestContract(t *testing.T) {
//		loggertest.Run(t, func(t *testing.T) (ports.Logger, func() []loggertest.Record) {
//			... // a logger at level Info writing to a buffer, and a function parsing the buffer
//		})
//	}
package loggertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/ports"
)

// Record is one log record as the backend received it.
type Record struct {
	// Level is the level the backend recorded, mapped back to a ports.Level
	// (a backend with fewer levels may round: only Level.String() is
	// compared).
	Level ports.Level
	// Message is the record's message.
	Message string
	// Fields holds the record's fields by key. Values are compared by their
	// fmt.Sprint form, so a backend may hand back numbers as float64 or
	// int64, and errors as their message.
	Fields map[string]any
}

// NewLogger returns a fresh logger whose minimum level is [ports.LevelInfo]
// (Debug dropped; Info, Warn and Error kept), and a function that returns
// the records written so far, in order. It is called once per subtest.
type NewLogger func(t *testing.T) (ports.Logger, func() []Record)

// Run runs the contract of [ports.Logger] against the loggers newLogger
// returns:
//
//   - Enabled is false for levels below the minimum and true from it on;
//   - Log of a disabled level writes nothing;
//   - Log of an enabled level writes one record with the message, the
//     level (by name: DEBUG, INFO, WARN, ERROR) and every field, whatever
//     the number of fields and the types of their values (strings, numbers,
//     booleans, errors, nil);
//   - the logger is safe for concurrent use.
func Run(t *testing.T, newLogger NewLogger) {
	t.Helper()
	ctx := context.Background()

	t.Run("Enabled", func(t *testing.T) {
		l, _ := newLogger(t)
		for _, c := range []struct {
			level ports.Level
			want  bool
		}{
			{ports.LevelDebug, false},
			{ports.LevelDebug - 4, false},
			{ports.LevelInfo, true},
			{ports.LevelWarn, true},
			{ports.LevelError, true},
			{ports.LevelError + 4, true},
		} {
			if got := l.Enabled(ctx, c.level); got != c.want {
				t.Errorf("Enabled(%v) = %v, want %v", c.level, got, c.want)
			}
		}
	})

	t.Run("LevelsFilter", func(t *testing.T) {
		l, records := newLogger(t)
		l.Log(ctx, ports.LevelDebug, "debug dropped", ports.F("k", "v"))
		l.Log(ctx, ports.LevelInfo, "info kept")
		l.Log(ctx, ports.LevelWarn, "warn kept")
		l.Log(ctx, ports.LevelError, "error kept")
		rs := records()
		want := []struct{ level, msg string }{{"INFO", "info kept"}, {"WARN", "warn kept"}, {"ERROR", "error kept"}}
		if len(rs) != len(want) {
			t.Fatalf("got %d records %+v, want %d", len(rs), rs, len(want))
		}
		for i, w := range want {
			if rs[i].Level.String() != w.level || rs[i].Message != w.msg {
				t.Errorf("record %d = %s %q, want %s %q", i, rs[i].Level, rs[i].Message, w.level, w.msg)
			}
		}
	})

	t.Run("MessageKept", func(t *testing.T) {
		l, records := newLogger(t)
		const msg = `mcp: tool failed: "quotes", unicode é, newline
and more`
		l.Log(ctx, ports.LevelError, msg)
		rs := records()
		if len(rs) != 1 || rs[0].Message != msg {
			t.Fatalf("records = %+v, want one with message %q", rs, msg)
		}
		if len(rs[0].Fields) != 0 {
			t.Errorf("fields = %v, want none", rs[0].Fields)
		}
	})

	t.Run("FieldsKept", func(t *testing.T) {
		l, records := newLogger(t)
		fields := []ports.Field{
			ports.F("tool", "calc"),
			ports.F("count", 42),
			ports.F("ratio", 0.5),
			ports.F("ok", true),
			ports.F("error", errors.New("boom")),
			ports.F("nothing", nil),
		}
		want := map[string]string{
			"tool": "calc", "count": "42", "ratio": "0.5", "ok": "true", "error": "boom", "nothing": "<nil>",
		}
		l.Log(ctx, ports.LevelWarn, "with fields", fields...)
		rs := records()
		if len(rs) != 1 {
			t.Fatalf("got %d records, want 1", len(rs))
		}
		checkFields(t, rs[0], want)
	})

	t.Run("ManyFields", func(t *testing.T) {
		l, records := newLogger(t)
		var fields []ports.Field
		want := map[string]string{}
		for i := range 20 {
			k := fmt.Sprintf("k%02d", i)
			fields = append(fields, ports.F(k, i))
			want[k] = fmt.Sprint(i)
		}
		l.Log(ctx, ports.LevelInfo, "many", fields...)
		rs := records()
		if len(rs) != 1 {
			t.Fatalf("got %d records, want 1", len(rs))
		}
		checkFields(t, rs[0], want)
	})

	t.Run("FieldsNotShared", func(t *testing.T) {
		// A record's fields are its own: the next record does not see them.
		l, records := newLogger(t)
		l.Log(ctx, ports.LevelInfo, "first", ports.F("a", 1))
		l.Log(ctx, ports.LevelInfo, "second", ports.F("b", 2))
		rs := records()
		if len(rs) != 2 {
			t.Fatalf("got %d records, want 2", len(rs))
		}
		checkFields(t, rs[0], map[string]string{"a": "1"})
		checkFields(t, rs[1], map[string]string{"b": "2"})
	})

	t.Run("Concurrent", func(t *testing.T) {
		l, records := newLogger(t)
		const goroutines, each = 8, 50
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					if l.Enabled(ctx, ports.LevelInfo) {
						l.Log(ctx, ports.LevelInfo, "concurrent", ports.F("g", g), ports.F("i", i))
					}
					l.Log(ctx, ports.LevelDebug, "dropped")
				}
			})
		}
		wg.Wait()
		if n := len(records()); n != goroutines*each {
			t.Errorf("got %d records, want %d", n, goroutines*each)
		}
	})
}

func checkFields(t *testing.T, r Record, want map[string]string) {
	t.Helper()
	if len(r.Fields) != len(want) {
		t.Errorf("record %q has fields %v, want %v", r.Message, r.Fields, want)
	}
	for k, w := range want {
		v, ok := r.Fields[k]
		if !ok {
			t.Errorf("record %q: field %q missing (fields %v)", r.Message, k, r.Fields)
			continue
		}
		if got := fmt.Sprint(v); got != w {
			t.Errorf("record %q: field %q = %q, want %q", r.Message, k, got, w)
		}
	}
}
