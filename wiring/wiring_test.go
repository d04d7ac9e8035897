package wiring_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/mock/gomock"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
	"github.com/hexmcp/hexmcp/wiring"
)

func hello() string { return "hello" }

// memoryModule serves the engine on an in-memory transport and hands the
// test the client end.
func memoryModule(client *ports.Conn) fx.Option {
	return fx.Options(
		fx.Provide(func() ports.Transport {
			t, c := memory.NewTransport()
			*client = c
			return t
		}),
		fx.Invoke(func(lc fx.Lifecycle, sd fx.Shutdowner, e *app.Engine, t ports.Transport) {
			wiring.Serve(lc, sd, e, t)
		}),
	)
}

// wantAnswer sends msg over c and fails t unless the answer holds want.
func wantAnswer(t *testing.T, c ports.Conn, msg, want string) {
	t.Helper()
	if got := roundTrip(t, c, msg); !strings.Contains(got, want) {
		t.Fatal(got)
	}
}

func roundTrip(t *testing.T, c ports.Conn, msg string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WriteMessage(ctx, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	resp, err := c.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return string(resp)
}

func TestCoreServesTools(t *testing.T) {
	var client ports.Conn
	a := fxtest.New(t,
		fx.Supply(&wiring.Config{Info: domain.Implementation{Name: "wired", Version: "9"}}),
		wiring.Core,
		wiring.Tools(hexmcp.NewTool(hello)),
		fx.Provide(wiring.AsTool(func() hexmcp.Tool { return hexmcp.NewTool(func() int { return 7 }, hexmcp.WithName("seven")) })),
		memoryModule(&client),
	)
	a.RequireStart()
	got := roundTrip(t, client, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"seven","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if !strings.Contains(got, `"text":"7"`) || !strings.Contains(got, `"name":"wired"`) {
		t.Fatal(got)
	}
	wantAnswer(t, client, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{"extra":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, `"text":"hello"`)
	a.RequireStop()
}

// TestClientGoneStopsApp: when the transport ends (stdin EOF for stdio),
// the application shuts down by itself.
func TestClientGoneStopsApp(t *testing.T) {
	var client ports.Conn
	a := fx.New(wiring.Core, wiring.Tools(hexmcp.NewTool(hello)), memoryModule(&client), fx.NopLogger)
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	client.Close()
	testtools.Recv(t, a.Done(), 5*time.Second, "the app did not shut down when the client went away")
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestPortsCanBeSwapped: a host app's own registry, validator and logger
// replace the defaults just by being provided.
func TestPortsCanBeSwapped(t *testing.T) {
	ctrl := gomock.NewController(t)
	reg := porttest.NewMockToolRegistry(ctrl)
	reg.EXPECT().Add(gomock.Any()).DoAndReturn(func(rt ports.RegisteredTool) error {
		if rt.Tool.Name != "hello" {
			t.Errorf("registered %q", rt.Tool.Name)
		}
		return nil
	})
	val := porttest.NewMockSchemaValidator(ctrl)
	val.EXPECT().Compile(gomock.Any()).Return(porttest.NewMockSchema(ctrl), nil)
	log := porttest.NewMockLogger(ctrl)
	var e *app.Engine
	fxtest.New(t,
		wiring.Core,
		wiring.Tools(hexmcp.NewTool(hello)),
		fx.Provide(
			func() ports.ToolRegistry { return reg },
			func() ports.SchemaValidator { return val },
			func() ports.Logger { return log },
		),
		fx.Populate(&e),
	).RequireStart().RequireStop()
	if e == nil {
		t.Fatal("no engine")
	}
}

// Core provides the server's front door beside its engine: the same
// server, whose AddTool reaches the engine's registry.
func TestCoreProvidesServer(t *testing.T) {
	var srv *hexmcp.Server
	var e *app.Engine
	fxtest.New(t, wiring.Core, fx.Populate(&srv, &e)).RequireStart().RequireStop()
	if srv == nil || srv.Engine() != e {
		t.Fatalf("server %p, engine %p", srv, e)
	}
	if err := srv.AddTool(hexmcp.NewTool(hello)); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.LookupTool("hello"); !ok {
		t.Fatal("the tool added through the server is not the engine's")
	}
}

func TestBadToolStopsStart(t *testing.T) {
	a := fx.New(wiring.Core, wiring.Tools(hexmcp.NewTool(hello, hexmcp.WithName("bad name"))), fx.Invoke(func(*app.Engine) {}), fx.NopLogger)
	if err := a.Err(); err == nil || !strings.Contains(err.Error(), `invalid tool "bad name"`) {
		t.Fatalf("want the tool's error, got %v", err)
	}
}

const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func TestCoreServesResources(t *testing.T) {
	var client ports.Conn
	a := fxtest.New(t,
		wiring.Core,
		wiring.Resources(hexmcp.TextResource("x://readme", "readme", "read me")),
		fx.Provide(wiring.AsResource(func() hexmcp.Resource {
			return hexmcp.NewResourceTemplate("x://items/{id}", "item", func(_ context.Context, _ string, vars map[string]string) ([]domain.ResourceContents, error) {
				return []domain.ResourceContents{{Text: "item " + vars["id"]}}, nil
			})
		})),
		memoryModule(&client),
	)
	a.RequireStart()
	wantAnswer(t, client, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"x://readme",`+meta2026+`}}`, `"text":"read me"`)
	wantAnswer(t, client, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"x://items/4",`+meta2026+`}}`, `"text":"item 4"`)
	wantAnswer(t, client, `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{`+meta2026+`}}`, `"resources":{"listChanged":true}`)
	a.RequireStop()
}

// TestNoResourcesNoCapability: Core always has a resource registry, but an
// empty one advertises nothing.
func TestNoResourcesNoCapability(t *testing.T) {
	var client ports.Conn
	a := fxtest.New(t, wiring.Core, wiring.Tools(hexmcp.NewTool(hello)), memoryModule(&client))
	a.RequireStart()
	if got := roundTrip(t, client, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta2026+`}}`); strings.Contains(got, `"resources"`) {
		t.Fatal(got)
	}
	a.RequireStop()
}

func TestResourceRegistryCanBeSwapped(t *testing.T) {
	reg := memory.NewResourceRegistry()
	fxtest.New(t,
		wiring.Core,
		wiring.Resources(hexmcp.TextResource("x://a", "a", "t")),
		fx.Provide(func() ports.ResourceRegistry { return reg }),
		fx.Invoke(func(*app.Engine) {}),
	).RequireStart().RequireStop()
	if _, ok := reg.Get("x://a"); !ok {
		t.Fatal("the resource did not reach the provided registry")
	}
}

func TestBadResourceStopsStart(t *testing.T) {
	a := fx.New(wiring.Core, wiring.Resources(hexmcp.TextResource("no-scheme", "a", "t")), fx.Invoke(func(*app.Engine) {}), fx.NopLogger)
	if err := a.Err(); err == nil || !strings.Contains(err.Error(), `invalid resource "no-scheme"`) {
		t.Fatalf("want the resource's error, got %v", err)
	}
}

func TestCoreServesPrompts(t *testing.T) {
	var client ports.Conn
	greet := func(_ context.Context, args map[string]string) (*domain.GetPromptResult, error) {
		return &domain.GetPromptResult{Messages: []domain.PromptMessage{hexmcp.UserMessage(hexmcp.Text("hi " + args["who"]))}}, nil
	}
	a := fxtest.New(t,
		wiring.Core,
		wiring.Prompts(hexmcp.NewPrompt("greet", greet, hexmcp.WithArguments(domain.PromptArgument{Name: "who", Required: true}))),
		fx.Provide(wiring.AsPrompt(func() hexmcp.Prompt { return hexmcp.NewPrompt("other", greet) })),
		memoryModule(&client),
	)
	a.RequireStart()
	wantAnswer(t, client, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"bob"},`+meta2026+`}}`, `"text":"hi bob"`)
	wantAnswer(t, client, `{"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{`+meta2026+`}}`, `"name":"other"`)
	wantAnswer(t, client, `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{`+meta2026+`}}`, `"prompts":{"listChanged":true}`)
	a.RequireStop()
}

func TestNoPromptsNoCapability(t *testing.T) {
	var client ports.Conn
	a := fxtest.New(t, wiring.Core, wiring.Tools(hexmcp.NewTool(hello)), memoryModule(&client))
	a.RequireStart()
	if got := roundTrip(t, client, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta2026+`}}`); strings.Contains(got, `"prompts"`) || strings.Contains(got, `"completions"`) {
		t.Fatal(got)
	}
	a.RequireStop()
}

func TestBadPromptStopsStart(t *testing.T) {
	a := fx.New(wiring.Core, wiring.Prompts(hexmcp.NewPrompt("bad name", nil)), fx.Invoke(func(*app.Engine) {}), fx.NopLogger)
	if err := a.Err(); err == nil || !strings.Contains(err.Error(), `invalid prompt`) {
		t.Fatalf("want the prompt's error, got %v", err)
	}
}
