package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/app"
)

// Two request ids that are the same number, however written (1234567 and
// 1.234567e6, 100 and 1e2), are one id: a second request with it while the
// first is in flight is refused, and a cancellation that names it in
// another form cancels the first.
func TestSameNumberIsSameID(t *testing.T) {
	for _, tc := range []struct{ first, second string }{
		{"1234567", "1.234567e6"}, {"1234567", "1234567.0"}, {"10000000", "1e7"},
		{"123456", "123456.0"}, {"100", "1e2"}, {"7", "7.0"}, {"-5", "-5e0"}, {"-0", "-0.0"},
	} {
		t.Run(tc.first+" "+tc.second, func(t *testing.T) {
			release := make(chan struct{})
			block := app.NewTool(func(ctx context.Context) (string, error) {
				select {
				case <-release:
					return "released", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}, app.WithName("block"))
			c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, block))
			c.initialize("2025-11-25")
			c.send(`{"jsonrpc":"2.0","id":` + tc.first + `,"method":"tools/call","params":{"name":"block"}}`)
			resp := c.roundTrip(`{"jsonrpc":"2.0","id":` + tc.second + `,"method":"tools/call","params":{"name":"block"}}`)
			if !strings.Contains(resp, "a request with this id is already in progress") {
				t.Fatalf("id %s while %s is in flight: %s", tc.second, tc.first, resp)
			}
			// Cancelled by the other form: no response comes for it.
			c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + tc.second + `}}`)
			equalJSON(t, c.roundTrip(ping), pingResp)
			close(release)
			c.expectNothing()
			// The id is free again.
			c.send(`{"jsonrpc":"2.0","id":` + tc.second + `,"method":"tools/call","params":{"name":"block"}}`)
			equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":`+tc.second+`,"result":{"content":[{"type":"text","text":"released"}]}}`)
		})
	}
}
