package mcpotel

import (
	"bytes"
	"encoding/json"

	"github.com/go-json-experiment/json/jsontext"
)

// traceCarrier is the trace context of a request's params._meta, as a
// propagation.TextMapCarrier.
type traceCarrier struct {
	traceparent, tracestate, baggage string
}

// Get returns the _meta member key, when it was a string.
func (c *traceCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.traceparent
	case "tracestate":
		return c.tracestate
	case "baggage":
		return c.baggage
	}
	return ""
}

// Set does nothing: the carrier is only read.
func (c *traceCarrier) Set(string, string) {}

// Keys returns the keys that were present.
func (c *traceCarrier) Keys() []string {
	var keys []string
	for _, kv := range [...]struct{ k, v string }{{"traceparent", c.traceparent}, {"tracestate", c.tracestate}, {"baggage", c.baggage}} {
		if kv.v != "" {
			keys = append(keys, kv.k)
		}
	}
	return keys
}

// decodeOptions read JSON the engine has already checked: strictly valid,
// without duplicate names; no second check.
var decodeOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// metaCarrier reads traceparent, tracestate and baggage from
// params._meta; ok is false when it holds none of them. Params without
// the bytes "_meta" (nor a \u escape, which could spell a name) are not
// decoded at all; others are read member by member up to _meta, whose
// other members are skipped unread.
func metaCarrier(params json.RawMessage) (*traceCarrier, bool) {
	if len(params) == 0 || !bytes.Contains(params, []byte("_meta")) && !bytes.Contains(params, []byte(`\u`)) {
		return nil, false
	}
	d := jsontext.NewDecoder(bytes.NewReader(params), decodeOptions...)
	if !enterObject(d) {
		return nil, false
	}
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			return nil, false
		}
		if name.String() != "_meta" {
			if d.SkipValue() != nil {
				return nil, false
			}
			continue
		}
		if !enterObject(d) {
			return nil, false
		}
		var c traceCarrier
		for d.PeekKind() == '"' {
			key, err := d.ReadToken()
			if err != nil {
				return nil, false
			}
			var dst *string
			switch key.String() {
			case "traceparent":
				dst = &c.traceparent
			case "tracestate":
				dst = &c.tracestate
			case "baggage":
				dst = &c.baggage
			}
			if dst == nil || d.PeekKind() != '"' {
				if d.SkipValue() != nil {
					return nil, false
				}
				continue
			}
			v, err := d.ReadToken()
			if err != nil {
				return nil, false
			}
			*dst = v.String()
		}
		return &c, c != traceCarrier{}
	}
	return nil, false
}

// resultIsError reports whether a tools/call result has isError true.
func resultIsError(res json.RawMessage) bool {
	v, ok := topLevel(res, "isError")
	return ok && v.Kind() == 't'
}

// negotiatedVersion is the protocolVersion of an initialize result.
func negotiatedVersion(res json.RawMessage) string {
	v, ok := topLevel(res, "protocolVersion")
	if !ok || v.Kind() != '"' {
		return ""
	}
	s, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return ""
	}
	return string(s)
}

// topLevel returns the value of the member name of the object res.
// Results without the bytes of name (nor a \u escape, which could spell
// it) are not decoded; others are read member by member, the other
// values skipped unread.
func topLevel(res json.RawMessage, name string) (jsontext.Value, bool) {
	if len(res) == 0 || !bytes.Contains(res, []byte(name)) && !bytes.Contains(res, []byte(`\u`)) {
		return nil, false
	}
	d := jsontext.NewDecoder(bytes.NewReader(res), decodeOptions...)
	if !enterObject(d) {
		return nil, false
	}
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return nil, false
		}
		if tok.String() == name {
			v, err := d.ReadValue()
			return v, err == nil
		}
		if d.SkipValue() != nil {
			return nil, false
		}
	}
	return nil, false
}

// enterObject reads the '{' that must come next.
func enterObject(d *jsontext.Decoder) bool {
	if d.PeekKind() != '{' {
		return false
	}
	_, err := d.ReadToken()
	return err == nil
}
