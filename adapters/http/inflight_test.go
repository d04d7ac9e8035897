package mcphttp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// padded makes a body n bytes longer (JSON whitespace, which the body's
// bytes in flight count like any other).
func padded(body string, n int) string { return body + strings.Repeat(" ", n) }

// postChunked posts body without a Content-Length (chunked), as a client
// that streams its body does.
func postChunked(ctx context.Context, url, body string, h hdr) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, io.MultiReader(strings.NewReader(body)))
	if err != nil {
		return nil, err
	}
	testtools.MCPHeaders(req, h)
	return http.DefaultClient.Do(req)
}

// A body without Content-Length counts what arrives, not MaxBodyBytes:
// two such small requests in flight fit a budget smaller than twice
// MaxBodyBytes.
func TestInFlightBytesUnknownLengthGivesBack(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{MaxBodyBytes: 64 << 10, MaxInFlightBytes: 100 << 10})
	done := make(chan *http.Response, 2)
	for range 2 {
		go func() {
			resp, err := postChunked(context.Background(), ev.url, statelessCall(1, "block", `{}`), statelessHdr("tools/call", "block"))
			if err != nil {
				resp = &http.Response{Body: io.NopCloser(strings.NewReader(err.Error()))}
			}
			done <- resp
		}()
		ev.waitStarted()
	}
	ev.releaseAll()
	for range 2 {
		expect(t, <-done, http.StatusOK, "released")
	}
}

// A subscriptions/listen stream gives its bytes back as it starts: streams
// whose requests add up to more than the budget are all opened, and a
// large call is still served beside them.
func TestInFlightBytesListenStreamsGiveBack(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{MaxInFlightBytes: 100 << 10})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 4 {
		resp := request(t, ctx, http.MethodPost, ev.url, padded(statelessBody(5+i, "subscriptions/listen", listenParams), 40<<10),
			statelessHdr("subscriptions/listen", ""))
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("listen %d: status %d", i, resp.StatusCode)
		}
		if ack := newSSE(t, resp).nextEvent(t); !strings.Contains(ack.data, "notifications/subscriptions/acknowledged") {
			t.Fatalf("listen %d: %q", i, ack.data)
		}
	}
	expect(t, ev.post(padded(statelessCall(9, "echo", `{"text":"hi"}`), 90<<10), statelessHdr("tools/call", "echo")), http.StatusOK, "echo: hi")
}

// equalJSONBody fails unless body is want, byte for byte once trimmed.
func equalJSONBody(t *testing.T, body, want string) {
	t.Helper()
	if got := strings.TrimSpace(body); got != want {
		t.Fatalf("body %s\nwant %s", got, want)
	}
}

// A body read in growing steps is whole at any length up to MaxBodyBytes
// (which need not be a power of two), with or without Content-Length, and
// one byte more is refused with 413.
func TestBodyReadInSteps(t *testing.T) {
	const limit = 20000
	ev := newEnv(t, mcphttp.Options{MaxBodyBytes: limit, MaxInFlightBytes: limit, MaxInFlightBytesPerClient: limit})
	h := statelessHdr("tools/call", "echo")
	for _, n := range []int{8 << 10, 8<<10 + 1, 16 << 10, limit} {
		call := statelessCall(n, "echo", `{"text":"x"}`)
		body := padded(call, n-len(call))
		expect(t, ev.post(body, h), http.StatusOK, "echo: x")
		resp, err := postChunked(context.Background(), ev.url, body, h)
		if err != nil {
			t.Fatal(err)
		}
		expect(t, resp, http.StatusOK, "echo: x")
	}
	call := statelessCall(1, "echo", `{"text":"x"}`)
	resp, err := postChunked(context.Background(), ev.url, padded(call, limit+1-len(call)), h)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, resp, http.StatusRequestEntityTooLarge)
}
