package app

// The decoder of messages as it was before messages were decoded in one
// pass (kept as the reference of the parity tests, not used otherwise).

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
)

// refWireMessage is one incoming JSON-RPC message, decoded strictly: member
// names match case-sensitively ("Method" is not "method"), and duplicate
// member names anywhere in the message make it invalid.
type refWireMessage struct {
	JSONRPC jsontext.Value `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  jsontext.Value `json:"method"`
	Params  jsontext.Value `json:"params"`
	Result  jsontext.Value `json:"result"`
	Error   jsontext.Value `json:"error"`
}

// refMessage is message as refDecodeMessage returns it.
type refMessage struct {
	id         jsontext.Value
	method     string
	params     jsontext.Value
	isResponse bool
	isError    bool
	payload    jsontext.Value
}

// refDecodeMessage parses raw into a message, or returns the error to send.
func refDecodeMessage(raw []byte) (refMessage, *rpcError) {
	var w refWireMessage
	if err := json.Unmarshal(raw, &w); err != nil {
		// The error path is the engine's (decodeError): the parity
		// tests compare what each decoder reads.
		m, rerr := decodeError(raw, err)
		return refMessage{id: m.id}, rerr
	}
	var m refMessage
	// The id is checked first so that later errors can answer it.
	if w.ID != nil {
		switch w.ID.Kind() {
		case '"', '0':
			m.id = w.ID
		default:
			return m, newRPCError(nil, domain.CodeInvalidRequest, "Invalid Request: id must be a string or a number", nil)
		}
	}
	if string(w.JSONRPC) != `"2.0"` {
		return m, newRPCError(m.id, domain.CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`, nil)
	}
	if w.Method == nil {
		if w.Result != nil || w.Error != nil {
			if m.id == nil {
				return m, newRPCError(nil, domain.CodeInvalidRequest, "Invalid Request: a response must have an id", nil)
			}
			if w.Result != nil && w.Error != nil {
				return m, newRPCError(nil, domain.CodeInvalidRequest, "Invalid Request: a response has either a result or an error", nil)
			}
			m.isResponse, m.payload, m.isError = true, w.Result, w.Error != nil
			if m.isError {
				m.payload = w.Error
			}
			return m, nil
		}
		return m, newRPCError(m.id, domain.CodeInvalidRequest, `Invalid Request: "method" is missing`, nil)
	}
	if w.Method.Kind() != '"' {
		return m, newRPCError(m.id, domain.CodeInvalidRequest, `Invalid Request: "method" must be a string`, nil)
	}
	m.method = unquote(w.Method)
	if m.method == "" {
		return m, newRPCError(m.id, domain.CodeInvalidRequest, `Invalid Request: "method" is empty`, nil)
	}
	if w.Params != nil {
		if k := w.Params.Kind(); k != '{' {
			if k == 'n' {
				return m, nil
			}
			return m, newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: "params" must be an object`, nil)
		}
		m.params = w.Params
	}
	return m, nil
}

func refDecodeParams(raw jsontext.Value, id jsontext.Value) (*wireParams, *rpcError) {
	if raw == nil {
		return new(wireParams).seal(), nil
	}
	var p wireParamsJSON
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, newRPCError(id, domain.CodeInvalidParams, "Invalid params: "+decl.DescribeDecodeError(err), nil)
	}
	return p.params(), nil
}
