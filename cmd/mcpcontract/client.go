package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/contract"
)

// newestHandshake is the revision a lock is written under unless the
// server negotiates an older one: the newest this SDK knows that opens a
// session with initialize.
var newestHandshake = string(contract.Revision(domain.RevisionPolicy{}))

// maxMessage bounds one message read from a server (64 MiB): a lock of a
// very large server fits; a server that never ends its line does not take
// the memory.
const maxMessage = 64 << 20

// rpcError is a JSON-RPC error answered by the server.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// Unwrap makes a -32601 answer to a list method a contract.ErrNoMethod.
func (e *rpcError) Unwrap() error {
	if e.Code == -32601 {
		return contract.ErrNoMethod
	}
	return nil
}

// message is any JSON-RPC message.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// exchange is one way to send a message to a server and read what comes
// back: the response to a request, skipping (or refusing) whatever else the
// server sends meanwhile.
type exchange interface {
	// call sends the request and returns its result.
	call(ctx context.Context, id int, method string, params any) (json.RawMessage, error)
	// notify sends a notification.
	notify(ctx context.Context, method string, params any) error
	close() error
}

// client is an MCP client that does what mcpcontract needs: initialize and
// the list methods.
type client struct {
	ex       exchange
	next     int
	timeout  time.Duration
	revision string
}

// connect opens a session with initialize, asking for revision.
func connect(ctx context.Context, ex exchange, revision string, timeout time.Duration) (*client, error) {
	c := &client{ex: ex, next: 1, timeout: timeout}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	raw, err := c.call(ctx, "initialize", map[string]any{
		"protocolVersion": revision,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcpcontract", "version": "1"},
	})
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.ProtocolVersion == "" {
		return nil, fmt.Errorf("initialize: the result names no protocolVersion: %s", truncate(raw))
	}
	c.revision = res.ProtocolVersion
	if err := c.ex.notify(ctx, "notifications/initialized", nil); err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	return c, nil
}

func (c *client) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	id := c.next
	c.next++
	return c.ex.call(ctx, id, method, params)
}

// List implements contract.Lister.
func (c *client) List(ctx context.Context, method, cursor string) (json.RawMessage, error) {
	var params any
	if cursor != "" {
		params = map[string]any{"cursor": cursor}
	}
	return c.call(ctx, method, params)
}

// refusal is the answer to a request of the server's: mcpcontract declares
// no capability, so it serves none.
func refusal(id json.RawMessage) message {
	return message{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: -32601, Message: "Method not found: mcpcontract serves no request"}}
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// stdioExchange speaks to a server it started, one message per line.
type stdioExchange struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	wmu    sync.Mutex
	stderr *bytes.Buffer
	done   chan struct{}
	// broken is set when a call gave up waiting: its reader may still be
	// reading, so no other call may read.
	broken error
}

// startStdio starts argv with its stdin and stdout as the connection; its
// standard error is kept, to be shown when something fails.
func startStdio(argv []string) (*stdioExchange, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &stdioExchange{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10), stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = &limitedWriter{w: s.stderr, n: 64 << 10}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	return s, nil
}

func (s *stdioExchange) write(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.in.Write(append(b, '\n'))
	return err
}

func (s *stdioExchange) notify(_ context.Context, method string, params any) error {
	return s.write(message{JSONRPC: "2.0", Method: method, Params: params})
}

type readResult struct {
	raw json.RawMessage
	err error
}

func (s *stdioExchange) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	if s.broken != nil {
		return nil, s.broken
	}
	want := json.RawMessage(fmt.Sprint(id))
	if err := s.write(message{JSONRPC: "2.0", ID: want, Method: method, Params: params}); err != nil {
		return nil, s.failed(fmt.Errorf("write: %w", err))
	}
	got := make(chan readResult, 1)
	go func() { got <- s.readUntil(want) }()
	select {
	case r := <-got:
		if r.err != nil {
			return nil, s.failed(r.err)
		}
		return r.raw, nil
	case <-ctx.Done():
		// The reader goroutine ends with the process, which close ends.
		s.broken = s.failed(fmt.Errorf("%s: no answer: %w", method, ctx.Err()))
		return nil, s.broken
	}
}

// readUntil reads messages until the response with id, answering the
// server's requests with a refusal and skipping its notifications.
func (s *stdioExchange) readUntil(id json.RawMessage) readResult {
	for {
		line, err := readLine(s.out)
		if err != nil {
			return readResult{err: fmt.Errorf("read: %w", err)}
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			return readResult{err: fmt.Errorf("the server wrote a line that is not a JSON-RPC message: %s", truncate(line))}
		}
		switch {
		case m.Method != "" && m.ID != nil:
			if err := s.write(refusal(m.ID)); err != nil {
				return readResult{err: err}
			}
		case m.Method != "":
		case bytes.Equal(m.ID, id):
			if m.Error != nil {
				return readResult{err: m.Error}
			}
			return readResult{raw: m.Result}
		}
	}
}

// readLine reads one line of at most maxMessage bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > maxMessage {
			return nil, fmt.Errorf("a message longer than %d bytes", maxMessage)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// failed adds what the server wrote to its standard error to err.
func (s *stdioExchange) failed(err error) error {
	if msg := strings.TrimSpace(s.stderr.String()); msg != "" {
		return fmt.Errorf("%w\nthe server's standard error:\n%s", err, msg)
	}
	return err
}

// close ends the session the stdio way: standard input closed, then the
// process given a moment to exit before it is killed.
func (s *stdioExchange) close() error {
	_ = s.in.Close()
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	return nil
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
	n  int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// httpExchange speaks Streamable HTTP to url.
type httpExchange struct {
	url      string
	header   http.Header
	hc       *http.Client
	session  string
	revision string
}

func (h *httpExchange) post(ctx context.Context, m message) (*http.Response, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range h.header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
	}
	if h.revision != "" {
		req.Header.Set("MCP-Protocol-Version", h.revision)
	}
	return h.hc.Do(req)
}

func (h *httpExchange) notify(ctx context.Context, method string, params any) error {
	resp, err := h.post(ctx, message{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxMessage))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	return nil
}

func (h *httpExchange) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	want := json.RawMessage(fmt.Sprint(id))
	resp, err := h.post(ctx, message{JSONRPC: "2.0", ID: want, Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if method == "initialize" {
		h.session = resp.Header.Get("Mcp-Session-Id")
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode/100 != 2 && ct != "application/json" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, truncate(b))
	}
	var raw json.RawMessage
	switch ct {
	case "application/json":
		var m message
		if err := json.NewDecoder(io.LimitReader(resp.Body, maxMessage)).Decode(&m); err != nil {
			return nil, fmt.Errorf("HTTP %s: the body is not a JSON-RPC message: %w", resp.Status, err)
		}
		if m.Error != nil {
			return nil, m.Error
		}
		raw = m.Result
	case "text/event-stream":
		raw, err = h.readStream(ctx, resp.Body, want)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("HTTP %s: unexpected Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	if method == "initialize" {
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(raw, &res)
		h.revision = res.ProtocolVersion
	}
	return raw, nil
}

// readStream reads an SSE response until the message that answers id.
func (h *httpExchange) readStream(ctx context.Context, body io.Reader, id json.RawMessage) (json.RawMessage, error) {
	r := bufio.NewReaderSize(body, 64<<10)
	var data []byte
	for {
		line, err := readLine(r)
		if err != nil {
			return nil, fmt.Errorf("the event stream ended before the response: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0: // an event's end
			if len(data) == 0 {
				continue
			}
			var m message
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, fmt.Errorf("an event that is not a JSON-RPC message: %s", truncate(data))
			}
			data = data[:0]
			switch {
			case m.Method != "" && m.ID != nil:
				resp, err := h.post(ctx, refusal(m.ID))
				if err == nil {
					resp.Body.Close()
				}
			case m.Method != "":
			case bytes.Equal(m.ID, id):
				if m.Error != nil {
					return nil, m.Error
				}
				return m.Result, nil
			}
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
			if len(data) > maxMessage {
				return nil, fmt.Errorf("an event longer than %d bytes", maxMessage)
			}
		}
	}
}

// close ends the session (DELETE), as a polite client does.
func (h *httpExchange) close() error {
	if h.session == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.url, nil)
	if err != nil {
		return err
	}
	for k, vs := range h.header {
		req.Header[k] = vs
	}
	req.Header.Set("Mcp-Session-Id", h.session)
	if h.revision != "" {
		req.Header.Set("MCP-Protocol-Version", h.revision)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
