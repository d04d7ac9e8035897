package client_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
)

// handshakeRevisions are the revisions with a GET stream.
var handshakeRevisions = []domain.Revision{domain.Revision20241105, domain.Revision20250326, domain.Revision20250618, domain.Revision20251125}

// cutter is an http.RoundTripper that cuts SSE answers: the next cutGET
// GET streams and the next cutPOST POST streams end (as a lost
// connection) after their first event that carries a message. It records
// the Last-Event-ID of every GET.
type cutter struct {
	cutGET, cutPOST atomic.Int32
	mu              sync.Mutex
	gets            []string // the Last-Event-ID of each GET ("" for none)
}

func (c *cutter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		c.mu.Lock()
		c.gets = append(c.gets, req.Header.Get("Last-Event-ID"))
		c.mu.Unlock()
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.Header.Get("Content-Type") != "text/event-stream" {
		return resp, err
	}
	n := &c.cutPOST
	if req.Method == http.MethodGet {
		n = &c.cutGET
	}
	if n.Add(-1) >= 0 {
		resp.Body = &cutBody{rc: resp.Body, br: bufio.NewReader(resp.Body)}
	} else {
		n.Add(1)
	}
	return resp, nil
}

// resumed returns the Last-Event-IDs the GETs carried.
func (c *cutter) resumed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, id := range c.gets {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}

// cutBody passes a stream on event by event, up to its first event with
// a message, then fails as a cut connection does.
type cutBody struct {
	rc      io.ReadCloser
	br      *bufio.Reader
	pending []byte
	cut     bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		if b.cut {
			b.rc.Close()
			return 0, io.ErrUnexpectedEOF
		}
		for {
			line, err := b.br.ReadBytes('\n')
			b.pending = append(b.pending, line...)
			if err != nil {
				if len(b.pending) > 0 {
					break
				}
				return 0, err
			}
			if bytes.HasPrefix(line, []byte("data: {")) {
				b.cut = true
			}
			if len(bytes.TrimSpace(line)) == 0 {
				break
			}
		}
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

func (b *cutBody) Close() error { return b.rc.Close() }

// serveHTTP serves srv's Streamable HTTP handler on httptest.
func serveHTTP(t *testing.T, srv *hexmcp.Server) *httptest.Server {
	h := srv.HTTPHandler(mcphttp.Options{})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.CloseStreams()
		h.Abort()
		ts.Close()
	})
	return ts
}

// In the handshake era the GET stream carries the server's notifications
// outside a call: list changes and logging.
func TestGetStream(t *testing.T) {
	srv := testServer(t, nil)
	for _, rev := range handshakeRevisions {
		t.Run(string(rev), func(t *testing.T) {
			changed := make(chan struct{}, 10)
			s := connect(t, client.New(client.Options{
				Revision:          rev,
				ToolListChanged:   func() { changed <- struct{}{} },
				PromptListChanged: func() { changed <- struct{}{} },
			}), client.HTTPTransport(serveHTTP(t, srv).URL, client.HTTPOptions{}))
			name := "extra_get_" + string(rev)
			addToolSeen(t, srv, s, changed, name)
		})
	}
	// Without it, nothing is asked.
	var gets atomic.Int32
	h := srv.HTTPHandler(mcphttp.Options{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { h.CloseStreams(); h.Abort(); ts.Close() })
	s := connect(t, client.New(client.Options{Revision: domain.Revision20251125}), client.HTTPTransport(ts.URL, client.HTTPOptions{NoGetStream: true}))
	if err := s.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("%d GETs with NoGetStream", n)
	}
}

// A GET stream cut after an event is resumed with Last-Event-ID: the
// notifications sent meanwhile arrive.
func TestGetStreamResumes(t *testing.T) {
	srv := testServer(t, nil)
	for _, rev := range handshakeRevisions {
		t.Run(string(rev), func(t *testing.T) {
			changed := make(chan struct{}, 10)
			cut := &cutter{}
			cut.cutGET.Store(1)
			s := connect(t, client.New(client.Options{
				Revision:        rev,
				ToolListChanged: func() { changed <- struct{}{} },
			}), client.HTTPTransport(serveHTTP(t, srv).URL, client.HTTPOptions{Client: &http.Client{Transport: cut}, ReconnectDelay: time.Millisecond}))
			for i := range 2 {
				name := fmt.Sprintf("extra_cut_%s_%d", rev, i)
				if err := srv.AddTool(hexmcp.Func(add, hexmcp.WithName(name))); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { srv.RemoveTool(name) })
				<-changed // the second after the cut
			}
			if ids := cut.resumed(); len(ids) == 0 {
				t.Errorf("no GET with Last-Event-ID")
			}
			if err := s.Ping(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A call whose stream is cut before its response gets it on the stream
// resumed with GET and Last-Event-ID.
func TestCallStreamResumes(t *testing.T) {
	release := make(chan struct{})
	srv := testServer(t, nil, func(o *hexmcp.Options) {
		o.Tools = append(o.Tools, hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
			if err := rc.ReportProgress(ctx, 1, 2, "half"); err != nil {
				return "", err
			}
			select {
			case <-release:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			if err := rc.ReportProgress(ctx, 2, 2, "all"); err != nil {
				return "", err
			}
			return "done", nil
		}, hexmcp.WithName("gated")))
	})
	for _, rev := range handshakeRevisions {
		t.Run(string(rev), func(t *testing.T) {
			cut := &cutter{}
			s := connect(t, client.New(client.Options{Revision: rev}),
				client.HTTPTransport(serveHTTP(t, srv).URL, client.HTTPOptions{Client: &http.Client{Transport: cut}, ReconnectDelay: time.Millisecond, NoGetStream: true}))
			cut.cutPOST.Store(1)
			var once sync.Once
			var mu sync.Mutex
			var got []float64
			ctx := client.WithProgress(t.Context(), func(p client.Progress) {
				mu.Lock()
				got = append(got, p.Progress)
				mu.Unlock()
				once.Do(func() { release <- struct{}{} })
			})
			res, err := s.CallTool(ctx, "gated", nil)
			if err != nil || res.Text() != "done" {
				t.Fatalf("gated = %+v, %v", res, err)
			}
			if ids := cut.resumed(); len(ids) != 1 {
				t.Errorf("GETs with Last-Event-ID: %q, want one", ids)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 2 {
				t.Errorf("progress %v, want both", got)
			}
		})
	}
}

// scripted serves a Streamable HTTP server of 2025-11-25 for the client's
// reconnection tests: session "s1", initialize (with caps), ping, a
// DELETE and any other POST taken (202); the n-th GET (from 1) goes to
// get, every tools/call to call (nil: 202). gets returns the Last-Event-ID
// of each GET so far ("" for none).
func scripted(t *testing.T, caps string, get func(w http.ResponseWriter, n int), call http.HandlerFunc) (ts *httptest.Server, gets func() []string) {
	var (
		mu  sync.Mutex
		ids []string
	)
	ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			mu.Lock()
			ids = append(ids, r.Header.Get("Last-Event-ID"))
			n := len(ids)
			mu.Unlock()
			get(w, n)
			return
		case http.MethodDelete:
			return
		}
		var m rpc
		_ = json.NewDecoder(r.Body).Decode(&m)
		switch m.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":%s,"serverInfo":{"name":"f","version":"1"}}}`, m.ID, caps)
		case "ping":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		case "tools/call":
			if call != nil {
				call(w, r)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(ts.Close)
	return ts, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(ids)
	}
}

// A server that keeps ending its GET stream with nothing new is
// reconnected to MaxReconnects times, after its retry, then left; the
// session goes on.
func TestReconnectsBounded(t *testing.T) {
	ts, gets := scripted(t, `{}`, func(w http.ResponseWriter, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "id: e1\nretry: 2\ndata:\n\n")
	}, nil)
	// ReconnectDelay is long: the test ends only if the retry of 2 ms is
	// honoured.
	s := connect(t, client.New(client.Options{Revision: domain.Revision20251125}),
		client.HTTPTransport(ts.URL, client.HTTPOptions{MaxReconnects: 3, ReconnectDelay: time.Hour}))
	for len(gets()) < 4 {
		if err := s.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if got, want := gets(), []string{"", "e1", "e1", "e1"}; !slices.Equal(got, want) {
		t.Errorf("GETs with Last-Event-ID %q, want %q", got, want)
	}
}

// resources/subscribe (handshake era): the server's updates of the
// resource reach ResourceUpdated until resources/unsubscribe.
func TestSubscribeResource(t *testing.T) {
	for _, tr := range transports {
		for _, rev := range handshakeRevisions {
			t.Run(tr.name+"/"+string(rev), func(t *testing.T) {
				srv := testServer(t, nil)
				updated := make(chan string, 10)
				s := connect(t, client.New(client.Options{
					Revision:        rev,
					ResourceUpdated: func(uri string) { updated <- uri },
				}), tr.dial(t, srv))
				const uri = "file:///readme.txt"
				if err := s.SubscribeResource(t.Context(), uri); err != nil {
					t.Fatal(err)
				}
				if n := srv.NotifyResourceUpdated(uri); n != 1 {
					t.Fatalf("the server told %d sessions", n)
				}
				if got := <-updated; got != uri {
					t.Errorf("updated %q", got)
				}
				if err := s.UnsubscribeResource(t.Context(), uri); err != nil {
					t.Fatal(err)
				}
				if n := srv.NotifyResourceUpdated(uri); n != 0 {
					t.Errorf("after unsubscribing, the server told %d sessions", n)
				}
			})
		}
	}
	// Not in the stateless era.
	s := connect(t, client.New(client.Options{}), pipeTransport(t, testServer(t, nil)))
	if err := s.SubscribeResource(t.Context(), "file:///readme.txt"); err == nil {
		t.Error("resources/subscribe in the stateless era")
	}
}

// Client middleware wraps every request: it sees the method and params,
// may change them, and may answer itself.
func TestMiddleware(t *testing.T) {
	srv := testServer(t, nil)
	var mu sync.Mutex
	var seen []string
	record := func(next client.MethodHandler) client.MethodHandler {
		return func(ctx context.Context, req *client.Request) (json.RawMessage, error) {
			mu.Lock()
			seen = append(seen, req.Method)
			mu.Unlock()
			return next(ctx, req)
		}
	}
	// double doubles the arguments of add; answering itself, it refuses
	// the tool fly.
	double := func(next client.MethodHandler) client.MethodHandler {
		return func(ctx context.Context, req *client.Request) (json.RawMessage, error) {
			if req.Method != "tools/call" {
				return next(ctx, req)
			}
			var p map[string]any
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, err
			}
			switch p["name"] {
			case "fly":
				return nil, &client.RPCError{Code: domain.CodeInvalidParams, Message: "no flying"}
			case "add":
				args := p["arguments"].(map[string]any)
				args["a"], args["b"] = args["a"].(float64)*2, args["b"].(float64)*2
				b, _ := json.Marshal(p)
				r := *req
				r.Params = b
				return next(ctx, &r)
			}
			return next(ctx, req)
		}
	}
	forEach(t, srv, client.Options{Middleware: []client.Middleware{record, double}}, func(t *testing.T, s *client.Session) {
		res, err := s.CallTool(t.Context(), "add", AddInput{A: 1, B: 2})
		if err != nil || res.Text() != "6" {
			t.Fatalf("add through middleware = %+v, %v", res, err)
		}
		var re *client.RPCError
		if _, err := s.CallTool(t.Context(), "fly", CityInput{City: "Oslo"}); !errors.As(err, &re) || re.Message != "no flying" {
			t.Fatalf("fly = %v, want the middleware's error", err)
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || (seen[0] != "server/discover" && seen[0] != "initialize") {
		t.Errorf("the middleware saw %v", seen)
	}
}

// An HTTP+SSE server whose endpoint event names another origin, or that
// sends none, is not connected to.
func TestSSEEndpointChecked(t *testing.T) {
	for name, first := range map[string]string{
		"foreign origin": "event: endpoint\ndata: http://elsewhere.example/message?sessionId=1\n\n",
		"no endpoint":    "event: message\ndata: {}\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, first)
			}))
			t.Cleanup(ts.Close)
			s, err := client.New(client.Options{Revision: domain.Revision20241105}).Connect(t.Context(), client.SSETransport(ts.URL+"/sse", client.SSEOptions{}))
			if err == nil {
				s.Close()
				t.Fatal("connected")
			}
		})
	}
}

// Over HTTP+SSE a message comes in an event named "message" or in one
// with no name (the default type of an SSE event); an event of another
// name is no message and is passed over.
func TestSSEMessageEvents(t *testing.T) {
	out := make(chan string, 16)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: endpoint\ndata: /message?sessionId=1\n\n")
			w.(http.Flusher).Flush()
			for {
				select {
				case ev := <-out:
					_, _ = io.WriteString(w, ev)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.WriteHeader(http.StatusAccepted)
		switch m.Method {
		case "initialize":
			out <- "event: ping\ndata: not a message\n\n"
			out <- `data: {"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}` + "\n\n"
		case "tools/list":
			out <- "event: message\ndata: " + `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}` + "\n\n"
		}
	}))
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s, err := client.New(client.Options{Revision: domain.Revision20241105}).Connect(ctx, client.SSETransport(ts.URL+"/sse", client.SSEOptions{Client: ts.Client()}))
	if err != nil {
		t.Fatalf("connect, answered in an event with no name: %v", err)
	}
	defer s.Close()
	var names []string
	for tool, err := range s.ListTools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"t"}) {
		t.Fatalf("tools %q, want [t]", names)
	}
}

// A call's stream cut after an event, whose resumption the server refuses
// with 400 (it no longer knows the event id), fails the call with that
// answer after one GET: only the GET stream starts afresh on a 400.
func TestCallStreamResumeRefused(t *testing.T) {
	ts, gets := scripted(t, `{"tools":{}}`, func(w http.ResponseWriter, _ int) {
		http.Error(w, "unknown event id", http.StatusBadRequest)
	}, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "id: e1\nretry: 2\ndata:\n\n") // then cut
	})
	s := connect(t, client.New(client.Options{Revision: domain.Revision20251125}),
		client.HTTPTransport(ts.URL, client.HTTPOptions{NoGetStream: true, MaxReconnects: 3, ReconnectDelay: time.Millisecond}))
	_, err := s.CallTool(t.Context(), "x", nil)
	var herr *client.HTTPError
	if !errors.As(err, &herr) || herr.StatusCode != http.StatusBadRequest {
		t.Fatalf("call = %v, want the 400 of the refused resumption", err)
	}
	if got := gets(); !slices.Equal(got, []string{"e1"}) {
		t.Errorf("GETs with Last-Event-ID %q, want one with e1", got)
	}
}

// A GET stream that ends before any event id, and whose reconnection the
// server refuses with 400, is given up after that one refusal: a 400 starts
// the stream afresh only when it refuses a Last-Event-ID.
func TestGetStreamRefusedWithoutID(t *testing.T) {
	ts, gets := scripted(t, `{}`, func(w http.ResponseWriter, n int) {
		if n > 1 {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "retry: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n") // then ends
	}, nil)
	s := connect(t, client.New(client.Options{Revision: domain.Revision20251125}),
		client.HTTPTransport(ts.URL, client.HTTPOptions{MaxReconnects: 3, ReconnectDelay: time.Millisecond}))
	count := func() int { return len(gets()) }
	for deadline := time.Now().Add(10 * time.Second); count() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("GETs %d, want the reconnection", count())
		}
	}
	// Reconnections 2 ms apart would have come by now.
	time.Sleep(200 * time.Millisecond)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Errorf("%d GETs, want 2: the stream, then the one reconnection the server refused", n)
	}
}
