// Package hostile holds the hostile-load test: the showcase server, built and
// run as its own process on loopback, is attacked by clients that try to make
// it hold memory and connections without bound (floods of listen streams,
// sessions, subscriptions and HTTP+SSE streams; slow readers on SSE and WebSocket; SSE answers
// of megabytes left in the event store), while a well-behaved client keeps
// calling tools. It asserts that the server's peak resident memory stays
// within the bound the README's table of limits implies, that the attackers
// were refused, and that the well-behaved client got every answer right; the
// latencies are logged, never asserted. A second round (round2_test.go)
// attacks what a client makes the server keep in bytes and the budgets of
// requests in flight: tasks padded with megabytes of _meta, a task flood
// past one client's quota, sessions declaring megabytes of capabilities,
// POST bodies announced and never sent, calls of 4 MiB left waiting for an
// elicitation answer over HTTP and over WebSocket, and a request nested
// past the decoder's depth; it asserts the bounds each must meet, and that
// the well-behaved client is still served (its task call gets a task).
//
// The attackers connect from other loopback addresses (127.0.0.2, 127.0.0.3,
// 127.0.0.4 for the task flood, 127.0.0.5 and 127.0.0.6 for the listen
// streams over WebSocket) than the well-behaved client (127.0.0.1): the server's per-client limits key
// on the remote address, as they would for clients on other machines.
//
// Size: HOSTILE_SCALE (default 1) multiplies the flood sizes.
package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/internal/showcasebin"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// peakRSSBound is what the limits (README, "Limits", at their defaults)
// let this test's attacks make the server hold at once, from its two
// attacking addresses, doubled for the Go runtime's headroom (GOGC=100 lets
// the heap grow to twice what was live at the last collection), plus the
// runtime's own baseline. Before the limits existed these attacks took the
// server to 2.27 GiB; they now peak at 241–304 MiB, of which at most
// 127 MiB is live.
const peakRSSBound = 2*(eventStoreBytes+sseQueueBytes+wsQueueBytes+taskBytes+runningTaskBytes+
	wsInFlightBytes+httpCallBytes+httpBodyBytes) + runtimeBaseline

// The budgets this test's attacks reach, at their defaults.
const (
	mib = 1 << 20
	// eventStoreBytes: the SSE events kept for resumption (the 3 MiB
	// answers, read or not), memory.EventStoreOptions.MaxBytes.
	eventStoreBytes = 64 * mib
	// sseQueueBytes: the 3 MiB answers waiting for the 8 streams per address
	// that never read them (each stream's queue holds up to 8 MiB,
	// mcphttp.Options.MaxStreamQueueBytes, but one answer is all it has).
	sseQueueBytes = 2 * 8 * 3 * mib
	// wsQueueBytes: the send queues of the 2 WebSocket connections that
	// never read, websocket.Options.MaxQueueBytes each.
	wsQueueBytes = 2 * 8 * mib
	// taskBytes and runningTaskBytes: the padded tasks kept per client
	// (TaskStoreOptions.MaxBytesPerClient, 16 MiB) and what running tasks
	// hold (tasks.Options.MaxRunningBytes).
	taskBytes        = 2 * 16 * mib
	runningTaskBytes = 64 * mib
	// wsInFlightBytes: the 4 MiB WebSocket calls in flight or waiting for
	// an answer, hexmcp.Options.MaxInFlightBytesPerClient per address.
	wsInFlightBytes = 2 * 64 * mib
	// httpCallBytes: the HTTP calls waiting for an answer, what one client's
	// calls keep (mcphttp.Options.MaxInFlightBytesPerClient) per address.
	httpCallBytes = 2 * 8 * mib
	// httpBodyBytes: the POST bodies being read at once,
	// mcphttp.Options.MaxInFlightBytes.
	httpBodyBytes = 32 * mib
	// runtimeBaseline: the idle server (about 20 MiB) and the goroutine
	// stacks of the thousands of connections the floods open.
	runtimeBaseline = 64 * mib
)

// enabled reports whether the attack named is to run: all of them, unless
// HOSTILE_ONLY lists some (comma-separated: listen, fatlisten, wslisten,
// sessions, ssestreams, sseread, sseunread, ws; and the second round's taskpad,
// taskquota, fatcaps, slowbody, heldcalls, wsheld, deep), to see what one
// costs.
func enabled(name string) bool {
	only := os.Getenv("HOSTILE_ONLY")
	return only == "" || slices.Contains(strings.Split(only, ","), name)
}

func scale() int {
	if v, err := strconv.Atoi(os.Getenv("HOSTILE_SCALE")); err == nil && v > 0 {
		return v
	}
	return 1
}

// TestMain runs the tests within showcasebin.Run, which makes the directory
// the showcase is built into.
func TestMain(m *testing.M) { os.Exit(showcasebin.Run(m, "hostile")) }

// server is the showcase running as a child process.
type server struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:PORT
}

func startShowcase(t *testing.T) *server {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's peak RSS from /proc")
	}
	if testing.Short() {
		t.Skip("builds and attacks the showcase")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd, u := showcasebin.Start(ctx, t, showcasebin.Build(t, showcasebin.Options{}), "http", nil)
	return &server{cmd: cmd, base: strings.TrimSuffix(u, "/mcp")}
}

// peakRSS reads the process's high-water mark of resident memory.
func (s *server) peakRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// clientFrom returns an HTTP client whose connections come from the loopback
// address ip.
func clientFrom(ip string, timeout time.Duration) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:         d.DialContext,
			MaxIdleConnsPerHost: 64,
			DisableCompression:  true,
		},
	}
}

const (
	stateless = "2026-07-28"
	session   = "2025-11-25"
)

// statelessBody is a 2026-07-28 request.
func statelessBody(id int, method string, params map[string]any) []byte {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    stateless,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "hostile", "version": "1"},
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return b
}

// statelessReq builds the POST of a 2026-07-28 request with its headers.
func statelessReq(ctx context.Context, base string, id int, method, name string, params map[string]any) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", bytes.NewReader(statelessBody(id, method, params)))
	testtools.MCPHeaders(req)
	req.Header.Set("MCP-Protocol-Version", stateless)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	return req
}

// sessionReq builds a POST in a handshake-era session (sid "" for initialize).
func sessionReq(ctx context.Context, base, sid string, body []byte, accept string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", session)
	}
	return req
}

func rpc(id int, method string, params any) []byte {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != 0 {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return b
}

// initialize opens a session and returns its id ("" when refused).
func initialize(ctx context.Context, c *http.Client, base string, sendInitialized bool) (string, int, error) {
	resp, err := c.Do(sessionReq(ctx, base, "", rpc(1, "initialize", map[string]any{
		"protocolVersion": session, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "hostile", "version": "1"},
	}), "application/json, text/event-stream"))
	if err != nil {
		return "", 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		return "", resp.StatusCode, nil
	}
	if sendInitialized {
		r2, err := c.Do(sessionReq(ctx, base, sid, rpc(0, "notifications/initialized", nil), "application/json, text/event-stream"))
		if err != nil {
			return "", 0, err
		}
		_, _ = io.Copy(io.Discard, r2.Body)
		r2.Body.Close()
	}
	return sid, http.StatusOK, nil
}

// tally counts what the server did with an attacker's requests.
type tally struct {
	accepted, refused atomic.Int64
}

func (t *tally) String() string {
	return fmt.Sprintf("%d accepted, %d refused", t.accepted.Load(), t.refused.Load())
}

// hold keeps the responses an attacker leaves open until the test ends.
type hold struct{ testtools.Collector[io.Closer] }

func (h *hold) closeAll() {
	for _, b := range h.Take() {
		_ = b.Close()
	}
}

// listenFlood opens n subscriptions/listen streams and keeps the accepted
// ones open (never reading them). uris, when > 0, asks each stream for that
// many resource subscriptions of uriLen bytes.
func listenFlood(ctx context.Context, c *http.Client, base string, n, uris, uriLen int, tl *tally, hd *hold) {
	flood(n, 16, func(i int) {
		f := map[string]any{"toolsListChanged": true}
		if uris > 0 {
			list := make([]string, uris)
			for j := range list {
				list[j] = "showcase://users/" + strings.Repeat("x", uriLen) + strconv.Itoa(j)
			}
			f["resourceSubscriptions"] = list
		}
		resp, err := c.Do(statelessReq(ctx, base, 1000+i, "subscriptions/listen", "", map[string]any{"notifications": f}))
		if err != nil {
			tl.refused.Add(1)
			return
		}
		ct := resp.Header.Get("Content-Type")
		if resp.StatusCode == http.StatusOK && strings.HasPrefix(ct, "text/event-stream") {
			// Accepted if the first event is the acknowledgement.
			br := bufio.NewReader(resp.Body)
			ack := false
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					break
				}
				if strings.Contains(line, "acknowledged") {
					ack = true
					break
				}
				if strings.Contains(line, `"error"`) {
					break
				}
			}
			if ack {
				tl.accepted.Add(1)
				hd.Add(resp.Body)
				return
			}
		}
		tl.refused.Add(1)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
	})
}

// sessionFlood opens n sessions, half of them never sending
// notifications/initialized.
func sessionFlood(ctx context.Context, c *http.Client, base string, n int, tl *tally) []string {
	var mu sync.Mutex
	var sids []string
	flood(n, 16, func(i int) {
		sid, _, err := initialize(ctx, c, base, i%2 == 0)
		if err != nil || sid == "" {
			tl.refused.Add(1)
			return
		}
		tl.accepted.Add(1)
		mu.Lock()
		sids = append(sids, sid)
		mu.Unlock()
	})
	return sids
}

// subscribeFlood subscribes one session to n unknown URIs and to big ones.
func subscribeFlood(ctx context.Context, c *http.Client, base, sid string, n, big int, tl *tally) {
	try := func(id int, uri string) {
		resp, err := c.Do(sessionReq(ctx, base, sid, rpc(id, "resources/subscribe", map[string]any{"uri": uri}), "application/json"))
		if err != nil {
			tl.refused.Add(1)
			return
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"result"`)) {
			tl.accepted.Add(1)
		} else {
			tl.refused.Add(1)
		}
	}
	for i := range n {
		try(10+i, "hostile://unknown/"+strconv.Itoa(i))
	}
	for i := range big {
		try(100000+i, "showcase://users/"+strings.Repeat("y", 1<<20)+strconv.Itoa(i))
	}
}

// bigPromptBody asks prompts/get summarize for an answer of about size bytes.
func bigPromptBody(id, size int) []byte {
	return rpc(id, "prompts/get", map[string]any{"name": "summarize", "arguments": map[string]any{"text": strings.Repeat("z", size)}})
}

// sseHoarders ask for n big answers on SSE in one session each: readers read
// them whole (so they go to the event store), the others never read.
func sseHoarders(ctx context.Context, c *http.Client, base string, n, size int, read bool, tl *tally, hd *hold) {
	sid, _, err := initialize(ctx, c, base, true)
	if err != nil || sid == "" {
		tl.refused.Add(int64(n))
		return
	}
	flood(n, 4, func(i int) {
		resp, err := c.Do(sessionReq(ctx, base, sid, bigPromptBody(2+i, size), "text/event-stream"))
		if err != nil {
			tl.refused.Add(1)
			return
		}
		if resp.StatusCode != http.StatusOK {
			tl.refused.Add(1)
			resp.Body.Close()
			return
		}
		tl.accepted.Add(1)
		if read {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		} else {
			hd.Add(resp.Body)
		}
	})
}

// wsHoarder sends n big prompts/get on one WebSocket connection and never
// reads; it reports whether the server closed the connection.
func wsHoarder(ctx context.Context, base, ip string, n, size int) (closed bool, err error) {
	d := gws.Dialer{
		NetDialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext,
		Subprotocols:   []string{"mcp"},
		// Tiny buffers, so that the server's writes back up at once.
		ReadBufferSize: 1024,
	}
	ws, _, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		return false, err
	}
	defer ws.Close()
	if tc, ok := ws.NetConn().(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	init := rpc(1, "initialize", map[string]any{"protocolVersion": session, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "hostile", "version": "1"}})
	if err := ws.WriteMessage(gws.TextMessage, init); err != nil {
		return false, err
	}
	_ = ws.WriteMessage(gws.TextMessage, rpc(0, "notifications/initialized", nil))
	for i := range n {
		_ = ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if err := ws.WriteMessage(gws.TextMessage, bigPromptBody(2+i, size)); err != nil {
			return true, nil // the server closed it, or stopped reading from a peer that does not read
		}
	}
	// Hold the connection, unread, for a while: a bounded server closes it.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return false, nil
		case <-time.After(250 * time.Millisecond):
		}
		_ = ws.SetWriteDeadline(time.Now().Add(time.Second))
		if err := ws.WriteControl(gws.PingMessage, nil, time.Now().Add(time.Second)); err != nil {
			return true, nil
		}
	}
	return false, nil
}

// wsListenFlood opens conns WebSocket connections from ip, asks each for
// per listen streams, and holds them until the test ends. Each connection
// is read from the moment it opens until it ends, whatever the load: a
// connection that stopped reading (its pings unanswered past PongWait, or
// its queue full; and a read deadline that expires leaves a gorilla
// connection unreadable for good) would rightly be closed by the server
// and its streams given back, so that later connections could be accepted
// in their place. The bound asserted is on streams held at once: tl counts
// the acknowledged streams (however late their acknowledgement comes) and
// the refused ones, ended the acknowledged streams of connections that
// ended while the test ran.
func wsListenFlood(ctx context.Context, base, ip string, conns, per int, tl *tally, ended *atomic.Int64, hd *hold) {
	d := gws.Dialer{
		NetDialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext,
		Subprotocols:   []string{"mcp"},
	}
	for range conns {
		ws, _, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
		if err != nil {
			tl.refused.Add(int64(per))
			continue
		}
		hd.Add(ws.NetConn())
		answered := make(chan struct{}, per)
		go func() {
			acked := int64(0)
			for {
				_, msg, err := ws.ReadMessage()
				if err != nil {
					ended.Add(acked)
					return
				}
				switch {
				case bytes.Contains(msg, []byte(`"notifications/subscriptions/acknowledged"`)):
					acked++
					tl.accepted.Add(1)
				case bytes.Contains(msg, []byte(`"error":`)):
					tl.refused.Add(1)
				default:
					continue // a notification of a stream
				}
				select {
				case answered <- struct{}{}:
				default:
				}
			}
		}()
		sent := 0
		for i := range per {
			if err := ws.WriteMessage(gws.TextMessage, statelessBody(1+i, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})); err != nil {
				tl.refused.Add(int64(per - i))
				break
			}
			sent++
		}
		// The answers, before the next connection (as a client that waits
		// for each would): a slow run takes longer, it does not count
		// differently.
		wait := time.NewTimer(30 * time.Second)
	answers:
		for range sent {
			select {
			case <-answered:
			case <-wait.C:
				break answers
			case <-ctx.Done():
				break answers
			}
		}
		wait.Stop()
	}
}

// goodClient calls tools in a session and statelessly until stop closes and
// returns its latencies; every answer is checked.
func goodClient(t *testing.T, base string, stop <-chan struct{}, minCalls int) []time.Duration {
	t.Helper()
	c := clientFrom("127.0.0.1", 30*time.Second)
	ctx := context.Background()
	sid, status, err := initialize(ctx, c, base, true)
	if err != nil || sid == "" {
		t.Errorf("the well-behaved client could not open a session: status %d, %v", status, err)
		return nil
	}
	var lat []time.Duration
	for i := 0; ; i++ {
		if i >= minCalls {
			select {
			case <-stop:
				return lat
			default:
			}
		}
		a, b := i%97, 7
		want := strconv.Itoa(a * b)
		args := map[string]any{"a": a, "b": b, "operation": "multiply"}
		var req *http.Request
		if i%2 == 0 {
			req = sessionReq(ctx, base, sid, rpc(100+i, "tools/call", map[string]any{"name": "calculate", "arguments": args}), "application/json, text/event-stream")
		} else {
			req = statelessReq(ctx, base, 100+i, "tools/call", "calculate", map[string]any{"name": "calculate", "arguments": args})
		}
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("well-behaved call %d: %v", i, err)
			return lat
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"text":"`+want+`"`)) || !bytes.Contains(body, []byte(`"id":`+strconv.Itoa(100+i))) {
			t.Errorf("well-behaved call %d: status %d, body %.300s", i, resp.StatusCode, body)
			return lat
		}
		// A new client can still open a session.
		if i%25 == 0 {
			if s2, st, err := initialize(ctx, c, base, true); err != nil || s2 == "" {
				t.Errorf("the well-behaved client could not open another session during the attack: status %d, %v", st, err)
				return lat
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func TestHostileClients(t *testing.T) {
	srv := startShowcase(t)
	k := scale()

	// The well-behaved client alone first: its normal latency.
	stopBase := make(chan struct{})
	close(stopBase)
	base := goodClient(t, srv.base, stopBase, 40)
	idleRSS := srv.peakRSS(t)
	t.Logf("before the attack: peak RSS %.1f MiB; well-behaved calls p50 %v p99 %v", float64(idleRSS)/(1<<20), percentile(base, .5), percentile(base, .99))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var hd hold
	defer hd.closeAll()

	var listens, fatListens, wsListens, sessions, subs, sseRead, sseUnread, sseStreams tally
	var wsClosed, wsEnded atomic.Int64
	var r2 round2
	var attack sync.WaitGroup
	for _, ip := range []string{"127.0.0.2", "127.0.0.3"} {
		c := clientFrom(ip, 30*time.Second)
		run := func(name string, f func()) {
			if enabled(name) {
				attack.Go(f)
			}
		}
		run("listen", func() { listenFlood(ctx, c, srv.base, 300*k, 0, 0, &listens, &hd) })
		run("fatlisten", func() { listenFlood(ctx, c, srv.base, 20*k, 3, 1<<20, &fatListens, &hd) })
		run("sessions", func() {
			sids := sessionFlood(ctx, c, srv.base, 300*k, &sessions)
			if len(sids) > 0 {
				subscribeFlood(ctx, c, srv.base, sids[0], 300*k, 10*k, &subs)
			}
		})
		if ip == "127.0.0.2" { // one address: its bound is what is checked
			// A client without an overall timeout: the streams it holds
			// stay open until the end (c's 30 s would end the first ones
			// while the flood goes on, and the server would rightly
			// admit as many new ones).
			run("ssestreams", func() { sseStreamFlood(ctx, clientFrom(ip, 0), srv.base, 280*k, &sseStreams, &hd) })
		}
		run("sseread", func() { sseHoarders(ctx, c, srv.base, 40*k, 3<<20, true, &sseRead, &hd) })
		run("sseunread", func() { sseHoarders(ctx, c, srv.base, 8*k, 3<<20, false, &sseUnread, &hd) })
		run("ws", func() {
			closed, err := wsHoarder(ctx, srv.base, ip, 40*k, 3<<20)
			if err != nil {
				t.Logf("WebSocket hoarder from %s: %v", ip, err)
			}
			if closed {
				wsClosed.Add(1)
			}
		})
		startRound2(ctx, &attack, c, srv.base, ip, k, &r2)
	}
	// Listen streams over WebSocket, from addresses of their own: the
	// per-client bound counts a client's streams over every transport,
	// and the HTTP listen streams of 127.0.0.2 and .3 end with their
	// client's 30 s timeout, which (on a slow run) would rightly let these
	// take their place.
	if enabled("wslisten") {
		for _, ip := range []string{"127.0.0.5", "127.0.0.6"} {
			attack.Go(func() { wsListenFlood(ctx, srv.base, ip, 5*k, 20, &wsListens, &wsEnded, &hd) })
		}
	}

	stop := make(chan struct{})
	var during []time.Duration
	var good sync.WaitGroup
	good.Go(func() { during = goodClient(t, srv.base, stop, 100) })
	attack.Wait()
	close(stop)
	good.Wait()

	peak := srv.peakRSS(t)
	t.Logf("listen streams: %v; listen streams with 3 MiB of subscriptions: %v", &listens, &fatListens)
	t.Logf("listen streams over 5 WebSocket connections per address: %v (%d of the accepted given back by connections that ended)", &wsListens, wsEnded.Load())
	t.Logf("sessions: %v; subscriptions: %v; HTTP+SSE streams: %v", &sessions, &subs, &sseStreams)
	t.Logf("SSE answers of 3 MiB read whole: %v; left unread: %v; WebSocket hoarders closed by the server: %d of 2", &sseRead, &sseUnread, wsClosed.Load())
	t.Logf("during the attack: peak RSS %.1f MiB (bound %d MiB); well-behaved calls %d, p50 %v p99 %v",
		float64(peak)/(1<<20), peakRSSBound>>20, len(during), percentile(during, .5), percentile(during, .99))

	checkRound2(t, srv.base, &r2)
	if peak > peakRSSBound {
		t.Errorf("the server's peak RSS was %.1f MiB, over the %d MiB the limits allow", float64(peak)/(1<<20), peakRSSBound>>20)
	}
	if enabled("listen") && listens.refused.Load() == 0 {
		t.Errorf("no listen stream of %d was refused: there is no cap", listens.accepted.Load())
	}
	if fatListens.accepted.Load() != 0 {
		t.Errorf("%d listen streams with 1 MiB subscription URIs were accepted", fatListens.accepted.Load())
	}
	if n := wsListens.accepted.Load() - wsEnded.Load(); n > 2*16 {
		t.Errorf("%d listen streams held over WebSocket from 2 addresses: more connections multiply a client's share", n)
	}
	if enabled("sessions") && sessions.refused.Load() == 0 {
		t.Errorf("no session of %d was refused: one client can fill the store", sessions.accepted.Load())
	}
	if enabled("ssestreams") && (sseStreams.refused.Load() == 0 || sseStreams.accepted.Load() > 256) {
		t.Errorf("HTTP+SSE streams from one address: %v; past 256 per client they must be refused", &sseStreams)
	}
	if subs.accepted.Load() != 0 {
		t.Errorf("%d subscriptions to unknown or 1 MiB URIs were accepted", subs.accepted.Load())
	}
	if enabled("ws") && wsClosed.Load() != 2 {
		t.Errorf("%d of the 2 WebSocket connections that never read were closed", wsClosed.Load())
	}
}

// The second round of attacks (issue 18): bytes a client makes the server
// keep (task state padded with _meta, sessions with megabytes of
// capabilities), the budget of bodies in flight taken by bodies that never
// arrive or by calls left waiting for an answer the client never gives,
// task quotas filled by one address, and a request nested past the
// decoder's depth.

const tasksExtension = "io.modelcontextprotocol/tasks"

// statelessMeta is the _meta of a 2026-07-28 request, declaring the tasks
// extension when tasks is set and carrying pad bytes of padding.
func statelessMeta(tasks bool, pad int) map[string]any {
	caps := map[string]any{}
	if tasks {
		caps["extensions"] = map[string]any{tasksExtension: map[string]any{}}
	}
	m := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    stateless,
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "hostile", "version": "1"},
	}
	if pad > 0 {
		m["hostile/pad"] = strings.Repeat("p", pad)
	}
	return m
}

// reportCall is a stateless buildReport call, run as a task when the
// client declares the extension.
func reportCall(ctx context.Context, base string, id, sections, stepMs int, tasks bool, pad int) *http.Request {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
		"name": "buildReport", "arguments": map[string]any{"sections": sections, "stepMs": stepMs}, "_meta": statelessMeta(tasks, pad),
	}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", bytes.NewReader(body))
	testtools.MCPHeaders(req)
	req.Header.Set("MCP-Protocol-Version", stateless)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "buildReport")
	return req
}

// isTask reports whether a tools/call answer is a task handle.
func isTask(body []byte) bool {
	return bytes.Contains(body, []byte(`"resultType":"task"`)) && bytes.Contains(body, []byte(`"taskId"`))
}

// taskFlood starts n buildReport tasks of sections×stepMs each, their _meta
// padded with pad bytes; accepted counts the calls answered with a task.
func taskFlood(ctx context.Context, c *http.Client, base string, n, sections, stepMs, pad, conc int, tl *tally) {
	flood(n, conc, func(i int) {
		resp, err := c.Do(reportCall(ctx, base, 5000+i, sections, stepMs, true, pad))
		if err != nil {
			tl.refused.Add(1)
			return
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && isTask(b) {
			tl.accepted.Add(1)
		} else {
			tl.refused.Add(1)
		}
	})
}

// fatCapsFlood opens n sessions whose initialize declares pad bytes of
// capabilities and a clientInfo of pad/8 bytes.
func fatCapsFlood(ctx context.Context, c *http.Client, base string, n, pad int, tl *tally) {
	flood(n, 4, func(i int) {
		body := rpc(1, "initialize", map[string]any{
			"protocolVersion": session,
			"capabilities":    map[string]any{"experimental": map[string]any{"hostile": map[string]any{"pad": strings.Repeat("c", pad)}}},
			"clientInfo":      map[string]any{"name": "hostile" + strings.Repeat("n", pad/8), "version": strconv.Itoa(i)},
		})
		resp, err := c.Do(sessionReq(ctx, base, "", body, "application/json, text/event-stream"))
		if err != nil {
			tl.refused.Add(1)
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || sid == "" {
			tl.refused.Add(1)
			return
		}
		tl.accepted.Add(1)
		r2, err := c.Do(sessionReq(ctx, base, sid, rpc(0, "notifications/initialized", nil), "application/json, text/event-stream"))
		if err == nil {
			_, _ = io.Copy(io.Discard, r2.Body)
			r2.Body.Close()
		}
	})
}

// slowBodies opens n connections from ip that announce a body of announce
// bytes, send sent bytes of it and then nothing, for hold; cut counts the
// connections the server answered or closed before hold ended.
func slowBodies(ctx context.Context, base, ip string, n, announce, sent int, hold time.Duration, tl *tally) {
	host := strings.TrimPrefix(base, "http://")
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			conn, err := d.DialContext(ctx, "tcp", host)
			if err != nil {
				tl.refused.Add(1)
				return
			}
			defer conn.Close()
			head := "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" +
				"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: " + stateless + "\r\n" +
				"Mcp-Method: tools/call\r\nMcp-Name: calculate\r\nContent-Length: " + strconv.Itoa(announce) + "\r\n\r\n"
			if _, err := io.WriteString(conn, head+`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1,"b":2,"operation":"add"},"_meta":{"pad":"`+strings.Repeat("s", max(sent-120, 0))); err != nil {
				tl.refused.Add(1)
				return
			}
			_ = conn.SetReadDeadline(time.Now().Add(hold))
			if _, err := conn.Read(make([]byte, 1)); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					tl.accepted.Add(1) // held its place for the whole time
					return
				}
			}
			tl.refused.Add(1) // answered or closed by the server
		})
	}
	wg.Wait()
}

// heldCalls opens a session that declares elicitation and makes n bookTable
// calls of pad bytes each, that ask the client a question it
// never answers; each call's stream is held open, unread past the
// question, for hold. accepted counts the calls seen asking.
func heldCalls(ctx context.Context, c *http.Client, base string, n, pad int, hold time.Duration, tl *tally) {
	resp, err := c.Do(sessionReq(ctx, base, "", rpc(1, "initialize", map[string]any{
		"protocolVersion": session, "capabilities": map[string]any{"elicitation": map[string]any{}},
		"clientInfo": map[string]any{"name": "hostile", "version": "1"},
	}), "application/json, text/event-stream"))
	if err != nil {
		tl.refused.Add(int64(n))
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		tl.refused.Add(int64(n))
		return
	}
	if r2, err := c.Do(sessionReq(ctx, base, sid, rpc(0, "notifications/initialized", nil), "application/json, text/event-stream")); err == nil {
		_, _ = io.Copy(io.Discard, r2.Body)
		r2.Body.Close()
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			call := func(pad int) []byte {
				return rpc(10+i, "tools/call", map[string]any{"name": "bookTable", "arguments": map[string]any{"time": "20:00"},
					"_meta": map[string]any{"hostile/pad": strings.Repeat("b", pad)}})
			}
			body := call(pad - len(call(0))) // pad bytes in all
			resp, err := c.Do(sessionReq(ctx, base, sid, body, "application/json, text/event-stream"))
			if err != nil {
				tl.refused.Add(1)
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				tl.refused.Add(1)
				return
			}
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					tl.refused.Add(1)
					return
				}
				if strings.Contains(line, "elicitation/create") {
					break
				}
			}
			tl.accepted.Add(1)
			select {
			case <-ctx.Done():
			case <-time.After(hold):
			}
		})
	}
	wg.Wait()
}

// deepRequest sends a stateless tools/call whose arguments are nested depth
// levels deep, its id first, and returns the answer.
func deepRequest(ctx context.Context, c *http.Client, base string, id, depth int) (int, []byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"calculate","arguments":`, id)
	b.WriteString(strings.Repeat(`{"x":`, depth))
	b.WriteString("1")
	b.WriteString(strings.Repeat("}", depth))
	meta, _ := json.Marshal(statelessMeta(false, 0))
	b.WriteString(`,"_meta":` + string(meta) + `}}`)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(b.String()))
	testtools.MCPHeaders(req)
	req.Header.Set("MCP-Protocol-Version", stateless)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "calculate")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}

// round2 holds the tallies of the second round.
type round2 struct {
	taskPad, taskQuick, fatCaps, slow, held, wsHeld tally
}

// startRound2 starts the second round's attacks from ip on wg.
func startRound2(ctx context.Context, wg *sync.WaitGroup, c *http.Client, base, ip string, k int, r *round2) {
	run := func(name string, f func()) {
		if enabled(name) {
			wg.Go(f)
		}
	}
	// 20 long tasks per address, each call padded with 3.5 MiB of _meta.
	run("taskpad", func() { taskFlood(ctx, c, base, 20*k, 50, 5000, 7<<19, 4, &r.taskPad) })
	// More quick tasks than one client's quota, from an address of their
	// own (the others' bodies fill their own shares of the budget).
	if ip == "127.0.0.2" {
		run("taskquota", func() {
			taskFlood(ctx, clientFrom("127.0.0.4", 30*time.Second), base, 1050*k, 1, 1, 0, 16, &r.taskQuick)
		})
	}
	// 40 sessions per address with 3.5 MiB of capabilities each.
	run("fatcaps", func() { fatCapsFlood(ctx, c, base, 40*k, 7<<19, &r.fatCaps) })
	// 100 calls of 4 MiB per address over one WebSocket connection, left
	// waiting for an answer, held 10 s.
	run("wsheld", func() { wsHeldCalls(ctx, base, ip, 100*k, 4<<20-64, 10*time.Second, &r.wsHeld) })
	// 8 calls per address of about 4 MiB left waiting for an answer, held
	// 10 s; then 8 bodies per address announced at 4 MiB, 700 bytes sent,
	// held 10 s: one after the other, as each alone used to take the whole
	// budget of bodies in flight (the well-behaved client calls throughout).
	run("heldcalls", func() { heldCalls(ctx, c, base, 8*k, 4<<20, 10*time.Second, &r.held) })
	run("slowbody", func() {
		if enabled("heldcalls") {
			select {
			case <-ctx.Done():
				return
			case <-time.After(11 * time.Second):
			}
		}
		slowBodies(ctx, base, ip, 8*k, 4<<20, 700, 10*time.Second, &r.slow)
	})
}

// checkRound2 logs the second round's tallies and checks what the server
// must still do for a well-behaved client after it.
func checkRound2(t *testing.T, base string, r *round2) {
	t.Logf("tasks padded with 3.5 MiB of _meta: %v; quick tasks from one address: %v", &r.taskPad, &r.taskQuick)
	t.Logf("sessions with 3.5 MiB of capabilities: %v", &r.fatCaps)
	t.Logf("bodies announced at 4 MiB and never sent: %v (accepted: held their connection the whole 10 s)", &r.slow)
	t.Logf("4 MiB calls left waiting for an elicitation answer: %v; over WebSocket: %v", &r.held, &r.wsHeld)

	// What one address may make the server keep (README, Limits).
	if n := r.fatCaps.accepted.Load(); n != 0 {
		t.Errorf("%d sessions declaring 3.5 MiB of capabilities were accepted (a session keeps at most 64 KiB of them)", n)
	}
	if n := r.taskQuick.accepted.Load(); n > 1000 {
		t.Errorf("one address got %d tasks, more than one client's 1,000", n)
	}
	// 8 MiB of one client's HTTP calls, 16 MiB of its WebSocket calls,
	// wait for its answers: 2 and 4 calls of 4 MiB per address.
	if n := r.held.accepted.Load(); n > 2*2 {
		t.Errorf("%d calls of 4 MiB from 2 addresses were left waiting over HTTP, more than 2 per client", n)
	}
	if n := r.wsHeld.accepted.Load(); n > 2*4 {
		t.Errorf("%d calls of 4 MiB from 2 addresses were left waiting over WebSocket, more than 4 per client", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := clientFrom("127.0.0.1", 30*time.Second)
	if enabled("taskquota") || enabled("taskpad") {
		// The well-behaved client's own task call still gets a task: no
		// other client took its quota or the store.
		resp, err := c.Do(reportCall(ctx, base, 9001, 1, 1, true, 0))
		if err != nil {
			t.Errorf("the well-behaved client's task call: %v", err)
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !isTask(b) {
				t.Errorf("the well-behaved client's task call after the task floods was not answered with a task: status %d, %.300s", resp.StatusCode, b)
			}
		}
	}
	if enabled("deep") {
		// A request nested past the decoder's depth keeps its id.
		status, body, err := deepRequest(ctx, c, base, 77, 20000)
		if err != nil {
			t.Errorf("deep request: %v", err)
		} else if !bytes.Contains(body, []byte(`"id":77`)) || !bytes.Contains(body, []byte(`"error"`)) {
			t.Errorf("a request nested 20,000 levels deep was answered without its id: status %d, %.300s", status, body)
		}
	}
}

// wsHeldCalls opens a WebSocket connection from ip that declares
// elicitation and sends n bookTable calls of pad bytes each, whose
// questions it never answers, and holds the connection for hold. accepted
// counts the calls seen asking, refused those answered otherwise.
func wsHeldCalls(ctx context.Context, base, ip string, n, pad int, hold time.Duration, tl *tally) {
	d := gws.Dialer{
		NetDialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext,
		Subprotocols:   []string{"mcp"},
	}
	ws, _, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		tl.refused.Add(int64(n))
		return
	}
	defer ws.Close()
	init := rpc(1, "initialize", map[string]any{"protocolVersion": session, "capabilities": map[string]any{"elicitation": map[string]any{}},
		"clientInfo": map[string]any{"name": "hostile", "version": "1"}})
	if ws.WriteMessage(gws.TextMessage, init) != nil || ws.WriteMessage(gws.TextMessage, rpc(0, "notifications/initialized", nil)) != nil {
		tl.refused.Add(int64(n))
		return
	}
	// Read everything the server sends, counting questions and other
	// answers to the calls.
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			switch {
			case bytes.Contains(msg, []byte(`"elicitation/create"`)):
				tl.accepted.Add(1)
			case bytes.Contains(msg, []byte(`"id":1,`)) || bytes.Contains(msg, []byte(`"id":1}`)):
			default:
				tl.refused.Add(1)
			}
		}
	}()
	call := func(id, pad int) []byte {
		return rpc(id, "tools/call", map[string]any{"name": "bookTable", "arguments": map[string]any{"time": "20:00"},
			"_meta": map[string]any{"hostile/pad": strings.Repeat("w", pad)}})
	}
	for i := range n {
		_ = ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if err := ws.WriteMessage(gws.TextMessage, call(10+i, pad-len(call(10+i, 0)))); err != nil {
			break // the server closed it or stopped reading
		}
	}
	select {
	case <-ctx.Done():
	case <-readDone:
	case <-time.After(hold):
	}
}

// flood runs f(0) to f(n-1), at most conc of them at a time, and returns
// when all have.
func flood(n, conc int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, conc)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}

// sseStreamFlood opens n streams of the 2024-11-05 HTTP+SSE transport
// (GET /sse), keeping open those that get their endpoint event: past the
// bound of streams per client the server must refuse them (429, counted
// as refused), not hold a goroutine and buffers for each.
func sseStreamFlood(ctx context.Context, c *http.Client, base string, n int, tl *tally, hd *hold) {
	flood(n, 16, func(i int) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := c.Do(req)
		if err != nil {
			return // neither: counted are the server's answers
		}
		if resp.StatusCode == http.StatusOK {
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					break
				}
				if strings.HasPrefix(line, "event: endpoint") {
					tl.accepted.Add(1)
					hd.Add(resp.Body)
					return
				}
			}
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			tl.refused.Add(1)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
	})
}
