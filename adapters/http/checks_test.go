package mcphttp_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
)

// batchAnswer decodes the array a batch is answered with, by id.
func batchAnswer(t *testing.T, body string) map[string]json.RawMessage {
	t.Helper()
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(body), &items); err != nil {
		t.Fatalf("not a JSON array: %s", body)
	}
	out := make(map[string]json.RawMessage, len(items))
	for _, it := range items {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(it, &m); err != nil {
			t.Fatalf("not a JSON-RPC message: %s", it)
		}
		out[string(m.ID)] = it
	}
	return out
}

// A 2025-03-26 batch may not smuggle stateless-era requests past the
// request metadata checks: a tools/call carrying the 2026-07-28 _meta,
// sent with "Mcp-Method: tools/list" and an Mcp-Param-Region that does not
// match its argument, is refused in the batch (-32600, its own id), the
// tool does not run, and the batch's other members are served.
func TestBatchRefusesStatelessRequests(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-03-26")
	smuggled := statelessCall(7, "sql", `{"region":"us-west1","query":"DROP TABLE t"}`)
	batch := `[` + smuggled + `,` + callBody(8, "echo", `{"text":"kept"}`) + `]`
	h := mergeHdr(sessHdr(sid, "2025-03-26"), hdr{
		"Mcp-Method":       "tools/list",
		"Mcp-Param-Region": "eu-west1",
	})
	body := expect(t, ev.post(batch, h), http.StatusOK)
	got := batchAnswer(t, body)
	if len(got) != 2 {
		t.Fatalf("batch answer %s", body)
	}
	if code, id := rpcError(t, string(got["7"])); code != -32600 || id != "7" ||
		!strings.Contains(string(got["7"]), "stateless requests cannot be batched") {
		t.Fatalf("stateless member answered %s", got["7"])
	}
	if strings.Contains(body, `"ok"`) {
		t.Fatalf("the smuggled call ran: %s", body)
	}
	if !strings.Contains(string(got["8"]), "echo: kept") {
		t.Fatalf("the session member was not served: %s", got["8"])
	}

	// Even with headers that would match it, a stateless request cannot
	// share its POST with other messages.
	h = mergeHdr(sessHdr(sid, "2025-03-26"), hdr{"Mcp-Method": "tools/call", "Mcp-Name": "echo"})
	body = expect(t, ev.post(`[`+statelessCall(9, "echo", `{"text":"x"}`)+`]`, h), http.StatusOK)
	if code, id := rpcError(t, string(batchAnswer(t, body)["9"])); code != -32600 || id != "9" {
		t.Fatalf("batch answer %s", body)
	}

	// A stateless notification in a batch is accepted and has no effect on
	// the session, as outside a batch.
	note := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	expect(t, ev.post(`[`+note+`]`, sessHdr(sid, "2025-03-26")), http.StatusAccepted)
	// The session still serves batches.
	body = expect(t, ev.post(`[`+callBody(10, "echo", `{"text":"after"}`)+`]`, sessHdr(sid, "2025-03-26")), http.StatusOK)
	if !strings.Contains(body, "echo: after") {
		t.Fatalf("batch answer %s", body)
	}
}

// Mcp-Param-* integers must be in the canonical decimal form a client
// produces (2026-07-28, "Value Encoding": "Convert to decimal string
// representation (e.g., 42, -7)"), so that a gateway comparing strings sees
// the integer the tool gets. The body may write the integer in any JSON
// form: it is compared as a number.
func TestMcpParamIntegerCanonical(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	base := statelessHdr("tools/call", "sql")
	post := func(id int, count, header string) *http.Response {
		t.Helper()
		h := mergeHdr(base, hdr{"Mcp-Param-Count": header})
		return ev.post(statelessCall(id, "sql", `{"count":`+count+`}`), h)
	}
	accepted := []struct{ body, header string }{
		{"42", "42"},
		{"-7", "-7"},
		{"0", "0"},
		{"-0", "0"},
		{"42.0", "42"},
		{"4.2e1", "42"},
		{"420E-1", "42"},
		{"9007199254740991", "9007199254740991"},
		{"-9007199254740991", "-9007199254740991"},
	}
	for i, c := range accepted {
		expect(t, post(i+1, c.body, c.header), http.StatusOK, `"ok"`)
	}
	rejected := []struct{ body, header string }{
		{"42", "84/2"},
		{"42", "0x2a"},
		{"42", "0b101010"},
		{"42", "0o52"},
		{"42", "4.2e1"},
		{"42", "42.0"},
		{"42", "+42"},
		{"42", "042"},
		{"42", "=?base64?MHgyYQ==?="}, // "0x2a"
		{"42", "1e999999"},
		{"42", strings.Repeat("9", 100000)},
		{"0", "-0"},
		{"42", "43"},
		{"1e999999", "1"},
		{"42.5", "42"},
		{"9007199254740992", "9007199254740992"},
	}
	for i, c := range rejected {
		got := expect(t, post(100+i, c.body, c.header), http.StatusBadRequest)
		if code, id := rpcError(t, got); code != -32020 {
			t.Fatalf("count %s, header %q: body %s", c.body, c.header, got)
		} else if want := strconv.Itoa(100 + i); id != want {
			t.Fatalf("count %s, header %q: id %s, want %s", c.body, c.header, id, want)
		}
	}
	// Strings are compared as they are: "0x2a" for a string argument is
	// the string "0x2a".
	h := mergeHdr(base, hdr{"Mcp-Param-Region": "0x2a"})
	expect(t, ev.post(statelessCall(200, "sql", `{"region":"0x2a"}`), h), http.StatusOK, `"ok"`)
	h = mergeHdr(base, hdr{"Mcp-Param-Region": "42"})
	expect(t, ev.post(statelessCall(201, "sql", `{"region":"42.0"}`), h), http.StatusBadRequest)
}

// Every error whose request id cannot be read has the same shape: no id
// member (MCP's JSONRPCErrorResponse makes id optional and never null), from
// the engine (invalid JSON, a bad id) and from the transport itself (415,
// 406, a batch outside a 2025-03-26 session).
func TestUnreadableIDHasNoIDMember(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	cases := []refusedCase{
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,`, nil, 400, -32700},
		{"not an object", `42`, nil, 400, -32600},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, nil, 400, -32600},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, nil, 400, -32600},
		{"duplicate member", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, nil, 400, -32600},
		{"content type", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, hdr{"Content-Type": "text/plain"}, 415, -32600},
		{"accept", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, hdr{"Accept": "text/html"}, 406, -32600},
		{"batch without session", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, 400, -32600},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := expect(t, ev.post(c.body, c.h), c.status)
			assertNoID(t, body, c.code)
		})
	}
	// Inside a batch, a member whose id cannot be read is answered the same.
	sid := ev.initialize("2025-03-26")
	body := expect(t, ev.post(`[42,{"jsonrpc":"2.0","id":1,"method":"ping"}]`, sessHdr(sid, "2025-03-26")), http.StatusOK)
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(body), &items); err != nil || len(items) != 2 {
		t.Fatalf("batch answer %s", body)
	}
	assertNoID(t, string(items[0]), -32600)
}

// assertNoID checks that body is a JSON-RPC error with the given code and
// no id member at all.
func assertNoID(t *testing.T, body string, code int) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not a JSON object: %s", body)
	}
	if _, has := m["id"]; has {
		t.Fatalf("an error with an unreadable id has an id member: %s", body)
	}
	var e struct{ Code int }
	if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != code || string(m["jsonrpc"]) != `"2.0"` {
		t.Fatalf("body %s, want error code %d", body, code)
	}
}
