package tasks_test

import (
	"bufio"
	"bytes"
	"context"
	stdjson "encoding/json"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/extensions/tasks"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// wire is a raw Streamable HTTP client of a server, from a loopback
// address of its own (127.0.0.2, 127.0.0.3, …: distinct clients to the
// server), that speaks the stateless era (2026-07-28) unless it opened a
// session (handshake era, 2025-11-25).
type wire struct {
	t       *testing.T
	url     string
	hc      *http.Client
	token   string // bearer token, when not empty
	declare bool   // the client declares the tasks extension
	session string
	ids     int
}

// serveHTTP serves srv's HTTP handler (wrapped by wrap when not nil) on
// 127.0.0.1.
func serveHTTP(t *testing.T, srv *hexmcp.Server, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = srv.HTTPHandler(mcphttp.Options{})
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

func newWire(t *testing.T, url, localIP string) *wire {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(localIP)}, Timeout: 10 * time.Second}
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
	t.Cleanup(hc.CloseIdleConnections)
	return &wire{t: t, url: url, hc: hc, declare: true}
}

// answer is what the server answered a request with.
type answer struct {
	status int
	header http.Header
	result stdjson.RawMessage
	err    *testtools.RPCError
}

func (a answer) code() int {
	if a.err == nil {
		return 0
	}
	return a.err.Code
}

// task decodes the answer's result as a task (a CreateTaskResult or the
// DetailedTask of tasks/get).
func (a answer) task() taskView {
	var v taskView
	_ = stdjson.Unmarshal(a.result, &v)
	return v
}

func (w *wire) caps() map[string]any {
	caps := map[string]any{"elicitation": map[string]any{}}
	if w.declare {
		caps["extensions"] = map[string]any{tasks.ID: map[string]any{}}
	}
	return caps
}

// open initializes a session (handshake era): the requests that follow
// belong to it.
func (w *wire) open() {
	w.t.Helper()
	a := w.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": w.caps(),
		"clientInfo": map[string]any{"name": "wire", "version": "1"}})
	if a.err != nil || a.header.Get(mcphttp.HeaderSessionID) == "" {
		w.t.Fatalf("initialize: %d %+v %s", a.status, a.err, a.result)
	}
	w.session = a.header.Get(mcphttp.HeaderSessionID)
	w.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "notifications/initialized", "")
}

// call sends one request and returns the answer.
func (w *wire) call(method string, params map[string]any) answer {
	w.t.Helper()
	w.ids++
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	if w.session == "" && method != "initialize" {
		meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": w.caps()}
		if own, ok := p["_meta"].(map[string]any); ok {
			for k, v := range own {
				meta[k] = v
			}
		}
		p["_meta"] = meta
	}
	body, err := stdjson.Marshal(map[string]any{"jsonrpc": "2.0", "id": w.ids, "method": method, "params": p})
	if err != nil {
		w.t.Fatal(err)
	}
	name, _ := p["name"].(string)
	resp := w.send(body, method, name)
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	var msg testtools.Message
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		b, _ := io.ReadAll(resp.Body)
		if err := stdjson.Unmarshal(b, &msg); err != nil {
			w.t.Fatalf("%s: HTTP %d, body %.300s", method, resp.StatusCode, b)
		}
	case "text/event-stream":
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			msg.ID = nil
			if stdjson.Unmarshal([]byte(strings.TrimSpace(data)), &msg) == nil && string(msg.ID) == strconv.Itoa(w.ids) {
				break
			}
		}
		if string(msg.ID) != strconv.Itoa(w.ids) {
			w.t.Fatalf("%s: the stream ended without the response", method)
		}
	default:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		a.err = &testtools.RPCError{Message: string(b)}
		return a
	}
	a.result, a.err = msg.Result, msg.Error
	return a
}

func (w *wire) send(body []byte, method, name string) *http.Response {
	w.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if w.token != "" {
		req.Header.Set("Authorization", "Bearer "+w.token)
	}
	switch {
	case w.session != "":
		req.Header.Set(mcphttp.HeaderSessionID, w.session)
		req.Header.Set(mcphttp.HeaderProtocolVersion, "2025-11-25")
	case method != "initialize":
		req.Header.Set(mcphttp.HeaderProtocolVersion, "2026-07-28")
		req.Header.Set(mcphttp.HeaderMethod, method)
		if name != "" {
			req.Header.Set(mcphttp.HeaderName, name)
		}
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		w.t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// callTool calls a tool and returns the answer.
func (w *wire) callTool(name string, args map[string]any) answer {
	w.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return w.call("tools/call", map[string]any{"name": name, "arguments": args})
}

// isTask reports whether a is a CreateTaskResult.
func isTask(t *testing.T, a answer) bool {
	t.Helper()
	if a.err != nil {
		t.Fatalf("a task-supporting call answered %d %+v", a.status, a.err)
	}
	v := a.task()
	return v.ResultType == "task" && v.TaskID != ""
}

// getTask polls a task through w.
func (w *wire) getTask(id string) answer {
	w.t.Helper()
	return w.call("tasks/get", map[string]any{"taskId": id})
}

// awaitWire polls through w until cond holds (bounded: 10 s).
func (w *wire) await(id, what string, cond func(taskView) bool) taskView {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a := w.getTask(id)
		if a.err != nil {
			w.t.Fatalf("tasks/get %s: %+v", id, a.err)
		}
		if v := a.task(); cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("task %s: %s not reached; last %s", id, what, a.result)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
