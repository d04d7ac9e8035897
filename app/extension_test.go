package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// echoExtension adds "example/echo", which answers its params' text, and
// "example/fail", which answers -32602; it advertises {"level": 2}.
func echoExtension() app.Extension {
	return app.Extension{
		ID:       "com.example/echo",
		Settings: map[string]any{"level": 2},
		Methods: []app.ExtensionMethod{
			{Name: "example/echo", Cacheable: true, Serve: func(_ context.Context, req app.ExtensionRequest) (any, error) {
				var p struct {
					Text string `json:"text"`
				}
				if err := json.Unmarshal(req.Params, &p); err != nil {
					return nil, app.InvalidParams("text must be a string")
				}
				return map[string]any{"text": p.Text, "era": req.Era.String(), "revision": string(req.Revision)}, nil
			}},
			{Name: "example/fail", Serve: func(context.Context, app.ExtensionRequest) (any, error) {
				return nil, app.InvalidParams("nothing here")
			}},
			{Name: "example/broken", Serve: func(context.Context, app.ExtensionRequest) (any, error) {
				return nil, errors.New("secret detail")
			}},
			{Name: "example/array", Serve: func(context.Context, app.ExtensionRequest) (any, error) {
				return []int{1}, nil
			}},
			{Name: "example/session", HandshakeOnly: true, Serve: func(context.Context, app.ExtensionRequest) (any, error) {
				return struct{}{}, nil
			}},
		},
		Resources: []hexmcp.Resource{hexmcp.TextResource("echo://readme", "readme", "hello")},
	}
}

func capabilitiesOf(t *testing.T, resp string) map[string]any {
	t.Helper()
	var r struct {
		Result struct {
			Capabilities map[string]any `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(resp), &r); err != nil || r.Result.Capabilities == nil {
		t.Fatalf("no capabilities in %s (%v)", resp, err)
	}
	return r.Result.Capabilities
}

func TestExtensionsCapabilityBothEras(t *testing.T) {
	e := newEngine(t, app.Options{DisableValidation: true, ResourceRegistry: memory.NewResourceRegistry(), Extensions: []app.Extension{echoExtension()}})
	for _, rev := range []string{"2024-11-05", "2025-11-25"} {
		c := serve(t, e)
		caps := capabilitiesOf(t, c.initialize(rev))
		got, _ := json.Marshal(caps["extensions"])
		if string(got) != `{"com.example/echo":{"level":2}}` {
			t.Errorf("%s: initialize extensions = %s", rev, got)
		}
		if caps["resources"] == nil {
			t.Errorf("%s: the extension's resource did not make resources advertised: %v", rev, caps)
		}
	}
	c := serve(t, e)
	caps := capabilitiesOf(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta2026+`}}`))
	got, _ := json.Marshal(caps["extensions"])
	if string(got) != `{"com.example/echo":{"level":2}}` {
		t.Errorf("server/discover extensions = %s", got)
	}
}

func TestNoExtensionsNoCapability(t *testing.T) {
	e := newEngine(t, app.Options{DisableValidation: true})
	c := serve(t, e)
	if caps := capabilitiesOf(t, c.initialize("2025-11-25")); caps["extensions"] != nil {
		t.Errorf("initialize advertises extensions without any: %v", caps)
	}
	if caps := capabilitiesOf(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta2026+`}}`)); caps["extensions"] != nil {
		t.Errorf("server/discover advertises extensions without any: %v", caps)
	}
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"example/echo","params":{"text":"x"}}`); !strings.Contains(got, `"code":-32601`) {
		t.Errorf("an unregistered extension method = %s, want -32601", got)
	}
}

func TestEmptySettingsAreAnObject(t *testing.T) {
	e := newEngine(t, app.Options{DisableValidation: true, Extensions: []app.Extension{{ID: "com.example/bare"}}})
	c := serve(t, e)
	got, _ := json.Marshal(capabilitiesOf(t, c.initialize("2025-11-25"))["extensions"])
	if string(got) != `{"com.example/bare":{}}` {
		t.Errorf("extensions = %s, want the settings {}", got)
	}
}

func TestExtensionMethodHandshake(t *testing.T) {
	e := newEngine(t, app.Options{DisableValidation: true, ResourceRegistry: memory.NewResourceRegistry(), Extensions: []app.Extension{echoExtension()}})
	c := serve(t, e)
	c.initialize("2025-11-25")
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"example/echo","params":{"text":"hi"}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"text":"hi","era":"handshake","revision":"2025-11-25"}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"example/fail"}`),
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: nothing here"}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"example/broken"}`),
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"example/array"}`),
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error"}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"example/session"}`),
		`{"jsonrpc":"2.0","id":5,"result":{}}`)
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"echo://readme"}}`); !strings.Contains(got, `"text":"hello"`) {
		t.Errorf("the extension's resource = %s", got)
	}
}

func TestExtensionMethodStateless(t *testing.T) {
	e := newEngine(t, app.Options{DisableValidation: true, ResourceRegistry: memory.NewResourceRegistry(), Extensions: []app.Extension{echoExtension()}})
	c := serve(t, e)
	got := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"example/echo","params":{"text":"hi",` + meta2026 + `}}`)
	var r struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(got), &r); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{`resultType`: `"complete"`, `ttlMs`: `0`, `cacheScope`: `"public"`, `text`: `"hi"`, `era`: `"stateless"`, `revision`: `"2026-07-28"`} {
		if string(r.Result[k]) != want {
			t.Errorf("%s = %s, want %s (in %s)", k, r.Result[k], want, got)
		}
	}
	if !strings.Contains(string(r.Result["_meta"]), `"io.modelcontextprotocol/serverInfo"`) {
		t.Errorf("no serverInfo in the result _meta: %s", got)
	}
	// A method that is not Cacheable gets no caching attributes.
	e2 := newEngine(t, app.Options{DisableValidation: true, Extensions: []app.Extension{{ID: "com.example/x", Methods: []app.ExtensionMethod{
		{Name: "x/y", Serve: func(context.Context, app.ExtensionRequest) (any, error) { return map[string]int{"n": 1}, nil }},
	}}}})
	c2 := serve(t, e2)
	if got := c2.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"x/y","params":{` + meta2026 + `}}`); strings.Contains(got, "ttlMs") || !strings.Contains(got, `"n":1`) {
		t.Errorf("x/y = %s", got)
	}
	// A handshake-only method does not exist in the stateless era.
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"example/session","params":{` + meta2026 + `}}`); !strings.Contains(got, `"code":-32601`) {
		t.Errorf("a handshake-only method in the stateless era = %s, want -32601", got)
	}
}

func TestExtensionRegistrationErrors(t *testing.T) {
	serveNothing := func(context.Context, app.ExtensionRequest) (any, error) { return struct{}{}, nil }
	for name, x := range map[string][]app.Extension{
		"no prefix":          {{ID: "skills"}},
		"one-label prefix":   {{ID: "example/skills"}},
		"bad label":          {{ID: "com.-x/skills"}},
		"empty name":         {{ID: "com.example/"}},
		"two slashes":        {{ID: "com.example/a/b"}},
		"duplicate":          {{ID: "com.example/a"}, {ID: "com.example/a"}},
		"built-in method":    {{ID: "com.example/a", Methods: []app.ExtensionMethod{{Name: "tools/call", Serve: serveNothing}}}},
		"method twice":       {{ID: "com.example/a", Methods: []app.ExtensionMethod{{Name: "a/b", Serve: serveNothing}}}, {ID: "com.example/b", Methods: []app.ExtensionMethod{{Name: "a/b", Serve: serveNothing}}}},
		"no serve":           {{ID: "com.example/a", Methods: []app.ExtensionMethod{{Name: "a/b"}}}},
		"no method name":     {{ID: "com.example/a", Methods: []app.ExtensionMethod{{Serve: serveNothing}}}},
		"both eras excluded": {{ID: "com.example/a", Methods: []app.ExtensionMethod{{Name: "a/b", HandshakeOnly: true, StatelessOnly: true, Serve: serveNothing}}}},
		"settings not JSON":  {{ID: "com.example/a", Settings: map[string]any{"f": func() {}}}},
	} {
		_, err := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), DisableValidation: true, Extensions: x})
		if err == nil {
			t.Errorf("%s: NewEngine accepted %+v", name, x)
		}
	}
	e, err := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), DisableValidation: true,
		Extensions: []app.Extension{{ID: "io.modelcontextprotocol/skills"}, {ID: "com.example-1.x/my_ext.v2"}}})
	if err != nil {
		t.Fatalf("valid identifiers refused: %v", err)
	}
	defer e.Close()
	if got := strings.Join(e.Extensions(), ","); got != "io.modelcontextprotocol/skills,com.example-1.x/my_ext.v2" {
		t.Errorf("Extensions() = %s", got)
	}
	// Resources need a resource registry.
	if _, err := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), DisableValidation: true, Extensions: []app.Extension{echoExtension()}}); err == nil {
		t.Error("an extension with resources was accepted without a ResourceRegistry")
	}
}

func TestInvalidParamsError(t *testing.T) {
	var pe *domain.ProtocolError
	if err := app.InvalidParams("x"); !errors.As(err, &pe) || pe.Code != domain.CodeInvalidParams || pe.Message != "Invalid params: x" {
		t.Errorf("InvalidParams = %#v", err)
	}
}

// An extension method marked Call runs apart from the connection's reader:
// a request sent after it is answered while it runs, and
// notifications/cancelled cancels it.
func TestExtensionMethodCallRunsApart(t *testing.T) {
	release := make(chan struct{})
	cancelled := make(chan struct{})
	ext := app.Extension{ID: "com.example/slow", Methods: []app.ExtensionMethod{{Name: "example/slow", Call: true,
		Serve: func(ctx context.Context, req app.ExtensionRequest) (any, error) {
			if strings.Contains(string(req.Params), `"forever":true`) {
				<-ctx.Done()
				close(cancelled)
				return nil, ctx.Err()
			}
			<-release
			return map[string]any{"done": true}, nil
		}}}}
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Extensions: []app.Extension{ext}}, addTool())
	c := serve(t, e)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"example/slow","params":{` + meta2026 + `}}`)
	if resp := c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{` + meta2026 + `}}`); !strings.Contains(resp, `"id":2`) {
		t.Fatalf("a request after the slow one: %s", resp)
	}
	close(release)
	if resp := c.recv(); !strings.Contains(resp, `"id":1`) || !strings.Contains(resp, `"done":true`) {
		t.Fatalf("the slow one: %s", resp)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"example/slow","params":{"forever":true,` + meta2026 + `}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	testtools.Recv(t, cancelled, 5*time.Second, "notifications/cancelled did not cancel the extension method")
}
