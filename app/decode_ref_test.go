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
	// The checks of the members read are the engine's (message): the
	// parity tests compare how each decoder reads them.
	wm := wireMessage{JSONRPC: w.JSONRPC, ID: w.ID, Method: w.Method, Params: msgParams{raw: w.Params}, Result: w.Result, Error: w.Error}
	em, rerr := wm.message()
	return refMessage{id: em.id, method: em.method, params: em.params.raw, isResponse: em.isResponse, isError: em.isError, payload: em.payload}, rerr
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
