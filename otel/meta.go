package mcpotel

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/app"
)

// traceCarrier is a request's trace context ([app.Request.Trace]), as a
// propagation.TextMapCarrier.
type traceCarrier app.TraceContext

// Get returns the _meta member key, when it was a string.
func (c *traceCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.TraceParent
	case "tracestate":
		return c.TraceState
	case "baggage":
		return c.Baggage
	}
	return ""
}

// Set does nothing: the carrier is only read.
func (c *traceCarrier) Set(string, string) {}

// Keys returns the keys that were present.
func (c *traceCarrier) Keys() []string {
	var keys []string
	for _, kv := range [...]struct{ k, v string }{{"traceparent", c.TraceParent}, {"tracestate", c.TraceState}, {"baggage", c.Baggage}} {
		if kv.v != "" {
			keys = append(keys, kv.k)
		}
	}
	return keys
}

// decodeOptions read JSON the engine has already checked: strictly valid,
// without duplicate names; no second check.
var decodeOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// reader is a pooled decoder over a byte slice.
type reader struct {
	src bytes.Reader
	d   jsontext.Decoder
}

var readers = sync.Pool{New: func() any { return new(reader) }}

// decoder returns a pooled decoder reading b; give it back with done.
func decoder(b []byte) *reader {
	r := readers.Get().(*reader)
	r.src.Reset(b)
	r.d.Reset(&r.src, decodeOptions...)
	return r
}

// done returns r to the pool, holding nothing of what it read.
func (r *reader) done() {
	r.src.Reset(nil)
	r.d.Reset(&r.src)
	readers.Put(r)
}

// nameIs reports whether the object member name v (as read, quoted) is
// name, unescaping it only when it holds an escape.
func nameIs(v jsontext.Value, name string) bool {
	if len(v) < 2 {
		return false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1:len(v)-1]) == name
	}
	u, err := jsontext.AppendUnquote(nil, v)
	return err == nil && string(u) == name
}

// notificationTrace reads traceparent, tracestate and baggage from the
// params._meta of a notification, whose [app.Request.Trace] the engine
// leaves empty (it reads a request's); nil when it holds none of them.
// Params without the bytes "_meta" (nor a \u escape, which could spell a
// name) are not decoded at all; others are read member by member up to
// _meta, whose other members are skipped unread.
func notificationTrace(params json.RawMessage) *traceCarrier {
	if len(params) == 0 || !bytes.Contains(params, []byte("_meta")) && !bytes.Contains(params, []byte(`\u`)) {
		return nil
	}
	r := decoder(params)
	defer r.done()
	d := &r.d
	if !enterObject(d) {
		return nil
	}
	for d.PeekKind() == '"' {
		name, err := d.ReadValue()
		if err != nil {
			return nil
		}
		if !nameIs(name, "_meta") {
			if d.SkipValue() != nil {
				return nil
			}
			continue
		}
		if !enterObject(d) {
			return nil
		}
		var c traceCarrier
		for d.PeekKind() == '"' {
			key, err := d.ReadValue()
			if err != nil {
				return nil
			}
			var dst *string
			switch {
			case nameIs(key, "traceparent"):
				dst = &c.TraceParent
			case nameIs(key, "tracestate"):
				dst = &c.TraceState
			case nameIs(key, "baggage"):
				dst = &c.Baggage
			}
			if dst == nil || d.PeekKind() != '"' {
				if d.SkipValue() != nil {
					return nil
				}
				continue
			}
			v, err := d.ReadValue()
			if err != nil {
				return nil
			}
			u, err := jsontext.AppendUnquote(nil, v)
			if err != nil {
				return nil
			}
			*dst = string(u)
		}
		if c == (traceCarrier{}) {
			return nil
		}
		return &c
	}
	return nil
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
	r := decoder(res)
	defer r.done()
	d := &r.d
	if !enterObject(d) {
		return nil, false
	}
	for d.PeekKind() == '"' {
		key, err := d.ReadValue()
		if err != nil {
			return nil, false
		}
		if nameIs(key, name) {
			v, err := d.ReadValue()
			if err != nil {
				return nil, false
			}
			return v.Clone(), true // v is the pooled decoder's
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
