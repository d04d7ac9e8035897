package hexmcp_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
)

// logRecords returns the JSON log records of log whose msg is msg.
func logRecords(t *testing.T, log string, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// A tool's failure that the client sees as "Internal error" is logged with
// what tells an operator which request it was: the request's id (as JSON)
// and, over HTTP in the handshake era, the session's id. A stateless
// request has no session, so its record has none.
func TestToolFailureLogNamesTheRequest(t *testing.T) {
	var logged lockedBuffer
	srv, err := hexmcp.New(hexmcp.Options{Logger: slog.New(slog.NewJSONHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.AddTool(hexmcp.NewTool(func() error { return errors.New("dial db: password rejected") }, hexmcp.WithName("fails")))
	hs := httptest.NewServer(srv.HTTPHandler(mcphttp.Options{}))
	defer hs.Close()

	resp, _ := postAs(t, hs.URL, "", initMsg, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	session := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	postAs(t, hs.URL, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	_, body := postAs(t, hs.URL, "", `{"jsonrpc":"2.0","id":"q7","method":"tools/call","params":{"name":"fails"}}`, session)
	if !strings.Contains(body, `"id":"q7"`) || !strings.Contains(body, `"message":"Internal error"`) || strings.Contains(body, "password") {
		t.Fatalf("the client's answer: %s", body)
	}
	stateless := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "fails"}
	_, body = postAs(t, hs.URL, "", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fails",`+statelessMeta+`}}`, stateless)
	if !strings.Contains(body, `"id":8`) || !strings.Contains(body, `"message":"Internal error"`) {
		t.Fatalf("the stateless client's answer: %s", body)
	}

	recs := logRecords(t, logged.String(), "hexmcp: tool failed")
	if len(recs) != 2 {
		t.Fatalf("want 2 records of the failures, got %v", recs)
	}
	if r := recs[0]; r["id"] != `"q7"` || r["session"] != sid || r["tool"] != "fails" || !strings.Contains(r["error"].(string), "password rejected") {
		t.Errorf("the handshake-era failure's record: %v (session %s)", r, sid)
	}
	if r := recs[1]; r["id"] != "8" || r["session"] != nil || r["tool"] != "fails" {
		t.Errorf("the stateless failure's record: %v", r)
	}
}
