package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/hexmcp/hexmcp/domain"
)

// message is any JSON-RPC message as the client reads it.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
}

func (m *message) isRequest() bool { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }
func (m *message) isNotification() bool {
	return m.Method != "" && (len(m.ID) == 0 || string(m.ID) == "null")
}

// idKey is the key of a JSON-RPC id in the client's maps.
func idKey(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

// encodeRequest returns a request (id not nil) or a notification.
func encodeRequest(id json.RawMessage, method string, params any) ([]byte, error) {
	m := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Method  string          `json:"method"`
		Params  any             `json:"params,omitempty"`
	}{"2.0", id, method, params}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("hexmcp: encoding %s: %w", method, err)
	}
	return b, nil
}

// encodeResponse returns the client's answer to the server's request id:
// result, or the error err stands for.
func encodeResponse(id json.RawMessage, result any, err error) []byte {
	type response struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   *RPCError       `json:"error,omitempty"`
	}
	r := response{JSONRPC: "2.0", ID: id}
	if err == nil {
		var b []byte
		if b, err = json.Marshal(result); err == nil {
			r.Result = b
		}
	}
	if err != nil {
		var re *RPCError
		if !errors.As(err, &re) {
			re = &RPCError{Code: domain.CodeInternalError, Message: err.Error()}
		}
		r.Error = re
	}
	b, _ := json.Marshal(r) // every member is JSON already
	return b
}

// RPCError is the JSON-RPC error a request was answered with: the error of
// every Session method whose request the server refused (find it with
// errors.As). A handler of the server's questions may return one to
// answer with that error in the handshake era. Its Code is one of
// domain's (domain.CodeInvalidParams, domain.CodeMissingClientCapability,
// domain.CodeUnsupportedProtocolVersion, ...) or the server's own.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// HTTPStatus is the status of the HTTP response that carried the error
	// over Streamable HTTP (0 on other transports).
	HTTPStatus int `json:"-"`
}

// Error returns "jsonrpc error CODE: MESSAGE", with the data when there is
// some.
func (e *RPCError) Error() string {
	s := fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
	if len(e.Data) > 0 {
		s += " (data: " + string(e.Data) + ")"
	}
	return s
}

// HTTPError is an HTTP response that carried no JSON-RPC message where one
// was due (a 4xx or 5xx with an empty or other body, an unexpected
// content type). Find it with errors.As.
type HTTPError struct {
	StatusCode int
	// Header is the response's header (WWW-Authenticate on a 401, say).
	Header http.Header
	// Body is the start of the response's body (at most 4 KiB).
	Body []byte
}

// Error returns "HTTP STATUS: BODY".
func (e *HTTPError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if len(e.Body) > 0 {
		s += ": " + string(e.Body)
	}
	return s
}

// ErrClosed is the error of the calls of a session that is closed, or
// whose connection ended (wrapped with the reason).
var ErrClosed = errors.New("hexmcp: session closed")

// ToolError is the error of [CallToolAs] for a result whose IsError is
// set: the tool failed. Its message is the result's text.
type ToolError struct {
	Name   string
	Result *CallToolResult
}

// Error returns "hexmcp: tool NAME failed: TEXT".
func (e *ToolError) Error() string {
	return fmt.Sprintf("hexmcp: tool %s failed: %s", e.Name, e.Result.Text())
}
