package app

import (
	"encoding/json"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
)

// Kinds of message ([exchange.Kind]).
const (
	kindInvalid      = exchange.Invalid      // not a valid JSON-RPC message
	kindRequest      = exchange.Request      // has an id and a method
	kindNotification = exchange.Notification // has a method and no id
	kindResponse     = exchange.Response     // a result or error from the client
)

// messageInfo is a message as [inspect] decoded it: what a transport may
// need to know about it before the engine serves it (see
// [exchange.Message], its form outside the engine), and the decoded
// message, so that the engine need not decode it again.
type messageInfo struct {
	exchange.Info

	msg    message
	params *wireParams
	rerr   *rpcError
}

// inspect decodes raw as the engine would, strictly, and reports what it
// is. The messageInfo holds parts of raw (the engine keeps parts of a message
// without copying them: raw must not be written again). A message that is not valid yields
// kindInvalid; serve it anyway to get the right error response. Its ID is then
// the request's id when it could still be read (a request refused for
// duplicate member names or invalid UTF-8 in its params), the id that
// error answers; nil when it could not.
func inspect(raw []byte) messageInfo {
	m, rerr := decodeMessage(raw)
	if rerr != nil {
		return messageInfo{Info: exchange.Info{Kind: kindInvalid, ID: json.RawMessage(rerr.id), Method: m.method}, msg: m, rerr: rerr}
	}
	mi := messageInfo{Info: exchange.Info{ID: json.RawMessage(m.id), Method: m.method}, msg: m}
	switch {
	case m.isResponse:
		mi.Kind = kindResponse
		return mi
	case m.id == nil:
		mi.Kind = kindNotification
	default:
		mi.Kind = kindRequest
	}
	p, perr := decodeParams(m.params, m.id)
	if perr != nil {
		return mi
	}
	mi.params = p
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

// RetainedSize is how many bytes of the buffer the message was inspected
// from it refers to while it is served: its id and its params (the
// members the engine reads are parts of them). The rest of the buffer
// (other members, whitespace) is of no use once the message is inspected,
// yet stays in memory as long as the message refers to any part of it;
// see [messageInfo.Detach].
func (mi messageInfo) RetainedSize() int {
	return len(mi.msg.id) + len(mi.msg.params.raw)
}

// Detach returns the request or notification inspected again from a new
// buffer that holds only what it refers to (its id, method and params),
// so that the buffer it was inspected from can be freed while it is
// served: a transport calls it for a message whose buffer is much larger
// than [messageInfo.RetainedSize] (padding beside the params) before
// serving a call that may last, such as one that waits for the client's
// answer to an elicitation. It costs a copy and a decoding of those bytes.
// Other messages (responses, invalid messages) are returned unchanged.
func (mi messageInfo) Detach() messageInfo {
	if mi.Kind != kindRequest && mi.Kind != kindNotification {
		return mi
	}
	m := mi.msg
	b := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"method":"","params":}`)+len(m.id)+len(m.method)+len(m.params.raw))
	b = append(b, `{"jsonrpc":"2.0"`...)
	if m.id != nil {
		b = append(b, `,"id":`...)
		b = append(b, m.id...)
	}
	b = append(b, `,"method":`...)
	b = domain.AppendJSONString(b, m.method)
	if m.params.raw != nil {
		b = append(b, `,"params":`...)
		b = append(b, m.params.raw...)
	}
	return inspect(append(b, '}'))
}

// LookupTool returns the definition of a registered tool (transports read
// its input schema for header mapping, for example).
func (e *Engine) LookupTool(name string) (*domain.Tool, bool) {
	rt, ok := e.tools.registry.Get(name)
	if !ok {
		return nil, false
	}
	return rt.Tool, true
}

// toExchange is mi in the form a transport holds ([exchange.Message]).
func (mi messageInfo) toExchange() exchange.Message {
	m := mi.msg
	x := exchange.Message{Info: mi.Info,
		Decoded: exchange.Decoded{ID: json.RawMessage(m.id), Params: json.RawMessage(m.params.raw), ParamsErr: m.params.err,
			IsResponse: m.isResponse, IsError: m.isError, Payload: json.RawMessage(m.payload)}}
	// Only non-nil pointers go in: an interface holding a nil pointer
	// would not be nil.
	if m.params.p != nil {
		x.Decoded.Pre = m.params.p
	}
	if mi.params != nil {
		x.Decoded.Checked = mi.params
	}
	if mi.rerr != nil {
		x.Decoded.Err = mi.rerr
	}
	return x
}

// fromExchange is the messageInfo a transport held as x (see
// [messageInfo.toExchange]).
func fromExchange(x exchange.Message) messageInfo {
	d := x.Decoded
	pre, _ := d.Pre.(*wireParams)
	checked, _ := d.Checked.(*wireParams)
	rerr, _ := d.Err.(*rpcError)
	return messageInfo{Info: x.Info,
		msg: message{id: jsontext.Value(d.ID), method: x.Method, params: msgParams{raw: jsontext.Value(d.Params), p: pre, err: d.ParamsErr},
			isResponse: d.IsResponse, isError: d.IsError, payload: jsontext.Value(d.Payload)},
		params: checked, rerr: rerr}
}
