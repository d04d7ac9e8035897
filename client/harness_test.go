package client_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/stdio"
	"github.com/hexmcp/hexmcp/adapters/websocket"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// revisions are the pinned revisions every test runs; "" is the client's
// own choice.
var revisions = []domain.Revision{"", domain.Revision20241105, domain.Revision20250326, domain.Revision20250618, domain.Revision20251125, domain.Revision20260728}

// transport makes a client transport to srv.
type transport struct {
	name string
	dial func(t *testing.T, srv *hexmcp.Server) client.Transport
}

var transports = []transport{
	{"http", httpTransport},
	{"ws", wsTransport},
	{"pipe", pipeTransport},
	{"sse", sseTransport},
}

func httpTransport(t *testing.T, srv *hexmcp.Server) client.Transport {
	ts := serveHTTP(t, srv)
	return client.HTTPTransport(ts.URL, client.HTTPOptions{Client: ts.Client()})
}

// sseTransport serves srv's HTTP+SSE transport (2024-11-05) at /sse and
// /message.
func sseTransport(t *testing.T, srv *hexmcp.Server) client.Transport {
	h := srv.SSEHandler(mcphttp.SSEOptions{})
	mux := http.NewServeMux()
	mux.Handle(mcphttp.DefaultSSEPath, h)
	mux.Handle(mcphttp.DefaultSSEMessagePath, h)
	ts := serveShutDown(t, mux, h.Shutdown)
	return client.SSETransport(ts.URL+mcphttp.DefaultSSEPath, client.SSEOptions{Client: ts.Client()})
}

func wsTransport(t *testing.T, srv *hexmcp.Server) client.Transport {
	h := srv.WebSocketHandler(websocket.Options{})
	ts := serveShutDown(t, h, h.Shutdown)
	return client.WebSocketTransport("ws"+strings.TrimPrefix(ts.URL, "http"), client.WebSocketOptions{})
}

// serveShutDown serves h on httptest until the test is over, then calls
// shutdown with no grace and closes the server.
func serveShutDown(t *testing.T, h http.Handler, shutdown func(context.Context) error) *httptest.Server {
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // no grace: the test is over
		_ = shutdown(ctx)
		ts.Close()
	})
	return ts
}

// pipeTransport serves srv as on stdio, over in-memory pipes.
func pipeTransport(t *testing.T, srv *hexmcp.Server) client.Transport {
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ctx, stdio.New(stdio.Options{In: toServer, Out: fromServer}))
		fromServer.Close()
	}()
	t.Cleanup(func() {
		fromClient.Close()
		<-done
		cancel()
	})
	return client.IOTransport(toClient, fromClient)
}

// forEach runs fn for every transport and revision, each a subtest with
// a session of its own (closed at the end).
func forEach(t *testing.T, srv *hexmcp.Server, opts client.Options, fn func(t *testing.T, s *client.Session)) {
	t.Helper()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			for _, rev := range revisions {
				name := string(rev)
				if name == "" {
					name = "auto"
				}
				t.Run(name, func(t *testing.T) {
					o := opts
					o.Revision = rev
					s := connect(t, client.New(o), tr.dial(t, srv))
					want := rev
					if want == "" {
						want = domain.Revision20260728
					}
					if s.Revision() != want {
						t.Fatalf("session speaks %s, want %s", s.Revision(), want)
					}
					fn(t, s)
				})
			}
		})
	}
}

func connect(t *testing.T, c *client.Client, tr client.Transport) *client.Session {
	t.Helper()
	s, err := c.Connect(t.Context(), tr)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

type AddInput struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func add(_ context.Context, in AddInput) (float64, error) { return in.A + in.B, nil }

type Weather struct {
	Temperature float64 `json:"temperature"`
	Conditions  string  `json:"conditions"`
}

type CityInput struct {
	City string `json:"city" minLength:"1"`
}

// gate lets a test see that a slow call was cancelled on the server.
type gate struct {
	started   chan struct{}
	cancelled chan struct{}
}

func newGate() *gate {
	return &gate{started: make(chan struct{}, 100), cancelled: make(chan struct{}, 100)}
}

// testServer is a server with a tool of every kind the tests call.
func testServer(t *testing.T, g *gate, opts ...func(*hexmcp.Options)) *hexmcp.Server {
	t.Helper()
	tools := []hexmcp.Tool{
		hexmcp.Func(add),
		hexmcp.Func(func(_ context.Context, in CityInput) (Weather, error) {
			return Weather{Temperature: 21.5, Conditions: "sunny in " + in.City}, nil
		}, hexmcp.WithName("weather"), hexmcp.WithDescription("The weather.")),
		hexmcp.Func(func(_ context.Context, in CityInput) (string, error) {
			return "", hexmcp.NewToolError("no flights to " + in.City)
		}, hexmcp.WithName("fly")),
		hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
			for i := 1; i <= 3; i++ {
				if err := rc.ReportProgress(ctx, float64(i), 3, fmt.Sprintf("step %d", i)); err != nil {
					return "", err
				}
			}
			return "counted", nil
		}, hexmcp.WithName("count")),
		hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
			_ = rc.Log(ctx, domain.LogDebug, "work", "too fine")
			_ = rc.Log(ctx, domain.LogWarning, "work", "careful")
			return "logged", nil
		}, hexmcp.WithName("log")),
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			if g != nil {
				g.started <- struct{}{}
			}
			<-ctx.Done()
			if g != nil {
				g.cancelled <- struct{}{}
			}
			return "", ctx.Err()
		}, hexmcp.WithName("slow")),
	}
	prompt := hexmcp.NewPrompt("greet", func(ctx context.Context, args map[string]string) (*domain.GetPromptResult, error) {
		return &domain.GetPromptResult{Messages: []domain.PromptMessage{hexmcp.UserMessage(hexmcp.Text("Hello, " + args["who"]))}}, nil
	}, hexmcp.WithArguments(domain.PromptArgument{Name: "who", Required: true}))
	o := hexmcp.Options{
		Logger:    slog.New(slog.DiscardHandler),
		PageSize:  2,
		Tools:     append(tools, testtools.AskingTools()...),
		Prompts:   []hexmcp.Prompt{prompt},
		Resources: []hexmcp.Resource{hexmcp.TextResource("file:///readme.txt", "readme", "read me"), hexmcp.TextResource("file:///b.txt", "b", "bee")},
	}
	for _, f := range opts {
		f(&o)
	}
	srv, err := hexmcp.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}
