package mcpredis_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports/porttest"
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
	c.settle()
	return c
}

// settle returns once every notice the instances raised as they started
// has reached every other instance. New registers an instance's tools and
// resources and announces them (tools/list_changed, resources/list_changed)
// to the whole cluster through the bus, which delivers them later; a test's
// stream opened before they arrive would hear them before what the test
// raises. Each instance publishes its notices in order, so a marker each
// raises after starting (an update of test://doc), heard at every instance,
// comes after all of them.
func (c *cluster) settle() {
	c.t.Helper()
	streams := make([]*sseStream, len(c.urls))
	for i, u := range c.urls {
		sid := c.session(i)
		if resp, body := post(c.t, u, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://doc"}}`, sessionHeaders(sid)); resp.StatusCode != 200 {
			c.t.Fatalf("settle: subscribe: %d %s", resp.StatusCode, body)
		}
		streams[i] = get(c.t, u, sid, "")
	}
	for _, s := range c.servers {
		s.NotifyResourceUpdated("test://doc")
	}
	for _, g := range streams {
		for heard := 0; heard < len(c.servers); {
			if strings.Contains(g.next().data, `"notifications/resources/updated"`) {
				heard++
			}
		}
		g.resp.Body.Close()
	}
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

type echoIn struct {
	S string `json:"s"`
}

// A session initialized through one instance is served by another: both
// keep their sessions in one Redis.
func TestSessionAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	instance := func() string {
		s, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(func(_ context.Context, in echoIn) (string, error) {
			return "echo " + in.S, nil
		}, hexmcp.WithName("echo"))}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		h := s.HTTPHandler(mcphttp.Options{SessionStore: mcpredis.NewSessionStore(client(t, srv), mcpredis.SessionStoreOptions{})})
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		return hs.URL
	}
	a, b := instance(), instance()
	resp, body := post(t, a, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize on A: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHeaders(sid)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized on B: %d %s", resp.StatusCode, body)
	}
	for i, url := range []string{b, a, b} {
		resp, body := post(t, url, `{"jsonrpc":"2.0","id":`+string(rune('2'+i))+`,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"}}}`, sessionHeaders(sid))
		if resp.StatusCode != 200 || !strings.Contains(body, `echo x`) {
			t.Fatalf("call %d through %s: %d %s", i, url, resp.StatusCode, body)
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, b, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE on B: %v %v", err, resp)
	}
	if resp, body := post(t, a, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"}}}`, sessionHeaders(sid)); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a session deleted through B still served by A: %d %s", resp.StatusCode, body)
	}
}

// Redis down: session requests get 503 with Retry-After and the request's
// id, stateless calls (which need no store) go on; Redis back: sessions
// work again without a restart.
func TestSessionStoreRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	s, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(func(_ context.Context, in echoIn) (string, error) {
		return "echo " + in.S, nil
	}, hexmcp.WithName("echo"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	store := mcpredis.NewSessionStore(client(t, srv), mcpredis.SessionStoreOptions{Timeout: 300 * time.Millisecond})
	hs := httptest.NewServer(s.HTTPHandler(mcphttp.Options{SessionStore: store, Logger: slog.New(slog.DiscardHandler)}))
	defer hs.Close()
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	resp, body := post(t, hs.URL, initialize, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	srv.Stop()
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"}}}`
	for name, r := range map[string]func() (*http.Response, string){
		"initialize": func() (*http.Response, string) { return post(t, hs.URL, initialize, nil) },
		"session call": func() (*http.Response, string) {
			return post(t, hs.URL, call, sessionHeaders(sid))
		},
	} {
		resp, body := r()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, `"error"`) {
			t.Fatalf("%s with Redis down: %d Retry-After=%q %s", name, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if name == "session call" && !strings.Contains(body, `"id":7`) {
			t.Fatalf("the 503 lacks the request's id: %s", body)
		}
	}
	stateless := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"s":"y"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	if resp, body := post(t, hs.URL, stateless, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}); resp.StatusCode != 200 || !strings.Contains(body, "echo y") {
		t.Fatalf("a stateless call with Redis down: %d %s", resp.StatusCode, body)
	}
	srv.Restart(t)
	var ok bool
	for range 50 { // the client's pool reconnects
		if resp, _ := post(t, hs.URL, initialize, nil); resp.StatusCode == 200 {
			ok = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !ok {
		t.Fatal("sessions did not come back with Redis")
	}
}

// post sends one JSON-RPC message to an MCP endpoint, with headers, and
// returns the response and its body.
func post(t *testing.T, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	testtools.MCPHeaders(req, hdr)
	resp := testtools.Do(t, nil, req)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func sessionHeaders(sid string) map[string]string {
	if sid == "" {
		return nil
	}
	return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
}

// paddedInit is an initialize with about pad bytes of capabilities.
func paddedInit(pad int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"pad":{"x":"%s"}}},"clientInfo":{"name":"c","version":"1"}}}`,
		strings.Repeat("a", pad))
}

// redisPerClientBudget is the Redis store's default budget of one client's
// sessions.
const redisPerClientBudget = portlimits.DefaultMaxSessionBytesPerClient

// Sessions kept in Redis are bounded in bytes per client: one address
// opening sessions of 60 KiB of capabilities is refused (429, Retry-After,
// the initialize's id) once its sessions hold its budget, and Redis holds
// no more of them. Before, 40 sessions of 3.5 MiB from one address put
// 160 MiB in Redis.
func TestRedisSessionBytesPerClient(t *testing.T) {
	srv := redistest.Start(t)
	s, err := hexmcp.New(hexmcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rdb := client(t, srv)
	hs := httptest.NewServer(s.HTTPHandler(mcphttp.Options{SessionStore: mcpredis.NewSessionStore(rdb, mcpredis.SessionStoreOptions{Prefix: "bytes:"})}))
	t.Cleanup(hs.Close)

	const pad = 60 << 10
	var sids []string
	var refused *http.Response
	var body string
	for range 40 {
		resp, b := post(t, hs.URL, paddedInit(pad), nil)
		if resp.StatusCode != http.StatusOK {
			refused, body = resp, b
			break
		}
		sid := resp.Header.Get("Mcp-Session-Id")
		if r, b := post(t, hs.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHeaders(sid)); r.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/initialized: %d %s", r.StatusCode, b)
		}
		sids = append(sids, sid)
	}
	if refused == nil {
		t.Fatalf("one client stored %d sessions of %d KiB (%d KiB) in Redis, past the %d KiB budget", len(sids), pad>>10, len(sids)*pad>>10, redisPerClientBudget>>10)
	}
	if len(sids)*pad > redisPerClientBudget || len(sids) < redisPerClientBudget/(pad+4<<10)-1 {
		t.Fatalf("one client held %d sessions of %d KiB before the refusal; the budget is %d KiB", len(sids), pad>>10, redisPerClientBudget>>10)
	}
	if refused.StatusCode != http.StatusTooManyRequests || refused.Header.Get("Retry-After") == "" {
		t.Fatalf("refusal %d (Retry-After %q): %.300s", refused.StatusCode, refused.Header.Get("Retry-After"), body)
	}
	var e struct {
		ID    json.RawMessage    `json:"id"`
		Error struct{ Code int } `json:"error"`
	}
	if json.Unmarshal([]byte(body), &e) != nil || string(e.ID) != "1" || e.Error.Code != -32600 {
		t.Fatalf("refusal body %.300s", body)
	}
	// What Redis holds of the sessions' states is within the budget.
	keys, err := rdb.Keys(context.Background(), "bytes:sess:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var held int64
	for _, k := range keys {
		n, err := rdb.HStrLen(context.Background(), k, "s").Result()
		if err != nil {
			t.Fatal(err)
		}
		held += n
	}
	if held > redisPerClientBudget {
		t.Fatalf("Redis holds %d bytes of session states for one client, past its %d", held, redisPerClientBudget)
	}
	// Ending a session makes room again.
	req, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
	for k, v := range sessionHeaders(sids[0]) {
		req.Header.Set(k, v)
	}
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", err, resp)
	}
	if resp, b := post(t, hs.URL, paddedInit(pad), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("after a DELETE: %d %.300s", resp.StatusCode, b)
	}
}

// The copies of sessions an instance keeps in memory are bounded in bytes
// (mcphttp.Options.MaxLocalSessionBytes): Redis tells no instance that a
// session expired (or was deleted through another instance), so without
// the budget the copies of sessions Redis dropped stayed for 30 minutes,
// and a client opening pending sessions of 60 KiB every 30 s filled the
// instance's memory with them. Past the budget, copies idle here leave
// memory (a live session's next request restores it from Redis).
func TestLocalSessionCopiesBoundedInBytes(t *testing.T) {
	srv := redistest.Start(t)
	clock := porttest.NewFakeClock(time.Now().Truncate(time.Second))
	open := func(t *testing.T, budget int) (*hexmcp.Server, string) {
		s, err := hexmcp.New(hexmcp.Options{Resources: []hexmcp.Resource{hexmcp.TextResource("test://doc", "doc", "x")}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		store := mcpredis.NewSessionStore(client(t, srv), mcpredis.SessionStoreOptions{Prefix: fmt.Sprintf("copies%d:", budget), Clock: clock})
		hs := httptest.NewServer(s.HTTPHandler(mcphttp.Options{SessionStore: store, MaxLocalSessionBytes: budget}))
		t.Cleanup(hs.Close)
		return s, hs.URL
	}
	const pad = 60 << 10
	// subscribed opens n sessions of pad bytes subscribed to test://doc,
	// ready or pending.
	subscribed := func(t *testing.T, url string, n int, ready bool) {
		t.Helper()
		for range n {
			resp, body := post(t, url, paddedInit(pad), nil)
			sid := resp.Header.Get("Mcp-Session-Id")
			if resp.StatusCode != http.StatusOK || sid == "" {
				t.Fatalf("initialize: %d %.300s", resp.StatusCode, body)
			}
			if ready {
				if r, b := post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHeaders(sid)); r.StatusCode != http.StatusAccepted {
					t.Fatalf("notifications/initialized: %d %s", r.StatusCode, b)
				}
			}
			if r, b := post(t, url, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://doc"}}`, sessionHeaders(sid)); r.StatusCode != http.StatusOK || !strings.Contains(b, `"result":{}`) {
				t.Fatalf("subscribe: %d %s", r.StatusCode, b)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		budget int
		want   int // sessions the instance still holds at the end
	}{{"budget", 200 << 10, 3}, {"unlimited", hexmcp.Unlimited, 6}} {
		t.Run(tc.name, func(t *testing.T) {
			s, url := open(t, tc.budget)
			subscribed(t, url, 3, false)
			if n := s.NotifyResourceUpdated("test://doc"); n != 3 {
				t.Fatalf("%d sessions told, want 3", n)
			}
			// Redis drops the pending sessions; the instance is not told.
			clock.Advance(portlimits.DefaultSessionPendingTimeout + time.Second)
			// Wait until the copies have gone unused for long enough to be
			// dropped (a copy just used is never: its request may be on its
			// way to counting itself in flight).
			time.Sleep(1100 * time.Millisecond)
			subscribed(t, url, 3, true)
			if n := s.NotifyResourceUpdated("test://doc"); n != tc.want {
				t.Fatalf("the instance holds %d sessions' copies, want %d", n, tc.want)
			}
		})
	}
}
