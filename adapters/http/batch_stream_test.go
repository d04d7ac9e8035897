package mcphttp_test

import (
	"net/http"
	"strings"
	"testing"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
)

// The progress of a call in a 2025-03-26 batch goes on the batch's own
// response, which becomes an SSE stream: its progress notification, then
// the responses.
func TestBatchProgressOnItsResponse(t *testing.T) {
	ev := newEnv(t, mcphttp.Options{})
	sid := ev.initialize("2025-03-26")
	batch := `[` + progressCallBody(1, "progress") + `,` + callBody(2, "echo", `{"text":"b"}`) + `]`
	resp := ev.post(batch, sessHdr(sid, "2025-03-26"))
	s := newSSE(t, resp)
	defer resp.Body.Close()
	ev1 := s.nextEvent(t)
	if !strings.Contains(ev1.data, `"method":"notifications/progress"`) || !strings.Contains(ev1.data, `"progressToken":"tok"`) {
		t.Fatalf("first event of the batch's stream: %q, want its progress notification", ev1.data)
	}
	answered := map[string]bool{}
	for len(answered) < 2 {
		ev := s.nextEvent(t)
		switch {
		case strings.Contains(ev.data, `"id":1`) && strings.Contains(ev.data, `"text":"done"`):
			answered["1"] = true
		case strings.Contains(ev.data, `"id":2`) && strings.Contains(ev.data, "echo: b"):
			answered["2"] = true
		default:
			t.Fatalf("event of the batch's stream: %q, want a response", ev.data)
		}
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
}
