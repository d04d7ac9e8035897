package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/xmcpheader"
	"github.com/hexmcp/hexmcp/ports"
)

// The headers of Streamable HTTP.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerParamPrefix     = "Mcp-Param-"
)

// HTTPOptions configure an [HTTPTransport].
type HTTPOptions struct {
	// Client sends the requests (default http.DefaultClient). Give one
	// with a Transport that adds credentials to authenticate.
	Client *http.Client
	// Header is sent with every request.
	Header http.Header
	// NoGetStream keeps the client from opening the GET stream of the
	// handshake era.
	NoGetStream bool
	// MaxReconnects bounds the reconnections of one stream in a row that
	// bring no new event (default [DefaultMaxReconnects]; negative: none).
	MaxReconnects int
	// ReconnectDelay is the wait before a reconnection when the server
	// gave no SSE retry field (default [DefaultReconnectDelay]). A retry
	// of the server is honoured from 10 ms up to [MaxRetryDelay].
	ReconnectDelay time.Duration
}

// Defaults and bounds of the reconnection of streams.
const (
	DefaultMaxReconnects  = 5
	DefaultReconnectDelay = time.Second
	// MaxRetryDelay bounds the wait an SSE retry field asks for.
	MaxRetryDelay = time.Minute
	// getStreamWait bounds how long Connect waits for the GET stream's
	// answer before it goes on.
	getStreamWait = 10 * time.Second
)

// HTTPTransport reaches a Streamable HTTP server at url (its MCP endpoint,
// "http://127.0.0.1:8080/mcp"). Each message is a POST; the server answers
// a request with JSON or with an SSE stream that carries the server's
// notifications (and, in the handshake era, its requests) before the
// response. In the handshake era the session id (Mcp-Session-Id) the
// server gives on initialize is sent back on every request and Close ends
// the session with DELETE; in the stateless era every request carries the
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers, and
// a call the client gives up is cancelled by closing its stream.
//
// In the handshake era the client opens the GET stream once the session
// is initialized (unless the server answers 405, or
// [HTTPOptions.NoGetStream]): it carries the server's notifications and
// requests outside a call. A stream cut before its end (the GET stream, or
// a call's stream before its response) is resumed with GET and
// Last-Event-ID after the server's SSE retry, when the server gave its
// events ids; [HTTPOptions.MaxReconnects] bounds the reconnections in a
// row that bring nothing new. The stateless era has no GET stream and no
// resumption. Authorization is client/auth's (an http.Client).
func HTTPTransport(url string, opts HTTPOptions) Transport {
	return &httpTransport{url: url, opts: opts}
}

type httpTransport struct {
	url  string
	opts HTTPOptions
}

func (t *httpTransport) Connect(_ context.Context, opts ConnOptions) (Conn, error) {
	base, stop := context.WithCancel(context.Background())
	o := t.opts
	if o.MaxReconnects == 0 {
		o.MaxReconnects = DefaultMaxReconnects
	}
	if o.ReconnectDelay <= 0 {
		o.ReconnectDelay = DefaultReconnectDelay
	}
	return &httpConn{url: t.url, client: httpClientOr(t.opts.Client), header: t.opts.Header.Clone(), max: opts.maxMessage(), opts: o,
		in: make(chan inItem, 16), base: base, stop: stop}, nil
}

// inItem is what a request's answer hands the session: a message, or a
// request's failure.
type inItem struct {
	msg  []byte
	fail *streamFailure
}

// httpConn is a Streamable HTTP connection.
type httpConn struct {
	url    string
	client *http.Client
	header http.Header
	max    int64
	opts   HTTPOptions
	in     chan inItem
	base   context.Context
	stop   context.CancelFunc
	// wg counts the streams being read and the Writes in flight, which
	// Close waits for before its DELETE (see Close).
	wg sync.WaitGroup

	mu      sync.Mutex
	era     domain.Era
	rev     domain.Revision
	session string
	schemas func(string) json.RawMessage
	closed  bool // no stream is read after Close
	getOpen bool // the GET stream was asked for

	closeOnce sync.Once
	closeErr  error
}

func (c *httpConn) setEra(era domain.Era, rev domain.Revision) {
	c.mu.Lock()
	c.era, c.rev = era, rev
	c.mu.Unlock()
}

func (c *httpConn) useToolSchemas(f func(string) json.RawMessage) {
	c.mu.Lock()
	c.schemas = f
	c.mu.Unlock()
}

func (c *httpConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case it := <-c.in:
		if it.fail != nil {
			return nil, it.fail
		}
		return it.msg, nil
	case <-c.base.Done():
		return nil, io.EOF
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// put hands an item to Read, unless the connection is closed first.
func (c *httpConn) put(it inItem) {
	select {
	case c.in <- it:
	case <-c.base.Done():
	}
}

// head is what the connection reads of an outgoing message.
type head struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		URI       string          `json:"uri"`
		TaskID    string          `json:"taskId"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

func (c *httpConn) Write(ctx context.Context, msg []byte) error {
	var h head
	if err := json.Unmarshal(msg, &h); err != nil {
		return fmt.Errorf("hexmcp: not a JSON-RPC message: %w", err)
	}
	isRequest := h.Method != "" && len(h.ID) > 0
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return io.ErrClosedPipe
	}
	c.wg.Add(1) // before Close's Wait, under mu
	c.mu.Unlock()
	defer c.wg.Done()
	rctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(c.base, cancel)
	done := func() { unhook(); cancel() }
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.url, bytes.NewReader(msg))
	if err != nil {
		done()
		return err
	}
	c.setHeaders(req.Header, &h)
	resp, err := c.client.Do(req)
	if err != nil {
		done()
		return err
	}
	c.mu.Lock()
	if c.era == domain.EraHandshake && h.Method == "initialize" {
		if sid := resp.Header.Get(headerSessionID); sid != "" {
			c.session = sid
		}
	}
	c.mu.Unlock()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	switch {
	case ok && ct == "text/event-stream":
		id := ""
		if isRequest {
			id = idKey(h.ID)
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			done()
			resp.Body.Close()
			return io.ErrClosedPipe
		}
		c.wg.Add(1) // before Close's Wait, under mu
		c.mu.Unlock()
		go func() {
			defer c.wg.Done()
			defer done()
			c.follow(rctx, resp.Body, id)
		}()
		return nil
	case ok && ct == "application/json":
		defer done()
		defer resp.Body.Close()
		b, err := readLimited(resp.Body, c.max)
		if err != nil {
			return err
		}
		if rerr := responseError(b, h.ID, resp.StatusCode); rerr != nil {
			return rerr
		}
		c.put(inItem{msg: b})
		return nil
	case ok && !isRequest:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		done()
		if h.Method == "notifications/initialized" {
			c.openGet(ctx)
		}
		return nil
	}
	defer done()
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if ct == "application/json" {
		if rerr := responseError(b, h.ID, resp.StatusCode); rerr != nil {
			return rerr
		}
	}
	return &HTTPError{StatusCode: resp.StatusCode, Header: resp.Header, Body: b}
}

// responseError returns the error of b when b is an error response (to
// id, or without an id), with the HTTP status.
func responseError(b []byte, id json.RawMessage, status int) *RPCError {
	var m message
	if json.Unmarshal(b, &m) != nil || m.Error == nil {
		return nil
	}
	if len(m.ID) > 0 && string(m.ID) != "null" && idKey(m.ID) != idKey(id) {
		return nil
	}
	m.Error.HTTPStatus = status
	return m.Error
}

// setHeaders sets the headers of a POST of h.
func (c *httpConn) setHeaders(hd http.Header, h *head) {
	for k, vs := range c.header {
		hd[k] = append([]string(nil), vs...)
	}
	hd.Set("Content-Type", "application/json")
	hd.Set("Accept", "application/json, text/event-stream")
	c.mu.Lock()
	era, rev, sid, schemas := c.era, c.rev, c.session, c.schemas
	c.mu.Unlock()
	if rev != "" {
		hd.Set(headerProtocolVersion, string(rev))
	}
	if era != domain.EraStateless {
		if sid != "" {
			hd.Set(headerSessionID, sid)
		}
		return
	}
	if h.Method == "" {
		return
	}
	hd.Set(headerMethod, h.Method)
	switch h.Method {
	case "tools/call", "prompts/get":
		hd.Set(headerName, headerValue(h.Params.Name))
	case "resources/read":
		hd.Set(headerName, headerValue(h.Params.URI))
	case "tasks/get", "tasks/update", "tasks/cancel":
		hd.Set(headerName, headerValue(h.Params.TaskID))
	}
	if h.Method != "tools/call" || schemas == nil {
		return
	}
	params := xmcpheader.Params(schemas(h.Params.Name))
	if len(params) == 0 {
		return
	}
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(h.Params.Arguments))
	dec.UseNumber()
	if dec.Decode(&args) != nil {
		return
	}
	for _, p := range params {
		if v, ok := xmcpheader.ArgumentAt(args, p.Path); ok && v != nil {
			if s, ok := primitiveHeader(v); ok {
				hd.Set(headerParamPrefix+p.Name, s)
			}
		}
	}
}

// Close stops reading the streams and, in a handshake-era session, ends
// the session with DELETE. The DELETE waits until every POST in flight,
// which stopping cancels, has returned: net/http puts the connection of a
// response without a body back in its idle pool before the request's
// caller has it, and a cancellation that wins that race closes the
// connection there; a request that takes it from the pool in that moment
// fails with the other request's "context canceled". Once the cancelled
// requests have returned, their connections are marked broken and never
// handed out.
func (c *httpConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.stop()
		c.wg.Wait()
		c.mu.Lock()
		sid, rev := c.session, c.rev
		c.mu.Unlock()
		if sid == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
		if err != nil {
			c.closeErr = err
			return
		}
		for k, vs := range c.header {
			req.Header[k] = append([]string(nil), vs...)
		}
		req.Header.Set(headerSessionID, sid)
		if rev != "" {
			req.Header.Set(headerProtocolVersion, string(rev))
		}
		resp, err := c.client.Do(req)
		if err != nil {
			c.closeErr = fmt.Errorf("hexmcp: ending the HTTP session: %w", err)
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		switch {
		case resp.StatusCode >= 200 && resp.StatusCode < 300, resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusMethodNotAllowed:
		default:
			c.closeErr = fmt.Errorf("hexmcp: ending the HTTP session: %w", &HTTPError{StatusCode: resp.StatusCode, Header: resp.Header})
		}
	})
	return c.closeErr
}

// readLimited reads r whole, failing past max bytes.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("hexmcp: %w (over %d bytes)", ports.ErrMessageTooLarge, max)
	}
	return b, nil
}

// primitiveHeader is the header form of an argument: strings encoded by
// headerValue, booleans as true/false, integers in decimal. Objects and
// arrays have none.
func primitiveHeader(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return headerValue(v), true
	case bool:
		return strconv.FormatBool(v), true
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return strconv.FormatInt(i, 10), true
		}
		if f, err := v.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return strconv.FormatInt(int64(f), 10), true
		}
		return v.String(), true
	}
	return "", false
}

// headerValue is s as a header value: as it is when it is visible ASCII
// (spaces and tabs inside), else in the base64 form "=?base64?...?=".
func headerValue(s string) string {
	const prefix, suffix = "=?base64?", "?="
	plain := strings.Trim(s, " \t") == s && !(strings.HasPrefix(s, prefix) && strings.HasSuffix(s, suffix))
	for i := 0; plain && i < len(s); i++ {
		if c := s[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			plain = false
		}
	}
	if plain {
		return s
	}
	return prefix + base64.StdEncoding.EncodeToString([]byte(s)) + suffix
}
