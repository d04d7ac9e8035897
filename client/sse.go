package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// SSEOptions configure an [SSETransport].
type SSEOptions struct {
	// Client sends the requests (default http.DefaultClient). Give one
	// with a Transport that adds credentials to authenticate.
	Client *http.Client
	// Header is sent with every request.
	Header http.Header
}

// SSETransport reaches a server over the HTTP+SSE transport of MCP
// 2024-11-05, which servers of that era still speak: url is its event
// stream ("http://127.0.0.1:8080/sse"). Connect opens the stream (GET);
// its first event, "endpoint", names the URL the client POSTs each of its
// messages to, which must be of the stream's origin; the server's
// messages, its responses included, come on the stream as "message"
// events. One stream is one session; Close closes the stream, which ends
// the session. The stream is not resumed when it is cut: the session
// ends.
func SSETransport(url string, opts SSEOptions) Transport {
	return &sseTransport{url: url, opts: opts}
}

type sseTransport struct {
	url  string
	opts SSEOptions
}

func (t *sseTransport) Connect(ctx context.Context, opts ConnOptions) (Conn, error) {
	hc := httpClientOr(t.opts.Client)
	max := opts.maxMessage()
	base, err := url.Parse(t.url)
	if err != nil {
		return nil, fmt.Errorf("hexmcp: the SSE URL: %w", err)
	}
	sctx, stop := context.WithCancel(context.Background())
	unhook := context.AfterFunc(ctx, stop) // until the endpoint has come
	fail := func(err error) (Conn, error) {
		unhook()
		stop()
		return nil, err
	}
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, t.url, nil)
	if err != nil {
		return fail(err)
	}
	for k, vs := range t.opts.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return fail(err)
	}
	if !isStream(resp) {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		return fail(&HTTPError{StatusCode: resp.StatusCode, Header: resp.Header, Body: b})
	}
	c := &sseConn{client: hc, header: t.opts.Header.Clone(), body: resp.Body, ctx: sctx, stop: stop,
		r: &sseReader{max: max}}
	c.r.reset(resp.Body)
	data, err := c.r.next()
	for err == nil && c.r.event != "endpoint" {
		data, err = c.r.next() // a server's messages before the endpoint are not for a client yet
	}
	if err != nil {
		resp.Body.Close()
		return fail(fmt.Errorf("hexmcp: waiting for the endpoint event: %w", err))
	}
	ep, err := base.Parse(string(bytes.TrimSpace(data)))
	if err != nil {
		resp.Body.Close()
		return fail(fmt.Errorf("hexmcp: the endpoint event: %w", err))
	}
	if ep.Scheme != base.Scheme || ep.Host != base.Host {
		resp.Body.Close()
		return fail(fmt.Errorf("hexmcp: the endpoint %s is not of the stream's origin", ep.Redacted()))
	}
	if !unhook() {
		resp.Body.Close()
		return fail(context.Cause(ctx))
	}
	c.endpoint = ep.String()
	return c, nil
}

// sseConn is a connection of the HTTP+SSE transport.
type sseConn struct {
	client   *http.Client
	header   http.Header
	endpoint string
	body     io.ReadCloser
	r        *sseReader
	ctx      context.Context // ended by Close
	stop     context.CancelFunc

	once sync.Once
}

// Read returns the data of the stream's next "message" event; io.EOF when
// the stream ended.
func (c *sseConn) Read(context.Context) ([]byte, error) {
	for {
		data, err := c.r.next()
		if err != nil {
			if c.ctx.Err() != nil {
				err = io.EOF // closed
			}
			return nil, err
		}
		if c.r.event == "" || c.r.event == "message" {
			return data, nil
		}
	}
}

// Write POSTs msg to the endpoint; the server answers on the stream.
func (c *sseConn) Write(ctx context.Context, msg []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	for k, vs := range c.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &HTTPError{StatusCode: resp.StatusCode, Header: resp.Header, Body: b}
	}
	return nil
}

// Close closes the stream: the server ends the session.
func (c *sseConn) Close() error {
	c.once.Do(func() {
		c.stop()
		c.body.Close()
	})
	return nil
}
