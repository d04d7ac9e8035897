package hexmcptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/xmcpheader"
)

// httpConn is a Streamable HTTP client of the server's HTTP handler,
// served on an httptest server of its own.
type httpConn struct {
	srv       *hexmcp.Server
	handler   *mcphttp.Handler
	ts        *httptest.Server
	url       string
	client    *http.Client
	in        *inbound
	rev       domain.Revision
	handshake bool
	ids       atomic.Int64
	mu        sync.Mutex
	session   string // Mcp-Session-Id, once initialized
}

// dialHTTP serves srv's HTTP handler at /mcp on 127.0.0.1.
func dialHTTP(srv *hexmcp.Server, in *inbound, rev domain.Revision, handshake bool) *httpConn {
	h := srv.HTTPHandler(mcphttp.Options{})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	return &httpConn{srv: srv, handler: h, ts: ts, url: ts.URL + "/mcp", client: ts.Client(), in: in, rev: rev, handshake: handshake}
}

func (hc *httpConn) sessionID() string {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return hc.session
}

func (hc *httpConn) call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	id := strconv.FormatInt(hc.ids.Add(1), 10)
	body, err := encodeRequest(json.RawMessage(id), method, params)
	if err != nil {
		return nil, err
	}
	resp, err := hc.post(ctx, body)
	if err != nil {
		hc.abandon(ctx, id)
		return nil, fmt.Errorf("hexmcptest: %s: %w", method, err)
	}
	defer resp.Body.Close()
	if method == "initialize" && resp.StatusCode == http.StatusOK {
		sid := resp.Header.Get(mcphttp.HeaderSessionID)
		if sid == "" {
			return nil, fmt.Errorf("hexmcptest: initialize answered without %s", mcphttp.HeaderSessionID)
		}
		hc.mu.Lock()
		hc.session = sid
		hc.mu.Unlock()
	}
	raw, err := hc.response(ctx, resp, id, method)
	if err != nil {
		hc.abandon(ctx, id)
	}
	return raw, err
}

// abandon tells the server, in a session, that the client no longer waits
// for request id because ctx ended: over HTTP a dropped stream is no
// cancellation in the handshake era.
func (hc *httpConn) abandon(ctx context.Context, id string) {
	if !hc.handshake || ctx.Err() == nil || hc.sessionID() == "" {
		return
	}
	cctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = hc.notify(cctx, "notifications/cancelled", map[string]any{"requestId": json.RawMessage(id), "reason": "the test stopped waiting"})
}

// response reads the answer to request id: a JSON body, or an SSE stream
// that carries the server's requests and notifications before it.
func (hc *httpConn) response(ctx context.Context, resp *http.Response, id, method string) (json.RawMessage, error) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream" && resp.StatusCode == http.StatusOK:
		return hc.stream(ctx, resp.Body, id, method)
	case ct == "application/json":
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("hexmcptest: reading the answer to %s: %w", method, err)
		}
		var m message
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("hexmcptest: %s answered HTTP %d with a body that is not a JSON-RPC message: %q", method, resp.StatusCode, b)
		}
		if m.Error != nil {
			m.Error.HTTPStatus = resp.StatusCode
			return nil, m.Error
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("hexmcptest: %s answered HTTP %d: %s", method, resp.StatusCode, b)
		}
		return m.outcome(method)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return nil, fmt.Errorf("hexmcptest: %s answered HTTP %d (%q): %s", method, resp.StatusCode, ct, b)
}

// stream reads an SSE stream until the response to request id. The
// server's requests on the stream belong to that request: when the client
// gives it up, their handlers are cancelled, since the server's
// cancellations would come on the stream it no longer reads.
func (hc *httpConn) stream(ctx context.Context, body io.Reader, id, method string) (raw json.RawMessage, err error) {
	var asked []string
	defer func() {
		if err != nil {
			for _, q := range asked {
				hc.in.abandon(q)
			}
		}
	}()
	br := bufio.NewReader(body)
	var data []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("hexmcptest: %s: %w", method, context.Cause(ctx))
			}
			return nil, fmt.Errorf("hexmcptest: the stream of %s ended before its response: %w", method, err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
			continue // id:, event:, retry: and comments need no action
		}
		if len(data) == 0 {
			continue // a priming event, or no event
		}
		var m message
		err = json.Unmarshal([]byte(strings.Join(data, "\n")), &m)
		data = data[:0]
		if err != nil {
			continue
		}
		switch {
		case m.isRequest():
			asked = append(asked, string(bytes.TrimSpace(m.ID)))
			hc.in.request(m, hc.reply)
		case m.isNotification():
			hc.in.notification(m)
		case string(bytes.TrimSpace(m.ID)) == id:
			if m.Error != nil {
				m.Error.HTTPStatus = http.StatusOK
			}
			return m.outcome(method)
		}
	}
}

// reply posts the client's answer to a request of the server.
func (hc *httpConn) reply(ctx context.Context, b []byte) error {
	resp, err := hc.post(ctx, b)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("hexmcptest: the answer to the server was refused: HTTP %d", resp.StatusCode)
	}
	return nil
}

func (hc *httpConn) notify(ctx context.Context, method string, params map[string]any) error {
	body, err := encodeRequest(nil, method, params)
	if err != nil {
		return err
	}
	resp, err := hc.post(ctx, body)
	if err != nil {
		return fmt.Errorf("hexmcptest: %s: %w", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("hexmcptest: %s answered HTTP %d: %s", method, resp.StatusCode, b)
	}
	return nil
}

// post sends one message with the headers its era asks for.
func (hc *httpConn) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hc.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if hc.handshake {
		if sid := hc.sessionID(); sid != "" {
			req.Header.Set(mcphttp.HeaderSessionID, sid)
			req.Header.Set(mcphttp.HeaderProtocolVersion, string(hc.rev))
		}
	} else {
		hc.requestMetadata(req.Header, body)
	}
	return hc.client.Do(req)
}

// requestMetadata sets the headers that mirror a stateless-era request
// (2026-07-28 Streamable HTTP, "Request Metadata"): MCP-Protocol-Version,
// Mcp-Method, Mcp-Name, and Mcp-Param-* for the arguments the tool's input
// schema marks with x-mcp-header.
func (hc *httpConn) requestMetadata(h http.Header, body []byte) {
	mi := hc.srv.Engine().Exchange(nil).Inspect(body) // read as the server reads it
	h.Set(mcphttp.HeaderProtocolVersion, string(hc.rev))
	if mi.Method == "" {
		return
	}
	h.Set(mcphttp.HeaderMethod, mi.Method)
	switch mi.Method {
	case "tools/call", "prompts/get":
		h.Set(mcphttp.HeaderName, headerValue(mi.Name))
	case "resources/read":
		h.Set(mcphttp.HeaderName, headerValue(mi.URI))
	}
	if mi.Method != "tools/call" {
		return
	}
	tool, ok := hc.srv.Engine().LookupTool(mi.Name)
	if !ok {
		return
	}
	params := xmcpheader.Params(tool.InputSchema)
	if len(params) == 0 {
		return
	}
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(mi.Arguments))
	dec.UseNumber()
	if dec.Decode(&args) != nil {
		return
	}
	for _, p := range params {
		if v, ok := xmcpheader.ArgumentAt(args, p.Path); ok && v != nil {
			if s, ok := primitiveHeader(v); ok {
				h.Set(mcphttp.HeaderParamPrefix+p.Name, s)
			}
		}
	}
}

func (hc *httpConn) close() error {
	var err error
	if sid := hc.sessionID(); sid != "" {
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		req, rerr := http.NewRequestWithContext(ctx, http.MethodDelete, hc.url, nil)
		if rerr == nil {
			req.Header.Set(mcphttp.HeaderSessionID, sid)
			req.Header.Set(mcphttp.HeaderProtocolVersion, string(hc.rev))
			resp, derr := hc.client.Do(req)
			if derr != nil {
				err = fmt.Errorf("hexmcptest: ending the session: %w", derr)
			} else {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotFound {
					err = fmt.Errorf("hexmcptest: ending the session: HTTP %d", resp.StatusCode)
				}
			}
		}
		cancel()
	}
	hc.handler.CloseStreams()
	hc.handler.Abort()
	hc.ts.Close()
	return err
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
		return v.String(), true // not an integer: the server refuses it
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
