package mcpredis_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// cluster is n instances of one server sharing one Redis (mcpredis.Share),
// each on an httptest server.
type cluster struct {
	t       *testing.T
	servers []*hexmcp.Server
	urls    []string
	// release lets the tool "wait" of every instance finish.
	release chan struct{}
}

func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	srv := redistest.Start(t)
	c := &cluster{t: t, release: make(chan struct{})}
	for range n {
		shared := mcpredis.Share(client(t, srv), mcpredis.ShareOptions{})
		t.Cleanup(func() { shared.EventStore.(io.Closer).Close() })
		s, err := hexmcp.New(hexmcp.Options{
			Shared: shared,
			Tools: []hexmcp.Tool{
				hexmcp.Func(func(_ context.Context, in echoIn) (string, error) { return "echo " + in.S, nil }, hexmcp.WithName("echo")),
				// wait reports progress 1, then waits for release, then
				// reports progress 2 and answers.
				hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext, _ struct{}) (string, error) {
					if err := rc.ReportProgress(ctx, 1, 2, "one"); err != nil {
						return "", err
					}
					select {
					case <-c.release:
					case <-ctx.Done():
						return "", ctx.Err()
					}
					if err := rc.ReportProgress(ctx, 2, 2, "two"); err != nil {
						return "", err
					}
					return "waited", nil
				}, hexmcp.WithName("wait")),
				hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext, _ struct{}) (string, error) {
					r, err := rc.Elicit(ctx, "name", domain.ElicitParams{Message: "Your name?", RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
					if err != nil {
						return "", err
					}
					return "hello " + string(r.Content), nil
				}, hexmcp.WithName("ask")),
			},
			Resources: []hexmcp.Resource{hexmcp.TextResource("test://doc", "doc", "text")},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		hs := httptest.NewServer(s.HTTPHandler(mcphttp.Options{}))
		t.Cleanup(hs.Close)
		c.servers = append(c.servers, s)
		c.urls = append(c.urls, hs.URL)
	}
	return c
}

// session initializes a session through instance i and returns its id.
func (c *cluster) session(i int) string {
	c.t.Helper()
	resp, body := post(c.t, c.urls[i], `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		c.t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(c.t, c.urls[(i+1)%len(c.urls)], `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHeaders(sid)); resp.StatusCode != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: %d %s", resp.StatusCode, body)
	}
	return sid
}

// sseEvent is one event of an SSE stream.
type sseEvent struct{ id, data string }

// sseStream reads the events of a streaming response.
type sseStream struct {
	t    *testing.T
	resp *http.Response
	r    *bufio.Reader
	evs  chan sseEvent
}

func openSSE(t *testing.T, resp *http.Response) *sseStream {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("not a stream: %d %s", resp.StatusCode, ct)
	}
	s := &sseStream{t: t, resp: resp, r: bufio.NewReader(resp.Body), evs: make(chan sseEvent, 64)}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(s.evs)
		var ev sseEvent
		for {
			line, err := s.r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "":
				if ev.id != "" || ev.data != "" {
					s.evs <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id:"):
				ev.id = strings.TrimSpace(line[3:])
			case strings.HasPrefix(line, "data:"):
				ev.data += strings.TrimSpace(line[5:])
			}
		}
	}()
	return s
}

// next returns the next event that carries data (priming events are
// skipped).
func (s *sseStream) next() sseEvent {
	s.t.Helper()
	for {
		select {
		case ev, ok := <-s.evs:
			if !ok {
				s.t.Fatal("the stream ended")
			}
			if ev.data != "" {
				return ev
			}
		case <-time.After(10 * time.Second):
			s.t.Fatal("no event within 10s")
		}
	}
}

// get opens a GET stream of session sid at url, resuming after last when
// it is not empty.
func get(t *testing.T, url, sid, last string) *sseStream {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range sessionHeaders(sid) {
		req.Header.Set(k, v)
	}
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp := testtools.Do(t, nil, req)
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	return openSSE(t, resp)
}

// postStream sends a request that answers on an SSE stream.
func postStream(t *testing.T, url, sid, body string) *sseStream {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	testtools.MCPHeaders(req, sessionHeaders(sid))
	resp := testtools.Do(t, nil, req)
	return openSSE(t, resp)
}

func wantData(t *testing.T, ev sseEvent, substr ...string) {
	t.Helper()
	for _, s := range substr {
		if !strings.Contains(ev.data, s) {
			t.Fatalf("event %q lacks %q", ev.data, s)
		}
	}
}

// A tool list change and resource updates raised on any instance reach a
// session whose GET stream another instance holds, each once; the stream
// resumed through a third instance misses nothing and repeats nothing.
func TestClusterNotifications(t *testing.T) {
	c := newCluster(t, 3)
	sid := c.session(0)
	// Subscribe through C.
	if resp, body := post(t, c.urls[2], `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://doc"}}`, sessionHeaders(sid)); resp.StatusCode != 200 || !strings.Contains(body, `"result":{}`) {
		t.Fatalf("subscribe: %d %s", resp.StatusCode, body)
	}
	g := get(t, c.urls[1], sid, "") // B holds the GET
	if err := c.servers[2].AddTool(hexmcp.Func(func(context.Context, echoIn) (string, error) { return "", nil }, hexmcp.WithName("extra"))); err != nil {
		t.Fatal(err)
	}
	wantData(t, g.next(), `"notifications/tools/list_changed"`)
	// Every instance holds a copy of the session (A created it, B serves
	// the GET, C the subscription): each delivers the update, once in all.
	for i := range 3 {
		c.servers[i].NotifyResourceUpdated("test://doc")
		ev := g.next()
		wantData(t, ev, `"notifications/resources/updated"`, `"uri":"test://doc"`)
	}
	// A marker proves that nothing came twice: the next event after the
	// three updates is the change of A's tool list.
	c.servers[0].RemoveTool("echo")
	last := g.next()
	wantData(t, last, `"notifications/tools/list_changed"`)
	g.resp.Body.Close()

	// While no GET is open, events are kept; resumed through A.
	c.servers[1].NotifyResourceUpdated("test://doc")
	c.servers[2].RemoveTool("extra")
	r := get(t, c.urls[0], sid, last.id)
	wantData(t, r.next(), `"notifications/resources/updated"`)
	wantData(t, r.next(), `"notifications/tools/list_changed"`)
	c.servers[1].NotifyResourceUpdated("test://doc")
	wantData(t, r.next(), `"notifications/resources/updated"`)
}

// A handshake-era elicitation sent by the instance running the call is
// answered through another instance: the handler gets the answer.
func TestClusterElicitationAnsweredElsewhere(t *testing.T) {
	c := newCluster(t, 2)
	sid := c.session(0)
	s := postStream(t, c.urls[0], sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	ev := s.next()
	wantData(t, ev, `"method":"elicitation/create"`)
	i := strings.Index(ev.data, `"id":`)
	j := strings.IndexAny(ev.data[i:], ",}")
	id := ev.data[i+5 : i+j]
	resp, body := post(t, c.urls[1], fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Ada"}}}`, id), sessionHeaders(sid))
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("the answer through B: %d %s", resp.StatusCode, body)
	}
	wantData(t, s.next(), `"id":5`, `hello {\"name\":\"Ada\"}`)
}

// A POST stream cut after its first event is resumed through another
// instance, which replays what it missed and follows the call still
// running at the first instance until its response.
func TestClusterResumePostStreamElsewhere(t *testing.T) {
	c := newCluster(t, 2)
	sid := c.session(0)
	s := postStream(t, c.urls[0], sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wait","arguments":{},"_meta":{"progressToken":"p"}}}`)
	first := s.next()
	wantData(t, first, `"progress":1`)
	s.resp.Body.Close() // the connection is lost; the call goes on at A
	r := get(t, c.urls[1], sid, first.id)
	close(c.release)
	wantData(t, r.next(), `"progress":2`)
	wantData(t, r.next(), `"id":9`, `waited`)
}

// One GET stream per session at an instance: a second is refused with 409,
// a resumption takes over (the first one ends).
func TestClusterOneGetPerInstance(t *testing.T) {
	c := newCluster(t, 2)
	sid := c.session(0)
	g := get(t, c.urls[0], sid, "")
	req, _ := http.NewRequest(http.MethodGet, c.urls[0], nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range sessionHeaders(sid) {
		req.Header.Set(k, v)
	}
	resp := testtools.Do(t, nil, req)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("a second GET at the same instance: %d, want 409", resp.StatusCode)
	}
	c.servers[1].NotifyResourceUpdated("test://doc") // nobody subscribed: nothing
	if err := c.servers[1].AddTool(hexmcp.Func(func(context.Context, echoIn) (string, error) { return "", nil }, hexmcp.WithName("x"))); err != nil {
		t.Fatal(err)
	}
	ev := g.next()
	wantData(t, ev, "tools/list_changed")
	r := get(t, c.urls[0], sid, ev.id)
	// The first stream ends once the resumption took over.
	deadline := time.After(10 * time.Second)
	for ended := false; !ended; {
		select {
		case _, ok := <-g.evs:
			ended = !ok
		case <-deadline:
			t.Fatal("the first GET stream did not end when a resumption took over")
		}
	}
	c.servers[1].RemoveTool("x")
	wantData(t, r.next(), "tools/list_changed")
}
