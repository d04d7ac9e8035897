package hexmcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/hexmcptest"
	"github.com/hexmcp/hexmcp/internal/clienttest"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

var transports = []hexmcptest.Transport{hexmcptest.InMemory, hexmcptest.StreamableHTTP}

// forEach runs fn for every revision over every transport.
func forEach(t *testing.T, srv *hexmcp.Server, opts hexmcptest.ClientOptions, fn func(t *testing.T, c *client.Session)) {
	t.Helper()
	for _, tr := range transports {
		t.Run(tr.String(), func(t *testing.T) {
			o := opts
			o.Transport = tr
			hexmcptest.ForEachRevision(t, srv, o, fn)
		})
	}
}

type Weather struct {
	Temperature float64 `json:"temperature"`
	Conditions  string  `json:"conditions"`
}

type CityInput struct {
	City string `json:"city" minLength:"1"`
}

func quiet(opts hexmcp.Options) hexmcp.Options {
	opts.Logger = slog.New(slog.DiscardHandler)
	return opts
}

func TestToolsEveryRevision(t *testing.T) {
	srv := hexmcptest.NewServer(t, quiet(hexmcp.Options{
		PageSize: 1, // tools/list takes three pages
		Tools: []hexmcp.Tool{
			hexmcp.Func(add),
			hexmcp.Func(func(_ context.Context, in CityInput) (Weather, error) {
				return Weather{Temperature: 21.5, Conditions: "sunny in " + in.City}, nil
			}, hexmcp.WithName("weather"), hexmcp.WithDescription("The weather.")),
			hexmcp.Func(func(_ context.Context, in CityInput) (string, error) {
				return "", hexmcp.NewToolError("no flights to " + in.City)
			}, hexmcp.WithName("fly")),
		},
	}))
	var mu sync.Mutex
	seen := map[domain.Revision]int{}
	forEach(t, srv, hexmcptest.ClientOptions{}, func(t *testing.T, c *client.Session) {
		ctx := t.Context()
		mu.Lock()
		seen[c.Revision()]++
		mu.Unlock()

		tools, err := client.Collect(c.ListTools(ctx))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range tools {
			names = append(names, tool.Name)
		}
		if !slices.Equal(names, []string{"add", "fly", "weather"}) {
			t.Fatalf("tools = %v, want add, fly, weather (every page)", names)
		}
		if w := tools[2]; w.Description != "The weather." || !strings.Contains(string(w.InputSchema), `"city"`) ||
			(len(w.OutputSchema) > 0) != c.Features().OutputSchema {
			t.Errorf("weather = %+v", w)
		}

		res, err := c.CallTool(ctx, "add", map[string]any{"a": 2, "b": 3})
		if err != nil || res.Text() != "5" || res.IsError {
			t.Fatalf("add = %+v, %v", res, err)
		}

		res, err = c.CallTool(ctx, "weather", CityInput{City: "Lyon"})
		if err != nil || res.IsError {
			t.Fatalf("weather = %+v, %v", res, err)
		}
		var w Weather
		if c.Features().StructuredContent {
			if err := res.DecodeStructured(&w); err != nil || w.Conditions != "sunny in Lyon" {
				t.Errorf("structured %s: %+v %v", res.StructuredContent, w, err)
			}
		} else if res.StructuredContent != nil {
			t.Errorf("structuredContent at %s: %s", c.Revision(), res.StructuredContent)
		}
		if err := json.Unmarshal([]byte(res.Text()), &w); err != nil || w.Temperature != 21.5 {
			t.Errorf("text %q: %v", res.Text(), err)
		}
		if !json.Valid(res.Raw) || !strings.Contains(string(res.Raw), `"content"`) {
			t.Errorf("raw result %s", res.Raw)
		}

		res, err = c.CallTool(ctx, "fly", CityInput{City: "Mars"})
		if err != nil || !res.IsError || res.Text() != "no flights to Mars" {
			t.Errorf("fly = %+v, %v: want a tool error", res, err)
		}

		clienttest.CheckRefusedCalls(t, c)
	})
	for _, rev := range hexmcptest.Revisions(srv) {
		if seen[rev] != len(transports) {
			t.Errorf("%s ran %d times, want %d", rev, seen[rev], len(transports))
		}
	}
	if len(seen) != 5 {
		t.Errorf("ran under %d revisions, want 5", len(seen))
	}
}

// askingServer has the asking tools (testtools.AskingTools), a tool
// that answers the client capabilities it saw, and a prompt that asks.
func askingServer(t *testing.T) *hexmcp.Server {
	t.Helper()
	caps := hexmcp.NewTool(func(rc *hexmcp.RequestContext) string { return string(rc.ClientCapabilities()) }, hexmcp.WithName("caps"))
	prompt := hexmcp.NewPrompt("intro", func(ctx context.Context, args map[string]string) (*domain.GetPromptResult, error) {
		res, err := hexmcp.RequestFrom(ctx).CreateMessage(ctx, "intro", domain.CreateMessageParams{
			Messages: []domain.SamplingMessage{hexmcp.UserText("introduce " + args["who"])}, MaxTokens: 20})
		if err != nil {
			return nil, err
		}
		return &domain.GetPromptResult{Messages: []domain.PromptMessage{hexmcp.UserMessage(hexmcp.Text(res.Text()))}}, nil
	}, hexmcp.WithArguments(domain.PromptArgument{Name: "who", Required: true}))
	return hexmcptest.NewServer(t, quiet(hexmcp.Options{Tools: append(testtools.AskingTools(), caps), Prompts: []hexmcp.Prompt{prompt}}))
}

func TestHandlersAnswerInBothEras(t *testing.T) {
	srv := askingServer(t)
	var answers clienttest.Answers
	opts := hexmcptest.ClientOptions{Elicitation: answers.Elicitation, Sampling: answers.Sampling, Roots: answers.Roots}
	forEach(t, srv, opts, func(t *testing.T, c *client.Session) {
		ctx := t.Context()
		clienttest.CallAskingTools(t, c)
		p, err := c.GetPrompt(ctx, "intro", map[string]string{"who": "Bob"})
		if err != nil || len(p.Messages) != 1 || p.Messages[0].Role != domain.RoleUser || p.Messages[0].Content.Text != "re: introduce Bob" {
			t.Fatalf("intro = %+v, %v", p, err)
		}
	})
	// Per revision and transport: sampling 1+2+1, roots 1; elicitation
	// only where the revision has it (three revisions).
	want := map[string]int{"sampling": 4 * 10, "roots": 10, "elicitation": 3 * 2}
	if calls := answers.Calls(); !reflect.DeepEqual(calls, want) {
		t.Errorf("handler calls = %v, want %v", calls, want)
	}
}

func TestCapabilitiesFollowHandlers(t *testing.T) {
	srv := askingServer(t)
	elicit := func(context.Context, domain.ElicitParams) (*domain.ElicitResult, error) { return nil, nil }
	sample := func(context.Context, domain.CreateMessageParams) (*domain.CreateMessageResult, error) {
		return nil, nil
	}
	roots := func(context.Context) ([]domain.Root, error) { return nil, nil }
	for _, tc := range []struct {
		opts hexmcptest.ClientOptions
		want string
	}{
		{hexmcptest.ClientOptions{}, `{}`},
		{hexmcptest.ClientOptions{Elicitation: elicit}, `{"elicitation":{}}`},
		{hexmcptest.ClientOptions{Sampling: sample, Roots: roots}, `{"roots":{},"sampling":{}}`},
		{hexmcptest.ClientOptions{Elicitation: elicit, Sampling: sample, Roots: roots}, `{"elicitation":{},"roots":{},"sampling":{}}`},
		{hexmcptest.ClientOptions{Elicitation: elicit, Capabilities: map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}}, `{"elicitation":{"url":{}}}`},
		{hexmcptest.ClientOptions{Roots: roots, Tasks: true}, `{"roots":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`},
	} {
		forEach(t, srv, tc.opts, func(t *testing.T, c *client.Session) {
			res, err := c.CallTool(t.Context(), "caps", nil)
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal([]byte(res.Text()), &got); err != nil {
				t.Fatalf("%q: %v", res.Text(), err)
			}
			_ = json.Unmarshal([]byte(tc.want), &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("declared %s, want %s", res.Text(), tc.want)
			}
		})
	}
}

func TestMissingHandler(t *testing.T) {
	srv := askingServer(t)
	forEach(t, srv, hexmcptest.ClientOptions{}, func(t *testing.T, c *client.Session) {
		_, err := c.CallTool(t.Context(), "ask_twice", nil)
		var rpcErr *client.RPCError
		if !errors.As(err, &rpcErr) || rpcErr.Code != domain.CodeMissingClientCapability || !strings.Contains(string(rpcErr.Data), `"sampling"`) {
			t.Fatalf("without a Sampling handler: %v, want -32021 naming sampling", err)
		}
	})
}

func TestHandlerErrors(t *testing.T) {
	srv := askingServer(t)
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		err  error
		want string // the tool's error text in the handshake era
	}{
		{"rpc", &client.RPCError{Code: -1, Message: "User rejected sampling request"}, "-1 User rejected sampling request"},
		{"other", boom, "-32603 boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := hexmcptest.ClientOptions{Sampling: func(context.Context, domain.CreateMessageParams) (*domain.CreateMessageResult, error) {
				return nil, tc.err
			}}
			forEach(t, srv, opts, func(t *testing.T, c *client.Session) {
				_, err := c.CallTool(t.Context(), "ask_twice", nil)
				if c.Features().Era == domain.EraStateless {
					// No error answer exists: the call fails with the
					// handler's error.
					if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), `sampling/createMessage "first"`) {
						t.Fatalf("stateless: %v, want the handler's error", err)
					}
					return
				}
				// The tool got *hexmcp.ClientError and failed with it: the
				// engine answers -32603 and logs the details.
				var rpcErr *client.RPCError
				if !errors.As(err, &rpcErr) || rpcErr.Code != domain.CodeInternalError {
					t.Fatalf("handshake: %v", err)
				}
			})
		})
	}
	// What the tool sees in a session: the client's error answer.
	seen := make(chan string, 1)
	probe := hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
		_, err := rc.ListRoots(ctx, "r")
		var ce *hexmcp.ClientError
		if errors.As(err, &ce) {
			seen <- fmt.Sprintf("%d %s", ce.Code, ce.Message)
		}
		return "", nil
	}, hexmcp.WithName("probe"))
	srv2 := hexmcptest.NewServer(t, quiet(hexmcp.Options{Tools: []hexmcp.Tool{probe}}))
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&client.RPCError{Code: -1, Message: "User rejected"}, "-1 User rejected"},
		{boom, "-32603 boom"},
	} {
		c := hexmcptest.Connect(t, srv2, hexmcptest.ClientOptions{Revision: domain.Revision20251125,
			Roots: func(context.Context) ([]domain.Root, error) { return nil, tc.err }})
		if _, err := c.CallTool(t.Context(), "probe", nil); err != nil {
			t.Fatal(err)
		}
		if got := <-seen; got != tc.want {
			t.Errorf("the tool saw %q, want %q", got, tc.want)
		}
	}
}

func TestPromptsAndResources(t *testing.T) {
	srv := hexmcptest.NewServer(t, quiet(hexmcp.Options{
		PageSize: 1,
		Prompts: []hexmcp.Prompt{
			hexmcp.NewPrompt("greet", func(_ context.Context, args map[string]string) (*domain.GetPromptResult, error) {
				return &domain.GetPromptResult{Description: "A greeting", Messages: []domain.PromptMessage{
					hexmcp.UserMessage(hexmcp.Text("Greet " + args["name"])),
					hexmcp.AssistantMessage(hexmcp.Text("Hello!")),
				}}, nil
			}, hexmcp.WithArguments(domain.PromptArgument{Name: "name", Required: true})),
			hexmcp.NewPrompt("bye", func(context.Context, map[string]string) (*domain.GetPromptResult, error) {
				return &domain.GetPromptResult{Messages: []domain.PromptMessage{hexmcp.UserMessage(hexmcp.Text("Bye"))}}, nil
			}),
		},
		Resources: []hexmcp.Resource{
			hexmcp.TextResource("test://readme", "readme", "Read me."),
			hexmcp.BlobResource("test://blob", "blob", []byte{1, 2, 3}),
			hexmcp.NewResourceTemplate("test://users/{id}", "user", func(_ context.Context, uri string, vars map[string]string) ([]domain.ResourceContents, error) {
				return []domain.ResourceContents{{URI: uri, Text: "user " + vars["id"]}}, nil
			}),
		},
	}))
	forEach(t, srv, hexmcptest.ClientOptions{}, func(t *testing.T, c *client.Session) {
		ctx := t.Context()
		prompts, err := client.Collect(c.ListPrompts(ctx))
		if err != nil || len(prompts) != 2 || prompts[0].Name != "bye" || prompts[1].Name != "greet" ||
			len(prompts[1].Arguments) != 1 || !prompts[1].Arguments[0].Required {
			t.Fatalf("prompts = %+v, %v", prompts, err)
		}
		p, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"})
		if err != nil || p.Description != "A greeting" || len(p.Messages) != 2 || p.Messages[0].Content.Text != "Greet Ada" ||
			p.Messages[1].Role != domain.RoleAssistant {
			t.Fatalf("greet = %+v, %v", p, err)
		}
		var rpcErr *client.RPCError
		if _, err := c.GetPrompt(ctx, "greet", nil); !errors.As(err, &rpcErr) || rpcErr.Code != domain.CodeInvalidParams {
			t.Errorf("a missing argument: %v", err)
		}

		resources, err := client.Collect(c.ListResources(ctx))
		if err != nil || len(resources) != 2 {
			t.Fatalf("resources = %+v, %v", resources, err)
		}
		templates, err := client.Collect(c.ListResourceTemplates(ctx))
		if err != nil || len(templates) != 1 || templates[0].URITemplate != "test://users/{id}" {
			t.Fatalf("templates = %+v, %v", templates, err)
		}
		read, err := c.ReadResource(ctx, "test://readme")
		if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "Read me." || read.Contents[0].MimeType != "text/plain" {
			t.Fatalf("readme = %+v, %v", read, err)
		}
		read, err = c.ReadResource(ctx, "test://blob")
		if err != nil || len(read.Contents) != 1 || read.Contents[0].Blob != "AQID" {
			t.Fatalf("blob = %+v, %v", read, err)
		}
		read, err = c.ReadResource(ctx, "test://users/7")
		if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "user 7" {
			t.Fatalf("user = %+v, %v", read, err)
		}
		_, err = c.ReadResource(ctx, "test://missing")
		if !errors.As(err, &rpcErr) || rpcErr.Code != srv.Engine().Policy().ResourceNotFoundCode(c.Revision()) {
			t.Errorf("a missing resource: %v", err)
		}
	})
}

// Call sends any method; its _meta joins the client's, so a progressToken
// brings the tool's progress notifications to OnNotification.
func TestCallAndNotifications(t *testing.T) {
	steps := hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
		for i := 1; i <= 3; i++ {
			if err := rc.ReportProgress(ctx, float64(i), 3, ""); err != nil {
				return "", err
			}
		}
		return "done", nil
	}, hexmcp.WithName("steps"))
	srv := hexmcptest.NewServer(t, quiet(hexmcp.Options{Tools: []hexmcp.Tool{steps}}))
	for _, tr := range transports {
		t.Run(tr.String(), func(t *testing.T) {
			var mu sync.Mutex
			var progress []float64
			opts := hexmcptest.ClientOptions{Transport: tr, OnNotification: func(n client.Notification) {
				if n.Method != "notifications/progress" {
					return
				}
				var p struct {
					ProgressToken string  `json:"progressToken"`
					Progress      float64 `json:"progress"`
				}
				if json.Unmarshal(n.Params, &p) == nil && p.ProgressToken == "tok" {
					mu.Lock()
					progress = append(progress, p.Progress)
					mu.Unlock()
				}
			}}
			hexmcptest.ForEachRevision(t, srv, opts, func(t *testing.T, c *client.Session) {
				mu.Lock()
				progress = nil
				mu.Unlock()
				var res client.CallToolResult
				err := c.Call(t.Context(), "tools/call", map[string]any{"name": "steps", "_meta": map[string]any{"progressToken": "tok"}}, &res)
				if err != nil || res.Text() != "done" {
					t.Fatalf("steps = %+v, %v", res, err)
				}
				mu.Lock()
				defer mu.Unlock()
				if !slices.Equal(progress, []float64{1, 2, 3}) {
					t.Errorf("progress = %v, want 1, 2, 3", progress)
				}
			})
		})
	}
}

// Over HTTP at 2026-07-28 the client mirrors the arguments a tool marks
// with x-mcp-header; without them the handler would answer -32020.
func TestHTTPMirrorsHeaderArguments(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"count":{"type":"integer","x-mcp-header":"Count"},
		"dry":{"type":"boolean","x-mcp-header":"Dry"},
		"where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
		"query":{"type":"string"}}}`)
	tool := hexmcp.NewRawTool("sql", schema, func(ctx context.Context, args json.RawMessage) (any, error) {
		h := hexmcp.RequestFrom(ctx).Transport().Header
		return fmt.Sprintf("%v|%v|%v|%v", h["Mcp-Param-Region"], h["Mcp-Param-Count"], h["Mcp-Param-Dry"], h["Mcp-Param-Zone"]), nil
	})
	srv := hexmcptest.NewServer(t, quiet(hexmcp.Options{Tools: []hexmcp.Tool{tool}}))
	c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Revision: domain.Revision20260728, Transport: hexmcptest.StreamableHTTP})
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{"region": "eu-west", "count": 42, "dry": true, "where": map[string]any{"zone": "a b"}, "query": "select"},
			"[eu-west]|[42]|[true]|[a b]"},
		{map[string]any{"region": "Zürich", "count": 4.2e1}, "[=?base64?WsO8cmljaA==?=]|[42]|[]|[]"},
		{map[string]any{"region": " padded", "dry": false}, "[=?base64?IHBhZGRlZA==?=]|[]|[false]|[]"},
		{map[string]any{"region": "=?base64?looks encoded?="}, "[=?base64?PT9iYXNlNjQ/bG9va3MgZW5jb2RlZD89?=]|[]|[]|[]"},
		{nil, "[]|[]|[]|[]"},
	} {
		res, err := c.CallTool(t.Context(), "sql", tc.args)
		if err != nil || res.Text() != tc.want {
			t.Errorf("args %v: %+v, %v; want %q", tc.args, res, err, tc.want)
		}
	}
}

func TestRevisionsFollowThePolicy(t *testing.T) {
	srv := hexmcptest.NewServer(t, quiet(hexmcp.Options{
		Tools:  []hexmcp.Tool{hexmcp.Func(add)},
		Policy: domain.RevisionPolicy{Disabled: []domain.Revision{domain.Revision20241105, domain.Revision20250326}},
	}))
	want := []domain.Revision{domain.Revision20250618, domain.Revision20251125, domain.Revision20260728}
	if got := hexmcptest.Revisions(srv); !slices.Equal(got, want) {
		t.Fatalf("Revisions = %v, want %v", got, want)
	}
	for _, tr := range transports {
		_, err := hexmcptest.NewClient(t.Context(), srv, hexmcptest.ClientOptions{Revision: domain.Revision20241105, Transport: tr})
		if err == nil || !strings.Contains(err.Error(), "protocol revision") {
			t.Errorf("%v: a disabled revision connected: %v", tr, err)
		}
	}
	if _, err := hexmcptest.NewClient(t.Context(), srv, hexmcptest.ClientOptions{Revision: "2099-01-01"}); err == nil {
		t.Error("an unknown revision connected")
	}
	if _, err := hexmcptest.NewClient(t.Context(), nil, hexmcptest.ClientOptions{}); err == nil {
		t.Error("a nil server connected")
	}
	c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{})
	if c.Revision() != domain.Revision20260728 || c.Features().Era != domain.EraStateless {
		t.Errorf("default revision %s", c.Revision())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.CallTool(t.Context(), "add", nil); err == nil {
		t.Error("a closed client called a tool")
	}
}

// ClientOptions.Timeout bounds each request the client sends and each
// answer of a handler: a call whose tool never answers fails with
// context.DeadlineExceeded, and so does, in the stateless era, a call
// whose handler never answers (in the handshake era the handler answers
// within the request, which either bound may end first). The bound is
// long enough for connecting on a busy machine (the connection's
// requests are bounded too): 3 s, well over a hundred times what an
// initialize takes under the race detector.
func TestTimeoutBoundsRequestsAndHandlers(t *testing.T) {
	srv := askingServer(t)
	if err := srv.AddTool(hexmcp.NewTool(func(ctx context.Context, _ *hexmcp.RequestContext) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, hexmcp.WithName("never"))); err != nil {
		t.Fatal(err)
	}
	for _, tr := range transports {
		for _, rev := range []domain.Revision{domain.Revision20251125, domain.Revision20260728} {
			t.Run(tr.String()+"/"+string(rev), func(t *testing.T) {
				t.Parallel()
				c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Revision: rev, Transport: tr, Timeout: 3 * time.Second,
					Sampling: func(ctx context.Context, _ domain.CreateMessageParams) (*domain.CreateMessageResult, error) {
						<-ctx.Done()
						return nil, ctx.Err()
					}})
				tools := []string{"never"}
				if c.Features().Era == domain.EraStateless {
					tools = append(tools, "ask_twice")
				}
				for _, tool := range tools {
					if _, err := c.CallTool(t.Context(), tool, nil); !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("%s: %v, want context.DeadlineExceeded", tool, err)
					}
				}
			})
		}
	}
}

// The server cancels its question when the client cancels the call: the
// handler's context ends.
func TestCancellationReachesTheHandler(t *testing.T) {
	srv := askingServer(t)
	started := make(chan struct{})
	ended := make(chan error, 1)
	opts := hexmcptest.ClientOptions{Revision: domain.Revision20251125, Sampling: func(ctx context.Context, _ domain.CreateMessageParams) (*domain.CreateMessageResult, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	}}
	for _, tr := range transports {
		t.Run(tr.String(), func(t *testing.T) {
			started = make(chan struct{})
			opts.Transport = tr
			c := hexmcptest.Connect(t, srv, opts)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := c.CallTool(ctx, "ask_twice", nil)
				done <- err
			}()
			wait := func(what string, ch <-chan error) error {
				t.Helper()
				return testtools.Recv(t, ch, 10*time.Second, what+": nothing within 10 s")
			}
			testtools.Recv(t, started, 10*time.Second, "the handler did not start")
			cancel()
			if err := wait("CallTool", done); !errors.Is(err, context.Canceled) {
				t.Fatalf("CallTool = %v, want context.Canceled", err)
			}
			if err := wait("the handler", ended); !errors.Is(err, context.Canceled) {
				t.Fatalf("the handler's context: %v", err)
			}
		})
	}
}

// TestErrorsUnderTheFrontDoor: what a handler meets when it asks a client
// that cannot answer, or adds a session tool without a session, is what
// the hexmcp names say, over every transport and revision.
func TestErrorsUnderTheFrontDoor(t *testing.T) {
	extra := hexmcp.NewTool(func() string { return "" }, hexmcp.WithName("extra"))
	probe := hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
		var out []string
		switch err := rc.AddSessionTool(extra); {
		case err == nil:
			rc.RemoveSessionTool("extra")
			out = append(out, "session tool added")
		case errors.Is(err, hexmcp.ErrNoSession):
			out = append(out, "no session")
		default:
			return "", err
		}
		_, err := rc.CreateMessage(ctx, "m", hexmcp.CreateMessageParams{Messages: []hexmcp.SamplingMessage{hexmcp.UserText("hi")}, MaxTokens: 5})
		var missing *hexmcp.MissingCapabilityError
		if !errors.As(err, &missing) || missing.Required["sampling"] == nil {
			return "", fmt.Errorf("sampling without the capability: %w", err)
		}
		return strings.Join(append(out, "sampling missing"), ", "), nil
	}, hexmcp.WithName("probe"))
	srv := hexmcptest.NewServer(t, quiet(hexmcp.Options{Tools: []hexmcp.Tool{probe}}))
	forEach(t, srv, hexmcptest.ClientOptions{}, func(t *testing.T, c *client.Session) {
		res, err := c.CallTool(t.Context(), "probe", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := "session tool added, sampling missing"
		if c.Features().Era == domain.EraStateless {
			want = "no session, sampling missing"
		}
		if res.IsError || res.Text() != want {
			t.Fatalf("the tool saw %q (isError %v), want %q", res.Text(), res.IsError, want)
		}
	})
}
