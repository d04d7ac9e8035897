package mcphttp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// gateListener hands out server connections whose writes can be held:
// once armed, the next connection it accepts is the gated one, and while
// the gate is shut its writes wait (a client that stops reading, without
// depending on the size of the kernel's socket buffers).
type gateListener struct {
	net.Listener
	stuck chan struct{} // gets a value when a write first waits at the gate

	mu    sync.Mutex
	armed bool
	shut  bool
	open  chan struct{} // closed when the gate opens
}

func newGateListener(l net.Listener) *gateListener {
	return &gateListener{Listener: l, stuck: make(chan struct{}, 1), open: make(chan struct{})}
}

func (l *gateListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.armed {
		l.armed = false
		return &gateConn{Conn: c, l: l}, nil
	}
	return c, nil
}

func (l *gateListener) arm() {
	l.mu.Lock()
	l.armed = true
	l.mu.Unlock()
}

func (l *gateListener) shutGate() {
	l.mu.Lock()
	l.shut = true
	l.mu.Unlock()
}

func (l *gateListener) openGate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shut {
		l.shut = false
		close(l.open)
	}
}

type gateConn struct {
	net.Conn
	l *gateListener
}

func (c *gateConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	shut, open := c.l.shut, c.l.open
	c.l.mu.Unlock()
	if shut {
		select {
		case c.l.stuck <- struct{}{}:
		default:
		}
		<-open
	}
	return c.Conn.Write(b)
}

// A resumed GET stream whose client stops reading queues at most
// Options.MaxStreamQueueBytes of events; past that the connection is
// dropped, and the client gets the rest from the event store by resuming,
// a bounded replay at a time.
func TestQueuedStreamBoundedInBytes(t *testing.T) {
	const (
		queueBytes = 4 << 10
		burst      = 12
		msgSize    = 1000 // each event: about 1.1 KiB
	)
	e := testtools.NewEngine(t, app.Options{Info: testtools.Info})
	start, returned := make(chan struct{}), make(chan struct{})
	var gl *gateListener
	type noIn struct{}
	tool := app.Func(func(ctx context.Context, _ noIn) (string, error) {
		defer close(returned)
		rc := app.RequestFrom(ctx)
		if err := rc.ReportProgress(ctx, 0, burst, "started"); err != nil {
			return "", err
		}
		select {
		case <-start:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		for i := 1; i <= burst; i++ {
			msg := fmt.Sprintf("m%02d ", i) + strings.Repeat("x", msgSize)
			if err := rc.ReportProgress(ctx, float64(i), burst, msg); err != nil {
				return "", err
			}
			if i == 1 {
				// The GET's writer now holds m01, and waits at the gate:
				// the rest queue behind it.
				select {
				case <-gl.stuck:
				case <-time.After(10 * time.Second):
					return "", fmt.Errorf("the stream's writer never reached the gate")
				}
			}
		}
		return "done", nil
	}, app.WithName("burst"))
	if err := e.AddTool(tool); err != nil {
		t.Fatal(err)
	}
	h := mcphttp.NewHandler(e, mcphttp.Options{MaxStreamQueueBytes: queueBytes, KeepAlive: -1})
	srv := httptest.NewUnstartedServer(h) // on 127.0.0.1
	gl = newGateListener(srv.Listener)
	srv.Listener = gl
	srv.Start()
	gated := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	t.Cleanup(func() {
		gl.openGate()
		h.CloseStreams()
		srv.Close()
		gated.CloseIdleConnections()
		_ = e.Close()
	})

	const rev = "2025-11-25"
	sid := initializeAt(t, srv.URL, rev)
	resp := request(t, context.Background(), http.MethodPost, srv.URL, progressCallBody(7, "burst"), sessHdr(sid, rev))
	s := newSSE(t, resp)
	first := s.nextEvent(t)
	if !strings.Contains(first.data, "started") || first.id == "" {
		t.Fatalf("first event %+v", first)
	}
	resp.Body.Close() // the client loses the POST's stream

	// It resumes on a connection of its own, then stops reading.
	gl.arm()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", rev)
	req.Header.Set("Last-Event-ID", first.id)
	resp, err = gated.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	s = newSSE(t, resp)
	gl.shutGate()
	close(start)
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool did not return")
	}
	gl.openGate()

	// The connection was dropped with m01 written: the rest did not fit
	// in the queue.
	got := s.nextEvent(t)
	if !strings.Contains(got.data, `"message":"m01 `) {
		t.Fatalf("event %.100q", got.data)
	}
	if ev, err := s.next(); err != io.EOF {
		t.Fatalf("the slow client's stream went on: %.100q, %v", ev.data, err)
	}

	// Resuming from there, a bounded replay at a time, brings the rest.
	last := got.id
	next := 2
	for resumes := 1; ; resumes++ {
		if resumes > burst+1 {
			t.Fatal("resuming never reached the response")
		}
		r := request(t, context.Background(), http.MethodGet, srv.URL, "", mergeHdr(sessHdr(sid, rev), hdr{"Last-Event-ID": last}))
		rs := newSSE(t, r)
		bytes, n := 0, 0
		for {
			ev, err := rs.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
			bytes += len(ev.data)
			last = ev.id
			if strings.Contains(ev.data, `"id":7`) {
				if next != burst+1 || !strings.Contains(ev.data, "done") {
					t.Fatalf("response after m%02d: %.200s", next-1, ev.data)
				}
				r.Body.Close()
				if resumes < 2 {
					t.Fatalf("%d resumptions: the replays were not bounded", resumes)
				}
				return
			}
			if want := fmt.Sprintf(`"message":"m%02d `, next); !strings.Contains(ev.data, want) {
				t.Fatalf("event %.100q, want %s", ev.data, want)
			}
			next++
		}
		r.Body.Close()
		if n == 0 || rs.retry == "" {
			t.Fatalf("a replay of %d events ended without the response and without retry (%q)", n, rs.retry)
		}
		if bytes > queueBytes+2*msgSize {
			t.Fatalf("one replay sent %d bytes", bytes)
		}
	}
}
