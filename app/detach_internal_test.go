package app

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
	"weak"
)

// Detach gives the message a transport inspected, decoded again from a
// copy of what it refers to: the same message, no longer tied to the
// buffer (padding beside the params included), which can then be freed.
func TestDetach(t *testing.T) {
	pad := strings.Repeat(" ", 4096)
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2]},"_meta":{"progressToken":"p"}}}`,
		`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"params":{"uri":"file:///a"},"junk":"` + strings.Repeat("j", 1000) + `","method":"resources\/read","id":1,"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}`,
		`{"jsonrpc":"2.0","id":5,"method":"caf\u00e9","params":{}}`,
	} {
		padded := pad + raw + pad
		want := Inspect([]byte(padded))
		got := want.Detach()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s\ndetached %+v\nwant     %+v", raw, got, want)
		}
		if n := got.RetainedSize(); n >= len(raw) || n != want.RetainedSize() {
			t.Fatalf("%s: RetainedSize %d (inspected: %d), the message has %d bytes", raw, n, want.RetainedSize(), len(raw))
		}
	}
	// Responses and invalid messages are returned as they are.
	for _, raw := range []string{`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1`} {
		mi := Inspect([]byte(raw))
		if got := mi.Detach(); !reflect.DeepEqual(got, mi) {
			t.Fatalf("%s: detached %+v", raw, got)
		}
	}
}

// Once detached, nothing of the message refers to the buffer it was
// inspected from: the buffer is freed while the message lives. Without
// Detach it is not (which shows that the test can see the difference).
func TestDetachFreesTheBuffer(t *testing.T) {
	for _, detach := range []bool{true, false} {
		mi, buf := inspectPadded(detach)
		runtime.GC()
		if freed := buf.Value() == nil; freed != detach {
			t.Fatalf("detach %t: buffer freed %t", detach, freed)
		}
		if mi.Name != "x" || string(mi.Arguments) != `{"a":1}` || mi.RetainedSize() > 100 {
			t.Fatalf("detach %t: %+v", detach, mi)
		}
		runtime.KeepAlive(mi)
	}
}

// inspectPadded inspects a call padded to 1 MiB, detached or not, and
// returns it with a weak pointer to its buffer.
func inspectPadded(detach bool) (MessageInfo, weak.Pointer[byte]) {
	raw := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":1}}}` + strings.Repeat(" ", 1<<20))
	mi := Inspect(raw)
	if detach {
		mi = mi.Detach()
	}
	return mi, weak.Make(&raw[0])
}
