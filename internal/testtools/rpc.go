package testtools

import "encoding/json"

// Message is a JSON-RPC message as the tests read it: a request, a
// notification or a response, its members kept raw.
type Message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// RPCError is the error of a JSON-RPC response.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// IsResponse reports whether m is a JSON-RPC response: an id, a result or
// an error, and no method.
func (m Message) IsResponse() bool {
	return m.Method == "" && len(m.ID) > 0 && (m.Result != nil || m.Error != nil)
}
