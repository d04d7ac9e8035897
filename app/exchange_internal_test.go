package app

import (
	"reflect"
	"testing"
)

// A message crosses the exchange port twice (Inspect hands it to the
// transport, Serve takes it back): it comes back as the engine decoded it,
// every part of it, whatever its kind, so that serving it is serving what
// was inspected.
func TestExchangeMessageRoundTrip(t *testing.T) {
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2]},"_meta":{"progressToken":"p"}}}`,
		`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":null}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":7}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a","name":"b"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"r","result":{"a":1}}`,
		`{"jsonrpc":"2.0","id":"e","error":{"code":-1,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":6,"Method":"x"}`,
		`{"jsonrpc":"2.0","method":"x","params":"no"}`,
		`{bad`,
		``,
	} {
		mi := inspect([]byte(raw))
		x := mi.toExchange()
		if back := fromExchange(x); !reflect.DeepEqual(back, mi) {
			t.Errorf("%s: through the port\n got %#v\nwant %#v", raw, back, mi)
		}
		if !reflect.DeepEqual(x.Info, mi.Info) {
			t.Errorf("%s: the transport sees %+v, the engine %+v", raw, x.Info, mi.Info)
		}
		if x.RetainedSize() != mi.RetainedSize() {
			t.Errorf("%s: RetainedSize %d through the port, %d in the engine", raw, x.RetainedSize(), mi.RetainedSize())
		}
	}
}
