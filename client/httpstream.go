package client

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
	"strconv"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// minRetryDelay is the least wait an SSE retry field gets: a server
// cannot make the client reconnect in a tight loop.
const minRetryDelay = 10 * time.Millisecond

// maxEventIDBytes bounds an SSE event id the client keeps to resume
// with: a longer id is ignored.
const maxEventIDBytes = 4 << 10

// openGet opens the GET stream of a handshake-era session, once, and
// waits (within ctx, at most getStreamWait) for the server's answer, so
// that the server's notifications after Connect returns reach the client.
// A server without a GET stream (405, or any other refusal) is left
// without.
func (c *httpConn) openGet(ctx context.Context) {
	c.mu.Lock()
	if c.opts.NoGetStream || c.closed || c.getOpen || c.era != domain.EraHandshake {
		c.mu.Unlock()
		return
	}
	c.getOpen = true
	c.wg.Add(1) // before Close's Wait, under mu
	c.mu.Unlock()
	ready := make(chan struct{})
	go func() {
		defer c.wg.Done()
		resp, err := c.get(c.base, "")
		close(ready)
		if err != nil {
			return
		}
		if !isStream(resp) {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
			return
		}
		c.follow(c.base, resp.Body, "")
	}()
	wctx, cancel := context.WithTimeout(ctx, getStreamWait)
	defer cancel()
	select {
	case <-ready:
	case <-wctx.Done():
	}
}

// get sends a GET for the session's stream, from the event after lastID
// when it is not empty (Last-Event-ID).
func (c *httpConn) get(ctx context.Context, lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Accept", "text/event-stream")
	c.mu.Lock()
	sid, rev := c.session, c.rev
	c.mu.Unlock()
	if sid != "" {
		req.Header.Set(headerSessionID, sid)
	}
	if rev != "" {
		req.Header.Set(headerProtocolVersion, string(rev))
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	return c.client.Do(req)
}

// isStream reports whether resp is a successful SSE stream.
func isStream(resp *http.Response) bool {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return resp.StatusCode >= 200 && resp.StatusCode < 300 && ct == "text/event-stream"
}

// follow reads a stream, body: the answer of a POST to the request id, or
// the session's GET stream (id empty). Its messages go to Read. A stream
// cut before its end (the response, for a call; Close, for the GET stream)
// is resumed in the handshake era with GET and Last-Event-ID, after the
// server's retry (or ReconnectDelay); a call's stream only when the
// server gave an event id, the GET stream afresh without one. At most
// MaxReconnects reconnections in a row may bring no new event. A call
// whose stream cannot go on fails; ctx ends it all.
func (c *httpConn) follow(ctx context.Context, body io.ReadCloser, id string) {
	r := &sseReader{max: c.max}
	r.reset(body)
	var (
		asked []string // the server's requests on the stream
		cause error    // why the stream stopped
		mark  string   // the event id when the stream was last (re)opened
		tries int
	)
	fail := func(err error) {
		if id == "" {
			return // the GET stream: nothing waits for it
		}
		if err == nil {
			err = io.ErrUnexpectedEOF
			if ctx.Err() != nil {
				err = context.Cause(ctx)
			}
		}
		// The server's requests on the stream belong to the call: the
		// server's cancellations of them would come on this stream, which
		// nobody reads any more.
		c.put(inItem{fail: &streamFailure{id: id, abandon: asked,
			err: fmt.Errorf("the response stream ended before the response: %w", err)}})
	}
	for {
		if body != nil {
			answered, err := c.drain(r, id, &asked)
			body.Close()
			body = nil
			if answered {
				return
			}
			cause = err
			if errors.Is(err, ports.ErrMessageTooLarge) {
				fail(err)
				return
			}
		}
		if ctx.Err() != nil {
			fail(cause)
			return
		}
		if r.lastID != mark {
			tries, mark = 0, r.lastID
		}
		c.mu.Lock()
		era := c.era
		c.mu.Unlock()
		if era != domain.EraHandshake || (id != "" && r.lastID == "") {
			fail(cause)
			return
		}
		tries++
		if c.opts.MaxReconnects < 0 || tries > c.opts.MaxReconnects {
			fail(fmt.Errorf("%d reconnections brought nothing new: %w", tries-1, cause))
			return
		}
		delay := c.opts.ReconnectDelay
		if r.retry > 0 {
			delay = min(max(r.retry, minRetryDelay), MaxRetryDelay)
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			fail(cause)
			return
		}
		resp, err := c.get(ctx, r.lastID)
		if err != nil {
			cause = err
			continue
		}
		if isStream(resp) {
			body = resp.Body
			r.reset(body)
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		herr := &HTTPError{StatusCode: resp.StatusCode, Header: resp.Header, Body: b}
		switch {
		case resp.StatusCode == http.StatusBadRequest && id == "" && r.lastID != "":
			// The server no longer knows the id: the GET stream starts
			// afresh (what came in between is lost).
			r.lastID, r.idBuf, mark = "", "", ""
			cause = herr
		case resp.StatusCode == http.StatusConflict, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
			// The server has not seen the cut yet, or is busy: again.
			cause = herr
		default:
			fail(herr)
			return
		}
	}
}

// drain hands the messages of a stream to Read, up to the response to
// request id (when id is not empty): answered then. Else it returns
// why the stream ended.
func (c *httpConn) drain(r *sseReader, id string, asked *[]string) (answered bool, err error) {
	for {
		data, err := r.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return false, err
		}
		var m message
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if m.isRequest() {
			*asked = append(*asked, idKey(m.ID))
		}
		if id != "" && m.Method == "" && idKey(m.ID) == id {
			if m.Error != nil {
				m.Error.HTTPStatus = http.StatusOK
				c.put(inItem{fail: &streamFailure{id: id, err: m.Error}})
			} else {
				c.put(inItem{msg: data})
			}
			return true, nil
		}
		c.put(inItem{msg: data})
	}
}

// sseReader reads the data of SSE events, each at most max bytes, and
// keeps the last event id and retry of the stream across reconnections.
type sseReader struct {
	br  *bufio.Reader
	max int64
	// idBuf is the id field last read; lastID the id of the last event
	// dispatched (as the SSE standard's "last event ID buffer" and "last
	// event ID string").
	idBuf, lastID string
	// retry is the reconnection time the server asked for (0: none).
	retry time.Duration
	// event is the type of the event next returned last ("" when it had
	// none: "message").
	event string
}

// reset reads body from now on.
func (r *sseReader) reset(body io.Reader) {
	r.br = bufio.NewReaderSize(body, 32<<10)
}

// next returns the data of the next event that has some.
func (r *sseReader) next() ([]byte, error) {
	var data []byte
	has, event := false, ""
	for {
		line, err := r.line(r.max - int64(len(data)))
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			r.lastID = r.idBuf
			if has {
				r.event = event
				return data, nil
			}
			event = ""
			continue
		}
		if line[0] == ':' {
			continue // a comment
		}
		name, v, _ := bytes.Cut(line, []byte(":"))
		v = bytes.TrimPrefix(v, []byte(" "))
		switch string(name) {
		case "data":
			if has {
				data = append(data, '\n')
			}
			data = append(data, v...)
			has = true
		case "event":
			event = string(v)
		case "id":
			if !bytes.ContainsRune(v, 0) && len(v) <= maxEventIDBytes {
				r.idBuf = string(v)
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(v), 10, 32); err == nil && len(v) > 0 && v[0] != '+' {
				r.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// line reads one line without its end (\n, \r\n or \r before \n), at
// most max bytes.
func (r *sseReader) line(max int64) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		if int64(len(line)+len(chunk)) > max+2 {
			return nil, fmt.Errorf("hexmcp: %w (an event over %d bytes)", ports.ErrMessageTooLarge, r.max)
		}
		line = append(line, chunk...)
		if err == nil {
			return bytes.TrimRight(line, "\r\n"), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}
