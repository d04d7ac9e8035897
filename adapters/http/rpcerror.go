package mcphttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/hexmcp/hexmcp/domain"
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
}

// wireError is the body of an error response. The id is left out when it is
// unknown: MCP's JSONRPCErrorResponse makes it optional, and null is not a
// valid RequestId.
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
	writeJSON(w, e.status, e.body())
}

func newErr(status int, id json.RawMessage, code int, message string) *rpcErr {
	return &rpcErr{status: status, id: id, code: code, message: message}
}

// headerMismatch is the 2026-07-28 HeaderMismatch error: 400 and -32020.
func headerMismatch(id json.RawMessage, message string) *rpcErr {
	return newErr(http.StatusBadRequest, id, domain.CodeHeaderMismatch, "Header mismatch: "+message)
}

// writeJSON sends body as application/json with the given status.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// errorCode reports the error code of an encoded response, and false for a
// result. It stops reading at "result", so large results cost nothing.
func errorCode(resp []byte) (int, bool) {
	dec := json.NewDecoder(bytes.NewReader(resp))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, false
		}
		switch t {
		case "result":
			return 0, false
		case "error":
			var e struct {
				Code int `json:"code"`
			}
			if err := dec.Decode(&e); err != nil {
				return 0, false
			}
			return e.Code, true
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, false
			}
		}
	}
	return 0, false
}

// statusFor is the HTTP status of a response the engine produced.
//
//   - -32022 UnsupportedProtocolVersion, -32020 HeaderMismatch and -32021
//     MissingRequiredClientCapability: 400 (schema.ts of 2026-07-28, "For
//     HTTP, the response status code MUST be 400"; the 2025-11-25 transport
//     also requires 400 for an unsupported protocol version).
//   - -32601 in the stateless era: 404 (2026-07-28 Streamable HTTP,
//     "Protocol Version Header": a method the server does not implement).
//     In the handshake era the earlier revisions define no status for it:
//     200.
//   - anything else: 200, the JSON-RPC error being the answer.
func statusFor(stateless bool, resp []byte) int {
	code, isErr := errorCode(resp)
	if !isErr {
		return http.StatusOK
	}
	switch code {
	case domain.CodeUnsupportedProtocolVersion, domain.CodeHeaderMismatch, domain.CodeMissingClientCapability:
		return http.StatusBadRequest
	case domain.CodeMethodNotFound:
		if stateless {
			return http.StatusNotFound
		}
	}
	return http.StatusOK
}
