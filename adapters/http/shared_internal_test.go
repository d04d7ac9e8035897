package mcphttp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp/adapters/memory"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// Two instances sharing their session store (memory) and event store
// (Redis): a stream begun at one is resumed at the other.

// sharedInstance is a Handler over an engine with the tool held (it
// reports progress, then waits for release or its context, and answers
// with released), whose event store is the Redis at addr and whose
// session store is sessions.
func sharedInstance(t *testing.T, addr string, sessions *memory.SessionStore, tool string, release <-chan struct{}, released string) *Handler {
	t.Helper()
	e := testtools.NewEngine(t, app.Options{Info: domain.Implementation{Name: "t", Version: "1"}})
	t.Cleanup(func() { e.Close() })
	if err := e.AddTool(decl.NewTool(func(ctx context.Context, rc *app.RequestContext, _ struct{}) (string, error) {
		if err := rc.ReportProgress(ctx, 1, 2, "one"); err != nil {
			return "", err
		}
		select {
		case <-release:
			if released != "" {
				return released, nil
			}
			return "", ctx.Err()
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, decl.WithName(tool))); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	events := mcpredis.NewEventStore(rdb, mcpredis.EventStoreOptions{})
	t.Cleanup(func() { events.Close() })
	return NewHandler(e, Options{SessionStore: sessions, EventStore: events})
}

// sharedDo sends a request with the content types of the transport and
// the headers hdr.
func sharedDo(t *testing.T, method, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	testtools.MCPHeaders(req, hdr)
	return testtools.Do(t, nil, req)
}

// sharedSession opens a 2025-11-25 session at a, sends its initialized
// notification to b and returns the headers of the session.
func sharedSession(t *testing.T, a, b string) map[string]string {
	t.Helper()
	resp := sharedDo(t, "POST", a, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get(HeaderSessionID)
	hdr := map[string]string{HeaderSessionID: sid, "MCP-Protocol-Version": "2025-11-25"}
	resp = sharedDo(t, "POST", b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	resp.Body.Close()
	return hdr
}

// readUntil reads SSE lines from r until a data line containing want,
// and returns the id of the event it is in.
func readUntil(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	id := ""
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before %q: %v", want, err)
		}
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "id:"); ok {
			id = strings.TrimSpace(v)
		}
		if strings.HasPrefix(line, "data:") && strings.Contains(line, want) {
			return id
		}
	}
}

// A POST stream begun at one instance and resumed at another is followed
// from the shared store; when nothing comes for followQuiet (its call may
// have died with its instance) the follow ends with an SSE retry field
// rather than hold the connection forever.
func TestFollowOfQuietPostStreamEnds(t *testing.T) {
	old := followQuiet
	followQuiet = 300 * time.Millisecond
	t.Cleanup(func() { followQuiet = old })
	srv := redistest.Start(t)
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{})
	release := make(chan struct{})
	defer close(release)
	instance := func() string {
		hs := httptest.NewServer(sharedInstance(t, srv.Addr, sessions, "hold", release, ""))
		t.Cleanup(hs.Close)
		return hs.URL
	}
	a, b := instance(), instance()
	hdr := sharedSession(t, a, b)
	resp := sharedDo(t, "POST", a, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hold","arguments":{},"_meta":{"progressToken":"p"}}}`, hdr)
	last := readUntil(t, bufio.NewReader(resp.Body), "notifications/progress")
	if last == "" {
		t.Fatal("the progress event has no id")
	}
	resp.Body.Close()
	hdr["Last-Event-ID"] = last
	resp = sharedDo(t, "GET", b, "", hdr)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("resume at b: %d", resp.StatusCode)
	}
	if body := testtools.ReadToEnd(t, resp.Body, 20*time.Second, "the follow of a quiet POST stream never ended"); !strings.Contains(body, "retry:") || strings.Contains(body, `"id":2`) {
		t.Fatalf("the quiet follow ended with %q, want an SSE retry field and no response", body)
	}
}

// streamEndBound bounds the wait for a stream the test expects to end: a
// stream that does not end is the failure (the bound only keeps it from
// hanging the test).
const streamEndBound = 20 * time.Second

// A Server sharing its event store (Redis) with another instance, stopped
// while a session holds a GET stream and a POST stream whose call is in
// flight: both streams end at once with an SSE retry field (before the
// call has answered), the client resumes the POST stream at the other
// instance, the call goes on at the stopping one and its response reaches
// the client there; Shutdown returns once the call is done, well within
// its deadline, without error. (Before, the POST stream stayed open until
// the call answered, and a call that waited for a client that went away
// held Shutdown until its deadline.)
func TestShutdownHandsPostStreamsOver(t *testing.T) {
	srv := redistest.Start(t)
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{})
	release := make(chan struct{})
	var released bool
	defer func() {
		if !released {
			close(release)
		}
	}()
	handler := func() *Handler { return sharedInstance(t, srv.Addr, sessions, "slow", release, "released") }
	stopping := NewServer("127.0.0.1:0", handler(), ServerOptions{})
	if err := stopping.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopping.Shutdown(context.Background()) })
	a := "http://" + stopping.Addr()
	other := httptest.NewServer(handler())
	t.Cleanup(other.Close)
	b := other.URL

	hdr := sharedSession(t, a, a)

	// rest reads what is left of a stream the test expects to end.
	rest := func(name string, body io.Reader) string {
		t.Helper()
		got := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(body)
			got <- string(b)
		}()
		select {
		case s := <-got:
			return s
		case <-time.After(streamEndBound):
			t.Fatalf("the %s stream is still open after Shutdown began (its call is in flight)", name)
			return ""
		}
	}

	get := sharedDo(t, "GET", a, "", hdr)
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", get.StatusCode)
	}
	getR := bufio.NewReader(get.Body)
	if line, err := getR.ReadString('\n'); err != nil || !strings.HasPrefix(line, "id:") {
		t.Fatalf("GET stream: %q %v, want its priming event", line, err)
	}
	post := sharedDo(t, "POST", a, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p"}}}`, hdr)
	defer post.Body.Close()
	postR := bufio.NewReader(post.Body)
	last := readUntil(t, postR, "notifications/progress")
	if last == "" {
		t.Fatal("the progress event has no id")
	}

	shut := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() { shut <- stopping.Shutdown(ctx) }()

	if s := rest("GET", getR); !strings.Contains(s, "retry:") {
		t.Fatalf("the GET stream ended with %q, want an SSE retry field", s)
	}
	if s := rest("POST", postR); !strings.Contains(s, "retry:") || strings.Contains(s, `"id":2`) {
		t.Fatalf("the POST stream ended with %q, want an SSE retry field and no response", s)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while the call of the handed-over stream runs", err)
	default:
	}

	// The client resumes at the other instance; the call answers at the
	// stopping one.
	hdr["Last-Event-ID"] = last
	resumed := sharedDo(t, "GET", b, "", hdr)
	defer resumed.Body.Close()
	if resumed.StatusCode != http.StatusOK {
		t.Fatalf("resume at the other instance: %d", resumed.StatusCode)
	}
	released = true
	close(release)
	resumedR := bufio.NewReader(resumed.Body)
	readUntil(t, resumedR, `"id":2`)
	if s := rest("resumed", resumedR); strings.Contains(s, "data:") {
		t.Fatalf("the resumed stream went on after the response: %q", s)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("Shutdown ran into its deadline")
	}
}
