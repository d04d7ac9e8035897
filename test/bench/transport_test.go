package bench

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"
)

// TestHTTPTransports checks, for every server and era of the HTTP
// benchmarks, that the harness gets the right answers through the
// transport: the result, the tool error on division by zero, and one
// connection for everything. It is not run by the benchmark command.
func TestHTTPTransports(t *testing.T) {
	impls := []struct {
		name string
		new  func(era string) httpHandlerFunc
	}{
		{"Floor", func(string) httpHandlerFunc { return newHTTPFloor }},
		{"HexMCP", func(string) httpHandlerFunc { return newHTTPHexMCP }},
		{"GoSDK", newHTTPGoSDK},
		{"McpGo", func(string) httpHandlerFunc { return newHTTPMcpGo(false) }},
		{"McpGoValidated", func(string) httpHandlerFunc { return newHTTPMcpGo(true) }},
	}
	for _, impl := range impls {
		for _, era := range httpEras {
			t.Run(impl.name+"/"+era.name, func(t *testing.T) {
				c := connectHTTP(t, era, impl.new(era.name))
				defer c.close(t)
				for i := range 3 {
					if err := c.call(&era.calls[i]); err != nil {
						t.Fatal(err)
					}
				}
				status, hdr, resp, err := c.post(eraCall(era, 7, `{"a":1,"b":0,"operation":"divide"}`), c.header)
				if err != nil || status != http.StatusOK || !bytes.Contains(resp, isErrorTrue) ||
					!bytes.Contains(resp, []byte(errDivisionByZero.Error())) {
					t.Errorf("divide by zero: want a tool error, got status %d, err %v: %s", status, err, resp)
				}
				t.Logf("%s -> %d (session %q): %s", hdr.Get("Content-Type"), status, c.session, resp)
				if n := c.conns.Load(); n != 1 {
					t.Errorf("%d connections, want 1", n)
				}
			})
		}
	}
}

// TestHTTPGoSDKStatefulRefusesStateless documents why the 2026-07-28
// sub-benchmark of go-sdk uses its stateless handler: the stateful one
// refuses a request of that revision.
func TestHTTPGoSDKStatefulRefusesStateless(t *testing.T) {
	era := httpEras[1]
	c := connectHTTP(t, era, newHTTPGoSDK(eraHandshake)) // stateful handler
	defer c.close(t)
	status, _, resp, err := c.post(era.calls[0].line, era.header)
	if err != nil {
		t.Fatal(err)
	}
	if status == http.StatusOK && bytes.Contains(resp, wantResultText) {
		t.Fatalf("the stateful go-sdk handler served a 2026-07-28 request: %s", resp)
	}
	t.Logf("stateful go-sdk handler, 2026-07-28 request -> %d %s", status, bytes.TrimSpace(resp))
}

// TestWSTransports does the same for the WebSocket servers.
func TestWSTransports(t *testing.T) {
	impls := []struct {
		name string
		new  httpHandlerFunc
	}{
		{"Floor", newWSFloor},
		{"HexMCP", newWSHexMCP},
	}
	for _, impl := range impls {
		for _, era := range httpEras {
			t.Run(impl.name+"/"+era.name, func(t *testing.T) {
				c := connectWS(t, era, impl.new)
				defer c.close(t)
				for i := range 3 {
					if err := c.call(&era.calls[i]); err != nil {
						t.Fatal(err)
					}
				}
				resp, err := c.roundTrip(eraCall(era, 7, `{"a":1,"b":0,"operation":"divide"}`))
				if err != nil || !bytes.Contains(resp, isErrorTrue) || !bytes.Contains(resp, []byte(errDivisionByZero.Error())) {
					t.Errorf("divide by zero: want a tool error, got err %v: %s", err, resp)
				}
				t.Logf("%s", resp)
			})
		}
	}
}

// eraCall encodes a tools/call of calculate with the given id and arguments
// as the era's client sends it.
func eraCall(era *httpEra, id int, args string) []byte {
	meta := ""
	if !era.handshake {
		meta = "," + statelessMeta
	}
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"calculate","arguments":` + args + meta + `}}`)
}
