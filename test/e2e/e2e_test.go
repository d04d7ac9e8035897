// Package e2e drives the showcase server (examples/showcase) over stdio with
// the official TypeScript MCP clients, v1 (@modelcontextprotocol/sdk, the
// 2025 handshake at 2025-11-25) and v2 (@modelcontextprotocol/client, pinned
// to the stateless revision 2026-07-28), and checks what crossed the wire.
//
// The Node scripts live in clients/; their dependencies are installed with
// `cd test/e2e && npm ci`. Without them the tests skip, unless E2E_REQUIRED=1.
// Golden files in testdata/ are the spec of the wire; regenerate them with
//
//	go test ./test/e2e -update
//
// and review the diff by eye.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/showcasebin"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from this run")

const (
	// scriptTimeout bounds one Node client run (spawn, handshake, every call).
	scriptTimeout = 60 * time.Second
)

// showcaseTools are the tools of examples/showcase/tools (the listing order
// is the golden files' business).
var showcaseTools = []string{
	"calculate", "get_weather", "listUsersFlat", "listUsers",
	"getString", "getNumber", "getBool", "getArray", "getNull", "returnVoid",
	"getFormattedCode", "getMarkdown", "getImage", "getAudio",
	"getEmbeddedResource", "getResourceLink", "getMultipleContent",
	"divideNumbers", "failInternally", "countDown", "logWork", "bookTable",
	"counter", "buildReport", "resetCounter",
}

// The elicitation bookTable sends (clients/common.mjs calls it with
// {"time":"19:30"}), the answer both clients give (ELICITATION_ANSWER in
// clients/common.mjs) and the text that answer books.
const (
	bookTableElicitation = `{"message":"Who is the table at 19:30 for?","requestedSchema":{"type":"object","properties":{` +
		`"name":{"type":"string","title":"Name","description":"Who the table is for"},` +
		`"seating":{"type":"string","title":"Seating","enum":["inside","terrace","bar"],"default":"inside"},` +
		`"quiet":{"type":"boolean","title":"Quiet corner","description":"A table away from the kitchen","default":false}},` +
		`"required":["name","seating"]}}`
	bookTableAnswer = `{"action":"accept","content":{"name":"Ada","seating":"terrace","quiet":true}}`
	bookTableBooked = "Booked a table for Ada at 19:30, on the terrace, in a quiet corner."

	// resetCounter is destructive: the showcase's hexmcp.ConfirmDestructive
	// asks the user first. The clients accept the first question and decline
	// the second (DESTRUCTIVE_ANSWERS in clients/common.mjs).
	resetQuestion = `Reset the counter (resetCounter) is marked destructive: it may delete or overwrite data. Run it with the arguments {}?`
	resetAccept   = `{"action":"accept","content":{"confirm":true}}`
	resetDecline  = `{"action":"decline"}`
	resetDeclined = `The user declined running the destructive tool "resetCounter". Nothing was done.`
)

// clients are the Node scripts, by the name the tests use.
var clients = map[string]struct {
	script, golden, wantVersion string
}{
	"v1": {"clients/v1.mjs", "testdata/stdio-v1.golden.json", "2025-11-25"},
	"v2": {"clients/v2.mjs", "testdata/stdio-v2.golden.json", "2026-07-28"},
	// The tasks extension through @modelcontextprotocol/ext-tasks (HTTP
	// only; no golden: task ids and times differ on every run).
	"tasks": {"clients/tasks.mjs", "", "2026-07-28"},
}

// TestMain runs the tests within showcasebin.Run, which makes the directory
// showcaseBinary builds the showcase into and removes it after them.
func TestMain(m *testing.M) { os.Exit(showcasebin.Run(m, "e2e")) }

// ---------------------------------------------------------------------------
// Environment: node, node_modules, the showcase binary.

// skipOrFail skips the test with msg, or fails it when E2E_REQUIRED=1.
func skipOrFail(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("E2E_REQUIRED") == "1" {
		t.Fatalf("%s (E2E_REQUIRED=1)", msg)
	}
	t.Skip(msg)
}

// nodeEnv returns the node executable and the directory of this package
// (where package.json and node_modules are), or skips.
func nodeEnv(t *testing.T) (node, dir string) {
	t.Helper()
	dir, err := os.Getwd() // go test runs in the package directory
	if err != nil {
		t.Fatal(err)
	}
	node, missing, err := testtools.NodeEnv(dir)
	if missing != "" {
		skipOrFail(t, "e2e: "+missing)
	}
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	return node, dir
}

// showcaseBinary builds examples/showcase once per test binary (with -race
// when the tests run with -race, so server-side races surface here too),
// recording the Node scripts and their manifests as inputs too, so that a
// change to a client invalidates go test's cache.
func showcaseBinary(t *testing.T) string {
	t.Helper()
	return showcasebin.Build(t, showcasebin.Options{
		Race:        raceEnabled,
		ExtraInputs: []string{filepath.Join("clients", "*.mjs"), "package.json", "package-lock.json"},
	})
}

// ---------------------------------------------------------------------------
// Running a client.

type run struct {
	raw    []byte // the document as printed
	doc    document
	stderr string
}

var (
	runsMu sync.Mutex
	runs   = map[string]*run{}
)

// runClient runs one Node client against the showcase over stdio (once per
// test binary: later callers get the recorded run).
func runClient(t *testing.T, name string) *run {
	t.Helper()
	return runClientOver(t, name, "stdio", "")
}

// runClientOver runs a Node client over a transport: stdio (the client
// spawns the showcase), http, sse or ws (a showcase serving that transport
// on a free loopback port; sse is the 2024-11-05 HTTP+SSE transport of
// -transport http, at /sse). mode "auto" lets the v2 client pick the era;
// extra are more environment variables of the client.
func runClientOver(t *testing.T, name, transport, mode string, extra ...string) *run {
	t.Helper()
	node, dir := nodeEnv(t)
	bin := showcaseBinary(t)
	key := name + "/" + transport + "/" + mode + "/" + strings.Join(extra, ",")
	runsMu.Lock()
	defer runsMu.Unlock()
	if r, ok := runs[key]; ok {
		return r
	}
	env := append(os.Environ(), "SHOWCASE_BIN="+bin, "E2E_TRANSPORT="+transport, "E2E_V2_MODE="+mode)
	env = append(env, extra...)
	var serverLog *lockedBuffer
	if transport != "stdio" {
		serve := transport
		if transport == "sse" {
			serve = "http"
		}
		url, logs := startShowcase(t, bin, serve)
		if transport == "sse" {
			url = strings.TrimSuffix(url, "/mcp") + "/sse"
		}
		env = append(env, "SHOWCASE_URL="+url)
		serverLog = logs
	}
	c := clients[name]
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, c.script)
	cmd.Dir = dir
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s over %s: node %s ran in %v", name, transport, c.script, time.Since(start).Round(time.Millisecond))
	if serverLog != nil {
		stderr.WriteString("\n--- server log ---\n")
		stderr.Write(serverLog.Bytes())
	}
	if ctx.Err() != nil {
		t.Fatalf("%s: timed out after %v\nstderr:\n%s", name, scriptTimeout, stderr.String())
	}
	if err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s\nstdout:\n%s", name, err, stderr.String(), stdout.String())
	}
	if strings.Contains(stderr.String(), "DATA RACE") {
		t.Errorf("%s: the server reported a data race:\n%s", name, stderr.String())
	}
	r := &run{raw: stdout.Bytes(), stderr: stderr.String()}
	if err := json.Unmarshal(r.raw, &r.doc); err != nil {
		t.Fatalf("%s: stdout is not one JSON document: %v\nstdout:\n%s\nstderr:\n%s", name, err, stdout.String(), stderr.String())
	}
	runs[key] = r
	return r
}

// lockedBuffer is a bytes.Buffer safe for a writer and readers.
type lockedBuffer = testtools.LockedBuffer

// startShowcase starts the showcase serving transport (http or ws) on a
// free loopback port and returns the URL it printed, and its log (filled
// until the test ends, when the server is stopped with SIGTERM and must exit
// cleanly).
func startShowcase(t *testing.T, bin, transport string) (string, *lockedBuffer) {
	t.Helper()
	url, logs, err := launchShowcase(t, bin, transport, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return url, logs
}

// launchShowcase is startShowcase listening on addr, with more flags: it
// returns an error, and the log, when the showcase exits before printing
// its URL (a port taken meanwhile, a flag refused) or does not print it
// within 30 s.
func launchShowcase(t *testing.T, bin, transport, addr string, flags ...string) (string, *lockedBuffer, error) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-transport", transport, "-addr", addr}, flags...)...)
	testtools.DieWithTest(cmd)
	logs := &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(logs, pw)
	if err := cmd.Start(); err != nil {
		return "", logs, fmt.Errorf("start the showcase: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "serving MCP over"); i >= 0 {
				f := strings.Fields(sc.Text())
				select {
				case urls <- f[len(f)-1]:
				default:
				}
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-exited:
		pw.Close()
		return "", logs, fmt.Errorf("the showcase exited before serving (%v); log:\n%s", err, logs.String())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		pw.Close()
		return "", logs, fmt.Errorf("the showcase did not print its URL; log:\n%s", logs.String())
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the %s showcase did not stop cleanly: %v\n%s", transport, err, logs.String())
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("the %s showcase did not stop within 15s of SIGTERM", transport)
		}
		pw.Close()
	})
	return url, logs, nil
}

// ---------------------------------------------------------------------------
// The document the clients print (see clients/common.mjs).

type document struct {
	ProtocolVersion string            `json:"protocolVersion"`
	Handshake       *handshake        `json:"handshake"`
	ToolsListPages  []json.RawMessage `json:"toolsListPages"`
	ToolsListError  *rpcError         `json:"toolsListError"`
	Tools           []tool            `json:"tools"`
	Calls           []call            `json:"calls"`
	// WithoutElicitation are the calls of a second client that did not
	// declare the elicitation capability (bookTable only).
	WithoutElicitation []call `json:"withoutElicitation"`
}

type handshake struct {
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
}

type tool struct {
	Name         string          `json:"name"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

type call struct {
	Name        string          `json:"name"`
	Arguments   json.RawMessage `json:"arguments"`
	Result      json.RawMessage `json:"result"`
	Error       *rpcError       `json:"error"`
	ClientError *rpcError       `json:"clientError"`
	// WireExchanges counts the tools/call requests on the wire when there
	// was more than one (the retries of multi round-trip requests).
	WireExchanges int `json:"wireExchanges"`
	// ServerRequests are the requests the server sent the client during
	// the call (handshake era), with the client's answers.
	ServerRequests []serverRequest `json:"serverRequests"`
	// InputRounds are the input_required results before the final one
	// (stateless era), with what the client sent back.
	InputRounds []inputRound `json:"inputRounds"`
}

type serverRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Answer struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	} `json:"answer"`
}

type inputRound struct {
	Result struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
		RequestState string `json:"requestState"`
	} `json:"result"`
	Retry struct {
		InputResponses     map[string]json.RawMessage `json:"inputResponses"`
		RequestStateEchoed bool                       `json:"requestStateEchoed"`
	} `json:"retry"`
}

type rpcError struct {
	Code       *int            `json:"code"`
	Message    string          `json:"message"`
	Data       json.RawMessage `json:"data"`
	ClientSide bool            `json:"clientSide"`
}

type content struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Data     string          `json:"data"`
	MimeType string          `json:"mimeType"`
	URI      string          `json:"uri"`
	Resource json.RawMessage `json:"resource"`
}

// callResult is a tools/call result; Fields has every member as sent.
type callResult struct {
	Content    []content `json:"content"`
	IsError    bool      `json:"isError"`
	ResultType *string   `json:"resultType"`
	Fields     map[string]json.RawMessage
}

func (c call) String() string {
	return fmt.Sprintf("%s(%s)", c.Name, c.Arguments)
}

// result decodes a call's result, failing the test when the call has none.
func (c call) result(t *testing.T) callResult {
	t.Helper()
	if c.Result == nil {
		t.Fatalf("%v: want a result, got error %+v", c, c.Error)
	}
	var r callResult
	if err := json.Unmarshal(c.Result, &r); err != nil {
		t.Fatalf("%v: result: %v", c, err)
	}
	if err := json.Unmarshal(c.Result, &r.Fields); err != nil {
		t.Fatalf("%v: result: %v", c, err)
	}
	return r
}

// calls returns the recorded calls of tool name, in order.
func (d document) calls(name string) []call {
	var out []call
	for _, c := range d.Calls {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// only returns the single recorded call of tool name.
func (d document) only(t *testing.T, name string) call {
	t.Helper()
	cs := d.calls(name)
	if len(cs) != 1 {
		t.Fatalf("%s: want 1 recorded call, got %d", name, len(cs))
	}
	return cs[0]
}

// callWith returns the recorded call of tool name whose arguments have
// member key equal to value.
func (d document) callWith(t *testing.T, name, key string, value any) call {
	t.Helper()
	for _, c := range d.calls(name) {
		var args map[string]any
		if json.Unmarshal(c.Arguments, &args) == nil && reflect.DeepEqual(args[key], value) {
			return c
		}
	}
	t.Fatalf("%s: no recorded call with %s=%v", name, key, value)
	return call{}
}

// ---------------------------------------------------------------------------
// Golden files.

// canonical re-encodes a JSON document: 2-space indentation, object members
// sorted by name, numbers as sent, no HTML escaping, trailing newline.
func canonical(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func checkGolden(t *testing.T, path string, raw []byte) {
	t.Helper()
	got, err := canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is missing; create it with `go test ./test/e2e -update` and review it", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the wire differs from %s (- golden, + got); if the change is intended, run `go test ./test/e2e -update` and review the diff:\n%s",
			path, lineDiff(string(want), string(got)))
	}
}

// lineDiff is a small LCS line diff showing changed lines with 2 lines of
// context.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		at   int // 1-based line in a
		text string
	}
	var ops []line
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, line{' ', i + 1, x[i]})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, line{'-', i + 1, x[i]})
			i++
		default:
			ops = append(ops, line{'+', i + 1, y[j]})
			j++
		}
	}
	const ctx = 2
	show := make([]bool, len(ops))
	for k, l := range ops {
		if l.op != ' ' {
			for c := max(0, k-ctx); c <= min(len(ops)-1, k+ctx); c++ {
				show[c] = true
			}
		}
	}
	var out strings.Builder
	inHunk := false
	for k, l := range ops {
		if !show[k] {
			inHunk = false
			continue
		}
		if !inHunk {
			fmt.Fprintf(&out, "@@ golden line %d @@\n", l.at)
			inHunk = true
		}
		fmt.Fprintf(&out, "%c %s\n", l.op, l.text)
	}
	return out.String()
}

// ---------------------------------------------------------------------------
// Assertions common to both clients.

func toolNames(d document) []string {
	names := make([]string, len(d.Tools))
	for i, tl := range d.Tools {
		names[i] = tl.Name
	}
	return names
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func jsonEqual(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: %v (%s)", what, err, got)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

// text returns the text of a result's single text block.
func text(t *testing.T, c call, r callResult) string {
	t.Helper()
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Errorf("%v: want one text block, got %s", c, c.Result)
		return ""
	}
	return r.Content[0].Text
}

func checkCommon(t *testing.T, d document) {
	if d.ToolsListError != nil {
		t.Errorf("tools/list failed in the client: %+v", *d.ToolsListError)
	}
	if got, want := sorted(toolNames(d)), sorted(showcaseTools); !slices.Equal(got, want) {
		t.Errorf("tools/list names = %v\nwant %v", got, want)
	}

	// Every listed tool was called, and the SDK accepted every answer.
	wantCalls := 0
	for _, name := range showcaseTools {
		n := 1
		switch name {
		case "calculate":
			n = 3
		case "divideNumbers", "resetCounter":
			n = 2
		}
		wantCalls += n
		if got := len(d.calls(name)); got != n {
			t.Errorf("%s: %d recorded calls, want %d", name, got, n)
		}
	}
	if len(d.Calls) != wantCalls {
		t.Errorf("%d recorded calls, want %d", len(d.Calls), wantCalls)
	}
	for _, c := range d.Calls {
		if c.ClientError != nil {
			t.Errorf("%v: the SDK rejected the server's result: %+v", c, *c.ClientError)
		}
		if c.Error != nil && c.Error.ClientSide {
			t.Errorf("%v: no response on the wire: %+v", c, *c.Error)
		}
		if c.Result == nil && c.Error == nil {
			t.Errorf("%v: neither result nor error recorded", c)
		}
		if c.Name != "bookTable" && c.Name != "resetCounter" && (c.ServerRequests != nil || c.InputRounds != nil) {
			t.Errorf("%v asked the client for input: %+v %+v", c, c.ServerRequests, c.InputRounds)
		}
	}

	// counter has an MCP Apps view, which these clients do not render (they
	// do not declare io.modelcontextprotocol/ui): the text says what to do.
	count := d.only(t, "counter")
	if r := count.result(t); r.IsError || text(t, count, r) != "Count: 1 (call counter with count 1 to add one more)" {
		t.Errorf("%v = %s, want the text fallback", count, count.Result)
	}

	// buildReport may run as a task, but these clients do not declare the
	// tasks extension: they get its result synchronously.
	report := d.only(t, "buildReport")
	if r := report.result(t); r.IsError || text(t, report, r) != "Report ready: 5 sections" {
		t.Errorf("%v = %s, want the synchronous result", report, report.Result)
	}

	// bookTable asked the user (how depends on the era: see checkV1 and
	// checkV2) and booked what the user answered.
	book := d.only(t, "bookTable")
	if r := book.result(t); r.IsError || text(t, book, r) != bookTableBooked {
		t.Errorf("%v = %s, want text %q", book, book.Result, bookTableBooked)
	}
	// resetCounter ran when the user confirmed, and not when the user
	// declined.
	if resets := d.calls("resetCounter"); len(resets) == 2 {
		if r := resets[0].result(t); r.IsError || text(t, resets[0], r) != "Count: 0" {
			t.Errorf("%v (confirmed) = %s, want text \"Count: 0\"", resets[0], resets[0].Result)
		}
		if r := resets[1].result(t); !r.IsError || text(t, resets[1], r) != resetDeclined {
			t.Errorf("%v (declined) = %s, want isError %q", resets[1], resets[1].Result, resetDeclined)
		}
	}
	// A client without the elicitation capability is not asked: it gets a
	// tool error it can show, for bookTable and for resetCounter (which does
	// not run).
	if len(d.WithoutElicitation) != 2 {
		t.Errorf("withoutElicitation: %d calls, want bookTable and resetCounter", len(d.WithoutElicitation))
	} else {
		for i, name := range []string{"bookTable", "resetCounter"} {
			c := d.WithoutElicitation[i]
			if c.Name != name || c.ClientError != nil || c.ServerRequests != nil || c.InputRounds != nil {
				t.Errorf("withoutElicitation: %+v, want one %s call answered without a question", c, name)
			}
			if r := c.result(t); !r.IsError || !strings.Contains(text(t, c, r), "cannot ask the user") {
				t.Errorf("%v without elicitation = %s, want isError saying the client cannot ask the user", c, c.Result)
			}
		}
	}

	// calculate
	mul := d.callWith(t, "calculate", "operation", "multiply")
	if r := mul.result(t); r.IsError || text(t, mul, r) != "18" {
		t.Errorf("%v = %s, want text 18", mul, mul.Result)
	}
	div := d.callWith(t, "calculate", "operation", "divide")
	if r := div.result(t); !r.IsError || text(t, div, r) != "Division by zero" {
		t.Errorf("%v = %s, want isError with text %q", div, div.Result, "Division by zero")
	}
	// Input validation errors are tool execution errors from 2025-11-25 on.
	mod := d.callWith(t, "calculate", "operation", "modulo")
	if r := mod.result(t); !r.IsError || !strings.Contains(text(t, mod, r), "operation") {
		t.Errorf("%v = %s, want isError with a text that mentions \"operation\"", mod, mod.Result)
	}

	// divideNumbers
	dz := d.callWith(t, "divideNumbers", "b", 0.0)
	if r := dz.result(t); !r.IsError || text(t, dz, r) != "Division by zero is not allowed" {
		t.Errorf("%v = %s, want isError with text %q", dz, dz.Result, "Division by zero is not allowed")
	}
	nine := d.callWith(t, "divideNumbers", "a", 9.0)
	if r := nine.result(t); r.IsError || text(t, nine, r) != "3" {
		t.Errorf("%v = %s, want text 3", nine, nine.Result)
	}

	// Structured output on every revision that has it.
	for _, tc := range []struct{ name, want string }{
		{"get_weather", `{"temperature":22.5,"conditions":"sunny"}`},
		{"listUsers", `{"items":[{"id":1},{"id":2}]}`},
	} {
		c := d.only(t, tc.name)
		r := c.result(t)
		sc, ok := r.Fields["structuredContent"]
		if !ok || r.IsError {
			t.Errorf("%v = %s, want structuredContent %s", c, c.Result, tc.want)
			continue
		}
		jsonEqual(t, tc.name+" structuredContent", sc, tc.want)
	}

	// The internal error stays in the server log.
	fail := d.only(t, "failInternally")
	switch {
	case fail.Error == nil:
		t.Errorf("%v = %s, want JSON-RPC error -32603", fail, fail.Result)
	case fail.Error.Code == nil || *fail.Error.Code != -32603:
		t.Errorf("%v: error %+v, want code -32603", fail, *fail.Error)
	}
	entry, _ := json.Marshal(fail)
	for _, secret := range []string{"password", "db.internal", "admin", "5432"} {
		if strings.Contains(strings.ToLower(string(entry)), secret) {
			t.Errorf("%v leaks %q to the client: %s", fail, secret, entry)
		}
	}

	// Scalars and content.
	for _, tc := range []struct{ name, want string }{
		{"returnVoid", "(null)"},
		{"getNull", "(null)"},
		{"getBool", "true"},
		{"getNumber", "42"},
		{"getString", "Hello"},
	} {
		c := d.only(t, tc.name)
		if r := c.result(t); r.IsError || text(t, c, r) != tc.want {
			t.Errorf("%v = %s, want text %q", c, c.Result, tc.want)
		}
	}
	if c := d.only(t, "getMultipleContent"); len(c.result(t).Content) != 3 {
		t.Errorf("%v = %s, want 3 content blocks", c, c.Result)
	}
	img := d.only(t, "getImage")
	if r := img.result(t); len(r.Content) != 1 || r.Content[0].Type != "image" || r.Content[0].MimeType != "image/png" {
		t.Errorf("%v = %s, want one image/png image block", img, img.Result)
	} else if b, err := base64.StdEncoding.DecodeString(r.Content[0].Data); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%v: data is not a base64 PNG (%v)", img, err)
	}
	audio := d.only(t, "getAudio")
	if r := audio.result(t); len(r.Content) != 1 || r.Content[0].Type != "audio" || r.Content[0].MimeType != "audio/wav" {
		t.Errorf("%v = %s, want one audio/wav audio block", audio, audio.Result)
	} else if b, err := base64.StdEncoding.DecodeString(r.Content[0].Data); err != nil || !bytes.HasPrefix(b, []byte("RIFF")) {
		t.Errorf("%v: data is not a base64 WAV (%v)", audio, err)
	}
	if c := d.only(t, "getEmbeddedResource"); func() bool {
		r := c.result(t)
		return len(r.Content) != 1 || r.Content[0].Type != "resource" || r.Content[0].Resource == nil
	}() {
		t.Errorf("%v = %s, want one embedded resource block", c, c.Result)
	}
	if c := d.only(t, "getResourceLink"); func() bool {
		r := c.result(t)
		return len(r.Content) != 1 || r.Content[0].Type != "resource_link" || r.Content[0].URI != "file://data.json"
	}() {
		t.Errorf("%v = %s, want one resource_link block to file://data.json", c, c.Result)
	}
}

// ---------------------------------------------------------------------------
// Tests.

func TestStdioV1(t *testing.T) { checkV1(t, runClient(t, "v1")) }

// checkRun checks what every run of the named client shares: its golden
// file, the revision it negotiated, the raw result of its handshake
// method, and checkCommon; it returns the run's document.
func checkRun(t *testing.T, r *run, client, handshake string) document {
	t.Helper()
	checkGolden(t, clients[client].golden, r.raw)
	d := r.doc
	if d.ProtocolVersion != clients[client].wantVersion {
		t.Errorf("negotiated protocolVersion = %q, want %q", d.ProtocolVersion, clients[client].wantVersion)
	}
	if d.Handshake == nil || d.Handshake.Method != handshake || d.Handshake.Result == nil {
		t.Errorf("handshake = %+v, want the raw %s result", d.Handshake, handshake)
	}
	checkCommon(t, d)
	return d
}

// checkV1 checks a run of the v1 client (2025-11-25) on any transport: the
// wire is the same as over stdio, so the same golden file applies.
func checkV1(t *testing.T, r *run) {
	t.Helper()
	d := checkRun(t, r, "v1", "initialize")

	// 2025-11-25 has structured content for objects only: a bare list is not.
	flat := d.only(t, "listUsersFlat")
	r1 := flat.result(t)
	if _, ok := r1.Fields["structuredContent"]; ok {
		t.Errorf("%v = %s, want no structuredContent at %s", flat, flat.Result, d.ProtocolVersion)
	}
	if !strings.Contains(text(t, flat, r1), `"id"`) {
		t.Errorf("%v = %s, want the list serialized as text", flat, flat.Result)
	}
	// The handshake era asks with a request to the client, during the call.
	book := d.only(t, "bookTable")
	if len(book.ServerRequests) != 1 || book.ServerRequests[0].Method != "elicitation/create" || book.InputRounds != nil || book.WireExchanges != 0 {
		t.Errorf("%v: server requests %+v, input rounds %+v, want one elicitation/create request and no retry", book, book.ServerRequests, book.InputRounds)
	} else {
		q := book.ServerRequests[0]
		jsonEqual(t, "bookTable elicitation/create params", q.Params, bookTableElicitation)
		jsonEqual(t, "the client's answer to elicitation/create", q.Answer.Result, bookTableAnswer)
	}
	// Each resetCounter call asked for confirmation with one request.
	for i, c := range d.calls("resetCounter") {
		if len(c.ServerRequests) != 1 || c.ServerRequests[0].Method != "elicitation/create" || c.InputRounds != nil {
			t.Errorf("%v: server requests %+v, want one elicitation/create", c, c.ServerRequests)
			continue
		}
		checkResetQuestion(t, c, c.ServerRequests[0].Params)
		jsonEqual(t, "the client's answer to the confirmation", c.ServerRequests[0].Answer.Result, []string{resetAccept, resetDecline}[i])
	}
	// resultType is of the stateless era only.
	for _, c := range append(slices.Clone(d.Calls), d.WithoutElicitation...) {
		if c.Result == nil {
			continue
		}
		if res := c.result(t); res.ResultType != nil {
			t.Errorf("%v carries resultType %q at %s", c, *res.ResultType, d.ProtocolVersion)
		}
	}
}

func TestStdioV2(t *testing.T) { checkV2(t, runClient(t, "v2")) }

// checkV2 checks a run of the v2 client (2026-07-28) on any transport.
func checkV2(t *testing.T, r *run) {
	t.Helper()
	d := checkRun(t, r, "v2", "server/discover")

	// 2026-07-28 structures lists too.
	flat := d.only(t, "listUsersFlat")
	r2 := flat.result(t)
	if sc, ok := r2.Fields["structuredContent"]; !ok {
		t.Errorf("%v = %s, want the list as structuredContent at %s", flat, flat.Result, d.ProtocolVersion)
	} else {
		jsonEqual(t, "listUsersFlat structuredContent", sc, `[{"id":1},{"id":2}]`)
	}

	// The stateless era asks with an input_required result; the client
	// answers in its retry, echoing the requestState.
	book := d.only(t, "bookTable")
	if len(book.InputRounds) != 1 || book.ServerRequests != nil || book.WireExchanges != 2 {
		t.Errorf("%v: input rounds %+v, server requests %+v, %d exchanges, want one input_required round, no request to the client, 2 exchanges",
			book, book.InputRounds, book.ServerRequests, book.WireExchanges)
	} else {
		r := book.InputRounds[0]
		q, ok := r.Result.InputRequests["table"]
		if r.Result.ResultType != "input_required" || len(r.Result.InputRequests) != 1 || !ok || q.Method != "elicitation/create" || r.Result.RequestState == "" {
			t.Errorf("%v: first round %+v, want input_required with one elicitation/create under \"table\" and a requestState", book, r.Result)
		} else {
			jsonEqual(t, "bookTable inputRequests.table.params", q.Params, bookTableElicitation)
		}
		if len(r.Retry.InputResponses) != 1 || !r.Retry.RequestStateEchoed {
			t.Errorf("%v: retry %+v, want the one answer and the requestState echoed", book, r.Retry)
		} else {
			jsonEqual(t, "bookTable inputResponses.table", r.Retry.InputResponses["table"], bookTableAnswer)
		}
	}

	// Each resetCounter call asked for confirmation in one input_required
	// round.
	for i, c := range d.calls("resetCounter") {
		if len(c.InputRounds) != 1 || c.ServerRequests != nil || c.WireExchanges != 2 {
			t.Errorf("%v: input rounds %+v, %d exchanges, want one input_required round", c, c.InputRounds, c.WireExchanges)
			continue
		}
		q, ok := c.InputRounds[0].Result.InputRequests["hexmcp.confirm"]
		if !ok || q.Method != "elicitation/create" {
			t.Errorf("%v: input requests %+v, want elicitation/create under \"hexmcp.confirm\"", c, c.InputRounds[0].Result.InputRequests)
			continue
		}
		checkResetQuestion(t, c, q.Params)
		jsonEqual(t, "the client's answer to the confirmation", c.InputRounds[0].Retry.InputResponses["hexmcp.confirm"], []string{resetAccept, resetDecline}[i])
	}

	// Every result of the stateless era is complete and names the server.
	for _, c := range append(slices.Clone(d.Calls), d.WithoutElicitation...) {
		if c.Result == nil {
			continue
		}
		res := c.result(t)
		if res.ResultType == nil || *res.ResultType != "complete" {
			t.Errorf("%v = %s, want resultType \"complete\"", c, c.Result)
		}
		var meta map[string]json.RawMessage
		if m, ok := res.Fields["_meta"]; !ok || json.Unmarshal(m, &meta) != nil || meta["io.modelcontextprotocol/serverInfo"] == nil {
			t.Errorf("%v = %s, want _meta[\"io.modelcontextprotocol/serverInfo\"]", c, c.Result)
		}
	}

	// tools/list is cacheable in the stateless era.
	if len(d.ToolsListPages) == 0 {
		t.Fatal("no tools/list page recorded")
	}
	for i, p := range d.ToolsListPages {
		var page map[string]json.RawMessage
		if err := json.Unmarshal(p, &page); err != nil {
			t.Fatal(err)
		}
		if page["ttlMs"] == nil || page["cacheScope"] == nil {
			t.Errorf("tools/list page %d = %s, want ttlMs and cacheScope", i, p)
		}
	}
}

// TestStdioSameTools checks that both revisions list the same tools with the
// same schemas.
func TestStdioSameTools(t *testing.T) {
	d1, d2 := runClient(t, "v1").doc, runClient(t, "v2").doc
	n1, n2 := sorted(toolNames(d1)), sorted(toolNames(d2))
	if !slices.Equal(n1, n2) {
		t.Fatalf("tools/list differs between revisions:\nv1 %v\nv2 %v", n1, n2)
	}
	byName := map[string]tool{}
	for _, tl := range d1.Tools {
		byName[tl.Name] = tl
	}
	for _, tl := range d2.Tools {
		if !bytes.Equal(mustCanonical(t, byName[tl.Name].InputSchema), mustCanonical(t, tl.InputSchema)) {
			t.Errorf("%s: inputSchema differs between revisions:\nv1 %s\nv2 %s", tl.Name, byName[tl.Name].InputSchema, tl.InputSchema)
		}
	}
}

func mustCanonical(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	if raw == nil {
		return nil
	}
	b, err := canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkResetQuestion checks the confirmation resetCounter's call asked: its
// message, and a form of one required boolean, confirm.
func checkResetQuestion(t *testing.T, c call, params json.RawMessage) {
	t.Helper()
	var q struct {
		Message         string `json:"message"`
		RequestedSchema struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
			Required []string `json:"required"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &q); err != nil {
		t.Fatalf("%v: confirmation %s: %v", c, params, err)
	}
	if q.Message != resetQuestion || q.RequestedSchema.Properties["confirm"].Type != "boolean" || !slices.Equal(q.RequestedSchema.Required, []string{"confirm"}) {
		t.Errorf("%v: confirmation %s, want the message %q and one required boolean, confirm", c, params, resetQuestion)
	}
}
