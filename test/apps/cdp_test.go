package apps

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// A minimal Chrome DevTools Protocol client: one page target, commands by
// id, events to a handler. It speaks CDP over gorilla/websocket, which the
// module already requires, rather than adding a CDP library for the five
// commands the test sends.

// cdpError is an error answer of the browser.
type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *cdpError) Error() string { return fmt.Sprintf("cdp error %d: %s", e.Code, e.Message) }

type cdpMessage struct {
	ID     int64           `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *cdpError       `json:"error,omitempty"`
}

// page is a CDP connection to one page target.
type page struct {
	ws      *websocket.Conn
	writeMu sync.Mutex
	next    atomic.Int64
	mu      sync.Mutex
	waiting map[int64]chan cdpMessage
	closed  chan struct{}
	readErr error
	onEvent func(method string, params json.RawMessage)
}

// dialPage connects to the first page target of the browser whose DevTools
// HTTP endpoint is at hostPort.
func dialPage(ctx context.Context, hostPort string, onEvent func(string, json.RawMessage)) (*page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hostPort+"/json/list", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("listing the targets: %w", err)
	}
	defer resp.Body.Close()
	var targets []struct {
		Type                 string `json:"type"`
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		return nil, fmt.Errorf("decoding the targets: %w", err)
	}
	for _, t := range targets {
		if t.Type != "page" {
			continue
		}
		ws, _, err := websocket.DefaultDialer.DialContext(ctx, t.WebSocketDebuggerURL, nil)
		if err != nil {
			return nil, fmt.Errorf("connecting to the page: %w", err)
		}
		p := &page{ws: ws, waiting: map[int64]chan cdpMessage{}, closed: make(chan struct{}), onEvent: onEvent}
		go p.read()
		return p, nil
	}
	return nil, errors.New("the browser has no page target")
}

func (p *page) read() {
	defer close(p.closed)
	for {
		var m cdpMessage
		if err := p.ws.ReadJSON(&m); err != nil {
			p.mu.Lock()
			p.readErr = err
			p.mu.Unlock()
			return
		}
		if m.ID == 0 {
			if p.onEvent != nil {
				go p.onEvent(m.Method, m.Params)
			}
			continue
		}
		p.mu.Lock()
		ch := p.waiting[m.ID]
		delete(p.waiting, m.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// call sends a command and decodes its result into result (unless nil).
func (p *page) call(ctx context.Context, method string, params, result any) error {
	id := p.next.Add(1)
	ch := make(chan cdpMessage, 1)
	p.mu.Lock()
	p.waiting[id] = ch
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waiting, id)
		p.mu.Unlock()
	}()
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	p.writeMu.Lock()
	if d, ok := ctx.Deadline(); ok {
		_ = p.ws.SetWriteDeadline(d)
	}
	err = p.ws.WriteJSON(cdpMessage{ID: id, Method: method, Params: raw})
	p.writeMu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: decoding the result: %w", method, err)
			}
		}
		return nil
	case <-p.closed:
		return fmt.Errorf("%s: the connection to the browser closed: %v", method, p.readErr)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (p *page) close() { _ = p.ws.Close() }

// evaluate runs a JavaScript expression in the page (contextID 0: the top
// frame's main world), awaiting it if it is a promise, and decodes its
// JSON value into out. A thrown exception or rejected promise is an error
// with its description.
func (p *page) evaluate(ctx context.Context, contextID int, expr string, out any) error {
	params := map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}
	if contextID != 0 {
		params["contextId"] = contextID
	}
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := p.call(ctx, "Runtime.evaluate", params, &res); err != nil {
		return err
	}
	if ex := res.ExceptionDetails; ex != nil {
		return fmt.Errorf("%s: %s", ex.Text, ex.Exception.Description)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

// frameTree is Page.getFrameTree's tree.
type frameTree struct {
	Frame struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	} `json:"frame"`
	ChildFrames []frameTree `json:"childFrames"`
}

// frameContext returns an execution context (an isolated world: it shares
// the frame's DOM, not its scripts' variables) of the frame found by
// following the first child frame depth times from the top frame.
func (p *page) frameContext(ctx context.Context, depth int) (int, error) {
	var tree struct {
		FrameTree frameTree `json:"frameTree"`
	}
	if err := p.call(ctx, "Page.getFrameTree", nil, &tree); err != nil {
		return 0, err
	}
	f := tree.FrameTree
	for i := range depth {
		if len(f.ChildFrames) == 0 {
			return 0, fmt.Errorf("frame %s (%s), at depth %d, has no child frame", f.Frame.ID, f.Frame.URL, i)
		}
		f = f.ChildFrames[0]
	}
	var world struct {
		ExecutionContextID int `json:"executionContextId"`
	}
	if err := p.call(ctx, "Page.createIsolatedWorld", map[string]any{"frameId": f.Frame.ID, "worldName": "hexmcp-test"}, &world); err != nil {
		return 0, err
	}
	return world.ExecutionContextID, nil
}

// startChromium runs headless Chromium with a DevTools port on 127.0.0.1
// and returns its host:port; ctx bounds the wait for it. The browser is
// killed when stop is called.
func startChromium(ctx context.Context, bin, profile string, logs io.Writer) (hostPort string, stop func(), err error) {
	cmd := exec.Command(bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--user-data-dir="+profile, "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "about:blank")
	testtools.DieWithTest(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stdout = logs
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logs, line)
			if rest, ok := strings.CutPrefix(line, "DevTools listening on ws://"); ok && !sent {
				found <- strings.SplitN(rest, "/", 2)[0]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case hp, ok := <-found:
		if !ok {
			stop()
			return "", nil, errors.New("chromium exited without a DevTools endpoint")
		}
		return hp, stop, nil
	case <-ctx.Done():
		stop()
		return "", nil, fmt.Errorf("chromium printed no DevTools endpoint: %w", ctx.Err())
	}
}

// lockedBuffer collects logs written from several goroutines.
type lockedBuffer struct{ testtools.LockedBuffer }

func (l *lockedBuffer) logf(format string, args ...any) {
	fmt.Fprintf(l, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
