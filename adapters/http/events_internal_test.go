package mcphttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// A stream that handed out a priming event id and then carries only its
// final response: written to the connection that opened it, nothing of it
// stays in the store; otherwise the response is kept for the client to
// resume from the priming event.
func TestPrimedOneEventStream(t *testing.T) {
	e, err := app.NewEngine(app.Options{
		Info:         domain.Implementation{Name: "test", Version: "1.0.0"},
		ToolRegistry: memory.NewRegistry(),
		Validator:    jsonschema.New(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	final := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	for _, tc := range []struct {
		name string
		conn func(w http.ResponseWriter) sink
		kept bool
	}{
		{"delivered", func(w http.ResponseWriter) sink { return &directConn{w: w, rc: http.NewResponseController(w)} }, false},
		{"connection lost", func(w http.ResponseWriter) sink {
			return &directConn{w: w, rc: http.NewResponseController(w), lost: true}
		}, true},
		{"resumed connection", func(http.ResponseWriter) sink { return newQueuedConn(nil, defaultMaxStreamQueueBytes) }, true},
		{"no connection", func(http.ResponseWriter) sink { return nil }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := memory.NewEventStore(memory.EventStoreOptions{})
			h := NewHandler(e, Options{EventStore: events})
			rec := httptest.NewRecorder()
			st := &stream{h: h, id: "sid/p"}
			if c := tc.conn(rec); c != nil {
				st.conn = c
			}
			st.mu.Lock()
			prime := st.storeLocked(nil)
			st.deliverLocked(prime)
			st.mu.Unlock()
			st.finish(final)
			var got []string
			_, err := events.Replay(context.Background(), prime.id, func(e ports.Event) error {
				got = append(got, string(e.Data))
				return nil
			})
			if tc.kept {
				if err != nil || len(got) != 1 || got[0] != string(final) {
					t.Fatalf("replay after the priming event = %q, %v", got, err)
				}
				return
			}
			if events.Len() != 0 || events.Bytes() != 0 {
				t.Fatalf("the store keeps %d streams, %d bytes", events.Len(), events.Bytes())
			}
			if body := rec.Body.String(); !strings.Contains(body, "id: "+prime.id+"\n") || !strings.Contains(body, "data: "+string(final)+"\n") {
				t.Fatalf("written %q", body)
			}
		})
	}
}
