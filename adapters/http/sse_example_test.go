package mcphttp_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
)

// The HTTP+SSE transport of 2024-11-05, for the clients that speak only
// it, mounted on the two paths they expect. A client opens the stream with
// a GET, POSTs its messages to the URL the stream's first event names, and
// reads every answer on the stream. (hexmcp's ListenAndServe and
// wiring.HTTPServer mount it by default beside /mcp.)
func ExampleNewSSEHandler() {
	e, _ := app.NewEngine(app.Options{Validator: jsonschema.New(), ToolRegistry: memory.NewRegistry()})
	defer e.Close()
	sse := mcphttp.NewSSEHandler(e, mcphttp.SSEOptions{})
	mux := http.NewServeMux()
	mux.Handle("/sse", sse)
	mux.Handle("/message", sse)
	srv := httptest.NewServer(mux) // a real program: mcphttp.NewServer("127.0.0.1:8080", mux, …)
	defer srv.Close()
	defer sse.Shutdown(context.Background())

	resp, err := http.Get(srv.URL + "/sse")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	// next returns the event and data of the next event of the stream.
	next := func() (event, data string) {
		for {
			line, _ := stream.ReadString('\n')
			line = strings.TrimSpace(line)
			switch {
			case line == "":
				return event, data
			case strings.HasPrefix(line, "event: "):
				event = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				data = line[len("data: "):]
			}
		}
	}
	_, endpoint := next()
	post, _ := http.Post(srv.URL+endpoint, "application/json", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`))
	post.Body.Close()
	event, data := next()
	fmt.Println(strings.HasPrefix(endpoint, "/message?sessionId="), post.StatusCode, event, strings.Contains(data, `"protocolVersion":"2024-11-05"`))
	// Output: true 202 message true
}
