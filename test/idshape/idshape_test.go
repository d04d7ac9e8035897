// Package idshape checks that every transport answers a message whose
// request id cannot be read with the same error shape: a JSON-RPC error
// without an id member. MCP's JSONRPCErrorResponse makes id optional and its
// RequestId is a string or a number, never null (schema 2025-11-25 and
// 2026-07-28), and the official TypeScript SDKs' message schemas accept an
// error without id and refuse one whose id is null.
package idshape

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

const deadline = 10 * time.Second

// unreadable are messages whose id cannot be read, with the code of their
// error.
var unreadable = []struct {
	name, msg string
	code      int
}{
	{"invalid JSON", `{"jsonrpc":"2.0","id":1,`, -32700},
	{"garbage", `not json`, -32700},
	{"not an object", `42`, -32600},
	{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600},
	{"id bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600},
	{"id array", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600},
	{"duplicate member", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, -32600},
}

func TestUnreadableIDSameShapeOnEveryTransport(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{})
	t.Cleanup(func() { _ = e.Close() })

	transports := map[string]func(msg string) string{
		"stdio":           stdioExchange(t, e),
		"websocket":       wsExchange(t, e),
		"streamable http": httpExchange(t, e),
	}
	for _, c := range unreadable {
		t.Run(c.name, func(t *testing.T) {
			answers := map[string]string{}
			for name, exchange := range transports {
				got := exchange(c.msg)
				assertNoID(t, name, got, c.code)
				answers[name] = got
			}
			// The engine words these errors and every transport sends its
			// bytes as they are.
			if answers["stdio"] != answers["websocket"] || answers["stdio"] != answers["streamable http"] {
				t.Fatalf("the transports answer differently: %q", answers)
			}
		})
	}
}

func assertNoID(t *testing.T, transport, body string, code int) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("%s: not a JSON object: %q", transport, body)
	}
	if _, has := m["id"]; has {
		t.Fatalf("%s: an error with an unreadable id has an id member: %s", transport, body)
	}
	var e struct{ Code int }
	if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != code || string(m["jsonrpc"]) != `"2.0"` {
		t.Fatalf("%s: %s, want an error with code %d", transport, body, code)
	}
}

// stdioExchange serves e over stdio on pipes; each call writes one line and
// reads the answer line.
func stdioExchange(t *testing.T, e *app.Engine) func(string) string {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- stdio.New(stdio.Options{In: inR, Out: outW}).Serve(ctx, e) }()
	t.Cleanup(func() {
		cancel()
		_ = inW.Close()
		_ = outR.Close()
		select {
		case <-served:
		case <-time.After(deadline):
			t.Error("the stdio transport did not stop")
		}
	})
	lines := bufio.NewReader(outR)
	type line struct {
		s   string
		err error
	}
	return func(msg string) string {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		ch := make(chan line, 1)
		go func() {
			s, err := lines.ReadString('\n')
			ch <- line{s, err}
		}()
		select {
		case l := <-ch:
			if l.err != nil {
				t.Fatalf("stdio: %v", l.err)
			}
			return strings.TrimSuffix(l.s, "\n")
		case <-time.After(deadline):
			t.Fatal("stdio: no answer")
		}
		return ""
	}
}

// wsExchange serves e over WebSocket on 127.0.0.1; each call sends one text
// message and reads the answer.
func wsExchange(t *testing.T, e *app.Engine) func(string) string {
	h := websocket.NewHandler(e, websocket.Options{})
	srv := httptest.NewServer(h) // 127.0.0.1
	d := gws.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: deadline}
	c, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		srv.Close()
		t.Fatalf("websocket: %v", err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		_ = h.Shutdown(ctx)
		srv.Close()
	})
	return func(msg string) string {
		t.Helper()
		_ = c.SetWriteDeadline(time.Now().Add(deadline))
		if err := c.WriteMessage(gws.TextMessage, []byte(msg)); err != nil {
			t.Fatalf("websocket: %v", err)
		}
		_ = c.SetReadDeadline(time.Now().Add(deadline))
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("websocket: %v", err)
		}
		return string(data)
	}
}

// httpExchange serves e over Streamable HTTP on 127.0.0.1; each call POSTs
// one message and returns the body, which must come with 400.
func httpExchange(t *testing.T, e *app.Engine) func(string) string {
	h := mcphttp.NewHandler(e, mcphttp.Options{})
	srv := httptest.NewServer(h) // 127.0.0.1
	t.Cleanup(func() {
		h.CloseStreams()
		srv.Close()
	})
	client := &http.Client{Timeout: deadline}
	return func(msg string) string {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(msg))
		if err != nil {
			t.Fatal(err)
		}
		testtools.MCPHeaders(req)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("http: %v", err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("http: %v", err)
		}
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("http: status %d, want 400; body %s", resp.StatusCode, b)
		}
		return string(b)
	}
}
