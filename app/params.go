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
// decoded once, with the message (see wireMessage.readParams, which reads
// the members named in member; the tags serve decodeParams for params
// from elsewhere); each method checks the members it needs.
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

// member returns the field of the member named name, nil for a member
// the engine does not read (and for _meta, read apart).
func (p *wireParams) member(name []byte) *jsontext.Value {
	switch string(name) {
	case "name":
		return &p.Name
	case "arguments":
		return &p.Arguments
	case "cursor":
		return &p.Cursor
	case "uri":
		return &p.URI
	case "ref":
		return &p.Ref
	case "argument":
		return &p.Argument
	case "context":
		return &p.Context
	case "protocolVersion":
		return &p.ProtocolVersion
	case "capabilities":
		return &p.Capabilities
	case "clientInfo":
		return &p.ClientInfo
	case "level":
		return &p.Level
	case "inputResponses":
		return &p.InputResponses
	case "requestState":
		return &p.RequestState
	case "notifications":
		return &p.Notifications
	case "requestId":
		return &p.RequestID
	case "reason":
		return &p.Reason
	}
	return nil
}

// member returns the field of the _meta member named name, nil for a
// member the engine does not read.
func (m *requestMeta) member(name []byte) *jsontext.Value {
	switch string(name) {
	case "progressToken":
		return &m.ProgressToken
	case metaProtocolVersion:
		return &m.ProtocolVersion
	case metaClientInfo:
		return &m.ClientInfo
	case metaClientCapabilities:
		return &m.ClientCapabilities
	case metaLogLevel:
		return &m.LogLevel
	case "traceparent":
		return &m.TraceParent
	case "tracestate":
		return &m.TraceState
	case "baggage":
		return &m.Baggage
	}
	return nil
}

// decodeParams returns the decoded params of a message, or the error to
// send when they are not what the engine reads (see msgParams.err).
// decodeMessage has decoded them already; params from elsewhere are
// decoded here.
func decodeParams(mp msgParams, id jsontext.Value) (*wireParams, *rpcError) {
	switch {
	case mp.err != "":
		return nil, newRPCError(id, domain.CodeInvalidParams, "Invalid params: "+mp.err, nil)
	case mp.p != nil:
		return mp.p, nil
	}
	p := new(wireParams)
	if mp.raw == nil {
		return p, nil
	}
	if err := json.Unmarshal(mp.raw, p); err != nil {
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
