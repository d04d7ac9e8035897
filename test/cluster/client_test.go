package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/hexmcp/hexmcp/internal/testtools"
)

// A small raw Streamable HTTP client: the tests see the wire (statuses,
// headers, the instance that served each request), not an SDK's view.

// The protocol revisions the tests speak.
const (
	// revHandshake is the handshake era: initialize, Mcp-Session-Id.
	revHandshake = "2025-11-25"
	// revStateless is the stateless era: no session, every request names
	// its revision and capabilities in _meta and in headers.
	revStateless = "2026-07-28"
)

const (
	// maxReplyBytes bounds the body of one reply the client reads.
	maxReplyBytes = 4 << 20
	// maxEventBytes bounds one SSE line.
	maxEventBytes = 1 << 20
	// streamEvents bounds the events a stream holds unread.
	streamEvents = 256
)

// client speaks Streamable HTTP to one endpoint.
type client struct {
	url string
	hc  *http.Client
}

// newClient returns a client of url keeping up to conns idle connections
// (at least the concurrency it is used with, so none is redialled).
func newClient(url string, conns int) *client {
	return &client{url: url, hc: &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     time.Minute,
	}}}
}

// newClientFrom is newClient dialling from the local address from (a
// loopback address other than 127.0.0.1 stands for another client host:
// Linux accepts any of 127.0.0.0/8 on lo).
func newClientFrom(url string, from net.IP, conns int) *client {
	return &client{url: url, hc: &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: from}}).DialContext,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     time.Minute,
	}}}
}

// at returns a client of another endpoint (an instance's URL, to pin a
// request to it) sharing c's connections.
func (c *client) at(url string) *client { return &client{url: url, hc: c.hc} }

// close drops c's idle connections.
func (c *client) close() { c.hc.CloseIdleConnections() }

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	ID, Event string
	Data      []byte
}

// reply is the answer to one HTTP request.
type reply struct {
	Status int
	Header http.Header
	// Instance is the X-Cluster-Instance header: the instance that served
	// the request ("" when the request went to an instance directly).
	Instance string
	// Body is the body as received (at most maxReplyBytes).
	Body []byte
	// Events are an SSE body's events, in order.
	Events []sseEvent
	// Message is the JSON-RPC response in the reply: the JSON body, or the
	// data of the SSE event that carries it (nil when there is none).
	Message json.RawMessage
}

func (r *reply) String() string {
	return fmt.Sprintf("%d (instance %q) %s", r.Status, r.Instance, bytes.TrimSpace(r.Body))
}

// rpc is a JSON-RPC message as the tests read it.
type rpc = testtools.Message

// request encodes a JSON-RPC request (id nil: a notification).
func request(id any, method string, params any) []byte {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // the tests' own values: always encodable
	}
	return b
}

// do sends one request to c's endpoint and reads the whole reply.
func (c *client) do(ctx context.Context, method string, body []byte, hdr map[string]string) (*reply, error) {
	resp, err := c.send(ctx, method, body, hdr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &reply{Status: resp.StatusCode, Header: resp.Header, Instance: resp.Header.Get(instanceHeader)}
	r.Body, err = io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	if err != nil {
		return r, fmt.Errorf("reading the reply (%d, instance %q): %w", r.Status, r.Instance, err)
	}
	if isSSE(resp) {
		sc := newEventScanner(bytes.NewReader(r.Body))
		for {
			ev, err := sc.next()
			if err != nil {
				break
			}
			r.Events = append(r.Events, ev)
			var m rpc
			if r.Message == nil && json.Unmarshal(ev.Data, &m) == nil && m.IsResponse() {
				r.Message = ev.Data
			}
		}
	} else if len(bytes.TrimSpace(r.Body)) > 0 && json.Valid(r.Body) {
		r.Message = r.Body
	}
	return r, nil
}

// send sends one request and returns the response, its body unread.
func (c *client) send(ctx context.Context, method string, body []byte, hdr map[string]string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, c.url, err)
	}
	return resp, nil
}

func isSSE(resp *http.Response) bool {
	return strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
}

// stateless sends one stateless-era request (2026-07-28): no session, the
// revision and the client's capabilities in params._meta, mirrored in the
// MCP-Protocol-Version, Mcp-Method and (for a named target) Mcp-Name
// headers. id is any JSON-encodable id.
func (c *client) stateless(ctx context.Context, id any, method, name string, params map[string]any) (*reply, error) {
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	if name != "" {
		p["name"] = name
	}
	p["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    revStateless,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	hdr := map[string]string{"MCP-Protocol-Version": revStateless, "Mcp-Method": method}
	if name != "" {
		hdr["Mcp-Name"] = name
	}
	return c.do(ctx, http.MethodPost, request(id, method, p), hdr)
}

// session is a handshake-era session (2025-11-25).
type session struct {
	c  *client
	ID string
}

// initialize opens a session: initialize (with the client capabilities
// caps, a JSON object) and notifications/initialized. It returns the
// session and the two replies.
func (c *client) initialize(ctx context.Context, caps string) (*session, []*reply, error) {
	r, err := c.do(ctx, http.MethodPost, request(0, "initialize", map[string]any{
		"protocolVersion": revHandshake,
		"capabilities":    json.RawMessage(caps),
		"clientInfo":      map[string]string{"name": "hexmcp-cluster-test", "version": "1"},
	}), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("initialize: %w", err)
	}
	s := &session{c: c, ID: r.Header.Get("Mcp-Session-Id")}
	if r.Status != http.StatusOK || s.ID == "" {
		return nil, nil, fmt.Errorf("initialize: %v", r)
	}
	r2, err := s.notify(ctx, "notifications/initialized", nil)
	if err != nil {
		return nil, nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	if r2.Status != http.StatusAccepted {
		return nil, nil, fmt.Errorf("notifications/initialized: %v", r2)
	}
	return s, []*reply{r, r2}, nil
}

// at returns the same session reached through another endpoint.
func (s *session) at(url string) *session { return &session{c: s.c.at(url), ID: s.ID} }

func (s *session) headers(extra map[string]string) map[string]string {
	h := map[string]string{"Mcp-Session-Id": s.ID, "MCP-Protocol-Version": revHandshake}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

// request sends a request in the session and reads the whole reply.
func (s *session) request(ctx context.Context, id any, method string, params any) (*reply, error) {
	return s.c.do(ctx, http.MethodPost, request(id, method, params), s.headers(nil))
}

// notify sends a notification in the session.
func (s *session) notify(ctx context.Context, method string, params any) (*reply, error) {
	return s.c.do(ctx, http.MethodPost, request(nil, method, params), s.headers(nil))
}

// respond sends the client's response to the server's request id.
func (s *session) respond(ctx context.Context, id json.RawMessage, result any) (*reply, error) {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	if err != nil {
		return nil, err
	}
	return s.c.do(ctx, http.MethodPost, b, s.headers(nil))
}

// call calls a tool in the session.
func (s *session) call(ctx context.Context, id any, tool string, args any) (*reply, error) {
	return s.request(ctx, id, "tools/call", map[string]any{"name": tool, "arguments": args})
}

// end deletes the session (DELETE).
func (s *session) end(ctx context.Context) (*reply, error) {
	return s.c.do(ctx, http.MethodDelete, nil, s.headers(nil))
}

// ---------------------------------------------------------------------------
// Streams read as they come (the SSE scenarios).

// stream is an SSE response read event by event while it is open.
type stream struct {
	Status   int
	Instance string
	resp     *http.Response
	events   chan sseEvent
	err      error // why the stream ended, once events is closed
	cancel   context.CancelFunc
}

// open sends a request whose answer is an SSE stream (a POST in the
// session, or a GET: the session's standalone stream, or with
// Last-Event-ID a resumption) and returns it as it is being read. A reply
// that is not a stream is returned as the error.
func (s *session) open(ctx context.Context, method string, body []byte, hdr map[string]string) (*stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	resp, err := s.c.send(ctx, method, body, s.headers(hdr))
	if err != nil {
		cancel()
		return nil, err
	}
	if !isSSE(resp) {
		defer cancel()
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
		return nil, fmt.Errorf("not an SSE stream: %d (instance %q) %s", resp.StatusCode, resp.Header.Get(instanceHeader), b)
	}
	st := &stream{Status: resp.StatusCode, Instance: resp.Header.Get(instanceHeader), resp: resp, events: make(chan sseEvent, streamEvents), cancel: cancel}
	go func() {
		defer close(st.events)
		sc := newEventScanner(resp.Body)
		for {
			ev, err := sc.next()
			if err != nil {
				st.err = err
				return
			}
			select {
			case st.events <- ev:
			case <-ctx.Done():
				st.err = ctx.Err()
				return
			}
		}
	}()
	return st, nil
}

// errStreamEnded: the stream ended before the event looked for.
var errStreamEnded = errors.New("the stream ended")

// next returns the next event, waiting at most wait.
func (st *stream) next(wait time.Duration) (sseEvent, error) {
	select {
	case ev, ok := <-st.events:
		if !ok {
			return sseEvent{}, fmt.Errorf("%w: %v", errStreamEnded, st.err)
		}
		return ev, nil
	case <-time.After(wait):
		return sseEvent{}, fmt.Errorf("no event within %v", wait)
	}
}

// until reads events until one whose JSON-RPC message satisfies match,
// within wait in all; it returns every event read, that one last.
func (st *stream) until(wait time.Duration, match func(rpc) bool) ([]sseEvent, error) {
	deadline := time.Now().Add(wait)
	var seen []sseEvent
	for {
		ev, err := st.next(time.Until(deadline))
		if err != nil {
			return seen, err
		}
		seen = append(seen, ev)
		var m rpc
		if json.Unmarshal(ev.Data, &m) == nil && match(m) {
			return seen, nil
		}
	}
}

// close cuts the stream (as a client whose connection dropped).
func (st *stream) close() {
	st.cancel()
	st.resp.Body.Close()
	for range st.events { // the reader is done
	}
}

// eventScanner reads Server-Sent Events.
type eventScanner struct{ sc *bufio.Scanner }

func newEventScanner(r io.Reader) *eventScanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventBytes)
	return &eventScanner{sc: sc}
}

// next returns the next event with data (a priming event, which has an
// id and empty data, included), or io.EOF at the end of the stream.
func (e *eventScanner) next() (sseEvent, error) {
	var ev sseEvent
	var data [][]byte
	seen := false
	for e.sc.Scan() {
		line := e.sc.Text()
		if line == "" {
			if seen {
				ev.Data = bytes.Join(data, []byte("\n"))
				return ev, nil
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment (keep-alive)
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID, seen = value, true
		case "event":
			ev.Event, seen = value, true
		case "data":
			data, seen = append(data, []byte(value)), true
		}
	}
	if err := e.sc.Err(); err != nil {
		return sseEvent{}, err
	}
	if seen {
		ev.Data = bytes.Join(data, []byte("\n"))
		return ev, nil
	}
	return sseEvent{}, io.EOF
}
