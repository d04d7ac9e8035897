package app

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/ports"
)

// wireMessage is one incoming JSON-RPC message as decodeMessage reads it,
// strictly: member names match case-sensitively ("Method" is not
// "method"), and duplicate member names or invalid UTF-8 anywhere in the
// message make it invalid. Its members are the message's own bytes (nothing
// is copied), and params, when it is an object, is decoded in the same
// pass (see readParams): the message is read once.
type wireMessage struct {
	raw     []byte // the message; the members below are parts of it
	JSONRPC jsontext.Value
	ID      jsontext.Value
	Method  jsontext.Value
	Params  msgParams
	Result  jsontext.Value
	Error   jsontext.Value
}

// msgParams is a message's params: its text (nil when absent) and, when it
// is an object, its members, decoded in the pass that read the message.
type msgParams struct {
	raw jsontext.Value
	p   *wireParams // nil unless raw is an object decoded by decodeMessage
	// err says what is wrong with the members ("" when nothing is), as
	// decodeParams reports it: after the checks that come first (the
	// method's existence).
	err string
}

// errNotObject is what UnmarshalJSONFrom answers for a message that is
// not a JSON object.
var errNotObject = errors.New("not a JSON object")

// UnmarshalJSONFrom reads the message: the members the engine knows, in
// one pass; every other member is still read (and so checked) by the
// decoder, and skipped.
func (w *wireMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	// As a struct is decoded: null is no member at all; any other value
	// that is not an object is an error once its first token is read.
	tok, err := dec.ReadToken()
	switch {
	case err != nil:
		return err
	case tok.Kind() == 'n':
		return nil
	case tok.Kind() != '{':
		return errNotObject
	}
	var scratch [32]byte
	for dec.PeekKind() != '}' {
		quoted, err := dec.ReadValue() // as a struct is decoded (see readName)
		if err != nil {
			return err
		}
		var dst *jsontext.Value
		switch string(memberName(quoted, scratch[:0])) {
		case "jsonrpc":
			dst = &w.JSONRPC
		case "id":
			dst = &w.ID
		case "method":
			dst = &w.Method
		case "result":
			dst = &w.Result
		case "error":
			dst = &w.Error
		case "params":
			if dec.PeekKind() == '{' {
				start := dec.InputOffset()
				if err := w.readParams(dec); err != nil {
					return err
				}
				w.Params.raw = w.part(start, dec.InputOffset())
				continue
			}
			dst = &w.Params.raw
		}
		if err := w.readMember(dec, dst); err != nil {
			return err
		}
	}
	_, err = dec.ReadToken()
	return err
}

// value returns v, just read by dec, as the part of the message it is,
// with no room to grow: appending to it never writes over the message.
func (w *wireMessage) value(dec *jsontext.Decoder, v jsontext.Value) jsontext.Value {
	end := dec.InputOffset()
	return w.part(end-int64(len(v)), end)
}

// part returns the message's bytes from start to end (offsets the decoder
// reported), trimmed of leading whitespace and separators, with no room
// to grow.
func (w *wireMessage) part(start, end int64) jsontext.Value {
	b := w.raw[start:end:end]
	for len(b) > 0 {
		switch b[0] {
		case ' ', '\t', '\r', '\n', ':', ',':
			b = b[1:]
			continue
		}
		break
	}
	return jsontext.Value(b)
}

// readName reads the name of an object member, quoted. It reads a token
// where the next one is not a string, for the decoder's error: a value
// read where a name belongs is checked before it is found misplaced. So
// params and _meta, which the reference decoder read as values, report a
// misplaced value as a syntax error; the message's own members are read
// as a struct's are, with ReadValue (a misplaced object with a duplicate
// name is then reported as a duplicate), the parity tests say.
func readName(dec *jsontext.Decoder) (jsontext.Value, error) {
	if dec.PeekKind() != '"' {
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return nil, errNotObject // not reached: only a string token is a name
	}
	return dec.ReadValue()
}

// memberName returns the name of an object member from its quoted form,
// unescaped (into buf) only when it has escapes.
func memberName(quoted []byte, buf []byte) []byte {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner
	}
	name, err := jsontext.AppendUnquote(buf, quoted)
	if err != nil {
		return nil // cannot happen: the decoder has checked the string
	}
	return name
}

// readParams reads params, an object, into w.Params.p: the members of
// wireParams and, when _meta is an object, its members. A _meta that is
// neither an object nor null is recorded in w.Params.err, the one problem
// params can have once the message is valid JSON.
func (w *wireMessage) readParams(dec *jsontext.Decoder) error {
	p := new(wireParams)
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	var scratch [32]byte
	for dec.PeekKind() != '}' {
		quoted, err := readName(dec)
		if err != nil {
			return err
		}
		name := memberName(quoted, scratch[:0])
		if string(name) == "_meta" {
			switch k := dec.PeekKind(); k {
			case '{':
				p.Meta = new(requestMeta)
				if err := w.readMeta(dec, p.Meta); err != nil {
					return err
				}
				continue
			case 'n':
				p.Meta = nil // null: as if absent
			default:
				if w.Params.err == "" {
					w.Params.err = "unexpected " + decl.KindName(k) + " at /_meta"
				}
			}
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		if err := w.readMember(dec, p.member(name)); err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	w.Params.p = p.seal()
	return nil
}

// readMember reads the value of a member into *dst, or skips it when dst
// is nil (a member the engine does not read).
func (w *wireMessage) readMember(dec *jsontext.Decoder, dst *jsontext.Value) error {
	if dst == nil {
		return dec.SkipValue()
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*dst = w.value(dec, v)
	return nil
}

// readMeta reads params._meta, an object, into m.
func (w *wireMessage) readMeta(dec *jsontext.Decoder, m *requestMeta) error {
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	var scratch [64]byte
	for dec.PeekKind() != '}' {
		quoted, err := readName(dec)
		if err != nil {
			return err
		}
		if err := w.readMember(dec, m.member(memberName(quoted, scratch[:0]))); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// message is a validated incoming message.
type message struct {
	id     jsontext.Value // nil for notifications
	method string
	params msgParams // raw nil when absent or null
	// isResponse marks a response from the client (to a server request):
	// payload is its result, or its error when isError.
	isResponse bool
	isError    bool
	payload    jsontext.Value
	// slot is the connection-loop call that serves the request (nil
	// outside a connection loop, such as HTTP).
	slot *callSlot
}

// rpcError is a JSON-RPC error to send, with the id to answer (nil when the
// id could not be read: the response then has no id member, see
// [encodeError]).
type rpcError struct {
	id  jsontext.Value
	err *domain.ProtocolError
	// malformed marks the error of a request missing a required field
	// (2026-07-28 basic, "Per-request protocol fields"), which HTTP
	// answers 400.
	malformed bool
	// scopes are the scopes a CodeInsufficientScope error asks for.
	scopes []string
}

// answer is the Answer of the response out, which is this error's
// encoding (or, for a nil error, a result).
func (r *rpcError) answer(out []byte) exchange.Answer {
	if r == nil || out == nil {
		return exchange.Answer{Response: out}
	}
	return exchange.Answer{Response: out, IsError: true, Code: r.err.Code, Malformed: r.malformed, Scopes: r.scopes}
}

func newRPCError(id jsontext.Value, code int, msg string, data any) *rpcError {
	return &rpcError{id: id, err: &domain.ProtocolError{Code: code, Message: msg, Data: data}}
}

// decodeMessage parses raw into a message, or returns the error to send.
// The message keeps parts of raw (its id, its params), which must not
// change afterwards. The scanner reads the common message (scan.go); the
// decoder (wireMessage.UnmarshalJSONFrom) whatever the scanner is not sure
// of, errors included.
func decodeMessage(raw []byte) (message, *rpcError) {
	w := wireMessage{raw: raw}
	if scanMessage(&w) {
		return w.message()
	}
	return decodeMessageSlowly(raw)
}

// decodeMessageSlowly is decodeMessage by the decoder, for a message the
// scanner was not sure of. (Apart, so that decodeMessage's wireMessage
// stays on the stack.)
func decodeMessageSlowly(raw []byte) (message, *rpcError) {
	w := &wireMessage{raw: raw}
	if err := json.Unmarshal(raw, w); err != nil {
		return decodeError(raw, err)
	}
	return w.message()
}

// maxNestingDepth is the deepest nesting of objects and arrays an incoming
// message may have, the message itself being level 1 (a 2025-03-26 batch
// is a level too): the bound of the JSON decoder the engine reads with,
// which no option raises (RFC 8259 section 9 lets a parser set one). A
// message nested deeper is valid JSON, refused with -32600 "Invalid
// Request" naming the limit, data {"limit":"maxNestingDepth","max":10000},
// and the request's id when it can be read (over HTTP: 400).
const maxNestingDepth = 10000

// decodeError is the error to send for a message the decoder refused. Only
// on this error path is the id read again, tolerantly, so that a request
// refused for what its params hold is still answered with its id (see
// readID, and nesting for a message nested past the decoder's bound).
func decodeError(raw []byte, err error) (message, *rpcError) {
	var se *jsontext.SyntacticError
	switch {
	case errors.Is(err, jsontext.ErrDuplicateName):
		id, ok := readID(raw, true)
		if !ok {
			if nid, depth, ok := nesting(raw); ok && depth > maxNestingDepth {
				id = nid // nested too deep for readID, after the duplicate
			}
		}
		return message{id: id}, newRPCError(id, domain.CodeInvalidRequest, "Invalid Request: duplicate member name", pointerData(err))
	case errors.As(err, &se):
		if id, ok := readID(raw, true); ok {
			// well-formed but for invalid UTF-8 (RFC 8259 section 8.1)
			return message{id: id}, newRPCError(id, domain.CodeParseError, "Parse error: the message is not valid UTF-8", pointerData(err))
		}
		if id, depth, ok := nesting(raw); ok && depth > maxNestingDepth {
			return message{id: id}, tooDeepError(id)
		}
		return message{}, newRPCError(nil, domain.CodeParseError, "Parse error: the message is not valid JSON", nil)
	}
	return message{}, newRPCError(nil, domain.CodeInvalidRequest, "Invalid Request: a message must be a JSON-RPC 2.0 object", nil)
}

// tooDeepError answers a message nested deeper than maxNestingDepth.
func tooDeepError(id jsontext.Value) *rpcError {
	return newRPCError(id, domain.CodeInvalidRequest,
		"Invalid Request: the message nests objects and arrays deeper than "+strconv.Itoa(maxNestingDepth)+" levels, the most this server reads",
		map[string]any{"limit": "maxNestingDepth", "max": maxNestingDepth})
}

// message checks the members read and makes the message.
func (w *wireMessage) message() (message, *rpcError) {
	var m message
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
	if w.Params.raw != nil {
		if k := w.Params.raw.Kind(); k != '{' {
			if k == 'n' {
				return m, nil
			}
			return m, newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: "params" must be an object`, nil)
		}
		m.params = w.Params
	}
	return m, nil
}

// tolerant reads what the strict decoder refuses but readID may look past.
var tolerant = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// readID finds the top-level "id" member of raw, a message the strict
// decoder refused, reading past duplicate member names and invalid UTF-8
// but nothing else. It returns the id when it is a string or a number
// (nil otherwise, and when the message names "id" twice: which one the
// client meant cannot be told). ok reports that raw is a well-formed JSON
// object apart from duplicate names and invalid UTF-8; the id of a message
// that is not is nil, as JSON-RPC 2.0 wants for a parse error.
//
// With whole false, raw is only the beginning of a message (the head a
// transport kept of a message over its size limit, see
// ports.MessageTooLargeError): reading stops where raw ends, at most
// ports.MaxMessageHead bytes in, and the id counts once its value is
// complete (followed by ',' or '}').
func readID(raw []byte, whole bool) (id jsontext.Value, ok bool) {
	if !whole && len(raw) > ports.MaxMessageHead {
		raw = raw[:ports.MaxMessageHead]
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw), tolerant...)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	seen, twice := false, false
	cut := func(err error) (jsontext.Value, bool) {
		if !whole && !twice && errors.Is(err, io.ErrUnexpectedEOF) {
			return id, false // the head ends here: keep what was read
		}
		return nil, false
	}
	for {
		if dec.PeekKind() == '}' {
			break
		}
		name, err := dec.ReadToken()
		if err != nil {
			return cut(err)
		}
		if name.Kind() != '"' || name.String() != "id" {
			if err := dec.SkipValue(); err != nil {
				return cut(err)
			}
			continue
		}
		if seen { // "id" twice: which one the client meant is unknown
			twice, id = true, nil
			if err := dec.SkipValue(); err != nil {
				return cut(err)
			}
			continue
		}
		seen = true
		v, err := dec.ReadValue()
		if err != nil {
			return cut(err)
		}
		rest := bytes.TrimLeft(raw[dec.InputOffset():], " \t\r\n")
		if len(rest) == 0 || rest[0] != ',' && rest[0] != '}' {
			return cut(io.ErrUnexpectedEOF) // a number may go on past the head
		}
		if k := v.Kind(); (k == '"' || k == '0') && utf8.Valid(v) {
			id = bytes.Clone(v)
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return cut(err)
	}
	if !whole {
		return id, false
	}
	if _, err := dec.ReadToken(); err != io.EOF { // nothing after the object
		return nil, false
	}
	return id, true
}

// tooLargeError is the error answering a message over the transport's size
// limit: with the request's id when the transport kept the message's head
// (ports.MessageTooLargeError) and the id is in it.
func tooLargeError(err error) *rpcError {
	var id jsontext.Value
	var tl *ports.MessageTooLargeError
	if errors.As(err, &tl) {
		id, _ = readID(tl.Head, false)
	}
	return newRPCError(id, domain.CodeInvalidRequest, "Invalid Request: "+err.Error(), nil)
}

func pointerData(err error) any {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && se.JSONPointer != "" {
		return map[string]any{"pointer": string(se.JSONPointer)}
	}
	return nil
}

// knownNames are the method names the engine reads, kept as strings so
// that unquote does not allocate one per message.
var knownNames = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"initialize", "ping", "logging/setLevel", "server/discover",
		"tools/list", "tools/call",
		"resources/list", "resources/templates/list", "resources/read",
		"resources/subscribe", "resources/unsubscribe", "subscriptions/listen",
		"prompts/list", "prompts/get", "completion/complete",
		"notifications/initialized", "notifications/cancelled",
		"notifications/progress", "notifications/roots/list_changed",
	} {
		m[s] = s
	}
	return m
}()

// unquote returns the Go string of a JSON string value.
func unquote(v jsontext.Value) string {
	if len(v) >= 2 {
		inner := v[1 : len(v)-1]
		if s, ok := knownNames[string(inner)]; ok {
			return s
		}
		simple := true
		for _, c := range inner {
			if c == '\\' || c < 0x20 || c >= 0x80 {
				simple = false
				break
			}
		}
		if simple {
			return string(inner)
		}
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return ""
	}
	return s
}

// appendResponseHead appends {"jsonrpc":"2.0","id":ID,"result": to b.
func appendResponseHead(b []byte, id jsontext.Value) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	return append(b, `,"result":`...)
}

// encodeError encodes an error response. An error whose request id could
// not be read (invalid JSON, a message that is not a JSON-RPC object, an id
// that is not a string or a number) has no id member at all, on every
// transport: MCP's JSONRPCErrorResponse makes id optional and its RequestId
// is a string or a number, never null (2025-11-25 and 2026-07-28 schema.ts;
// basic/index.mdx: error responses carry the request's id "except in error
// cases where the ID could not be read due a malformed request"), and the
// official TypeScript SDKs' message schemas accept an error without id but
// refuse one whose id is null. (Plain JSON-RPC 2.0 would write "id": null.)
func encodeError(e *rpcError) []byte {
	b := make([]byte, 0, 128)
	b = append(b, `{"jsonrpc":"2.0",`...)
	if e.id != nil {
		b = append(b, `"id":`...)
		b = append(b, e.id...)
		b = append(b, ',')
	}
	b = append(b, `"error":{"code":`...)
	b = strconv.AppendInt(b, int64(e.err.Code), 10)
	b = append(b, `,"message":`...)
	b = domain.AppendJSONString(b, e.err.Message)
	if e.err.Data != nil {
		data, err := json.Marshal(e.err.Data, json.Deterministic(true))
		if err == nil {
			b = append(b, `,"data":`...)
			b = append(b, data...)
		}
	}
	return append(b, "}}"...)
}

// encodeNotification encodes a notification from the server.
func encodeNotification(method string, params any) ([]byte, error) {
	b := make([]byte, 0, 96)
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = domain.AppendJSONString(b, method)
	if params != nil {
		p, err := json.Marshal(params, json.Deterministic(true))
		if err != nil {
			return nil, err
		}
		b = append(b, `,"params":`...)
		b = append(b, p...)
	}
	return append(b, '}'), nil
}
