package hexmcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

type opInput struct {
	Op string `json:"op" enum:"add,sub"`
}

// echoOp answers the operation it was given: with validation on, only add
// and sub ever reach it.
func echoOp(_ context.Context, in opInput) (string, error) { return "ran " + in.Op, nil }

// pipeClient talks to a server served on in-memory pipes, one JSON line at
// a time.
type pipeClient struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Scanner
}

func servePipes(t *testing.T, srv *hexmcp.Server) (*pipeClient, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.Serve(context.Background(), stdio.New(stdio.Options{In: inR, Out: outW}))
		outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &pipeClient{t: t, in: inW, out: sc}, done
}

func (c *pipeClient) call(line string) map[string]any {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
	if !c.out.Scan() {
		c.t.Fatalf("no answer to %s: %v", line, c.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("answer %s: %v", c.out.Bytes(), err)
	}
	return m
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// opServer is a server from New with opts whose one tool is "op"
// (echoOp).
func opServer(t *testing.T, opts hexmcp.Options) *hexmcp.Server {
	t.Helper()
	opts.Tools = []hexmcp.Tool{hexmcp.Func(echoOp, hexmcp.WithName("op"))}
	srv, err := hexmcp.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// callOp sends over c a tools/call of "op" with the argument op (request
// id id) and returns the result's text and isError.
func callOp(t *testing.T, c *pipeClient, id, op string) (string, bool) {
	t.Helper()
	return resultText(t, c.call(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"op","arguments":{"op":"`+op+`"}}}`))
}

func resultText(t *testing.T, m map[string]any) (string, bool) {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", m)
	}
	content := res["content"].([]any)
	isErr, _ := res["isError"].(bool)
	return content[0].(map[string]any)["text"].(string), isErr
}

// A server from New validates arguments with no option set: a value outside
// the enum never reaches the handler.
func TestNewValidatesByDefault(t *testing.T) {
	c, done := servePipes(t, opServer(t, hexmcp.Options{}))
	c.call(initLine)
	text, isErr := callOp(t, c, "2", "mul")
	if !isErr || strings.Contains(text, "ran") {
		t.Fatalf("invalid op reached the handler: %q isError=%v", text, isErr)
	}
	text, isErr = callOp(t, c, "3", "add")
	if isErr || text != "ran add" {
		t.Fatalf("valid op: %q isError=%v", text, isErr)
	}
	c.in.Close()
	if err := <-done; err != nil {
		t.Fatalf("Serve after the client went away: %v", err)
	}
}

// Validation is off only by name, and then the handler sees what came.
func TestDisableValidationByName(t *testing.T) {
	c, _ := servePipes(t, opServer(t, hexmcp.Options{DisableValidation: true}))
	c.call(initLine)
	text, isErr := callOp(t, c, "2", "mul")
	if isErr || text != "ran mul" {
		t.Fatalf("with validation off: %q isError=%v", text, isErr)
	}
	c.in.Close()
}

// Without a Logger the server's own log (here a tool's failure, with its
// details) goes to standard error.
func TestNewLogsToStandardErrorByDefault(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	srv, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(func(context.Context, opInput) (string, error) {
		return "", errors.New("disk on fire")
	}, hexmcp.WithName("fail"))}})
	os.Stderr = saved
	if err != nil {
		t.Fatal(err)
	}
	c, _ := servePipes(t, srv)
	c.call(initLine)
	m := c.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail","arguments":{"op":"add"}}}`)
	if e, _ := m["error"].(map[string]any); e == nil || strings.Contains(e["message"].(string), "fire") {
		t.Fatalf("a server failure must be a generic JSON-RPC error: %v", m)
	}
	c.in.Close()
	w.Close()
	logged, _ := io.ReadAll(r)
	if !bytes.Contains(logged, []byte("disk on fire")) || !bytes.Contains(logged, []byte("level=ERROR")) {
		t.Fatalf("standard error got %q", logged)
	}
}

// A bad definition is New's error, never a panic, and names the tool.
func TestNewRefusesBadDefinitions(t *testing.T) {
	for name, tool := range map[string]hexmcp.Tool{
		"bad name":                 hexmcp.Func(echoOp, hexmcp.WithName("bad name")),
		"resource annotations":     hexmcp.Func(echoOp, hexmcp.WithName("ann"), hexmcp.WithAnnotations(hexmcp.Annotations{Priority: new(float64)})),
		"duplicate (second entry)": hexmcp.Func(echoOp, hexmcp.WithName("op")),
	} {
		tools := []hexmcp.Tool{tool}
		if strings.HasPrefix(name, "duplicate") {
			tools = append(tools, tool)
		}
		_, err := hexmcp.New(hexmcp.Options{Tools: tools})
		var de *hexmcp.DefinitionError
		if !errors.As(err, &de) || de.Kind != "tool" {
			t.Errorf("%s: got %v, want a tool *hexmcp.DefinitionError", name, err)
		}
	}
}

// The options shared by every kind set the same fields on each.
func TestSharedOptions(t *testing.T) {
	common := []hexmcp.Option{hexmcp.WithTitle("T"), hexmcp.WithDescription("D"), hexmcp.WithMeta(map[string]any{"k": 1})}
	var topts []hexmcp.ToolOption
	var popts []hexmcp.PromptOption
	var ropts []hexmcp.ResourceOption
	for _, o := range common {
		topts, popts, ropts = append(topts, o), append(popts, o), append(ropts, o)
	}
	tool := hexmcp.Func(echoOp, append(topts, hexmcp.WithAnnotations(hexmcp.ToolAnnotations{ReadOnlyHint: hexmcp.Bool(true)}))...).Definition()
	prompt := hexmcp.NewPrompt("p", nil, popts...).Definition()
	res := hexmcp.TextResource("x://r", "r", "t", append(ropts, hexmcp.WithAnnotations(hexmcp.Annotations{Audience: []string{"user"}}))...)
	srv, err := hexmcp.New(hexmcp.Options{Resources: []hexmcp.Resource{res}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if tool.Title != "T" || tool.Description != "D" || tool.Meta["k"] != 1 || tool.Annotations == nil || !*tool.Annotations.ReadOnlyHint {
		t.Errorf("tool: %+v", tool)
	}
	if prompt.Title != "T" || prompt.Description != "D" || prompt.Meta["k"] != 1 {
		t.Errorf("prompt: %+v", prompt)
	}
	c, _ := servePipes(t, srv)
	c.call(initLine)
	m := c.call(`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`)
	got, _ := json.Marshal(m["result"])
	want := `{"resources":[{"_meta":{"k":1},"annotations":{"audience":["user"]},"description":"D","mimeType":"text/plain","name":"r","title":"T","uri":"x://r"}]}`
	if string(got) != want {
		t.Errorf("resources/list\n got %s\nwant %s", got, want)
	}
	c.in.Close()
}

// ListenAndServe serves Streamable HTTP at /mcp until its context is
// cancelled, then returns nil.
func TestListenAndServe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := opServer(t, hexmcp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx, addr, hexmcp.HTTPOptions{}) }()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"op","arguments":{"op":"sub"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	var resp *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; {
		req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "op")
		resp, err = http.DefaultClient.Do(req)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(got, []byte(`"ran sub"`)) {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	cancel()
	if err := testtools.Recv(t, done, 15*time.Second, "ListenAndServe did not return"); err != nil {
		t.Fatalf("ListenAndServe after cancel: %v", err)
	}
}

// An engine's ports come from Defaults only where Options leaves them nil.
func TestDefaultsKeepWhatIsGiven(t *testing.T) {
	var v ports.SchemaValidator = nopValidator{}
	o := hexmcp.Defaults(hexmcp.Options{Validator: v})
	if o.Validator != v || o.ToolRegistry == nil || o.ResourceRegistry == nil || o.PromptRegistry == nil {
		t.Fatalf("%+v", o)
	}
	if o := hexmcp.Defaults(hexmcp.Options{DisableValidation: true}); o.Validator != nil {
		t.Fatal("DisableValidation got a validator")
	}
}

type nopValidator struct{}

func (nopValidator) Compile(json.RawMessage) (ports.Schema, error) { return nil, nil }

// names lists the names (or URIs, or URI templates) of a list result's
// entries under key.
func names(t *testing.T, m map[string]any, key, field string) []string {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", m)
	}
	var out []string
	for _, e := range res[key].([]any) {
		out = append(out, e.(map[string]any)[field].(string))
	}
	return out
}

// The Server's own methods change what it offers while it serves, and the
// engine behind it is the one Engine returns.
func TestServerChangesWhatItOffers(t *testing.T) {
	srv, err := hexmcp.New(hexmcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.Engine() == nil || (*hexmcp.Server)(nil).Engine() != nil {
		t.Fatal("Engine: the server's engine, nil for a nil server")
	}
	c, _ := servePipes(t, srv)
	defer c.in.Close()
	c.call(initLine)
	// The list_changed notifications are read as they come, so that the
	// server never waits on the pipe; answers are the messages with an id.
	answers := make(chan map[string]any, 16)
	go func() {
		for c.out.Scan() {
			var m map[string]any
			if json.Unmarshal(c.out.Bytes(), &m) == nil && m["id"] != nil {
				answers <- m
			}
		}
		close(answers)
	}()
	read := func(context.Context, string, map[string]string) ([]hexmcp.ResourceContents, error) { return nil, nil }
	render := func(context.Context, map[string]string) (*hexmcp.GetPromptResult, error) {
		return &hexmcp.GetPromptResult{Messages: []hexmcp.PromptMessage{hexmcp.UserMessage(hexmcp.Text("hi"))}}, nil
	}
	if err := srv.AddTools(hexmcp.Func(echoOp, hexmcp.WithName("a")), hexmcp.Func(echoOp, hexmcp.WithName("b"))); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddTool(hexmcp.Func(echoOp, hexmcp.WithName("c"))); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddPrompts(hexmcp.NewPrompt("p", render), hexmcp.NewPrompt("q", render)); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddPrompt(hexmcp.NewPrompt("r", render)); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResources(hexmcp.TextResource("x://1", "one", "1"), hexmcp.TextResource("x://2", "two", "2")); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResource(hexmcp.TextResource("x://3", "three", "3")); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResourceTemplate(hexmcp.NewResourceTemplate("x://t/{id}", "t", read)); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResourceTemplate(hexmcp.TextResource("x://4", "four", "4")); err == nil {
		t.Fatal("AddResourceTemplate took a plain resource")
	}
	if err := srv.AddTool(hexmcp.Func(echoOp, hexmcp.WithName("a"))); err == nil {
		t.Fatal("AddTool took a duplicate")
	}
	if !srv.RemoveTool("b") || srv.RemoveTool("b") || !srv.RemovePrompt("q") || srv.RemovePrompt("q") ||
		!srv.RemoveResource("x://2") || srv.RemoveResource("x://2") ||
		!srv.RemoveResourceTemplate("x://t/{id}") || srv.RemoveResourceTemplate("x://t/{id}") {
		t.Fatal("a Remove method did not report what it removed")
	}
	ask := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(c.in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		m, ok := <-answers
		if !ok {
			t.Fatalf("no answer to %s", line)
		}
		return m
	}
	for _, tc := range []struct{ method, key, field, want string }{
		{"tools/list", "tools", "name", "a c"},
		{"prompts/list", "prompts", "name", "p r"},
		{"resources/list", "resources", "uri", "x://1 x://3"},
		{"resources/templates/list", "resourceTemplates", "uriTemplate", ""},
	} {
		m := ask(`{"jsonrpc":"2.0","id":9,"method":"` + tc.method + `"}`)
		if got := strings.Join(names(t, m, tc.key, tc.field), " "); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.method, got, tc.want)
		}
	}
	if n := srv.NotifyElicitationComplete("no-such-session", "e1"); n != 0 {
		t.Errorf("NotifyElicitationComplete told %d sessions of an unknown one", n)
	}
	if n := srv.NotifyResourceUpdated("x://1"); n != 0 {
		t.Errorf("NotifyResourceUpdated told %d without a subscription", n)
	}
}
