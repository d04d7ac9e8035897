package mcphttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
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

func (w *deadlineWriter) SetReadDeadline(t time.Time) error {
	if !t.IsZero() {
		w.mu.Lock()
		w.reads = append(w.reads, time.Until(t))
		w.mu.Unlock()
	}
	return nil
}

func (w *deadlineWriter) SetWriteDeadline(t time.Time) error {
	if !t.IsZero() {
		w.mu.Lock()
		w.write = append(w.write, time.Until(t))
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
