package websocket

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// Over WebSocket, a request refused for what its params hold (duplicate
// member names, invalid UTF-8) is answered with its id (issue 10, "No
// lost ids"); the connection goes on.
func TestRefusedRequestAnswersItsIDOverWebSocket(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{})
	t.Cleanup(func() { _ = e.Close() })
	h := NewHandler(e, Options{})
	srv := httptest.NewServer(h) // 127.0.0.1
	d := gws.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		srv.Close()
	})
	exchange := func(msg string) string {
		t.Helper()
		_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if err := c.WriteMessage(gws.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for _, tc := range []struct {
		msg, id string
		code    int
	}{
		{`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"a","name":"b"}}`, `21`, -32600},
		{`{"jsonrpc":"2.0","method":"ping","params":{"_meta":{"k":1,"k":2}},"id":"w-22"}`, `"w-22"`, -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}", `23`, -32700},
	} {
		got := exchange(tc.msg)
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(got), &m); err != nil || string(m.ID) != tc.id || m.Error.Code != tc.code {
			t.Fatalf("%q answered %s; want id %s, code %d", tc.msg, got, tc.id, tc.code)
		}
		if got := exchange(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"p","result":{}}` {
			t.Fatalf("after: %s", got)
		}
	}
}
