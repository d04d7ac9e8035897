package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// The official TypeScript reference server, @modelcontextprotocol/server-everything
// (pinned in package.json), driven by this SDK's Go client: over stdio
// (`node dist/index.js stdio`) and over Streamable HTTP
// (`node dist/index.js streamableHttp`, at /mcp on the port of $PORT). It
// speaks the handshake era only (its SDK is @modelcontextprotocol/sdk 1.x),
// so an unpinned client falls back from server/discover to initialize.

const (
	// everythingMain is the server's entry point, under node_modules.
	everythingMain = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
	// everythingTimeout bounds one session (connect, every call, close).
	everythingTimeout = 60 * time.Second
)

// everythingRevisions are the revisions the client connects with: none
// pinned (it negotiates), then the handshake revisions the server's SDK
// supports that the client pins.
var everythingRevisions = []domain.Revision{"", domain.Revision20251125, domain.Revision20250618}

func TestEverythingServer(t *testing.T) {
	node, dir := nodeEnv(t)
	main := filepath.Join(dir, filepath.FromSlash(everythingMain))

	t.Run("stdio", func(t *testing.T) {
		for _, rev := range everythingRevisions {
			t.Run(revisionName(rev), func(t *testing.T) {
				logs := &lockedBuffer{}
				cmd := exec.Command(node, main, "stdio")
				cmd.Dir = dir
				cmd.Stderr = logs
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				testtools.DieWithTest(cmd)
				t.Cleanup(func() { killGroup(cmd) })
				exerciseEverything(t, rev, client.CommandTransport(cmd), logs)
			})
		}
	})

	t.Run("http", func(t *testing.T) {
		url, logs := startEverythingHTTP(t, node, dir, main)
		for _, rev := range everythingRevisions {
			t.Run(revisionName(rev), func(t *testing.T) {
				exerciseEverything(t, rev, client.HTTPTransport(url, client.HTTPOptions{}), logs)
			})
		}
	})
}

func revisionName(rev domain.Revision) string {
	if rev == "" {
		return "negotiated"
	}
	return string(rev)
}

// killGroup kills what is left of cmd's process group (a server that
// outlived the session's close, or its children).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// startEverythingHTTP starts the server on Streamable HTTP on a free port
// and returns its URL on 127.0.0.1 once it says it listens; the test's
// cleanup stops its process group.
func startEverythingHTTP(t *testing.T, node, dir, main string) (string, *lockedBuffer) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, main, "streamableHttp")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "PORT="+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	testtools.DieWithTest(cmd)
	logs := &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stdout = logs
	cmd.Stderr = io.MultiWriter(logs, pw)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the everything server: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		announced := false
		for sc.Scan() {
			if !announced && strings.Contains(sc.Text(), "listening on port "+strconv.Itoa(port)) {
				announced = true
				close(listening)
			}
		}
	}()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			t.Errorf("the everything server did not stop within 15s of SIGTERM; killed")
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		killGroup(cmd)
		pw.Close()
	}
	select {
	case <-listening:
	case err := <-exited:
		pw.Close()
		t.Fatalf("the everything server exited before listening (%v); log:\n%s", err, logs.String())
	case <-time.After(30 * time.Second):
		stop()
		t.Fatalf("the everything server did not listen within 30s; log:\n%s", logs.String())
	}
	t.Cleanup(stop)
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp", logs
}

// The answers the client's handlers give, and what the server's tools make
// of them.
const (
	everythingModel  = "hexmcp-e2e-model"
	everythingReply  = "pong from the Go client"
	everythingPrompt = "ping from the Go client"
)

// exerciseEverything connects over tr (pinned to rev when not empty) and
// runs through the server's features.
func exerciseEverything(t *testing.T, rev domain.Revision, tr client.Transport, logs *lockedBuffer) {
	ctx, cancel := context.WithTimeout(context.Background(), everythingTimeout)
	defer cancel()
	defer func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	}()

	sampled := make(chan domain.CreateMessageParams, 1)
	elicited := make(chan domain.ElicitParams, 1)
	c := client.New(client.Options{
		ClientInfo: domain.Implementation{Name: "hexmcp-e2e", Version: "0.0.0"},
		Revision:   rev,
		Sampling: func(_ context.Context, p domain.CreateMessageParams) (*domain.CreateMessageResult, error) {
			select {
			case sampled <- p:
			default:
			}
			return client.Reply(everythingModel, everythingReply), nil
		},
		Elicitation: func(_ context.Context, p domain.ElicitParams) (*domain.ElicitResult, error) {
			select {
			case elicited <- p:
			default:
			}
			return client.Accept(map[string]any{"name": "Ada Lovelace", "check": true, "integer": 7})
		},
	})
	s, err := c.Connect(ctx, tr)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer func() {
		if err := s.Close(); err != nil && !errors.Is(err, client.ErrClosed) {
			t.Logf("close: %v", err)
		}
	}()

	want := rev
	if want == "" {
		want = domain.Revision20251125 // the newest its SDK speaks
	}
	if got := s.Revision(); got != want {
		t.Errorf("revision %q, want %q", got, want)
	}
	if info := s.ServerInfo(); info.Name != "mcp-servers/everything" {
		t.Errorf("server info %+v, want the name mcp-servers/everything", info)
	}

	// Tools, every page.
	var tools []string
	for tool, err := range s.ListTools(ctx) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		tools = append(tools, tool.Name)
	}
	for _, name := range []string{"echo", "get-sum", "trigger-sampling-request", "trigger-elicitation-request"} {
		if !slices.Contains(tools, name) {
			t.Errorf("tools/list lacks %q: %v", name, tools)
		}
	}

	callText := func(name string, args map[string]any) string {
		t.Helper()
		res, err := s.CallTool(ctx, name, args)
		if err != nil {
			t.Fatalf("tools/call %s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("tools/call %s: tool error: %s", name, res.Text())
		}
		return res.Text()
	}
	if got, want := callText("echo", map[string]any{"message": "hello from hexmcp"}), "Echo: hello from hexmcp"; got != want {
		t.Errorf("echo: %q, want %q", got, want)
	}
	if got, want := callText("get-sum", map[string]any{"a": 2, "b": 3.5}), "The sum of 2 and 3.5 is 5.5."; got != want {
		t.Errorf("get-sum: %q, want %q", got, want)
	}

	// A tool that asks the client to sample.
	got := callText("trigger-sampling-request", map[string]any{"prompt": everythingPrompt, "maxTokens": 20})
	select {
	case p := <-sampled:
		if p.MaxTokens != 20 || p.SystemPrompt != "You are a helpful test server." || len(p.Messages) != 1 {
			t.Errorf("sampling/createMessage params %+v", p)
		} else if !strings.Contains(string(p.Messages[0].Content), "Resource trigger-sampling-request context: "+everythingPrompt) {
			t.Errorf("sampling message %s", p.Messages[0].Content)
		}
	default:
		t.Errorf("trigger-sampling-request did not reach the Sampling handler")
	}
	for _, w := range []string{`"model": "` + everythingModel + `"`, everythingReply} {
		if !strings.Contains(got, w) {
			t.Errorf("trigger-sampling-request: %q lacks %q", got, w)
		}
	}

	// A tool that asks the user (elicitation, form mode).
	got = callText("trigger-elicitation-request", nil)
	select {
	case p := <-elicited:
		if p.Message != "Please provide inputs for the following fields:" || !strings.Contains(string(p.RequestedSchema), `"required":["name"]`) {
			t.Errorf("elicitation/create params: message %q, schema %s", p.Message, p.RequestedSchema)
		}
	default:
		t.Errorf("trigger-elicitation-request did not reach the Elicitation handler")
	}
	for _, w := range []string{"User provided the requested information", "- Name: Ada Lovelace", "- Agreed to terms: true", "- Favorite Integer: 7"} {
		if !strings.Contains(got, w) {
			t.Errorf("trigger-elicitation-request: %q lacks %q", got, w)
		}
	}

	// Prompts, every page; two of them got.
	var prompts []string
	for p, err := range s.ListPrompts(ctx) {
		if err != nil {
			t.Fatalf("prompts/list: %v", err)
		}
		prompts = append(prompts, p.Name)
	}
	for _, name := range []string{"simple-prompt", "args-prompt"} {
		if !slices.Contains(prompts, name) {
			t.Errorf("prompts/list lacks %q: %v", name, prompts)
		}
	}
	promptText := func(name string, args map[string]string) string {
		t.Helper()
		res, err := s.GetPrompt(ctx, name, args)
		if err != nil {
			t.Fatalf("prompts/get %s: %v", name, err)
		}
		if len(res.Messages) != 1 || res.Messages[0].Role != domain.RoleUser || res.Messages[0].Content.Type != "text" {
			t.Fatalf("prompts/get %s: %s", name, res.Raw)
		}
		return res.Messages[0].Content.Text
	}
	if got, want := promptText("simple-prompt", nil), "This is a simple prompt without arguments."; got != want {
		t.Errorf("simple-prompt: %q, want %q", got, want)
	}
	if got, want := promptText("args-prompt", map[string]string{"city": "Lisbon"}), "What's weather in Lisbon?"; got != want {
		t.Errorf("args-prompt: %q, want %q", got, want)
	}

	// Resources and templates, every page; a static and a dynamic one read.
	const features = "demo://resource/static/document/features.md"
	var resources []string
	for r, err := range s.ListResources(ctx) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		resources = append(resources, r.URI)
	}
	if !slices.Contains(resources, features) {
		t.Errorf("resources/list lacks %s: %v", features, resources)
	}
	var templates []string
	for r, err := range s.ListResourceTemplates(ctx) {
		if err != nil {
			t.Fatalf("resources/templates/list: %v", err)
		}
		templates = append(templates, r.URITemplate)
	}
	if !slices.Contains(templates, "demo://resource/dynamic/text/{resourceId}") {
		t.Errorf("resources/templates/list lacks the dynamic text template: %v", templates)
	}
	readText := func(uri, mime, prefix string) {
		t.Helper()
		res, err := s.ReadResource(ctx, uri)
		if err != nil {
			t.Fatalf("resources/read %s: %v", uri, err)
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MimeType != mime || !strings.HasPrefix(res.Contents[0].Text, prefix) {
			t.Errorf("resources/read %s: %s", uri, abbreviate(res.Raw))
		}
	}
	readText(features, "text/markdown", "# Everything Server - Features")
	readText("demo://resource/dynamic/text/7", "text/plain", "Resource 7: This is a plaintext resource created at ")

	if err := s.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
}

// abbreviate returns raw, cut to 300 bytes.
func abbreviate(raw json.RawMessage) string {
	if len(raw) <= 300 {
		return string(raw)
	}
	return fmt.Sprintf("%s… (%d bytes)", raw[:300], len(raw))
}
