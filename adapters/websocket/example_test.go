package websocket_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	gws "github.com/gorilla/websocket"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

func ExampleNewHandler() {
	engine, _ := app.NewEngine(app.Options{Validator: jsonschema.New(),
		Info:         domain.Implementation{Name: "example", Version: "1.0.0"},
		ToolRegistry: memory.NewRegistry(),
	})
	_ = engine.AddTool(hexmcp.NewTool(func() string { return "hi" }, hexmcp.WithName("hi")))

	// Mount the handler on a server; browsers from these origins may connect.
	ws := websocket.NewHandler(engine, websocket.Options{AllowedOrigins: []string{"http://localhost:6274"}})
	mux := http.NewServeMux()
	mux.Handle("/ws", ws)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer ws.Shutdown(context.Background())

	// A client offers the subprotocol "mcp" and sends one message per text
	// frame.
	conn, _, err := (&gws.Dialer{Subprotocols: []string{"mcp"}}).Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	fmt.Println("subprotocol:", conn.Subprotocol())
	_ = conn.WriteMessage(gws.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	_, resp, _ := conn.ReadMessage()
	fmt.Println(string(resp))
	// Output:
	// subprotocol: mcp
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","version":"1.0.0"}}}}
}
