package mcphttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// failingStore refuses to create sessions.
type failingStore struct{ ports.SessionStore }

func (failingStore) Create(context.Context, ports.SessionState) error {
	return errors.New("the store is down")
}

// A handler given no Logger logs through its engine's, instead of
// dropping its own problems.
func TestHandlerLogsThroughTheEngineByDefault(t *testing.T) {
	log := &testtools.LogRecorder{}
	e := testtools.NewEngine(t, app.Options{Logger: log})
	defer e.Close()
	h := mcphttp.NewHandler(e, mcphttp.Options{SessionStore: failingStore{memory.NewSessionStore(memory.SessionStoreOptions{})}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	testtools.MCPHeaders(req)
	resp := testtools.Do(t, nil, req)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatalf("initialize succeeded with a failing store")
	}
	if !log.Has("creating a session in the store failed") {
		t.Fatalf("the engine's logger got %v", log.Messages())
	}
}
