package app

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
)

// Keys of the stateless era's request _meta.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// requestMeta is a request's params._meta.
type requestMeta struct {
	ProgressToken      jsontext.Value `json:"progressToken"`
	ProtocolVersion    jsontext.Value `json:"io.modelcontextprotocol/protocolVersion"`
	ClientInfo         jsontext.Value `json:"io.modelcontextprotocol/clientInfo"`
	ClientCapabilities jsontext.Value `json:"io.modelcontextprotocol/clientCapabilities"`
	LogLevel           jsontext.Value `json:"io.modelcontextprotocol/logLevel"`
	// OpenTelemetry trace context (W3C Trace Context and Baggage), any era.
	TraceParent jsontext.Value `json:"traceparent"`
	TraceState  jsontext.Value `json:"tracestate"`
	Baggage     jsontext.Value `json:"baggage"`
}

// wireParams is the union of the params of every method the engine serves,
// decoded once; each method checks the members it needs.
type wireParams struct {
	Meta *requestMeta `json:"_meta"`
	// tools/call
	Name      jsontext.Value `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	// tools/list
	Cursor jsontext.Value `json:"cursor"`
	// resources/read
	URI jsontext.Value `json:"uri"`
	// completion/complete
	Ref      jsontext.Value `json:"ref"`
	Argument jsontext.Value `json:"argument"`
	Context  jsontext.Value `json:"context"`
	// initialize
	ProtocolVersion jsontext.Value `json:"protocolVersion"`
	Capabilities    jsontext.Value `json:"capabilities"`
	ClientInfo      jsontext.Value `json:"clientInfo"`
	// logging/setLevel
	Level jsontext.Value `json:"level"`
	// tools/call, prompts/get, resources/read in the stateless era: the
	// answers to an input_required result, and its state echoed back
	InputResponses jsontext.Value `json:"inputResponses"`
	RequestState   jsontext.Value `json:"requestState"`
	// subscriptions/listen
	Notifications jsontext.Value `json:"notifications"`
	// notifications/cancelled
	RequestID jsontext.Value `json:"requestId"`
	Reason    jsontext.Value `json:"reason"`
}

func decodeParams(raw jsontext.Value, id jsontext.Value) (*wireParams, *rpcError) {
	p := new(wireParams)
	if raw == nil {
		return p, nil
	}
	if err := json.Unmarshal(raw, p); err != nil {
		return nil, newRPCError(id, domain.CodeInvalidParams, "Invalid params: "+describeDecodeError(err), nil)
	}
	return p, nil
}

// describeDecodeError says where a semantic decode error happened, without
// echoing internal type names.
func describeDecodeError(err error) string {
	var se *json.SemanticError
	if ok := asSemantic(err, &se); ok && se.JSONPointer != "" {
		kind := kindName(se.JSONKind)
		return "unexpected " + kind + " at " + string(se.JSONPointer)
	}
	return "malformed params"
}

func asSemantic(err error, target **json.SemanticError) bool {
	for err != nil {
		if se, ok := err.(*json.SemanticError); ok {
			*target = se
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// stringParam decodes a member that must be a string.
func stringParam(v jsontext.Value) (string, bool) {
	if v == nil || v.Kind() != '"' {
		return "", false
	}
	return unquote(v), true
}

// kindName names a JSON kind in words.
func kindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "value"
}
