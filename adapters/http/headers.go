package mcphttp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/internal/xmcpheader"
)

// Header names of the Streamable HTTP transport. net/http matches header
// names case-insensitively, as the spec requires.
const (
	// HeaderSessionID carries the handshake-era session id.
	HeaderSessionID = "Mcp-Session-Id"
	// HeaderProtocolVersion carries the protocol revision of a request.
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	// HeaderMethod mirrors the JSON-RPC method (2026-07-28).
	HeaderMethod = "Mcp-Method"
	// HeaderName mirrors params.name or params.uri (2026-07-28).
	HeaderName = "Mcp-Name"
	// HeaderParamPrefix starts the headers that mirror tool arguments
	// marked with "x-mcp-header" (2026-07-28).
	HeaderParamPrefix = "Mcp-Param-"
	// headerLastEventID asks to resume an SSE stream.
	headerLastEventID = "Last-Event-Id"
)

// accepts is what an Accept header allows.
type accepts struct{ json, sse bool }

// parseAccept reads Accept headers leniently: no header at all allows both
// types; */*, application/* and text/* count; q=0 excludes a range.
func parseAccept(values []string) accepts {
	var a accepts
	seen := false
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			seen = true
			mt, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok && isZeroQ(q) {
				continue
			}
			switch mt {
			case "*/*":
				a.json, a.sse = true, true
			case "application/*", "application/json":
				a.json = true
			case "text/*", "text/event-stream":
				a.sse = true
			}
		}
	}
	if !seen {
		return accepts{json: true, sse: true}
	}
	return a
}

func isZeroQ(q string) bool {
	f, err := strconv.ParseFloat(strings.TrimSpace(q), 64)
	return err == nil && f == 0
}

// isJSONContentType reports whether a Content-Type names JSON.
func isJSONContentType(v string) bool {
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == "application/json"
}

// single returns the one value of a header; ok is false when the header is
// absent, many is true when it is repeated.
func single(h http.Header, name string) (v string, ok, many bool) {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return "", false, false
	case 1:
		return vs[0], true, false
	}
	return vs[0], true, true
}

// Base64 sentinel of header values (2026-07-28, "Value Encoding").
const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// decodeHeaderValue decodes an Mcp-Name or Mcp-Param-* value: the base64
// sentinel form, or plain text of visible ASCII, space and tab. ok is false
// for a value with invalid characters or a broken sentinel. The base64 form
// is the standard alphabet with its padding, in canonical form (RFC 4648,
// section 4): unpadded input is invalid (the SEP-2243 test-case table
// rejects "=?base64?SGVsbG8?=").
func decodeHeaderValue(v string) (string, bool) {
	if len(v) >= len(sentinelPrefix)+len(sentinelSuffix) && strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix) {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)])
		if err != nil || !utf8.Valid(b) {
			return "", false
		}
		return string(b), true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return "", false
		}
	}
	return v, true
}

// checkStateless validates the request metadata headers of a stateless-era
// request against its body (2026-07-28 Streamable HTTP, "Request Metadata"
// and "Server Validation"): MCP-Protocol-Version, Mcp-Method, Mcp-Name and
// the Mcp-Param-* headers of the tool's x-mcp-header arguments. Any missing,
// malformed or mismatching header is a 400 with -32020 (HeaderMismatch).
func (h *Handler) checkStateless(r *http.Request, mi exchange.Message) *rpcErr {
	id := mi.ID
	pv, ok, many := single(r.Header, HeaderProtocolVersion)
	switch {
	case !ok:
		return headerMismatch(id, "the MCP-Protocol-Version header is required")
	case many:
		return headerMismatch(id, "the MCP-Protocol-Version header is repeated")
	case pv != mi.ProtocolVersion:
		return headerMismatch(id, "the MCP-Protocol-Version header does not match _meta[\"io.modelcontextprotocol/protocolVersion\"] of the body")
	}
	m, ok, many := single(r.Header, HeaderMethod)
	switch {
	case !ok:
		return headerMismatch(id, "the Mcp-Method header is required")
	case many:
		return headerMismatch(id, "the Mcp-Method header is repeated")
	case m != mi.Method:
		return headerMismatch(id, "the Mcp-Method header does not match the method of the body")
	}
	var want, what string
	spec, _ := h.x.Method(mi.Method)
	switch spec.NameParam {
	case "name":
		want, what = mi.Name, "params.name"
	case "uri":
		want, what = mi.URI, "params.uri"
	default:
		return nil
	}
	n, ok, many := single(r.Header, HeaderName)
	if !ok {
		return headerMismatch(id, "the Mcp-Name header is required for "+mi.Method)
	}
	got, valid := decodeHeaderValue(n)
	switch {
	case many:
		return headerMismatch(id, "the Mcp-Name header is repeated")
	case !valid:
		return headerMismatch(id, "the Mcp-Name header has invalid characters or a malformed base64 value")
	case got != want:
		return headerMismatch(id, "the Mcp-Name header does not match "+what+" of the body")
	}
	if spec.ParamHeaders {
		return h.checkParams(r, mi)
	}
	return nil
}

// checkParams validates the Mcp-Param-{Name} headers of a tools/call
// against the arguments the tool's input schema marks with x-mcp-header: a
// value present (and not null) in the arguments needs its header, equal
// after decoding (a number argument needs the header in canonical integer
// form, see [isCanonicalInteger], and is compared as a number); an absent or
// null value needs the header to be absent. Headers the tool does not declare are
// ignored. An unknown tool is left to the engine.
func (h *Handler) checkParams(r *http.Request, mi exchange.Message) *rpcErr {
	tool, ok := h.x.Tool(mi.Name)
	if !ok {
		return nil
	}
	params := h.params.get(tool)
	if len(params) == 0 {
		return nil
	}
	var args map[string]any
	if len(mi.Arguments) > 0 {
		dec := json.NewDecoder(bytes.NewReader(mi.Arguments))
		dec.UseNumber()
		_ = dec.Decode(&args) // not an object: every value is absent; the engine rejects it
	}
	for _, p := range params {
		header := HeaderParamPrefix + p.Name
		hv, present, many := single(r.Header, header)
		val, has := xmcpheader.ArgumentAt(args, p.Path)
		if has && val == nil { // null: the client must omit the header
			has = false
		}
		if !has {
			if present {
				return headerMismatch(mi.ID, "the "+header+" header is sent but the argument "+strings.Join(p.Path, ".")+" is absent")
			}
			continue
		}
		if !present {
			return headerMismatch(mi.ID, "the "+header+" header is required: the tool mirrors argument "+strings.Join(p.Path, ".")+" into it")
		}
		got, valid := decodeHeaderValue(hv)
		switch {
		case many:
			return headerMismatch(mi.ID, "the "+header+" header is repeated")
		case !valid:
			return headerMismatch(mi.ID, "the "+header+" header has invalid characters or a malformed base64 value")
		}
		if _, isNum := val.(json.Number); isNum && !isCanonicalInteger(got) {
			return headerMismatch(mi.ID, "the "+header+" header must carry argument "+strings.Join(p.Path, ".")+
				" as a decimal integer in canonical form (an optional '-', no leading zeros, no fraction or exponent), at most "+
				strconv.Itoa(maxParamIntegerBytes)+" bytes, within ±(2^53-1)")
		}
		if !sameValue(got, val) {
			return headerMismatch(mi.ID, "the "+header+" header does not match argument "+strings.Join(p.Path, "."))
		}
	}
	return nil
}

// sameValue compares a decoded header value with an argument: strings as
// they are, booleans as "true"/"false", numbers as [sameInteger] does.
// Objects and arrays never match (x-mcp-header is for primitives).
func sameValue(header string, v any) bool {
	switch v := v.(type) {
	case string:
		return header == v
	case bool:
		if v {
			return header == "true"
		}
		return header == "false"
	case json.Number:
		return isCanonicalInteger(header) && sameInteger(header, v)
	}
	return false
}

// maxSafeInteger is the largest integer an x-mcp-header argument may hold
// (2026-07-28 Streamable HTTP, "Schema Extension": "Integer values MUST be
// within the safe range for JavaScript (-2^53+1 to 2^53-1)").
const maxSafeInteger = 1<<53 - 1

// maxParamIntegerBytes is the longest Mcp-Param-* value that can carry an
// integer: len("-9007199254740991"). Longer values are refused before
// anything else reads them.
const maxParamIntegerBytes = 17

// isCanonicalInteger reports whether a decoded Mcp-Param-* value is an
// integer in the one form a client produces: "Convert to decimal string
// representation (e.g., 42, -7)" (2026-07-28 Streamable HTTP, "Value
// Encoding"). That is the RFC 8259 int production, -?(0|[1-9][0-9]*),
// without "-0", within the safe range. A gateway comparing strings then
// sees the very integer the tool gets: "0x2a", "84/2", "+42", "042",
// "4.2e1" and "42.0" are all refused rather than read as 42.
func isCanonicalInteger(s string) bool {
	if len(s) == 0 || len(s) > maxParamIntegerBytes {
		return false
	}
	digits := s
	if digits[0] == '-' {
		digits = digits[1:]
	}
	switch {
	case digits == "":
		return false
	case digits[0] == '0':
		return s == "0" // no leading zeros, and no "-0"
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64) // at most 17 bytes: no overflow
	return err == nil && n >= -maxSafeInteger && n <= maxSafeInteger
}

// sameInteger reports whether the canonical integer header equals the
// number the body carries, compared as numbers: a body may write the
// integer 42 as 42, 42.0 or 4.2e1 (JSON Schema counts all three as an
// integer, and the specification asks servers to compare integers
// numerically), and each matches the header "42". The body number is read
// exactly, in one pass and without big-number arithmetic: a value that is
// not an integer, or has more digits than a safe integer, matches nothing.
func sameInteger(header string, body json.Number) bool {
	c, ok := canonicalInteger(string(body))
	return ok && c == header
}

// canonicalInteger returns the canonical decimal form of the JSON number
// s when its value is an integer of at most 16 digits (the safe range),
// and false otherwise (a fraction, a larger value, or not a JSON number).
func canonicalInteger(s string) (string, bool) {
	const maxDigits = 16 // len("9007199254740991")
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[:i]
	if intPart == "" || len(intPart) > 1 && intPart[0] == '0' {
		return "", false
	}
	var frac string
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if frac = s[i+1 : j]; frac == "" {
			return "", false
		}
		i = j
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return "", false
		}
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return "", false
			}
			if exp < 1<<30 { // saturate: such exponents match nothing anyway
				exp = exp*10 + int(c-'0')
			}
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return "", false
	}
	// The value is digits × 10^exp, digits without leading zeros.
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	if digits == "" {
		return "0", true // any zero, -0 and 0e-999 included
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	digits = trimmed
	if exp < 0 || len(digits)+exp > maxDigits {
		return "", false
	}
	out := digits + strings.Repeat("0", exp)
	if neg {
		out = "-" + out
	}
	return out, true
}

// paramCache keeps each tool definition's header parameters. Tools are
// keyed by the definition the registry holds, which changes when a tool is
// registered again; the cache is emptied when it grows past a bound.
type paramCache struct {
	mu sync.Mutex
	m  map[*domain.Tool][]xmcpheader.Param
}

const paramCacheMax = 4096

func (c *paramCache) get(t *domain.Tool) []xmcpheader.Param {
	c.mu.Lock()
	ps, ok := c.m[t]
	c.mu.Unlock()
	if ok {
		return ps
	}
	ps = xmcpheader.Params(t.InputSchema)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= paramCacheMax {
		c.m = make(map[*domain.Tool][]xmcpheader.Param)
	}
	c.m[t] = ps
	c.mu.Unlock()
	return ps
}
