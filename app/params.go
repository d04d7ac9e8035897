package app

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
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
// the members named in member; decodeParams reads params from elsewhere
// through wireParamsJSON); each method checks the members it needs.
type wireParams struct {
	Meta *requestMeta
	// tools/call, prompts/get
	Name      jsontext.Value
	Arguments jsontext.Value
	// resources/read
	URI jsontext.Value
	// The members of the other methods, apart, so that a tools/call
	// decodes into a small struct. Never nil once decoded (see seal):
	// params that have none of them share noMore, which nothing writes.
	*wireMore
}

// wireMore is the part of wireParams the hot methods never read.
type wireMore struct {
	// tools/list
	Cursor jsontext.Value
	// completion/complete
	Ref      jsontext.Value
	Argument jsontext.Value
	Context  jsontext.Value
	// initialize
	ProtocolVersion jsontext.Value
	Capabilities    jsontext.Value
	ClientInfo      jsontext.Value
	// logging/setLevel
	Level jsontext.Value
	// tools/call, prompts/get, resources/read in the stateless era: the
	// answers to an input_required result, and its state echoed back
	InputResponses jsontext.Value
	RequestState   jsontext.Value
	// subscriptions/listen
	Notifications jsontext.Value
	// notifications/cancelled
	RequestID jsontext.Value
	Reason    jsontext.Value
}

// wireParamsJSON is wireParams as the JSON decoder reads it, for params
// from elsewhere (see decodeParams): the members wireParams.member names.
type wireParamsJSON struct {
	Meta            *requestMeta   `json:"_meta"`
	Name            jsontext.Value `json:"name"`
	Arguments       jsontext.Value `json:"arguments"`
	URI             jsontext.Value `json:"uri"`
	Cursor          jsontext.Value `json:"cursor"`
	Ref             jsontext.Value `json:"ref"`
	Argument        jsontext.Value `json:"argument"`
	Context         jsontext.Value `json:"context"`
	ProtocolVersion jsontext.Value `json:"protocolVersion"`
	Capabilities    jsontext.Value `json:"capabilities"`
	ClientInfo      jsontext.Value `json:"clientInfo"`
	Level           jsontext.Value `json:"level"`
	InputResponses  jsontext.Value `json:"inputResponses"`
	RequestState    jsontext.Value `json:"requestState"`
	Notifications   jsontext.Value `json:"notifications"`
	RequestID       jsontext.Value `json:"requestId"`
	Reason          jsontext.Value `json:"reason"`
}

// params returns the wireParams of j, sealed.
func (j *wireParamsJSON) params() *wireParams {
	p := &wireParams{Meta: j.Meta, Name: j.Name, Arguments: j.Arguments, URI: j.URI}
	more := wireMore{
		Cursor: j.Cursor, Ref: j.Ref, Argument: j.Argument, Context: j.Context,
		ProtocolVersion: j.ProtocolVersion, Capabilities: j.Capabilities, ClientInfo: j.ClientInfo,
		Level: j.Level, InputResponses: j.InputResponses, RequestState: j.RequestState,
		Notifications: j.Notifications, RequestID: j.RequestID, Reason: j.Reason,
	}
	if more.any() {
		p.wireMore = &more
	}
	return p.seal()
}

// any reports whether m holds a member.
func (m *wireMore) any() bool {
	for _, v := range [...]jsontext.Value{m.Cursor, m.Ref, m.Argument, m.Context, m.ProtocolVersion,
		m.Capabilities, m.ClientInfo, m.Level, m.InputResponses, m.RequestState, m.Notifications,
		m.RequestID, m.Reason} {
		if v != nil {
			return true
		}
	}
	return false
}

// noMore is the wireMore of params that hold none of its members: read
// only (member allocates a wireMore of its own before writing one).
var noMore wireMore

// seal makes p readable (wireMore set) once decoded, and returns it.
func (p *wireParams) seal() *wireParams {
	if p.wireMore == nil {
		p.wireMore = &noMore
	}
	return p
}

// more returns p's own wireMore, for writing.
func (p *wireParams) more() *wireMore {
	if p.wireMore == nil || p.wireMore == &noMore {
		p.wireMore = new(wireMore)
	}
	return p.wireMore
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
		return &p.more().Cursor
	case "uri":
		return &p.URI
	case "ref":
		return &p.more().Ref
	case "argument":
		return &p.more().Argument
	case "context":
		return &p.more().Context
	case "protocolVersion":
		return &p.more().ProtocolVersion
	case "capabilities":
		return &p.more().Capabilities
	case "clientInfo":
		return &p.more().ClientInfo
	case "level":
		return &p.more().Level
	case "inputResponses":
		return &p.more().InputResponses
	case "requestState":
		return &p.more().RequestState
	case "notifications":
		return &p.more().Notifications
	case "requestId":
		return &p.more().RequestID
	case "reason":
		return &p.more().Reason
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
	if mp.raw == nil {
		return new(wireParams).seal(), nil
	}
	var p wireParamsJSON
	if err := json.Unmarshal(mp.raw, &p); err != nil {
		return nil, newRPCError(id, domain.CodeInvalidParams, "Invalid params: "+decl.DescribeDecodeError(err), nil)
	}
	return p.params(), nil
}

// stringParam decodes a member that must be a string.
func stringParam(v jsontext.Value) (string, bool) {
	if v == nil || v.Kind() != '"' {
		return "", false
	}
	return unquote(v), true
}
