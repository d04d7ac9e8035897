package hexmcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// endRecorder collects session ends (Add is an OnSessionEnd).
type endRecorder struct {
	testtools.Collector[hexmcp.SessionEnd]
}

func (r *endRecorder) wait(t *testing.T, n int) []hexmcp.SessionEnd {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if got := r.All(); len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const initMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// OnSessionEnd is called once per session that ends: a connection that
// closes, an HTTP session deleted (not once more when the store then
// reports it removed).
func TestOnSessionEnd(t *testing.T) {
	rec := &endRecorder{}
	srv, err := hexmcp.New(hexmcp.Options{OnSessionEnd: rec.Add})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	client, conn := memory.NewPipe()
	done := make(chan error, 1)
	go func() { done <- srv.Engine().ServeConn(context.Background(), conn) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.WriteMessage(ctx, []byte(initMsg)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.ReadMessage(ctx); err != nil {
		t.Fatal(err)
	}
	client.Close()
	<-done
	ends := rec.wait(t, 1)
	if len(ends) != 1 || ends[0].Reason != hexmcp.SessionClosed || ends[0].Revision != "2025-11-25" || ends[0].Started.IsZero() || ends[0].Ended.Before(ends[0].Started) {
		t.Fatalf("after a connection closed: %+v", ends)
	}

	hs := httptest.NewServer(srv.HTTPHandler(mcphttp.Options{}))
	defer hs.Close()
	resp, _ := postAs(t, hs.URL, "", initMsg, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	postAs(t, hs.URL, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
	req, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", err, resp)
	}
	rec.wait(t, 2)
	time.Sleep(200 * time.Millisecond) // a second report (the store's removal) would come by then
	ends = rec.wait(t, 2)
	if len(ends) != 2 || ends[1].Reason != hexmcp.SessionDeleted || ends[1].ID != sid {
		t.Fatalf("after a DELETE: %+v", ends)
	}
}
