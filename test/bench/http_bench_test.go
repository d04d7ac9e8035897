package bench

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mark3labs/mcp-go/server"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/app"
)

// Streamable HTTP: one tools/call of calculate per iteration, in both eras
// (sub-benchmarks 2025-11-25 and 2026-07-28), see http_harness_test.go.
// Run them all with: go test -run '^$' -bench HTTP -benchmem

// BenchmarkHTTPFloor is the lower bound for HTTP: a bare net/http handler
// (see httpFloor) that writes the text block alone in both eras.
func BenchmarkHTTPFloor(b *testing.B) {
	benchHTTPEras(b, func(string) httpHandlerFunc { return newHTTPFloor })
}

// BenchmarkHTTPFloorFair is the fair floor of BenchmarkHTTPHexMCP: the
// handler of BenchmarkHTTPFloor writing, in each era, the body this SDK
// writes for the call. 2025-11-25: the text block alone (the same as
// BenchmarkHTTPFloor). 2026-07-28 (the request's _meta names that
// version): also "resultType":"complete" first and
// "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"hexmcp-server","version":"0.0.0"}}
// last, as that revision asks. TestFairFloors checks that the bodies are
// byte for byte those of BenchmarkHTTPHexMCP.
func BenchmarkHTTPFloorFair(b *testing.B) {
	benchHTTPEras(b, func(string) httpHandlerFunc { return newHTTPFloorFair })
}

// BenchmarkHTTPHexMCP is this SDK: mcphttp.NewHandler with default options
// over an engine with the memory registry and JSON Schema input validation,
// the tool of BenchmarkHexMCP (text "3", no structured output). Both eras
// are served by the same handler.
func BenchmarkHTTPHexMCP(b *testing.B) {
	benchHTTPEras(b, func(string) httpHandlerFunc { return newHTTPHexMCP })
}

// BenchmarkHTTPGoSDK is go-sdk v1.8.0 with the tool of BenchmarkGoSDK
// (input validation always on, text "3"), default options otherwise:
//   - 2025-11-25: mcp.NewStreamableHTTPHandler (stateful: sessions keyed by
//     Mcp-Session-Id, SSE responses).
//   - 2026-07-28: the same constructor with StreamableHTTPOptions.Stateless:
//     true, go-sdk's stateless handler. A stateful go-sdk handler refuses
//     2026-07-28 requests (400, -32022 "protocol version "2026-07-28" is
//     not supported by this server", see
//     TestHTTPGoSDKStatefulRefusesStateless); the stateless one connects a
//     temporary ServerSession per POST.
func BenchmarkHTTPGoSDK(b *testing.B) {
	benchHTTPEras(b, newHTTPGoSDK)
}

// BenchmarkHTTPMcpGo is mcp-go v1.2.1's server.NewStreamableHTTPServer with
// default options over the server of BenchmarkMcpGo (no validation). One
// handler serves both eras: mcp-go decides the era per request from _meta.
func BenchmarkHTTPMcpGo(b *testing.B) {
	benchHTTPEras(b, func(string) httpHandlerFunc { return newHTTPMcpGo(false) })
}

// BenchmarkHTTPMcpGoValidated: as BenchmarkHTTPMcpGo over the server of
// BenchmarkMcpGoValidated (input and output validation, structuredContent).
func BenchmarkHTTPMcpGoValidated(b *testing.B) {
	benchHTTPEras(b, func(string) httpHandlerFunc { return newHTTPMcpGo(true) })
}

// --- this SDK ---

func newHTTPHexMCP(tb testing.TB) (http.Handler, func()) {
	e, err := newEngine(app.Options{}, hexTool(false))
	if err != nil {
		tb.Fatal(err)
	}
	h := mcphttp.NewHandler(e, mcphttp.Options{})
	return h, func() {
		h.Abort()
		_ = e.Close()
	}
}

// --- go-sdk ---

func newHTTPGoSDK(era string) httpHandlerFunc {
	return func(testing.TB) (http.Handler, func()) {
		s := newGoSDKServer(false)
		opts := &gosdk.StreamableHTTPOptions{Stateless: era == eraStateless}
		return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, opts), nil
	}
}

// --- mcp-go ---

func newHTTPMcpGo(validated bool) httpHandlerFunc {
	return func(testing.TB) (http.Handler, func()) {
		h := server.NewStreamableHTTPServer(newMcpGoServer(validated),
			server.WithStreamableHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		return h, nil
	}
}

// --- floor ---

// httpFloor is the lower bound: a bare net/http handler that decodes the
// body with encoding/json into a fixed struct, calls calculate and encodes
// {"jsonrpc":"2.0","id":..,"result":{"content":[{"type":"text","text":"3"}]}}
// as application/json. No session (the Mcp-Session-Id it hands out at
// initialize, so that the client sends the same headers as to the SDKs, is
// never looked at), no header checks, no validation, no method dispatch
// beyond what the handshake needs. It serves both eras alike: of the _meta
// of a 2026-07-28 body the decoder reads only the protocol version, which
// this floor does not look at.
//
// With fair set (BenchmarkHTTPFloorFair) it writes the body of this SDK
// instead: in the 2026-07-28 era, resultType and _meta too (see floorCall).
type httpFloor struct{ fair bool }

func newHTTPFloor(testing.TB) (http.Handler, func()) { return httpFloor{}, nil }

func newHTTPFloorFair(testing.TB) (http.Handler, func()) { return httpFloor{fair: true}, nil }

// floorSessionID has the length of this SDK's ids (32 hex digits).
const floorSessionID = "00000000000000000000000000000000"

func (f httpFloor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusNoContent) // DELETE at the end of a session
		return
	}
	var req floorRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(req.ID) == 0 { // notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if req.Method == "initialize" {
		w.Header().Set("Mcp-Session-Id", floorSessionID)
		_ = json.NewEncoder(w).Encode(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
		}{"2.0", req.ID, floorInitResult})
		return
	}
	if f.fair {
		resp := floorCall(&req, false)
		_ = json.NewEncoder(w).Encode(&resp)
		return
	}
	resp, _, _ := floorAnswer(&req)
	_ = json.NewEncoder(w).Encode(&resp)
}
