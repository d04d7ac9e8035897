package app_test

import (
	"encoding/json"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"github.com/hexmcp/hexmcp/app"
)

// idCases are messages the strict decoder refuses although their id can be
// read: the error must carry that id (issue 10, "No lost ids").
var idCases = []struct {
	name, msg, id string
	code          int
}{
	{"duplicate name in params", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","name":"b"}}`, `7`, -32600},
	{"duplicate name deep in params", `{"jsonrpc":"2.0","id":"req-1","method":"tools/call","params":{"name":"add","arguments":{"a":1,"a":2,"b":3}}}`, `"req-1"`, -32600},
	{"duplicate name in _meta", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"_meta":{"k":1,"k":2}}}`, `8`, -32600},
	{"id after params", `{"jsonrpc":"2.0","method":"ping","params":{"x":1,"x":2},"id":9}`, `9`, -32600},
	{"duplicate top-level method", `{"jsonrpc":"2.0","id":10,"method":"ping","method":"ping"}`, `10`, -32600},
	{"escaped id name", `{"jsonrpc":"2.0","\u0069d":11,"method":"ping","params":{"x":1,"x":2}}`, `11`, -32600},
	{"fractional id", `{"jsonrpc":"2.0","id":1.5e3,"method":"ping","params":{"x":1,"x":2}}`, `1.5e3`, -32600},
	{"invalid UTF-8 in params", "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\xfe\"}}", `12`, -32700},
	{"invalid UTF-8 in a params name", "{\"jsonrpc\":\"2.0\",\"id\":\"u\",\"method\":\"ping\",\"params\":{\"\xc3\":1}}", `"u"`, -32700},
}

// noIDCases are messages whose id truly cannot be read: their error has no
// id member.
var noIDCases = []struct {
	name, msg string
	code      int
}{
	{"id twice", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, -32600},
	{"id twice, dup in params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":1,"x":2},"id":1}`, -32600},
	{"malformed JSON after the id", `{"jsonrpc":"2.0","id":1,"method":"ping",}`, -32700},
	{"truncated after the id", `{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700},
	{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":1,"x":2}} x`, -32600},
	{"id bool and a duplicate", `{"jsonrpc":"2.0","id":true,"method":"ping","params":{"x":1,"x":2}}`, -32600},
	{"id object and a duplicate", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping","params":{"x":1,"x":2}}`, -32600},
	{"id with invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}", -32700},
	{"no id, duplicate", `{"jsonrpc":"2.0","method":"ping","params":{"x":1,"x":2}}`, -32600},
}

// refusedWith sends msg on c and reads its answer, which must be an error
// with code want; it returns the answer's members and its text.
func refusedWith(t *testing.T, c *client, msg string, want int) (map[string]json.RawMessage, string) {
	t.Helper()
	c.send(msg)
	resp := c.recv()
	m, code := idError(t, resp)
	if code != want {
		t.Fatalf("code %d, want %d: %s", code, want, resp)
	}
	return m, resp
}

func idError(t *testing.T, resp string) (map[string]json.RawMessage, int) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(resp), &m); err != nil {
		t.Fatalf("not JSON: %q", resp)
	}
	var e struct {
		Code int `json:"code"`
	}
	if err := json.Unmarshal(m["error"], &e); err != nil {
		t.Fatalf("not an error: %s", resp)
	}
	return m, e.Code
}

func TestRefusedRequestAnswersItsID(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, addTool()))
	for _, tc := range idCases {
		t.Run(tc.name, func(t *testing.T) {
			m, resp := refusedWith(t, c, tc.msg, tc.code)
			if got := string(m["id"]); got != tc.id {
				t.Fatalf("id %q, want %s: %s", got, tc.id, resp)
			}
			// The connection goes on.
			equalJSON(t, c.roundTrip(ping), pingResp)
		})
	}
}

func TestUnreadableIDStaysAbsent(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}))
	for _, tc := range noIDCases {
		t.Run(tc.name, func(t *testing.T) {
			m, resp := refusedWith(t, c, tc.msg, tc.code)
			if id, ok := m["id"]; ok {
				t.Fatalf("id member %s in %s", id, resp)
			}
			equalJSON(t, c.roundTrip(ping), pingResp)
		})
	}
}

// Inspect, which the HTTP adapter uses, reports the id too, and
// HandleMessage answers it.
func TestInspectReportsRecoveredID(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()})
	for _, tc := range idCases {
		mi := app.Inspect([]byte(tc.msg))
		if mi.Kind != app.KindInvalid || string(mi.ID) != tc.id {
			t.Errorf("%s: Inspect = kind %d id %s, want invalid with id %s", tc.name, mi.Kind, mi.ID, tc.id)
		}
		resp := string(e.HandleMessage(t.Context(), nil, []byte(tc.msg), nil))
		m, code := idError(t, resp)
		if code != tc.code || string(m["id"]) != tc.id {
			t.Errorf("%s: HandleMessage = %s", tc.name, resp)
		}
		if ans := e.Answer(t.Context(), nil, mi, nil); !ans.IsError || ans.Code != tc.code || string(ans.Response) != resp {
			t.Errorf("%s: Answer = %+v", tc.name, ans)
		}
	}
	for _, tc := range noIDCases {
		if mi := app.Inspect([]byte(tc.msg)); mi.ID != nil {
			t.Errorf("%s: Inspect id %s, want none", tc.name, mi.ID)
		}
	}
}
