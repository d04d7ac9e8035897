package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/hexmcptest"
)

// serveEnv makes the test binary an MCP server on stdio, of the version
// the variable names, so that the command is tested against a real process.
const serveEnv = "MCPCONTRACT_TEST_SERVE"

func TestMain(m *testing.M) {
	if v := os.Getenv(serveEnv); v != "" {
		srv, err := hexmcp.New(userServer(v))
		if err == nil {
			err = srv.ServeStdio(context.Background())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type createV1 struct {
	Name string `json:"name" description:"The user's name" maxLength:"64"`
	Age  int    `json:"age,omitempty" minimum:"0" maximum:"150"`
	Role string `json:"role,omitempty" enum:"admin,member"`
}

type createCompatible struct {
	Name  string `json:"name" description:"The full name of the user" maxLength:"128"`
	Age   int    `json:"age,omitempty" minimum:"0" maximum:"200"`
	Role  string `json:"role,omitempty" enum:"admin,member,guest"`
	Email string `json:"email,omitempty"`
}

type createBreaking struct {
	Name  string `json:"name" description:"The user's name" maxLength:"64"`
	Age   int    `json:"age,omitempty" minimum:"0" maximum:"120"`
	Role  string `json:"role,omitempty" enum:"admin"`
	Email string `json:"email"`
}

type created struct {
	ID string `json:"id"`
}

type createdLoose struct {
	ID *string `json:"id,omitempty"`
}

type idIn struct {
	ID string `json:"id"`
}

func create[In any](_ context.Context, _ In) (created, error) { return created{ID: "u1"}, nil }

func greet(_ context.Context, args map[string]string) (*hexmcp.GetPromptResult, error) {
	return &hexmcp.GetPromptResult{Messages: []hexmcp.PromptMessage{hexmcp.UserMessage(hexmcp.Text("hello " + args["name"]))}}, nil
}

// userServer is one version of a small user service: v1; "compatible",
// whose changes break no client; "breaking", whose changes do.
func userServer(version string) hexmcp.Options {
	no, yes := hexmcp.Bool(false), hexmcp.Bool(true)
	del := hexmcp.Func(func(context.Context, idIn) (string, error) { return "deleted", nil },
		hexmcp.WithName("deleteUser"), hexmcp.WithAnnotations(hexmcp.ToolAnnotations{ReadOnlyHint: no, DestructiveHint: yes}))
	get := hexmcp.Func(func(context.Context, idIn) (created, error) { return created{ID: "u1"}, nil },
		hexmcp.WithName("getUser"), hexmcp.WithAnnotations(hexmcp.ToolAnnotations{ReadOnlyHint: yes}))
	prompt := hexmcp.NewPrompt("greet", greet, hexmcp.WithArguments(hexmcp.PromptArgument{Name: "name", Required: true}))
	res := hexmcp.TextResource("config://app", "config", "{}", hexmcp.WithMimeType("application/json"))
	opts := hexmcp.Options{Info: hexmcp.Implementation{Name: "users", Version: version}}
	switch version {
	case "v1":
		opts.Tools = []hexmcp.Tool{hexmcp.Func(create[createV1], hexmcp.WithName("createUser")), del, get}
	case "compatible":
		opts.Tools = []hexmcp.Tool{
			hexmcp.Func(create[createCompatible], hexmcp.WithName("createUser"), hexmcp.WithDescription("Creates a user.")),
			del, get,
			hexmcp.Func(func(context.Context, struct{}) ([]created, error) { return nil, nil }, hexmcp.WithName("listUsers")),
		}
	case "breaking":
		opts.Tools = []hexmcp.Tool{
			hexmcp.Func(func(context.Context, createBreaking) (createdLoose, error) { return createdLoose{}, nil }, hexmcp.WithName("createUser")),
			hexmcp.Func(func(context.Context, idIn) (created, error) { return created{ID: "u1"}, nil },
				hexmcp.WithName("getUser"), hexmcp.WithAnnotations(hexmcp.ToolAnnotations{ReadOnlyHint: no, DestructiveHint: yes})),
		}
		prompt = hexmcp.NewPrompt("greet", greet, hexmcp.WithArguments(hexmcp.PromptArgument{Name: "name", Required: true}, hexmcp.PromptArgument{Name: "lang", Required: true}))
		res = hexmcp.TextResource("config://app", "config", "{}")
	default:
		panic("unknown version " + version)
	}
	opts.Prompts = []hexmcp.Prompt{prompt}
	opts.Resources = []hexmcp.Resource{res}
	return opts
}

// checkReport runs check of lock against the server of version; it must
// exit with code and report every line of wants. It returns the report.
func checkReport(t *testing.T, version, lock string, code int, wants ...string) string {
	t.Helper()
	got, out, stderr := runCLI(t, version, "check", lock, "--", self(t))
	if got != code {
		t.Errorf("exit %d, want %d\n%s%s", got, code, out, stderr)
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	return out
}

// runCLI runs the command with args; the server it starts is this test
// binary serving version.
func runCLI(t *testing.T, version string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv(serveEnv, version)
	var out, errb bytes.Buffer
	code = run(t.Context(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func self(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestWriteAndCheckOverStdio(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "tools.lock.json")
	code, _, stderr := runCLI(t, "v1", "write", "-o", lock, "--", self(t))
	if code != exitOK {
		t.Fatalf("write: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "3 tools, 1 prompts, 1 resources") {
		t.Errorf("write said %q", stderr)
	}
	data, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		ProtocolVersion string           `json:"protocolVersion"`
		Tools           []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range l.Tools {
		names = append(names, tl["name"].(string))
	}
	if !slices.Equal(names, []string{"createUser", "deleteUser", "getUser"}) || l.ProtocolVersion != "2025-11-25" {
		t.Errorf("lock has tools %v under %s", names, l.ProtocolVersion)
	}

	t.Run("unchanged", func(t *testing.T) {
		checkReport(t, "v1", lock, exitOK, "0 breaking, 0 compatible")
	})
	t.Run("compatible", func(t *testing.T) {
		out := checkReport(t, "compatible", lock, exitOK,
			`compatible tool "listUsers" /: new tool`,
			`compatible tool "createUser" /inputSchema/properties/email: new optional parameter "email"`,
			`compatible tool "createUser" /inputSchema/properties/name/maxLength: bound loosened`,
			`compatible tool "createUser" /inputSchema/properties/age/maximum: bound loosened`,
			`compatible tool "createUser" /inputSchema/properties/role/enum: value "guest" added`,
			`compatible tool "createUser" /description: description changed`,
			"0 breaking, ",
		)
		if strings.Contains(out, "BREAKING") {
			t.Errorf("a compatible change reported as breaking:\n%s", out)
		}
	})
	t.Run("breaking", func(t *testing.T) {
		checkReport(t, "breaking", lock, exitBreaking,
			`BREAKING tool "deleteUser" /: tool removed`,
			`BREAKING tool "createUser" /inputSchema/required: new required parameter "email"`,
			`BREAKING tool "createUser" /inputSchema/properties/age/maximum: bound tightened`,
			`BREAKING tool "createUser" /inputSchema/properties/role/enum: value "member" removed`,
			`BREAKING tool "createUser" /outputSchema/required: property "id" may now be absent`,
			`BREAKING tool "getUser" /annotations/readOnlyHint: no longer read-only`,
			`BREAKING prompt "greet" /arguments/lang: new required argument "lang"`,
			`BREAKING resource "config://app" /mimeType: MIME type changed`,
		)
	})
	t.Run("json", func(t *testing.T) {
		code, out, stderr := runCLI(t, "breaking", "check", "-json", lock, "--", self(t))
		if code != exitBreaking {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		var rep struct {
			Lock       string `json:"lock"`
			Breaking   []map[string]any
			Compatible []map[string]any
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if rep.Lock != lock || len(rep.Breaking) < 8 {
			t.Errorf("report: %+v", rep)
		}
		for _, c := range rep.Breaking {
			if c["breaking"] != true || c["kind"] == "" || c["name"] == "" || c["message"] == "" {
				t.Errorf("a breaking change without its fields: %v", c)
			}
		}
	})
}

// The lock is the same, byte for byte, whoever writes it: the command over
// stdio, the command over Streamable HTTP, and hexmcptest in memory.
func TestOneLockFromEveryWriter(t *testing.T) {
	dir := t.TempDir()
	stdio := filepath.Join(dir, "stdio.json")
	if code, _, stderr := runCLI(t, "v1", "write", "-o", stdio, "--", self(t)); code != exitOK {
		t.Fatalf("write over stdio: exit %d\n%s", code, stderr)
	}
	srv := hexmcptest.NewServer(t, userServer("v1"))
	hs := httptest.NewServer(srv.HTTPHandler(mcphttp.Options{}))
	defer hs.Close()
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"write", "-o", "-", "-url", hs.URL}, &out, &errb); code != exitOK {
		t.Fatalf("write over HTTP: exit %d\n%s", code, errb.String())
	}
	want, err := os.ReadFile(stdio)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("over HTTP:\n%s\nover stdio:\n%s", out.String(), want)
	}
	mem := filepath.Join(dir, "mem.json")
	t.Run("hexmcptest", func(t *testing.T) {
		t.Setenv(hexmcptest.WriteContractEnv, "1")
		hexmcptest.CheckContract(t, srv, mem)
	})
	got, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("hexmcptest wrote:\n%s\nthe command:\n%s", got, want)
	}
}

func TestCheckOverHTTP(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "tools.lock.json")
	if code, _, stderr := runCLI(t, "v1", "write", "-o", lock, "--", self(t)); code != exitOK {
		t.Fatalf("write: exit %d\n%s", code, stderr)
	}
	for _, tc := range []struct {
		version string
		code    int
	}{{"v1", exitOK}, {"compatible", exitOK}, {"breaking", exitBreaking}} {
		t.Run(tc.version, func(t *testing.T) {
			srv := hexmcptest.NewServer(t, userServer(tc.version))
			hs := httptest.NewServer(srv.HTTPHandler(mcphttp.Options{}))
			defer hs.Close()
			var out, errb bytes.Buffer
			if code := run(t.Context(), []string{"check", "-url", hs.URL, "-H", "X-Test: 1", lock}, &out, &errb); code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out.String(), errb.String())
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "none.json")
	for _, args := range [][]string{
		nil,
		{"frobnicate"},
		{"write"},
		{"check", "--", "x"},
		{"check", lock},
		{"write", "-url", "http://127.0.0.1:1/mcp", "--", "x"},
		{"write", "-H", "no colon", "--", "x"},
		{"write", "-timeout", "0s", "--", "x"},
		{"write", "extra", "--", "x"},
	} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), args, &out, &errb); code != exitError {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	// A lock file that is missing, or not a lock, or a server that is not
	// there: exit 2 with the reason.
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"check", lock, "--", self(t)}, &out, &errb); code != exitError || !strings.Contains(errb.String(), "none.json") {
		t.Errorf("missing lock: exit %d: %s", code, errb.String())
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	_ = os.WriteFile(bad, []byte(`{"lockVersion":7}`), 0o644)
	errb.Reset()
	if code := run(t.Context(), []string{"check", bad, "--", self(t)}, &out, &errb); code != exitError || !strings.Contains(errb.String(), "format 7") {
		t.Errorf("bad lock: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run(t.Context(), []string{"write", "-o", "-", "--", filepath.Join(t.TempDir(), "no-such-server")}, &out, &errb); code != exitError {
		t.Errorf("no server: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	t.Setenv(serveEnv, "")
	// A process that is no MCP server: it exits at once.
	if code := run(t.Context(), []string{"write", "-o", "-", "--", "true"}, &out, &errb); code != exitError || !strings.Contains(errb.String(), "initialize") {
		t.Errorf("not a server: exit %d: %s", code, errb.String())
	}
}
