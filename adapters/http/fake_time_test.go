package mcphttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// These tests run the handler in a synctest bubble, on requests served
// in memory (ServeHTTP with a recorder): time passes as the test sleeps,
// at once, so that what happens after minutes is seen without waiting.

// bodyWriter is a ResponseWriter whose body may be read while the handler
// writes it.
type bodyWriter struct {
	mu     sync.Mutex
	header http.Header
	code   int
	body   strings.Builder
}

func newBodyWriter() *bodyWriter { return &bodyWriter{header: http.Header{}} }

func (w *bodyWriter) Header() http.Header { return w.header }
func (w *bodyWriter) Flush()              {}

func (w *bodyWriter) WriteHeader(code int) {
	w.mu.Lock()
	if w.code == 0 {
		w.code = code
	}
	w.mu.Unlock()
}

func (w *bodyWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.body.Write(b)
}

func (w *bodyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.String()
}

// bubble is a handler with its engine and store, made in the bubble.
type bubble struct {
	t *testing.T
	e *app.Engine
	h *mcphttp.Handler
}

func newBubble(t *testing.T, opts mcphttp.Options) *bubble {
	t.Helper()
	e, err := app.NewEngine(app.Options{Info: domain.Implementation{Name: "t", Version: "1"}, ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	if err != nil {
		t.Fatal(err)
	}
	// Sessions live in the store for a day: only the handler's own
	// sweep of its copies is at play.
	opts.SessionStore = memory.NewSessionStore(memory.SessionStoreOptions{IdleTimeout: 24 * time.Hour})
	return &bubble{t: t, e: e, h: mcphttp.NewHandler(e, opts)}
}

// post serves a POST and returns its response.
func (b *bubble) post(body string, hd hdr) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	b.h.ServeHTTP(w, directRequest(context.Background(), http.MethodPost, body, hd))
	return w
}

// session initializes a session at 2025-11-25 and returns its id.
func (b *bubble) session() string {
	b.t.Helper()
	w := b.post(fmt.Sprintf(initBody, "2025-11-25"), nil)
	sid := w.Header().Get(mcphttp.HeaderSessionID)
	if w.Code != http.StatusOK || sid == "" {
		b.t.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	if w := b.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessHdr(sid, "2025-11-25")); w.Code != http.StatusAccepted {
		b.t.Fatalf("initialized: %d %s", w.Code, w.Body)
	}
	return sid
}

// get opens the session's GET stream; stop ends it and waits for its
// handler.
func (b *bubble) get(sid string) (w *bodyWriter, stop func()) {
	w = newBodyWriter()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.h.ServeHTTP(w, directRequest(ctx, http.MethodGet, "", sessHdr(sid, "2025-11-25")))
	}()
	synctest.Wait()
	return w, func() { cancel(); <-done }
}

func (b *bubble) close() {
	b.h.CloseStreams()
	_ = b.e.Close()
}

// An idle GET stream carries a keep-alive comment every
// DefaultKeepAlive (30 s) when Options.KeepAlive is zero, every KeepAlive when
// set, and none when negative.
func TestKeepAliveInterval(t *testing.T) {
	for _, tc := range []struct {
		set, want time.Duration // want 0: none
	}{
		{0, 30 * time.Second}, // DefaultKeepAlive, as documented
		{45 * time.Second, 45 * time.Second},
		{-1, 0},
	} {
		t.Run(fmt.Sprint(tc.set), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBubble(t, mcphttp.Options{KeepAlive: tc.set})
				defer b.close()
				w, stop := b.get(b.session())
				defer stop()
				primed := w.String()
				step := tc.want
				if step == 0 {
					step = 30 * time.Second
				}
				comments := func(n int) string {
					if tc.want == 0 {
						n = 0
					}
					return primed + strings.Repeat(":\n\n", n)
				}
				opened := time.Now()
				for i := 1; i <= 3; i++ {
					time.Sleep(time.Until(opened.Add(time.Duration(i)*step - time.Second)))
					synctest.Wait()
					if got, want := w.String(), comments(i-1); got != want {
						t.Fatalf("a second before interval %d: %q, want %q", i, got, want)
					}
					time.Sleep(time.Second + time.Millisecond)
					synctest.Wait()
					if got, want := w.String(), comments(i); got != want {
						t.Fatalf("at interval %d: %q, want %q", i, got, want)
					}
				}
			})
		})
	}
}

// The handler's sweep drops the copies of sessions idle for 30 minutes
// (they are restored from the store by their next request), but not one
// whose GET stream is attached, however long since its last request: its
// stream goes on.
func TestSweepKeepsSessionsWithAGETStreamOverTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, mcphttp.Options{KeepAlive: -1})
		defer b.close()
		streaming, quiet := b.session(), b.session()
		w, stop := b.get(streaming)
		defer stop()
		time.Sleep(time.Hour)
		// The next request sweeps.
		if r := b.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`, sessHdr(quiet, "2025-11-25")); r.Code != http.StatusOK {
			t.Fatalf("ping of an idle session: %d %s", r.Code, r.Body)
		}
		if err := b.e.AddTool(app.NewTool(func(context.Context) (string, error) { return "", nil }, app.WithName("added"))); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := w.String(); !strings.Contains(got, "notifications/tools/list_changed") {
			t.Fatalf("the GET stream idle for an hour got %q, want the list change", got)
		}
	})
}
