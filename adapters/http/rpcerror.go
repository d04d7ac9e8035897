package mcphttp

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
)

// rpcErr is a JSON-RPC error the transport answers by itself, with the HTTP
// status that carries it.
type rpcErr struct {
	status  int
	id      json.RawMessage // nil: the error has no id
	code    int
	message string
	data    any
	// retryAfter, when set, is sent as Retry-After.
	retryAfter string
	// close sends Connection: close (a body left unread).
	close bool
}

// wireError is the body of an error response. The id is left out when it is
// unknown: MCP's JSONRPCErrorResponse makes it optional, and null is not a
// valid RequestId. The engine writes its own errors in the same shape (see
// app's encodeError), so every error of the SDK whose id could not be read,
// on every transport, has no id member.
type wireError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Error   wireErrorBody   `json:"error"`
}

type wireErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcErr) body() []byte {
	b, err := json.Marshal(wireError{JSONRPC: "2.0", ID: e.id, Error: wireErrorBody{Code: e.code, Message: e.message, Data: e.data}})
	if err != nil { // data is always marshalable; keep a fallback anyway
		b, _ = json.Marshal(wireError{JSONRPC: "2.0", ID: e.id, Error: wireErrorBody{Code: e.code, Message: e.message}})
	}
	return b
}

// write sends the error as an application/json response.
func (e *rpcErr) write(w http.ResponseWriter) {
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
	if e.close {
		w.Header().Set("Connection", "close")
	}
	writeJSON(w, e.status, e.body())
}

func newErr(status int, id json.RawMessage, code int, message string) *rpcErr {
	return &rpcErr{status: status, id: id, code: code, message: message}
}

// headerMismatch is the 2026-07-28 HeaderMismatch error: 400 and -32020.
func headerMismatch(id json.RawMessage, message string) *rpcErr {
	return newErr(http.StatusBadRequest, id, domain.CodeHeaderMismatch, "Header mismatch: "+message)
}

// missingMeta is the error of a stateless-era request that lacks a required
// per-request _meta field: 400 and -32602 (2026-07-28 basic, "Per-request
// protocol fields").
func missingMeta(id json.RawMessage, message string) *rpcErr {
	return newErr(http.StatusBadRequest, id, domain.CodeInvalidParams, "Invalid params: "+message)
}

// The per-request _meta fields a stateless-era request must carry.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// writeJSON sends body as application/json with the given status.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// statusFor is the HTTP status of the engine's answer to a request. The statuses the specification sets:
//
//   - -32022 UnsupportedProtocolVersion, -32020 HeaderMismatch and -32021
//     MissingRequiredClientCapability: 400 (2026-07-28 schema.ts, "For
//     HTTP, the response status code MUST be 400 Bad Request"; the
//     2025-11-25 transport also requires 400 for an unsupported protocol
//     version).
//   - -32602 for a stateless-era request that lacks a required per-request
//     _meta field: 400 (2026-07-28 basic, "Per-request protocol fields": "A
//     request missing any required field is malformed; the server MUST
//     reject it with -32602 (Invalid params). On HTTP, the response status
//     MUST be 400 Bad Request"). Any other -32602 (an unknown tool, say)
//     is an answer: 200.
//   - -32601 in the stateless era: 404 (2026-07-28 Streamable HTTP,
//     "Protocol Version Header": a method the server does not implement).
//     In the handshake era the earlier revisions define no status for it:
//     200.
//   - anything else: 200, the JSON-RPC error being the answer. (Invalid
//     JSON and invalid JSON-RPC messages never reach the engine's answer
//     path: servePost answers them 400 itself.)
func statusFor(stateless bool, ans exchange.Answer) int {
	if !ans.IsError {
		return http.StatusOK
	}
	switch ans.Code {
	case domain.CodeUnsupportedProtocolVersion, domain.CodeHeaderMismatch:
		return http.StatusBadRequest
	case domain.CodeMissingClientCapability:
		// 2026-07-28 answers it 400; a handshake-era session's client reads
		// any non-2xx POST as a transport failure, not as the call's error.
		if stateless {
			return http.StatusBadRequest
		}
	case domain.CodeInvalidParams:
		if stateless && ans.Malformed {
			return http.StatusBadRequest
		}
	case domain.CodeMethodNotFound:
		if stateless {
			return http.StatusNotFound
		}
	}
	return http.StatusOK
}
