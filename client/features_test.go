package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
)

// A server that does not serve the stateless era is spoken to with
// initialize, and the client takes the older revision it offers.
func TestFallsBackToInitialize(t *testing.T) {
	for _, tc := range []struct {
		disabled []domain.Revision
		want     domain.Revision
	}{
		{[]domain.Revision{domain.Revision20260728}, domain.Revision20251125},
		{[]domain.Revision{domain.Revision20260728, domain.Revision20251125}, domain.Revision20250618},
	} {
		srv := testServer(t, nil, func(o *hexmcp.Options) { o.Policy = domain.RevisionPolicy{Disabled: tc.disabled} })
		for _, tr := range transports {
			t.Run(fmt.Sprintf("%s/%s", tr.name, tc.want), func(t *testing.T) {
				s := connect(t, client.New(client.Options{}), tr.dial(t, srv))
				if s.Revision() != tc.want || s.Features().Era != domain.EraHandshake {
					t.Fatalf("session speaks %s, want %s", s.Revision(), tc.want)
				}
				res, err := s.CallTool(t.Context(), "add", AddInput{A: 1, B: 2})
				if err != nil || res.Text() != "3" {
					t.Fatalf("add = %+v, %v", res, err)
				}
				if s.ServerInfo().Name == "" {
					t.Errorf("no server info")
				}
			})
		}
	}
	// A pinned revision the server refuses fails the connection.
	srv := testServer(t, nil, func(o *hexmcp.Options) {
		o.Policy = domain.RevisionPolicy{Disabled: []domain.Revision{domain.Revision20260728, domain.Revision20241105}}
	})
	for _, rev := range []domain.Revision{domain.Revision20260728, domain.Revision20241105} {
		for _, tr := range transports {
			t.Run(fmt.Sprintf("pinned/%s/%s", tr.name, rev), func(t *testing.T) {
				s, err := client.New(client.Options{Revision: rev}).Connect(t.Context(), tr.dial(t, srv))
				if err == nil {
					s.Close()
					t.Fatalf("connected at %s to a server that refuses it", s.Revision())
				}
			})
		}
	}
}

// A call whose context ends is cancelled on the server, in both eras.
func TestCancellation(t *testing.T) {
	g := newGate()
	srv := testServer(t, g)
	forEach(t, srv, client.Options{}, func(t *testing.T, s *client.Session) {
		ctx, cancel := context.WithCancelCause(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := s.CallTool(ctx, "slow", nil)
			errc <- err
		}()
		<-g.started
		stop := errors.New("the user gave up")
		cancel(stop)
		if err := <-errc; !errors.Is(err, stop) {
			t.Fatalf("cancelled call: %v, want the cause", err)
		}
		<-g.cancelled // the server's handler saw its context end
		// The session goes on.
		if res, err := s.CallTool(t.Context(), "add", AddInput{A: 1, B: 1}); err != nil || res.Text() != "2" {
			t.Fatalf("add after a cancellation = %+v, %v", res, err)
		}
	})
}

// WithProgress of a nil function asks for no progress: the request
// carries no progressToken.
func TestWithProgressNil(t *testing.T) {
	can := hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
		return fmt.Sprint(rc.CanReportProgress()), nil
	}, hexmcp.WithName("can_report"))
	srv := testServer(t, nil, func(o *hexmcp.Options) { o.Tools = append(o.Tools, can) })
	forEach(t, srv, client.Options{}, func(t *testing.T, s *client.Session) {
		for _, tc := range []struct {
			ctx  context.Context
			want string
		}{
			{client.WithProgress(t.Context(), nil), "false"},
			{client.WithProgress(t.Context(), func(client.Progress) {}), "true"},
		} {
			res, err := s.CallTool(tc.ctx, "can_report", nil)
			if err != nil || res.Text() != tc.want {
				t.Fatalf("can_report = %q, %v; want %s", res.Text(), err, tc.want)
			}
		}
	})
}

func TestProgress(t *testing.T) {
	srv := testServer(t, nil)
	forEach(t, srv, client.Options{}, func(t *testing.T, s *client.Session) {
		var got []string
		ctx := client.WithProgress(t.Context(), func(p client.Progress) {
			got = append(got, fmt.Sprintf("%g/%g %s", p.Progress, p.Total, p.Message))
		})
		res, err := s.CallTool(ctx, "count", nil)
		if err != nil || res.Text() != "counted" {
			t.Fatalf("count = %+v, %v", res, err)
		}
		if want := "1/3 step 1,2/3 step 2,3/3 step 3"; strings.Join(got, ",") != want {
			t.Fatalf("progress = %q, want %q", got, want)
		}
		// Without WithProgress, no token and no callback.
		if _, err := s.CallTool(t.Context(), "count", nil); err != nil {
			t.Fatal(err)
		}
	})
}

// A handshake-era server that refuses the level asked for with
// logging/setLevel fails Connect with its error: the session would not
// log as asked.
func TestLogLevelRefused(t *testing.T) {
	srv := testServer(t, nil)
	c := client.New(client.Options{LogLevel: "loud", Revision: domain.Revision20251125})
	s, err := c.Connect(t.Context(), pipeTransport(t, srv))
	var rpc *client.RPCError
	if !errors.As(err, &rpc) || rpc.Code != domain.CodeInvalidParams {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Connect with LogLevel %q = %v, want the server's -32602", "loud", err)
	}
}

func TestLogging(t *testing.T) {
	srv := testServer(t, nil)
	var mu sync.Mutex
	var got []string
	opts := client.Options{
		LogLevel: domain.LogInfo,
		Logging: func(m client.LogMessage) {
			mu.Lock()
			got = append(got, fmt.Sprintf("%s %s %s", m.Level, m.Logger, m.Data))
			mu.Unlock()
		},
	}
	forEach(t, srv, opts, func(t *testing.T, s *client.Session) {
		mu.Lock()
		got = nil
		mu.Unlock()
		if _, err := s.CallTool(t.Context(), "log", nil); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if want := `warning work "careful"`; strings.Join(got, ",") != want {
			t.Fatalf("log = %q, want %q (info and above)", got, want)
		}
	})
}

// notifications/tools/list_changed reaches the callback on a connection
// of the handshake era (over HTTP, on the GET stream).
func TestToolListChanged(t *testing.T) {
	srv := testServer(t, nil)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			changed := make(chan struct{}, 10)
			var names []string
			s := connect(t, client.New(client.Options{
				Revision:        domain.Revision20251125,
				ToolListChanged: func() { changed <- struct{}{} },
				Notification:    func(n client.Notification) { names = append(names, n.Method) },
			}), tr.dial(t, srv))
			if _, err := client.Collect(s.ListTools(t.Context())); err != nil {
				t.Fatal(err)
			}
			name := "extra_" + tr.name
			addToolSeen(t, srv, s, changed, name)
		})
	}
}

// addToolSeen adds the tool name (add) to srv until the test ends, waits
// for changed (the session's ToolListChanged) and checks that the session
// lists the tool then.
func addToolSeen(t *testing.T, srv *hexmcp.Server, s *client.Session, changed <-chan struct{}, name string) {
	t.Helper()
	if err := srv.AddTool(hexmcp.Func(add, hexmcp.WithName(name))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.RemoveTool(name) })
	<-changed
	tools, err := client.Collect(s.ListTools(t.Context()))
	if err != nil || !containsTool(tools, name) {
		t.Fatalf("after the change: %v %v", tools, err)
	}
}

func containsTool(ts []client.Tool, name string) bool {
	for _, t := range ts {
		if t.Name == name {
			return true
		}
	}
	return false
}

// A handler's error: the client's answer in the handshake era; the call's
// error in the stateless era.
func TestHandlerErrors(t *testing.T) {
	srv := testServer(t, nil)
	boom := errors.New("boom")
	opts := client.Options{Sampling: func(context.Context, domain.CreateMessageParams) (*domain.CreateMessageResult, error) {
		return nil, boom
	}}
	forEach(t, srv, opts, func(t *testing.T, s *client.Session) {
		_, err := s.CallTool(t.Context(), "ask_twice", nil)
		if s.Features().Era == domain.EraStateless {
			if !errors.Is(err, boom) {
				t.Fatalf("stateless: %v, want the handler's error", err)
			}
			return
		}
		var rpcErr *client.RPCError
		if !errors.As(err, &rpcErr) || rpcErr.Code != domain.CodeInternalError {
			t.Fatalf("handshake: %v", err)
		}
	})
	// No handler: the server refuses to ask (-32021) or the client says it
	// has none.
	forEach(t, srv, client.Options{}, func(t *testing.T, s *client.Session) {
		_, err := s.CallTool(t.Context(), "ask_twice", nil)
		var rpcErr *client.RPCError
		if !errors.As(err, &rpcErr) {
			t.Fatalf("without a Sampling handler: %v", err)
		}
	})
}

// Over HTTP at 2026-07-28 the client mirrors the arguments a tool marks
// with x-mcp-header into Mcp-Param headers, learning the tool's schema
// when the server asks for headers it did not send.
func TestHTTPMirrorsHeaderArguments(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"count":{"type":"integer","x-mcp-header":"Count"},
		"where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
		"query":{"type":"string"}}}`)
	tool := hexmcp.NewRawTool("sql", schema, func(ctx context.Context, args json.RawMessage) (any, error) {
		h := hexmcp.RequestFrom(ctx).Transport().Header
		return fmt.Sprintf("%v|%v|%v", h["Mcp-Param-Region"], h["Mcp-Param-Count"], h["Mcp-Param-Zone"]), nil
	})
	srv := testServer(t, nil, func(o *hexmcp.Options) { o.Tools = append(o.Tools, tool) })
	s := connect(t, client.New(client.Options{Revision: domain.Revision20260728}), httpTransport(t, srv))
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{"region": "eu-west", "count": 42, "where": map[string]any{"zone": "a b"}, "query": "select"}, "[eu-west]|[42]|[a b]"},
		{map[string]any{"region": "Zürich"}, "[=?base64?WsO8cmljaA==?=]|[]|[]"},
		{json.RawMessage(`{"count":1e3}`), "[]|[1000]|[]"}, // an integer in exponent form, in decimal
		{nil, "[]|[]|[]"},
	} {
		res, err := s.CallTool(t.Context(), "sql", tc.args)
		if err != nil || res.Text() != tc.want {
			t.Errorf("args %v: %+v, %v; want %q", tc.args, res, err, tc.want)
		}
	}
}

// URL-mode elicitation (2025-11-25 on) and completion/complete.
func TestURLElicitationAndComplete(t *testing.T) {
	visit := hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
		res, err := rc.Elicit(ctx, "consent", hexmcp.ElicitURL("Sign in", "https://example.com/consent", "e1"))
		if err != nil {
			return "", err
		}
		return string(res.Action), nil
	}, hexmcp.WithName("visit"))
	colors := func(_ context.Context, value string, _ map[string]string) ([]string, error) {
		var out []string
		for _, c := range []string{"red", "green", "grey"} {
			if strings.HasPrefix(c, value) {
				out = append(out, c)
			}
		}
		return out, nil
	}
	paint := hexmcp.NewPrompt("paint", func(ctx context.Context, args map[string]string) (*domain.GetPromptResult, error) {
		return &domain.GetPromptResult{Messages: []domain.PromptMessage{hexmcp.UserMessage(hexmcp.Text("paint it " + args["color"]))}}, nil
	}, hexmcp.WithArgument(domain.PromptArgument{Name: "color"}, colors))
	srv := testServer(t, nil, func(o *hexmcp.Options) {
		o.Tools = append(o.Tools, visit)
		o.Prompts = append(o.Prompts, paint)
	})
	var urls []string
	var mu sync.Mutex
	opts := client.Options{
		ElicitURL: true,
		Elicitation: func(_ context.Context, p domain.ElicitParams) (*domain.ElicitResult, error) {
			mu.Lock()
			urls = append(urls, p.URL)
			mu.Unlock()
			if p.Mode != domain.ElicitModeURL || p.ElicitationID != "e1" {
				return nil, fmt.Errorf("unexpected %+v", p)
			}
			return &domain.ElicitResult{Action: domain.ElicitAccept}, nil
		},
	}
	forEach(t, srv, opts, func(t *testing.T, s *client.Session) {
		if s.Features().ElicitationURL {
			res, err := s.CallTool(t.Context(), "visit", nil)
			if err != nil || res.Text() != "accept" {
				t.Errorf("visit = %+v, %v", res, err)
			}
		}
		c, err := s.Complete(t.Context(), client.CompleteRef{Type: "ref/prompt", Name: "paint"}, "color", "gr", nil)
		if err != nil || strings.Join(c.Values, ",") != "green,grey" {
			t.Errorf("complete = %+v, %v", c, err)
		}
	})
	if len(urls) != 3*len(transports) { // 2025-11-25, 2026-07-28, and auto (2026-07-28)
		t.Errorf("the URL handler ran %d times: %v", len(urls), urls)
	}
}

// The server's question is cancelled when the client gives up the call
// it belongs to: over HTTP the server's cancellation would come on the
// call's stream, which the client no longer reads, so the client cancels
// the handler itself.
func TestCancellationReachesTheHandler(t *testing.T) {
	srv := testServer(t, nil)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			started := make(chan struct{}, 1)
			ended := make(chan error, 1)
			s := connect(t, client.New(client.Options{Revision: domain.Revision20251125,
				Sampling: func(ctx context.Context, _ domain.CreateMessageParams) (*domain.CreateMessageResult, error) {
					started <- struct{}{}
					<-ctx.Done()
					ended <- ctx.Err()
					return nil, ctx.Err()
				}}), tr.dial(t, srv))
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := s.CallTool(ctx, "ask_twice", nil)
				done <- err
			}()
			<-started
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("CallTool = %v, want context.Canceled", err)
			}
			if err := <-ended; !errors.Is(err, context.Canceled) {
				t.Fatalf("the handler's context: %v", err)
			}
		})
	}
}

// subscriptions/listen (2026-07-28): list changes and resource updates
// reach the callbacks once the server has acknowledged the stream.
func TestSubscribe(t *testing.T) {
	srv := testServer(t, nil)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			changed := make(chan struct{}, 10)
			updated := make(chan string, 10)
			s := connect(t, client.New(client.Options{
				ToolListChanged: func() { changed <- struct{}{} },
				ResourceUpdated: func(uri string) { updated <- uri },
			}), tr.dial(t, srv))
			sub, err := s.Subscribe(t.Context(), client.Subscriptions{ToolsListChanged: true, ResourceSubscriptions: []string{"file:///readme.txt"}})
			if err != nil {
				t.Fatal(err)
			}
			if !sub.Acknowledged.ToolsListChanged {
				t.Errorf("acknowledged %+v", sub.Acknowledged)
			}
			name := "extra_" + tr.name
			if err := srv.AddTool(hexmcp.Func(add, hexmcp.WithName(name))); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.RemoveTool(name) })
			<-changed
			if len(sub.Acknowledged.ResourceSubscriptions) == 1 {
				srv.NotifyResourceUpdated("file:///readme.txt")
				if uri := <-updated; uri != "file:///readme.txt" {
					t.Errorf("updated %q", uri)
				}
			} else {
				t.Errorf("resource subscriptions acknowledged: %+v", sub.Acknowledged)
			}
			if err := sub.Close(); err != nil {
				t.Fatal(err)
			}
			if err := sub.Wait(); err != nil {
				t.Errorf("wait after close: %v", err)
			}
			// The session goes on.
			if _, err := s.CallTool(t.Context(), "add", AddInput{A: 1, B: 2}); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Not in the handshake era.
	s := connect(t, client.New(client.Options{Revision: domain.Revision20251125}), pipeTransport(t, srv))
	if _, err := s.Subscribe(t.Context(), client.Subscriptions{ToolsListChanged: true}); err == nil {
		t.Error("subscribed in the handshake era")
	}
}
