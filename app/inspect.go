package app

import (
	"encoding/json"

	"github.com/hexmcp/hexmcp/domain"
)

// MessageKind classifies an incoming message.
type MessageKind int

// Kinds of message.
const (
	KindInvalid      MessageKind = iota // not a valid JSON-RPC message
	KindRequest                         // has an id and a method
	KindNotification                    // has a method and no id
	KindResponse                        // a result or error from the client
)

// MessageInfo is what a transport may need to know about a message before
// the engine serves it (Streamable HTTP checks headers against it and picks
// its response mode).
type MessageInfo struct {
	Kind   MessageKind
	ID     json.RawMessage
	Method string
	// ProtocolVersion is params._meta["io.modelcontextprotocol/protocolVersion"]
	// ("" when absent). A request that carries it is served statelessly,
	// unless it is an initialize.
	ProtocolVersion string
	// Name is params.name (tools/call, prompts/get); URI is params.uri
	// (resources/read).
	Name string
	URI  string
	// Arguments is params.arguments (tools/call), as sent.
	Arguments json.RawMessage
}

// Stateless reports whether the message is a stateless-era request or
// notification: it names a protocol version in _meta. (An initialize that
// does is stateless too, and answered -32601: the method does not exist in
// the stateless era.)
func (mi MessageInfo) Stateless() bool {
	return mi.ProtocolVersion != ""
}

// Inspect decodes raw as the engine would, strictly, and reports what it
// is. A message that is not valid yields KindInvalid; serve it anyway with
// [Engine.HandleMessage] to get the right error response.
func Inspect(raw []byte) MessageInfo {
	m, rerr := decodeMessage(raw)
	if rerr != nil {
		return MessageInfo{Kind: KindInvalid, ID: json.RawMessage(rerr.id), Method: m.method}
	}
	mi := MessageInfo{ID: json.RawMessage(m.id), Method: m.method}
	switch {
	case m.isResponse:
		mi.Kind = KindResponse
		return mi
	case m.id == nil:
		mi.Kind = KindNotification
	default:
		mi.Kind = KindRequest
	}
	p, perr := decodeParams(m.params, m.id)
	if perr != nil {
		return mi
	}
	if p.Meta != nil {
		mi.ProtocolVersion, _ = stringParam(p.Meta.ProtocolVersion)
	}
	mi.Name, _ = stringParam(p.Name)
	mi.URI, _ = stringParam(p.URI)
	if p.Arguments != nil {
		mi.Arguments = json.RawMessage(p.Arguments)
	}
	return mi
}

// LookupTool returns the definition of a registered tool (transports read
// its input schema for header mapping, for example).
func (e *Engine) LookupTool(name string) (*domain.Tool, bool) {
	rt, ok := e.registry.Get(name)
	if !ok {
		return nil, false
	}
	return rt.Tool, true
}
