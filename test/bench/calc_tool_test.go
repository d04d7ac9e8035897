package bench

import (
	"strings"
	"testing"
)

// TestCalculateTool checks that every implementation under benchmark serves
// the same calculate tool: the result, the tool error on division by zero,
// and whether input validation (the operation enum) runs before the handler.
// It is not run by the benchmark command (-run '^$').
func TestCalculateTool(t *testing.T) {
	impls := []struct {
		name      string
		start     startFunc
		validates bool // input validated against the schema before the handler
	}{
		{"Floor", startFloor, false},
		{"McpGo", startMcpGoDefault, false},
		{"McpGoValidated", startMcpGoValidated, true},
		{"GoSDK", startGoSDK, true},
		{"GoSDKStructured", startGoSDKStructured, true},
	}
	const (
		divZero   = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1,"b":0,"operation":"divide"}}}` + "\n"
		badEnum   = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1,"b":2,"operation":"modulo"}}}` + "\n"
		multiply  = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1.5,"b":3,"operation":"multiply"}}}` + "\n"
		handlerOp = `unknown operation` // text of calculate's own error
	)
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			c := connect(t, impl.start)
			defer c.close(t)

			call := func(req string) string {
				t.Helper()
				resp, err := c.roundTrip([]byte(req))
				if err != nil {
					t.Fatalf("round trip: %v", err)
				}
				return string(resp) // copies: resp is only valid until the next read
			}

			var addResp string
			for i := 0; i < 3; i++ {
				cl := callLines[i]
				resp := call(string(cl.line))
				if !strings.Contains(resp, string(cl.id)) || !strings.Contains(resp, string(wantResultText)) ||
					strings.Contains(resp, string(errorKey)) || strings.Contains(resp, string(isErrorTrue)) {
					t.Fatalf("add: unexpected response %s", resp)
				}
				addResp = resp
			}
			if resp := call(multiply); !strings.Contains(resp, `"text":"4.5"`) {
				t.Errorf("multiply: unexpected response %s", resp)
			}
			if resp := call(divZero); !strings.Contains(resp, string(isErrorTrue)) ||
				!strings.Contains(resp, errDivisionByZero.Error()) {
				t.Errorf("divide by zero: want a tool error (isError:true), got %s", resp)
			}
			resp := call(badEnum)
			if !strings.Contains(resp, string(isErrorTrue)) && !strings.Contains(resp, string(errorKey)) {
				t.Errorf("bad enum: want an error, got %s", resp)
			}
			if reached := strings.Contains(resp, handlerOp); reached == impl.validates {
				t.Errorf("bad enum: validates=%v but handler reached=%v: %s", impl.validates, reached, resp)
			}
			t.Logf("add -> %s", strings.TrimSpace(addResp))
			t.Logf("bad enum -> %s", strings.TrimSpace(resp))
		})
	}
}
