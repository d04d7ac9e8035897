package hexmcp_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// An initialize that the Streamable HTTP transport answers 503 because the
// session store (Redis, down) cannot keep the session is audited as what
// the client got: a failure, with its JSON-RPC error code, not as a
// success.
func TestAuditRecordsWhatTheClientGot(t *testing.T) {
	srv := redistest.Start(t)
	addr := srv.Addr
	srv.Stop() // Redis down
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	var audit lockedBuffer
	s, err := hexmcp.New(hexmcp.Options{
		Middleware: []app.Middleware{hexmcp.Audit(slog.New(slog.NewJSONHandler(&audit, &slog.HandlerOptions{Level: slog.LevelDebug})))},
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	store := mcpredis.NewSessionStore(rdb, mcpredis.SessionStoreOptions{Timeout: time.Second})
	hs := httptest.NewServer(s.HTTPHandler(mcphttp.Options{SessionStore: store, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(hs.Close)
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	testtools.MCPHeaders(req)
	resp := testtools.Do(t, nil, req)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var answer struct {
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal(body, &answer) != nil || answer.Error.Code == 0 {
		t.Fatalf("initialize with the session store down: %d %s, want 503 with a JSON-RPC error", resp.StatusCode, body)
	}
	var found bool
	for line := range strings.SplitSeq(strings.TrimSpace(audit.String()), "\n") {
		var rec struct {
			Level  string `json:"level"`
			Method string `json:"method"`
			Code   *int   `json:"code"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Method != "initialize" {
			continue
		}
		found = true
		if rec.Level != "WARN" || rec.Code == nil || *rec.Code != answer.Error.Code {
			t.Fatalf("the audit record of an initialize answered %d with error %d: %s", resp.StatusCode, answer.Error.Code, line)
		}
	}
	if !found {
		t.Fatalf("no audit record of initialize: %s", audit.String())
	}
}
