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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

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
	var wg sync.WaitGroup
	sem := make(chan struct{}, conc)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
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
		}()
	}
	wg.Wait()
}

// fatCapsFlood opens n sessions whose initialize declares pad bytes of
// capabilities and a clientInfo of pad/8 bytes.
func fatCapsFlood(ctx context.Context, c *http.Client, base string, n, pad int, tl *tally) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
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
		}()
	}
	wg.Wait()
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
