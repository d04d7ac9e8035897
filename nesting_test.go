package hexmcp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/internal/wiretest"
)

// maxDepth is the engine's bound on nesting (10000 levels).
const maxDepth = 10_000

// A request nested deeper than the decoder reads (maxDepth) is
// valid JSON: it is refused with its id when the id can be read, with an
// error that names the limit, on every transport and in both eras; the
// connection goes on.
func TestNestedPastTheDepthLimitKeepsItsID(t *testing.T) {
	deep := strings.Repeat(`{"x":`, 20_000) + "1" + strings.Repeat("}", 20_000)
	for _, tr := range wiretest.Transports {
		for _, era := range []string{"handshake", "stateless"} {
			t.Run(tr.Name+"/"+era, func(t *testing.T) {
				srv := visibilityServer(t)
				c := tr.Dial(t, srv)
				if era == "handshake" {
					initialize(t, c, "c")
				}
				m := c.Send(t, msg(era, "c", 77, "tools/call", `{"name":"public","arguments":`+deep+`}`))
				e, _ := m["error"].(map[string]any)
				data, _ := e["data"].(map[string]any)
				if m["id"] != float64(77) || e["code"] != float64(-32600) || data["limit"] != "maxNestingDepth" || data["max"] != float64(maxDepth) ||
					!strings.Contains(fmt.Sprint(e["message"]), "deeper than 10000 levels") {
					t.Fatalf("answer %v", m)
				}
				if got, _ := json.Marshal(c.Send(t, msg(era, "c", 78, "tools/call", `{"name":"public"}`))); !strings.Contains(string(got), `"text":"p"`) {
					t.Fatalf("next call: %s", got)
				}
			})
		}
	}
}
