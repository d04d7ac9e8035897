// Package load holds the load test: many concurrent sessions making tool
// calls over Streamable HTTP and WebSocket against one server on loopback.
// Every response must arrive, match its request, and none may be lost or
// duplicated. The figures (calls/s, p50/p99 latency, peak heap) are logged.
//
// Default size (CI, with -race): 20 sessions × 10 calls per transport.
// Full size: LOAD_SESSIONS=200 LOAD_CALLS=50 go test -run . -v ./test/load/
package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

func size(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

type echoIn struct {
	Session int `json:"session"`
	Call    int `json:"call"`
}

// newServer serves one engine over Streamable HTTP at /mcp and WebSocket at
// /ws on a loopback port.
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	e := testtools.NewEngine(t, app.Options{MaxConcurrentRequests: 64})
	echo := hexmcp.Func(func(_ context.Context, in echoIn) (string, error) {
		return fmt.Sprintf("%d/%d", in.Session, in.Call), nil
	}, hexmcp.WithName("echo"))
	if err := e.AddTool(echo); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	// Every session of the load comes from one address: the per-client
	// session limit (100) would stop a full
	// size run, so it is lifted, as it would be for clients told apart by
	// another key (mcphttp.Options.ClientKey).
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{MaxSessionsPerClient: ports.UnlimitedSessionsPerClient})
	mux.Handle("/mcp", mcphttp.NewHandler(e, mcphttp.Options{SessionStore: sessions}))
	mux.Handle("/ws", websocket.NewHandler(e, websocket.Options{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		e.Close()
	})
	return srv
}

// stats collects latencies and checks that every call got exactly its answer.
type stats struct {
	mu        sync.Mutex
	latencies []time.Duration
	answered  map[string]int
	failures  atomic.Int64
	firstErr  atomic.Value
}

func newStats() *stats { return &stats{answered: make(map[string]int)} }

func (s *stats) ok(key string, d time.Duration) {
	s.mu.Lock()
	s.latencies = append(s.latencies, d)
	s.answered[key]++
	s.mu.Unlock()
}

func (s *stats) fail(err error) {
	s.failures.Add(1)
	s.firstErr.CompareAndSwap(nil, err)
}

// heapPeak samples the heap until stop is closed.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

func (s *stats) report(t *testing.T, transport string, sessions, calls int, elapsed time.Duration, peak uint64) {
	t.Helper()
	if n := s.failures.Load(); n > 0 {
		t.Fatalf("%s: %d failures; first: %v", transport, n, s.firstErr.Load())
	}
	for sess := 0; sess < sessions; sess++ {
		for c := 0; c < calls; c++ {
			key := fmt.Sprintf("%d/%d", sess, c)
			if n := s.answered[key]; n != 1 {
				t.Fatalf("%s: call %s answered %d times", transport, key, n)
			}
		}
	}
	slices.Sort(s.latencies)
	pct := func(p float64) time.Duration { return s.latencies[int(p*float64(len(s.latencies)-1))] }
	total := sessions * calls
	t.Logf("%s: %d sessions × %d calls = %d calls in %v: %.0f calls/s, p50 %v, p99 %v, peak heap %.1f MiB",
		transport, sessions, calls, total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(),
		pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), float64(peak)/(1<<20))
}

func callBody(id string, sess, call int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"session":%d,"call":%d}}}`, id, sess, call)
}

// checkResult verifies a JSON-RPC response: its id and the echoed text.
func checkResult(raw []byte, wantID string, sess, call int) error {
	var resp struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("bad response %q: %w", raw, err)
	}
	if string(resp.ID) != wantID {
		return fmt.Errorf("response id %s, want %s", resp.ID, wantID)
	}
	if resp.Result == nil || len(resp.Result.Content) != 1 || resp.Result.Content[0].Text != fmt.Sprintf("%d/%d", sess, call) {
		return fmt.Errorf("wrong result for %d/%d: %s", sess, call, raw)
	}
	return nil
}

// runLoad runs session, LOAD_SESSIONS of them (default 20) at once, each
// making LOAD_CALLS calls (default 10) and recording them in st, and
// reports the figures of transport.
func runLoad(t *testing.T, transport string, session func(st *stats, sess, calls int)) {
	sessions, calls := size("LOAD_SESSIONS", 20), size("LOAD_CALLS", 10)
	st := newStats()
	stop := make(chan struct{})
	peak := heapPeak(stop)
	start := time.Now()
	var wg sync.WaitGroup
	for sess := 0; sess < sessions; sess++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session(st, sess, calls)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	st.report(t, transport, sessions, calls, elapsed, <-peak)
}

func TestHTTPLoad(t *testing.T) {
	srv := newServer(t)
	url := srv.URL + "/mcp"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: size("LOAD_SESSIONS", 20), MaxConnsPerHost: 0}, Timeout: 30 * time.Second}
	runLoad(t, "streamable-http", func(st *stats, sess, calls int) {
		post := func(body, sid string) (*http.Response, []byte, error) {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			testtools.MCPHeaders(req)
			if sid != "" {
				req.Header.Set("Mcp-Session-Id", sid)
				req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			}
			resp, err := client.Do(req)
			if err != nil {
				return nil, nil, err
			}
			defer resp.Body.Close()
			b, err := readBody(resp)
			return resp, b, err
		}
		resp, _, err := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`, "")
		if err != nil || resp.StatusCode != 200 {
			st.fail(fmt.Errorf("initialize: %v %v", resp, err))
			return
		}
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp, _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid); err != nil || resp.StatusCode != http.StatusAccepted {
			st.fail(fmt.Errorf("initialized: %v %v", resp, err))
			return
		}
		for c := 0; c < calls; c++ {
			id := strconv.Itoa(c + 1)
			t0 := time.Now()
			resp, body, err := post(callBody(id, sess, c), sid)
			if err != nil {
				st.fail(err)
				return
			}
			if resp.StatusCode != 200 {
				st.fail(fmt.Errorf("status %d: %s", resp.StatusCode, body))
				return
			}
			if err := checkResult(body, id, sess, c); err != nil {
				st.fail(err)
				return
			}
			st.ok(fmt.Sprintf("%d/%d", sess, c), time.Since(t0))
		}
	})
}

// readBody returns the JSON-RPC response of a POST: the body itself, or the
// last data event of an SSE stream.
func readBody(resp *http.Response) ([]byte, error) {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var b bytes.Buffer
		_, err := b.ReadFrom(resp.Body)
		return b.Bytes(), err
	}
	var last []byte
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			last = []byte(strings.TrimSpace(data))
		}
	}
	return last, sc.Err()
}

func TestWebSocketLoad(t *testing.T) {
	srv := newServer(t)
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
	dialer := gws.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: 10 * time.Second}
	runLoad(t, "websocket", func(st *stats, sess, calls int) {
		conn, _, err := dialer.Dial(url, nil)
		if err != nil {
			st.fail(err)
			return
		}
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		if err := conn.WriteMessage(gws.TextMessage, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`)); err != nil {
			st.fail(err)
			return
		}
		if _, _, err := conn.ReadMessage(); err != nil {
			st.fail(err)
			return
		}
		_ = conn.WriteMessage(gws.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		// All calls in flight at once on the connection; answers may
		// come in any order and are matched by id.
		sent := make(map[string]time.Time, calls)
		var smu sync.Mutex
		go func() {
			for c := 0; c < calls; c++ {
				id := strconv.Itoa(c + 1)
				smu.Lock()
				sent[id] = time.Now()
				smu.Unlock()
				if err := conn.WriteMessage(gws.TextMessage, []byte(callBody(id, sess, c))); err != nil {
					st.fail(err)
					return
				}
			}
		}()
		for got := 0; got < calls; got++ {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				st.fail(fmt.Errorf("session %d after %d answers: %w", sess, got, err))
				return
			}
			var head struct{ ID json.RawMessage }
			_ = json.Unmarshal(msg, &head)
			c, err := strconv.Atoi(string(head.ID))
			if err != nil || c < 1 || c > calls {
				st.fail(fmt.Errorf("unexpected message %s", msg))
				return
			}
			if err := checkResult(msg, string(head.ID), sess, c-1); err != nil {
				st.fail(err)
				return
			}
			smu.Lock()
			t0 := sent[string(head.ID)]
			smu.Unlock()
			st.ok(fmt.Sprintf("%d/%d", sess, c-1), time.Since(t0))
		}
	})
}
