package bench

import (
	"bytes"
	"testing"
)

// TestFairFloors checks that each fair floor writes byte for byte the
// response this SDK writes for the same request, so that the ratio of the
// SDK's benchmark to its floor measures the SDK's overhead and not a
// smaller answer: stdio lines are compared whole (newline included), so are
// WebSocket messages (BenchmarkWSFloor and BenchmarkWSHexMCP), HTTP
// bodies without the trailing newline that encoding/json's Encoder adds
// (the SDK's body has none; both are application/json). The requests are
// the benchmarks' calls plus a multiply (text "4.5") and a division by zero
// (a tool error).
func TestFairFloors(t *testing.T) {
	requests := func(era *httpEra) [][]byte {
		return [][]byte{
			era.calls[0].line,
			era.calls[1].line,
			eraCall(era, 9, `{"a":1.5,"b":3,"operation":"multiply"}`),
			eraCall(era, 7, `{"a":1,"b":0,"operation":"divide"}`),
		}
	}
	stdio := []struct {
		name       string
		floor, sdk startFunc
	}{
		{"Floor/HexMCP", startFloor, startHexMCP(false)},
		{"FloorStructured/HexMCPStructured", startFloorStructured, startHexMCP(true)},
	}
	for _, c := range stdio {
		t.Run("stdio/"+c.name, func(t *testing.T) {
			floor, sdk := connect(t, c.floor), connect(t, c.sdk)
			defer floor.close(t)
			defer sdk.close(t)
			for _, req := range requests(httpEras[0]) {
				line := append(bytes.Clone(req), '\n')
				sameAnswer(t, req, func() ([]byte, error) { return sdk.roundTrip(line) }, func() ([]byte, error) { return floor.roundTrip(line) }, "")
			}
		})
	}
	for _, era := range httpEras {
		t.Run("WS/Floor/HexMCP/"+era.name, func(t *testing.T) {
			floor, sdk := connectWS(t, era, newWSFloor), connectWS(t, era, newWSHexMCP)
			defer floor.close(t)
			defer sdk.close(t)
			for _, req := range requests(era) {
				sameAnswer(t, req, func() ([]byte, error) { return sdk.roundTrip(req) }, func() ([]byte, error) { return floor.roundTrip(req) }, "")
			}
		})
		t.Run("HTTP/FloorFair/HexMCP/"+era.name, func(t *testing.T) {
			floor, sdk := connectHTTP(t, era, newHTTPFloorFair), connectHTTP(t, era, newHTTPHexMCP)
			defer floor.close(t)
			defer sdk.close(t)
			for _, req := range requests(era) {
				body := func(c *httpClient) func() ([]byte, error) {
					return func() ([]byte, error) {
						_, _, b, err := c.post(req, c.header)
						return b, err
					}
				}
				sameAnswer(t, req, body(sdk), body(floor), "\n")
			}
		})
	}
}

// sameAnswer fails t unless floor answers req byte for byte as sdk does,
// once trim is cut from the end of the floor's answer.
func sameAnswer(t *testing.T, req []byte, sdk, floor func() ([]byte, error), trim string) {
	t.Helper()
	want, err := sdk()
	if err != nil {
		t.Fatal(err)
	}
	want = bytes.Clone(want)
	got, err := floor()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSuffix(got, []byte(trim)), want) {
		t.Errorf("request %s:\nfloor %s\nSDK   %s", req, got, want)
	}
}
