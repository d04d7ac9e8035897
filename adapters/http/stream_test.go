package mcphttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// addTool registers a tool, which sends notifications/tools/list_changed
// to every session.
func (ev *env) addTool(name string) {
	ev.t.Helper()
	type noIn struct{}
	if err := ev.e.AddTool(hexmcp.Func(func(context.Context, noIn) (string, error) { return name, nil }, hexmcp.WithName(name))); err != nil {
		ev.t.Fatal(err)
	}
}

// openGet opens the standalone stream of a session.
func (ev *env) openGet(sid, rev string, h hdr) (*http.Response, *sse) {
	ev.t.Helper()
	resp := request(ev.t, context.Background(), http.MethodGet, ev.url, "", mergeHdr(sessHdr(sid, rev), h))
	return resp, newSSE(ev.t, resp)
}

func isListChanged(e sseEvent) bool {
	return e.data == `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` && e.id != ""
}

func TestListChangedOnGetStream(t *testing.T) {
	for _, rev := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			ev := newEnv(t, mcphttp.Options{})
			sid := ev.initialize(rev)
			resp, s := ev.openGet(sid, rev, nil)
			defer resp.Body.Close()
			if rev >= "2025-11-25" {
				// The priming event: an id to resume from, no data.
				if p := s.nextEvent(t); p.id == "" || p.data != "" {
					t.Fatalf("priming event %+v", p)
				}
			}
			ev.addTool("added")
			if e := s.nextEvent(t); !isListChanged(e) {
				t.Fatalf("event %+v", e)
			}
			// The session's POST responses do not travel on the GET stream.
			expect(t, ev.post(callBody(2, "added", `{}`), sessHdr(sid, rev)), http.StatusOK, `"added"`)
			ev.e.RemoveTool("added")
			if e := s.nextEvent(t); !isListChanged(e) {
				t.Fatalf("event %+v", e)
			}
		})
	}
}

func TestSecondGetStreamConflicts(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-06-18")
	resp, _ := ev.openGet(sid, "2025-06-18", nil)
	second := request(t, context.Background(), http.MethodGet, ev.url, "", sessHdr(sid, "2025-06-18"))
	expect(t, second, http.StatusConflict)
	resp.Body.Close()
	// Once the first is gone, a new one may open.
	testtools.Eventually(t, 10*time.Second, "a new standalone stream once the first is gone", func() bool {
		r := request(t, context.Background(), http.MethodGet, ev.url, "", sessHdr(sid, "2025-06-18"))
		defer r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
}

// A client that loses its GET stream and resumes it with Last-Event-ID
// gets the events it missed, once each and in order, then the stream goes
// on live.
func TestResumeStandaloneStream(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-11-25")
	resp, s := ev.openGet(sid, "2025-11-25", nil)
	prime := s.nextEvent(t)
	seen := map[string]bool{prime.id: true}
	var last string
	for i := range 2 {
		ev.addTool(fmt.Sprintf("t%d", i))
		e := s.nextEvent(t)
		if !isListChanged(e) || seen[e.id] {
			t.Fatalf("event %+v", e)
		}
		seen[e.id], last = true, e.id
	}
	resp.Body.Close() // the connection drops

	ev.addTool("t2") // sent while the client is away
	ev.addTool("t3")

	resp, s = ev.openGet(sid, "2025-11-25", hdr{"Last-Event-ID": last})
	defer resp.Body.Close()
	for range 2 {
		e := s.nextEvent(t)
		if !isListChanged(e) || seen[e.id] {
			t.Fatalf("missed event %+v (seen before: %t)", e, seen[e.id])
		}
		seen[e.id] = true
	}
	ev.addTool("t4") // live again
	e := s.nextEvent(t)
	if !isListChanged(e) || seen[e.id] {
		t.Fatalf("live event %+v (repeated: %t)", e, seen[e.id])
	}
	// The resumed stream is the session's stream: a plain GET conflicts.
	expect(t, request(t, context.Background(), http.MethodGet, ev.url, "", sessHdr(sid, "2025-11-25")), http.StatusConflict)
}

// A POST stream cut before its response is resumed with GET and
// Last-Event-ID: the response arrives, whether the call ended before the
// client came back or after. The cut did not cancel the call.
func TestResumePostStream(t *testing.T) {
	for _, releaseFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("release first %t", releaseFirst), func(t *testing.T) {
			ev := newEnv(t, mcphttp.Options{})
			sid := ev.initialize("2025-11-25")
			resp := ev.post(progressCallBody(7, "progress_block"), sessHdr(sid, "2025-11-25"))
			s := newSSE(t, resp)
			p := s.nextEvent(t)
			if !strings.Contains(p.data, "notifications/progress") || p.id == "" {
				t.Fatalf("progress event %+v", p)
			}
			ev.waitStarted()
			resp.Body.Close()
			if releaseFirst {
				ev.releaseAll()
			}
			resp = request(t, context.Background(), http.MethodGet, ev.url, "", mergeHdr(sessHdr(sid, "2025-11-25"), hdr{"Last-Event-ID": p.id}))
			defer resp.Body.Close()
			s = newSSE(t, resp)
			if !releaseFirst {
				ev.releaseAll()
			}
			r := s.nextEvent(t)
			if !strings.Contains(r.data, `"id":7`) || !strings.Contains(r.data, "released") || r.id == "" || r.id == p.id {
				t.Fatalf("resumed event %+v", r)
			}
			if _, err := s.next(); err != io.EOF {
				t.Fatalf("the resumed stream goes on after the response: %v", err)
			}
			select {
			case err := <-ev.stopped:
				t.Fatalf("the call was cancelled: %v", err)
			default:
			}
		})
	}
}

func TestResumeRefused(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-11-25")
	other := ev.initialize("2025-11-25")
	resp, s := ev.openGet(other, "2025-11-25", nil)
	otherID := s.nextEvent(t).id
	resp.Body.Close()

	for name, id := range map[string]string{"unknown": "nope", "another session's": otherID} {
		t.Run(name, func(t *testing.T) {
			r := request(t, context.Background(), http.MethodGet, ev.url, "", mergeHdr(sessHdr(sid, "2025-11-25"), hdr{"Last-Event-ID": id}))
			body := expect(t, r, http.StatusBadRequest)
			if code, _ := rpcError(t, body); code != -32600 {
				t.Fatalf("body %s", body)
			}
		})
	}
}

func TestGetStreamEnds(t *testing.T) {
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	store := memory.NewSessionStore(memory.SessionStoreOptions{IdleTimeout: time.Minute, Clock: clock})
	ev := newEnv(t, mcphttp.Options{SessionStore: store, KeepAlive: 20 * time.Millisecond})

	t.Run("on DELETE", func(t *testing.T) {
		sid := ev.initialize("2025-06-18")
		resp, s := ev.openGet(sid, "2025-06-18", nil)
		defer resp.Body.Close()
		expect(t, request(t, context.Background(), http.MethodDelete, ev.url, "", sessHdr(sid, "2025-06-18")), http.StatusNoContent)
		if _, err := s.next(); err != io.EOF {
			t.Fatalf("stream: %v", err)
		}
	})
	t.Run("on expiry, found by a keep-alive", func(t *testing.T) {
		sid := ev.initialize("2025-06-18")
		resp, s := ev.openGet(sid, "2025-06-18", nil)
		defer resp.Body.Close()
		// Keep-alives refresh the session while the stream is open.
		line, _ := s.br.ReadString('\n')
		if line != ":\n" {
			t.Fatalf("keep-alive %q", line)
		}
		clock.Advance(2 * time.Minute)
		if _, err := s.next(); err != io.EOF {
			t.Fatalf("stream: %v", err)
		}
		expect(t, ev.post(callBody(2, "echo", `{}`), sessHdr(sid, "2025-06-18")), http.StatusNotFound)
	})
	t.Run("on CloseStreams", func(t *testing.T) {
		sid := ev.initialize("2025-06-18")
		resp, s := ev.openGet(sid, "2025-06-18", nil)
		defer resp.Body.Close()
		ev.h.CloseStreams()
		if _, err := s.next(); err != io.EOF || s.retry == "" {
			t.Fatalf("stream: %v, retry %q", err, s.retry)
		}
		expect(t, request(t, context.Background(), http.MethodGet, ev.url, "", sessHdr(sid, "2025-06-18")), http.StatusServiceUnavailable)
		expect(t, ev.post(callBody(2, "echo", `{}`), sessHdr(sid, "2025-06-18")), http.StatusOK) // POSTs go on
	})
}
