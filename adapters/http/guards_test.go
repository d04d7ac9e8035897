// Tests that make a change of behaviour visible where the package's own
// tests let one pass (issue 19: small faults planted one at a time lived
// through them). Each test says what it guards, through the Handler over
// HTTP (httptest servers on 127.0.0.1) or its ServeHTTP in memory.

package mcphttp_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// deadlineWriter is a ResponseWriter that records the read and write
// deadlines the handler sets through http.ResponseController, as the time
// left until them when they are set (zero deadlines, which clear one, are
// not recorded).
type deadlineWriter struct {
	*httptest.ResponseRecorder
	mu           sync.Mutex
	reads, write []time.Duration
	wrote        chan struct{} // gets a value at each Write
}

func newDeadlineWriter() *deadlineWriter {
	return &deadlineWriter{ResponseRecorder: httptest.NewRecorder(), wrote: make(chan struct{}, 64)}
}

func (w *deadlineWriter) SetReadDeadline(t time.Time) error  { return w.record(&w.reads, t) }
func (w *deadlineWriter) SetWriteDeadline(t time.Time) error { return w.record(&w.write, t) }

func (w *deadlineWriter) record(to *[]time.Duration, t time.Time) error {
	if !t.IsZero() {
		w.mu.Lock()
		*to = append(*to, time.Until(t))
		w.mu.Unlock()
	}
	return nil
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	n, err := w.ResponseRecorder.Write(b)
	w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (w *deadlineWriter) deadlines() (reads, writes []time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.reads...), append([]time.Duration(nil), w.write...)
}

// within reports whether every d is at most want and not much less (the
// time between setting a deadline and recording it: this is no
// measurement of speed, only of which bound was configured).
func within(ds []time.Duration, want time.Duration) bool {
	for _, d := range ds {
		if d > want || d < want-20*time.Second {
			return false
		}
	}
	return true
}

// directRequest is a request for h.ServeHTTP, as a conforming client
// on 127.0.0.1 sends it, with the headers hd.
func directRequest(ctx context.Context, method, body string, hd hdr) *http.Request {
	r := httptest.NewRequestWithContext(ctx, method, "http://127.0.0.1/mcp", strings.NewReader(body))
	r.RemoteAddr = "127.0.0.1:1234"
	if method == http.MethodPost {
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		r.Header.Set("Accept", "text/event-stream")
	}
	for k, v := range hd {
		r.Header.Set(k, v)
	}
	return r
}

// The write deadline of every SSE event is Options.EventWriteTimeout from
// when it is written: DefaultEventWriteTimeout (30 s) when zero, none when
// negative.
func TestEventWriteTimeoutIsApplied(t *testing.T) {
	for _, tc := range []struct {
		set  time.Duration
		want time.Duration // 0: no deadline
	}{
		{0, 30 * time.Second}, // DefaultEventWriteTimeout, as documented
		{time.Hour, time.Hour},
		{90 * time.Second, 90 * time.Second},
		{-1, 0},
	} {
		t.Run(fmt.Sprint(tc.set), func(t *testing.T) {
			ev := newEnv(t, mcphttp.Options{EventWriteTimeout: tc.set})
			sid := ev.initialize("2025-11-25")
			// A GET stream: its priming event is written at once.
			w := newDeadlineWriter()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				ev.h.ServeHTTP(w, directRequest(ctx, http.MethodGet, "", sessHdr(sid, "2025-11-25")))
			}()
			select {
			case <-w.wrote:
			case <-time.After(10 * time.Second):
				t.Fatal("the GET stream wrote nothing")
			}
			cancel()
			<-done
			if w.Code != http.StatusOK {
				t.Fatalf("GET: %d %s", w.Code, w.Body)
			}
			_, writes := w.deadlines()
			switch {
			case tc.want == 0 && len(writes) > 0:
				t.Fatalf("EventWriteTimeout %v: write deadlines %v, want none", tc.set, writes)
			case tc.want != 0 && (len(writes) == 0 || !within(writes, tc.want)):
				t.Fatalf("EventWriteTimeout %v: write deadlines %v, want each %v from the write", tc.set, writes, tc.want)
			}

			// A POST answered as a stream (a progress notification first)
			// bounds its events the same way.
			w = newDeadlineWriter()
			ev.h.ServeHTTP(w, directRequest(context.Background(), http.MethodPost, progressCallBody(2, "progress"), sessHdr(sid, "2025-11-25")))
			if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "notifications/progress") {
				t.Fatalf("POST: %d %s", w.Code, w.Body)
			}
			_, writes = w.deadlines()
			switch {
			case tc.want == 0 && len(writes) > 0:
				t.Fatalf("POST stream, EventWriteTimeout %v: write deadlines %v, want none", tc.set, writes)
			case tc.want != 0 && (len(writes) == 0 || !within(writes, tc.want)):
				t.Fatalf("POST stream, EventWriteTimeout %v: write deadlines %v, want each %v from the write", tc.set, writes, tc.want)
			}
		})
	}
}

// A POST body must arrive within Options.BodyTimeout (default
// DefaultBodyTimeout, 30 s; negative: no bound), unless the http.Server's own
// ReadTimeout is shorter, which then applies alone.
func TestBodyTimeoutIsApplied(t *testing.T) {
	for _, tc := range []struct {
		set         time.Duration
		readTimeout time.Duration // of the http.Server serving the request
		want        time.Duration // 0: no deadline set by the handler
	}{
		{0, 0, 30 * time.Second}, // DefaultBodyTimeout, as documented
		{time.Hour, 0, time.Hour},
		{-1, 0, 0},
		{time.Hour, 2 * time.Hour, time.Hour},
		{time.Hour, time.Minute, 0},
		{-1, time.Minute, 0},
	} {
		t.Run(fmt.Sprint(tc.set, " ", tc.readTimeout), func(t *testing.T) {
			ev := newEnv(t, mcphttp.Options{BodyTimeout: tc.set})
			w := newDeadlineWriter()
			r := directRequest(context.Background(), http.MethodPost, fmt.Sprintf(initBody, "2025-11-25"), nil)
			if tc.readTimeout > 0 {
				r = r.WithContext(context.WithValue(r.Context(), http.ServerContextKey, &http.Server{ReadTimeout: tc.readTimeout}))
			}
			ev.h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				t.Fatalf("initialize: %d %s", w.Code, w.Body)
			}
			reads, _ := w.deadlines()
			switch {
			case tc.want == 0 && len(reads) > 0:
				t.Fatalf("read deadlines %v, want none", reads)
			case tc.want != 0 && (len(reads) == 0 || !within(reads, tc.want)):
				t.Fatalf("read deadlines %v, want %v from the read", reads, tc.want)
			}
		})
	}
}

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
		if err := b.e.AddTool(hexmcp.NewTool(func(context.Context) (string, error) { return "", nil }, hexmcp.WithName("added"))); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := w.String(); !strings.Contains(got, "notifications/tools/list_changed") {
			t.Fatalf("the GET stream idle for an hour got %q, want the list change", got)
		}
	})
}

// watchedEvents is an in-memory event store shared by several handlers,
// as one instance each, that tells of appends ([ports.EventWatcher]), as a
// shared store (Redis) does.
type watchedEvents struct {
	*memory.EventStore
	mu       sync.Mutex
	watchers map[string]map[chan struct{}]bool
}

var _ ports.EventWatcher = (*watchedEvents)(nil)

func newWatchedEvents() *watchedEvents {
	return &watchedEvents{EventStore: memory.NewEventStore(memory.EventStoreOptions{}), watchers: map[string]map[chan struct{}]bool{}}
}

func (s *watchedEvents) Append(ctx context.Context, streamID string, data []byte) (string, error) {
	id, err := s.EventStore.Append(ctx, streamID, data)
	s.mu.Lock()
	for ch := range s.watchers[streamID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	s.mu.Unlock()
	return id, err
}

func (s *watchedEvents) Watch(streamID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.watchers[streamID] == nil {
		s.watchers[streamID] = map[chan struct{}]bool{}
	}
	s.watchers[streamID][ch] = true
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.watchers[streamID], ch)
		s.mu.Unlock()
	}
}

// stepsEngine is an engine whose tool "steps" reports progress, waits
// for next, reports progress again and returns "done".
func stepsEngine(t *testing.T, next <-chan struct{}) *app.Engine {
	t.Helper()
	e, err := app.NewEngine(app.Options{Info: domain.Implementation{Name: "t", Version: "1"}, ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	if err != nil {
		t.Fatal(err)
	}
	err = e.AddTool(hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		if err := rc.ReportProgress(ctx, 1, 3, "one"); err != nil {
			return "", err
		}
		select {
		case <-next:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if err := rc.ReportProgress(ctx, 2, 3, "two"); err != nil {
			return "", err
		}
		return "done", nil
	}, hexmcp.WithName("steps")))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A POST stream begun at one instance and resumed (GET + Last-Event-ID) at
// another sharing the event store is followed there from the store: the
// call's later events and then its response, after which the stream ends.
func TestResumedPostStreamFollowedToItsResponse(t *testing.T) {
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{})
	events := newWatchedEvents()
	next := make(chan struct{})
	var once sync.Once
	proceed := func() { once.Do(func() { close(next) }) }
	t.Cleanup(proceed)
	opts := mcphttp.Options{SessionStore: sessions, EventStore: events}
	a := envFor(t, stepsEngine(t, next), opts)
	b := envFor(t, stepsEngine(t, next), opts)
	const rev = "2025-11-25"
	sid := initializeAt(t, a.url, rev)

	resp := a.post(progressCallBody(2, "steps"), sessHdr(sid, rev))
	s := newSSE(t, resp)
	last := ""
	for last == "" {
		ev := s.nextEvent(t)
		if strings.Contains(ev.data, "notifications/progress") {
			last = ev.id
		}
	}
	resp.Body.Close() // the client lost the stream at a
	if last == "" {
		t.Fatal("the progress event has no id to resume from")
	}

	h := sessHdr(sid, rev)
	h["Last-Event-ID"] = last
	resp = request(t, context.Background(), http.MethodGet, b.url, "", h)
	defer resp.Body.Close()
	s = newSSE(t, resp)
	proceed()
	if ev := s.nextEvent(t); !strings.Contains(ev.data, `"message":"two"`) {
		t.Fatalf("first event followed at b: %q, want the second progress notification", ev.data)
	}
	if ev := s.nextEvent(t); !strings.Contains(ev.data, `"id":2`) || !strings.Contains(ev.data, `"text":"done"`) {
		t.Fatalf("second event followed at b: %q, want the response", ev.data)
	}
	// After the response the stream ends.
	if r := testtools.ReadToEnd(t, resp.Body, 10*time.Second, "the followed stream did not end after its response"); strings.Contains(r, "data:") {
		t.Fatalf("after the response: %q", r)
	}
}

// With a shared event store, a session's GET stream may be held at an
// instance other than the one whose engine sends the session's messages:
// it follows the stream from the store, one GET at a time (a second is
// 409), and a resumption replays what came after its id, then follows on.
func TestSharedSessionStreamFollowedAtAnotherInstance(t *testing.T) {
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{})
	events := newWatchedEvents()
	next := make(chan struct{})
	opts := mcphttp.Options{SessionStore: sessions, EventStore: events}
	a := envFor(t, stepsEngine(t, next), opts)
	b := envFor(t, stepsEngine(t, next), opts)
	const rev = "2025-11-25"
	sid := initializeAt(t, a.url, rev)
	noop := func(name string) hexmcp.Tool {
		return hexmcp.NewTool(func(context.Context) (string, error) { return "", nil }, hexmcp.WithName(name))
	}

	ctx, cancel := context.WithCancel(context.Background())
	resp := request(t, ctx, http.MethodGet, b.url, "", sessHdr(sid, rev))
	s := newSSE(t, resp)
	priming := s.nextEvent(t)
	if priming.id == "" || priming.data != "" {
		t.Fatalf("first event of the session stream: %+v, want a priming event", priming)
	}
	expect(t, request(t, context.Background(), http.MethodGet, b.url, "", sessHdr(sid, rev)), http.StatusConflict)

	if err := a.e.AddTool(noop("one")); err != nil {
		t.Fatal(err)
	}
	changed := s.nextEvent(t)
	if !strings.Contains(changed.data, "notifications/tools/list_changed") || changed.id == "" {
		t.Fatalf("followed at b: %+v, want the list change a's engine sent", changed)
	}
	cancel()
	resp.Body.Close()

	// Resumed from the priming event: the list change again, then what
	// comes next.
	h := sessHdr(sid, rev)
	h["Last-Event-ID"] = priming.id
	resp = request(t, context.Background(), http.MethodGet, b.url, "", h)
	defer resp.Body.Close()
	s = newSSE(t, resp)
	if ev := s.nextEvent(t); ev.id != changed.id || ev.data != changed.data {
		t.Fatalf("replayed: %+v, want %+v", ev, changed)
	}
	if err := a.e.AddTool(noop("two")); err != nil {
		t.Fatal(err)
	}
	if ev := s.nextEvent(t); !strings.Contains(ev.data, "notifications/tools/list_changed") || ev.id == changed.id {
		t.Fatalf("followed after the replay: %+v, want the next list change", ev)
	}
}

// Past Options.MaxLocalSessionBytes the idle copies of sessions leave the
// handler's memory, but never one with a GET stream attached: that stream
// goes on (it gets the session's notifications), while the sessions that
// left are restored from the store by their next request.
func TestLocalCopyBudgetKeepsSessionsWithAGETStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, mcphttp.Options{MaxLocalSessionBytes: 1, KeepAlive: -1}) // every copy is past it
		defer b.close()
		streaming, quiet := b.session(), b.session()
		w, stop := b.get(streaming)
		defer stop()
		// A copy leaves only once unused for a second (localMinIdle); the
		// next request of any session trims the copies.
		time.Sleep(time.Minute)
		if r := b.post(`{"jsonrpc":"2.0","id":7,"method":"ping"}`, sessHdr(b.session(), "2025-11-25")); r.Code != http.StatusOK {
			t.Fatalf("ping: %d %s", r.Code, r.Body)
		}
		if err := b.e.AddTool(hexmcp.NewTool(func(context.Context) (string, error) { return "", nil }, hexmcp.WithName("added"))); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := w.String(); !strings.Contains(got, "notifications/tools/list_changed") {
			t.Fatalf("the GET stream got %q, want the list change", got)
		}
		// The session without a stream left memory and comes back.
		if r := b.post(`{"jsonrpc":"2.0","id":8,"method":"ping"}`, sessHdr(quiet, "2025-11-25")); r.Code != http.StatusOK {
			t.Fatalf("ping of an evicted session: %d %s", r.Code, r.Body)
		}
	})
}

// A call the engine refuses for a scope the token lacks (a tool's
// WithScopes) is a 403 whose WWW-Authenticate challenge names the scopes
// the tool needs, with the resource metadata URL of RequireBearer's
// AuthOptions when it has one, in both eras; a token with the scopes is
// served.
func TestToolScopeChallenge(t *testing.T) {
	e, err := app.NewEngine(app.Options{Info: domain.Implementation{Name: "t", Version: "1"}, ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddTool(hexmcp.NewTool(func(context.Context) (string, error) { return "written", nil },
		hexmcp.WithName("write"), hexmcp.WithScopes("files:read", "files:write"))); err != nil {
		t.Fatal(err)
	}
	ev := envFor(t, e, mcphttp.Options{})
	tokens := mcphttp.StaticTokens{
		"reader": {Subject: "r", Scopes: []string{"mcp:tools", "files:read"}},
		"writer": {Subject: "w", Scopes: []string{"mcp:tools", "files:read", "files:write"}},
	}
	const metaURL = "https://mcp.example/.well-known/oauth-protected-resource"
	for _, tc := range []struct {
		name, metaURL, challenge string
		required                 []string
	}{
		{"with metadata", metaURL, `Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="` + metaURL + `"`, nil},
		{"without metadata", "", `Bearer error="insufficient_scope", scope="files:read files:write"`, nil},
		// The scopes every request needs are needed by this one too: a
		// client that asks for exactly the challenge's keeps them.
		{"with required scopes", "", `Bearer error="insufficient_scope", scope="mcp:tools files:read files:write"`, []string{"mcp:tools", "files:read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged testtools.LockedBuffer
			srv := httptest.NewServer(mcphttp.RequireBearer(tokens, mcphttp.AuthOptions{ResourceMetadataURL: tc.metaURL, RequiredScopes: tc.required,
				Logger: slog.New(slog.NewJSONHandler(&logged, nil))})(ev.h))
			defer srv.Close()
			defer func() {
				// Each refusal is logged as RequireBearer logs its own:
				// who, and the scopes the token lacks (twice: once an era).
				if n := strings.Count(logged.String(), `"msg":"hexmcp: a bearer token was refused","error":"insufficient_scope","reason":"the token lacks the scopes of what the request calls","subject":"r","missing_scopes":["files:write"]`); n != 2 {
					t.Errorf("%d records of the refusals, want 2: %s", n, logged.String())
				}
			}()
			auth := func(token string) hdr { return hdr{"Authorization": "Bearer " + token} }

			// Stateless era.
			call := statelessCall(1, "write", `{}`)
			h := statelessHdr("tools/call", "write")
			resp := request(t, context.Background(), http.MethodPost, srv.URL, call, mergeHdr(h, auth("reader")))
			expect(t, resp, http.StatusForbidden, `"code":-32052`, `"missing":["files:write"]`)
			if got := resp.Header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Fatalf("stateless challenge %q, want %q", got, tc.challenge)
			}
			expect(t, request(t, context.Background(), http.MethodPost, srv.URL, call, mergeHdr(h, auth("writer"))), http.StatusOK, `"text":"written"`)

			// Handshake era: the session is the reader's.
			resp = request(t, context.Background(), http.MethodPost, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, auth("reader"))
			expect(t, resp, http.StatusOK)
			sh := mergeHdr(sessHdr(resp.Header.Get(mcphttp.HeaderSessionID), "2025-11-25"), auth("reader"))
			expect(t, request(t, context.Background(), http.MethodPost, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sh), http.StatusAccepted)
			resp = request(t, context.Background(), http.MethodPost, srv.URL, callBody(2, "write", `{}`), sh)
			expect(t, resp, http.StatusForbidden, `"code":-32052`)
			if got := resp.Header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Fatalf("session challenge %q, want %q", got, tc.challenge)
			}
		})
	}
}

// A Server's http.Server has the ServerOptions' timeouts and header
// bound: the documented defaults for zero fields (read header 10 s, read
// 60 s, write none, idle 120 s), none for negative ones.
func TestServerOptionsReachTheHTTPServer(t *testing.T) {
	report := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := r.Context().Value(http.ServerContextKey).(*http.Server)
		fmt.Fprintf(w, "%v %v %v %v %d", s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout, s.MaxHeaderBytes)
	})
	for _, tc := range []struct {
		opts mcphttp.ServerOptions
		want string
	}{
		{mcphttp.ServerOptions{}, "10s 1m0s 0s 2m0s 0"},
		{mcphttp.ServerOptions{ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 3 * time.Second, IdleTimeout: 4 * time.Second, MaxHeaderBytes: 5 << 10},
			"1s 2s 3s 4s 5120"},
		{mcphttp.ServerOptions{ReadHeaderTimeout: -1, ReadTimeout: -1, WriteTimeout: -1, IdleTimeout: -1}, "0s 0s 0s 0s 0"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			srv := mcphttp.NewServer("127.0.0.1:0", report, tc.opts)
			if err := srv.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := srv.Shutdown(context.Background()); err != nil {
					t.Error(err)
				}
			}()
			resp, err := http.Get("http://" + srv.Addr() + "/")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != tc.want {
				t.Fatalf("http.Server: %s, want %s", b, tc.want)
			}
		})
	}
}

// The progress of a call in a 2025-03-26 batch goes on the batch's own
// response, which becomes an SSE stream: its progress notification, then
// the responses.
func TestBatchProgressOnItsResponse(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-03-26")
	batch := `[` + progressCallBody(1, "progress") + `,` + callBody(2, "echo", `{"text":"b"}`) + `]`
	resp := ev.post(batch, sessHdr(sid, "2025-03-26"))
	s := newSSE(t, resp)
	defer resp.Body.Close()
	ev1 := s.nextEvent(t)
	if !strings.Contains(ev1.data, `"method":"notifications/progress"`) || !strings.Contains(ev1.data, `"progressToken":"tok"`) {
		t.Fatalf("first event of the batch's stream: %q, want its progress notification", ev1.data)
	}
	answered := map[string]bool{}
	for len(answered) < 2 {
		ev := s.nextEvent(t)
		switch {
		case strings.Contains(ev.data, `"id":1`) && strings.Contains(ev.data, `"text":"done"`):
			answered["1"] = true
		case strings.Contains(ev.data, `"id":2`) && strings.Contains(ev.data, "echo: b"):
			answered["2"] = true
		default:
			t.Fatalf("event of the batch's stream: %q, want a response", ev.data)
		}
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
}
