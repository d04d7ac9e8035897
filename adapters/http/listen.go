package mcphttp

import (
	"net/http"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/exchange"
)

// listenRetryAfter is the Retry-After, in seconds, of a listen request
// refused for a cap on open streams.
const listenRetryAfter = "5"

// keepAliveComment is the SSE comment written on a quiet listen stream.
var keepAliveComment = []byte(": keep-alive\n\n")

// serveListen serves a 2026-07-28 subscriptions/listen: an SSE stream
// that lasts until the client closes it, the server ends it (CloseStreams,
// a shutdown, the engine's Options.ListenIdleTimeout; the engine then
// answers with its completion result) or a write to it fails.
//
// Every Options.KeepAlive an SSE comment goes out, so that a peer that is
// gone is found by a failed write and its stream, and its place under the
// engine's caps on listen streams, freed. The engine counts the streams of
// each client (app.Options.MaxListenersPerClient) by Options.ClientKey. A
// request it refuses for such a cap (app.CodeListenLimit) is answered 429
// with Retry-After.
func (h *Handler) serveListen(w http.ResponseWriter, r *http.Request, mi exchange.Message, acc accepts, hold *bodyHold, client string) {
	// The body has been decoded (the engine's Inspect) and the engine keeps only
	// copies of the little it needs: the stream gives back what it holds
	// of the budget of bodies in flight now (see keepRequest), lest open
	// streams hold its client's share.
	// (A body lacking required _meta is answered at once: no matter.)
	hold.release()
	// The engine counts listen streams per client: the client is the one
	// Options.ClientKey names (statelessContext), as for sessions.
	ctx, done := h.statelessContext(r, client)
	defer done()
	// A listen stream never ends by itself: a graceful stop (CloseStreams,
	// Server.Shutdown) ends it, as it ends GET streams, and the engine
	// then answers it with its completion result.
	ctx, stop := h.listenContext(ctx, r)
	defer stop()
	pw := &postWriter{h: h, w: w, acc: acc}
	var wg sync.WaitGroup
	quit := make(chan struct{})
	if h.opts.KeepAlive > 0 {
		wg.Go(func() { h.keepListenAlive(pw, stop, quit) })
	}
	ans := h.x.Serve(ctx, nil, mi, pw)
	close(quit)
	wg.Wait()
	if ans.IsError && ans.Code == app.CodeListenLimit && !pw.streaming() {
		w.Header().Set("Retry-After", listenRetryAfter)
		pw.finish(ans.Response, http.StatusTooManyRequests)
		return
	}
	// A listen refused for a resource's scopes is a 403 with the
	// challenge, as resources/subscribe's refusal is (step-up).
	pw.finishAnswer(r, ans, true)
}

// keepListenAlive writes a keep-alive comment on pw's stream every
// Options.KeepAlive until quit is closed, and ends the stream (end: no
// response, the peer is gone) when a write fails.
func (h *Handler) keepListenAlive(pw *postWriter, end func(), quit <-chan struct{}) {
	t := time.NewTicker(h.opts.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
			if !pw.keepAlive() {
				end()
				return
			}
		}
	}
}

// keepAlive writes an SSE comment on the response once it has become a
// stream, and reports false when the connection is lost (this write, or
// an earlier event's, failed).
func (pw *postWriter) keepAlive() bool {
	pw.mu.Lock()
	st := pw.st
	pw.mu.Unlock()
	if st == nil {
		return true // not a stream (yet)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return true
	}
	c, ok := st.conn.(*directConn)
	if !ok {
		return st.conn != nil && st.conn.alive()
	}
	if c.lost {
		return false
	}
	if writeEvents(c.w, c.rc, c.timeout, keepAliveComment) != nil {
		c.lost = true
		return false
	}
	return true
}
