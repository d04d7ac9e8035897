package mcphttp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
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
	// HeaderLastEventID asks to resume an SSE stream.
	HeaderLastEventID = "Last-Event-Id"
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
func (h *Handler) checkStateless(r *http.Request, mi app.MessageInfo) *rpcErr {
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
	switch mi.Method {
	case "tools/call", "prompts/get":
		want, what = mi.Name, "params.name"
	case "resources/read":
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
	if mi.Method == "tools/call" {
		return h.checkParams(r, mi)
	}
	return nil
}

// checkParams validates the Mcp-Param-{Name} headers of a tools/call
// against the arguments the tool's input schema marks with x-mcp-header: a
// value present (and not null) in the arguments needs its header, equal
// after decoding (integers compared as numbers); an absent or null value
// needs the header to be absent. Headers the tool does not declare are
// ignored. An unknown tool is left to the engine.
func (h *Handler) checkParams(r *http.Request, mi app.MessageInfo) *rpcErr {
	tool, ok := h.e.LookupTool(mi.Name)
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
		header := HeaderParamPrefix + p.name
		hv, present, many := single(r.Header, header)
		val, has := argumentAt(args, p.path)
		if has && val == nil { // null: the client must omit the header
			has = false
		}
		if !has {
			if present {
				return headerMismatch(mi.ID, "the "+header+" header is sent but the argument "+strings.Join(p.path, ".")+" is absent")
			}
			continue
		}
		if !present {
			return headerMismatch(mi.ID, "the "+header+" header is required: the tool mirrors argument "+strings.Join(p.path, ".")+" into it")
		}
		got, valid := decodeHeaderValue(hv)
		switch {
		case many:
			return headerMismatch(mi.ID, "the "+header+" header is repeated")
		case !valid:
			return headerMismatch(mi.ID, "the "+header+" header has invalid characters or a malformed base64 value")
		case !sameValue(got, val):
			return headerMismatch(mi.ID, "the "+header+" header does not match argument "+strings.Join(p.path, "."))
		}
	}
	return nil
}

// argumentAt reads the value at a chain of property names.
func argumentAt(args map[string]any, path []string) (any, bool) {
	var cur any = args
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// sameValue compares a decoded header value with an argument: strings as
// they are, booleans as "true"/"false", numbers numerically ("42.0" equals
// 42). Objects and arrays never match (x-mcp-header is for primitives).
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
		a, ok1 := new(big.Rat).SetString(header)
		b, ok2 := new(big.Rat).SetString(v.String())
		return ok1 && ok2 && a.Cmp(b) == 0
	}
	return false
}

// headerParam is one x-mcp-header annotation of an input schema.
type headerParam struct {
	name string   // the {Name} of Mcp-Param-{Name}
	path []string // the chain of property names that leads to the argument
}

// paramCache keeps each tool definition's header parameters. Tools are
// keyed by the definition the registry holds, which changes when a tool is
// registered again; the cache is emptied when it grows past a bound.
type paramCache struct {
	mu sync.Mutex
	m  map[*domain.Tool][]headerParam
}

const paramCacheMax = 4096

func (c *paramCache) get(t *domain.Tool) []headerParam {
	c.mu.Lock()
	ps, ok := c.m[t]
	c.mu.Unlock()
	if ok {
		return ps
	}
	ps = headerParams(t.InputSchema)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= paramCacheMax {
		c.m = make(map[*domain.Tool][]headerParam)
	}
	c.m[t] = ps
	c.mu.Unlock()
	return ps
}

// headerParams finds the x-mcp-header annotations of a schema that are
// statically reachable: through a chain of "properties" keys only (2026-07-28
// Streamable HTTP, "Schema Extension"). Annotations anywhere else, and
// values that are not an HTTP token, are not header parameters.
func headerParams(schema json.RawMessage) []headerParam {
	var root map[string]any
	if len(schema) == 0 || json.Unmarshal(schema, &root) != nil {
		return nil
	}
	var out []headerParam
	var walk func(node map[string]any, path []string)
	walk = func(node map[string]any, path []string) {
		props, ok := node["properties"].(map[string]any)
		if !ok {
			return
		}
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sub, ok := props[k].(map[string]any)
			if !ok {
				continue
			}
			p := append(slices.Clip(path), k)
			if name, ok := sub["x-mcp-header"].(string); ok && isToken(name) {
				out = append(out, headerParam{name: name, path: p})
			}
			walk(sub, p)
		}
	}
	walk(root, nil)
	return out
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
