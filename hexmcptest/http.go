package hexmcptest

import (
	"net/http"
	"net/http/httptest"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/client"
)

// serveHTTP serves srv's HTTP handler at /mcp on an httptest server of
// its own (bound to 127.0.0.1) and returns a Streamable HTTP transport to
// it, and what stops it once the client is closed.
func serveHTTP(srv *hexmcp.Server) (client.Transport, func() error) {
	h := srv.HTTPHandler(mcphttp.Options{})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	tr := client.HTTPTransport(ts.URL+"/mcp", client.HTTPOptions{Client: ts.Client()})
	return tr, func() error {
		h.CloseStreams()
		h.Abort()
		ts.Close()
		return nil
	}
}
