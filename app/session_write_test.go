package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/app"
)

// brokenWriter is a session's writer that fails every write, counting
// them.
type brokenWriter struct{ writes atomic.Int32 }

func (w *brokenWriter) WriteMessage(context.Context, []byte) error {
	w.writes.Add(1)
	return errors.New("stream reset")
}

// A session's server-initiated messages (here tools/list_changed) go to
// its writer while it has one that works: a session with no writer (a
// Streamable HTTP session without a GET stream) drops them, and one whose
// writer failed is not written to again, while both go on serving.
func TestSessionOutputWithoutAWorkingWriter(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
	failing := &brokenWriter{}
	sessions := map[string]*app.Session{
		"none":    initSession(t, e, "none", nil),
		"failing": initSession(t, e, "failing", failing),
	}
	for _, sess := range sessions {
		// A session that listed the tools is told when they change.
		if got := e.HandleMessage(context.Background(), sess, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), nil); !strings.Contains(string(got), `"add"`) {
			t.Fatalf("tools/list = %s", got)
		}
	}
	for i, name := range []string{"one", "two", "three"} {
		if err := e.AddTool(hexmcp.NewRawTool(name, []byte(`{"type":"object"}`), func(context.Context, json.RawMessage) (any, error) { return "x", nil })); err != nil {
			t.Fatal(err)
		}
		if i == 0 && failing.writes.Load() != 1 {
			t.Fatalf("the first change was written %d times, want 1", failing.writes.Load())
		}
	}
	if n := failing.writes.Load(); n != 1 {
		t.Errorf("a writer that failed was written to %d times, want once", n)
	}
	for name, sess := range sessions {
		handle(t, e, sess, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, `{"jsonrpc":"2.0","id":3,"result":{}}`)
		if got := e.HandleMessage(context.Background(), sess, []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"three"}}`), nil); !strings.Contains(string(got), `"text":"x"`) {
			t.Errorf("session %s: tools/call = %s", name, got)
		}
	}
}
