package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/testtools"
)

// TestStdioBadInput drives the showcase binary over real pipes with every
// kind of malformed or hostile message. Each gets its error and the very
// next call on the same process succeeds.
func TestStdioBadInput(t *testing.T) {
	bin := showcaseBinary(t)
	cmd := exec.Command(bin)
	testtools.DieWithTest(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the server closed its output; stderr:\n%s", stderr.String())
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no answer within 10s")
		}
		return ""
	}
	errorCode := func(line string) int {
		var m struct {
			Error *struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("the server wrote a line that is not JSON: %q", line)
		}
		if m.Error == nil {
			return 0
		}
		return m.Error.Code
	}
	okCall := func() {
		t.Helper()
		send(`{"jsonrpc":"2.0","id":"ok","method":"tools/call","params":{"name":"calculate","arguments":{"a":2,"b":3,"operation":"add"}}}`)
		if got := recv(); !strings.Contains(got, `"id":"ok"`) || !strings.Contains(got, `"text":"5"`) {
			t.Fatalf("the call after the bad input failed: %s", got)
		}
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

	// Before initialize: a request without the stateless _meta is refused,
	// ping is answered, and a stateless request is served.
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if got := recv(); errorCode(got) != -32602 || !strings.Contains(got, "send initialize first") {
		t.Fatalf("tools/list before initialize: %s", got)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"getString",` + meta + `}}`)
	if got := recv(); !strings.Contains(got, `"resultType":"complete","content":[{"type":"text","text":"Hello"}]`) {
		t.Fatalf("stateless call before initialize: %s", got)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"getString","_meta":{"io.modelcontextprotocol/protocolVersion":"2031-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if got := recv(); errorCode(got) != -32022 || !strings.Contains(got, `"requested":"2031-01-01"`) {
		t.Fatalf("unsupported stateless version: %s", got)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2031-01-01","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	if got := recv(); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize with an unknown version must answer the latest handshake version: %s", got)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	okCall()

	cases := []struct {
		name string
		send string
		code int
	}{
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,`, -32700},
		{"array", `[1,2,3]`, -32600},
		{"scalar", `true`, -32600},
		{"missing jsonrpc", `{"id":5,"method":"ping"}`, -32600},
		{"id of wrong type", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600},
		{"duplicate keys", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"calculate","name":"failInternally"}}`, -32600},
		{"Method for method", `{"jsonrpc":"2.0","id":7,"Method":"tools/call","params":{"name":"calculate"}}`, -32600},
		{"unknown method", `{"jsonrpc":"2.0","id":8,"method":"resources/explode"}`, -32601},
		{"call without name", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{}}`, -32602},
		{"non-object arguments", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"calculate","arguments":[6,3]}}`, -32602},
		{"unknown tool", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"rm_rf"}}`, -32602},
		{"bad cursor", `{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"cursor":"nope"}}`, -32602},
		{"oversized line", `{"jsonrpc":"2.0","id":13,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5<<20) + `"}}`, -32600},
		{"internal error", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"failInternally"}}`, -32603},
	}
	for _, tc := range cases {
		send(tc.send)
		got := recv()
		if code := errorCode(got); code != tc.code {
			t.Errorf("%s: got %s, want code %d", tc.name, got, tc.code)
		}
		if strings.Contains(got, "password") || strings.Contains(got, "db.internal") {
			t.Errorf("%s: internal details reached the client: %s", tc.name, got)
		}
		okCall()
	}
	// Arguments of the wrong type: an isError result at 2025-11-25 (SEP-1303).
	send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"calculate","arguments":{"a":"six","b":3,"operation":"add"}}}`)
	if got := recv(); !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "/a: got string, want number") {
		t.Fatalf("wrong argument type: %s", got)
	}
	okCall()

	// EOF ends the process cleanly, and stdout held nothing but MCP.
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after EOF: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the server did not exit on EOF")
	}
	for l := range lines {
		t.Errorf("unexpected output after the last answer: %q", l)
	}
	if !strings.Contains(stderr.String(), "password rejected") {
		t.Errorf("the internal error's details must be in the server log (stderr), got:\n%s", stderr.String())
	}
}
