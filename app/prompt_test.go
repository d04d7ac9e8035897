package app_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"go.uber.org/mock/gomock"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// promptEngine is an engine with a prompt and a resource registry, holding ps.
func promptEngine(t *testing.T, opts app.Options, ps ...hexmcp.Prompt) *app.Engine {
	t.Helper()
	if opts.PromptRegistry == nil {
		opts.PromptRegistry = memory.NewPromptRegistry()
	}
	e := resourceEngine(t, opts)
	if err := e.AddPrompts(ps...); err != nil {
		t.Fatal(err)
	}
	return e
}

func cities(_ context.Context, value string, _ map[string]string) ([]string, error) {
	var out []string
	for _, c := range []string{"paris", "park", "party", "rome"} {
		if strings.HasPrefix(c, value) {
			out = append(out, c)
		}
	}
	return out, nil
}

func samplePrompts() []hexmcp.Prompt {
	return []hexmcp.Prompt{
		hexmcp.NewPrompt("simple", func(context.Context, map[string]string) (*domain.GetPromptResult, error) {
			return &domain.GetPromptResult{Messages: []domain.PromptMessage{hexmcp.UserMessage(hexmcp.Text("hello"))}}, nil
		}, hexmcp.WithDescription("A simple prompt"), hexmcp.WithTitle("Simple")),
		hexmcp.NewPrompt("args", func(_ context.Context, args map[string]string) (*domain.GetPromptResult, error) {
			switch args["city"] {
			case "boom":
				return nil, errors.New("db down")
			case "panic":
				panic("oops")
			case "denied":
				return nil, domain.NewProtocolError(-32001, "denied", nil)
			case "badrole":
				return &domain.GetPromptResult{Messages: []domain.PromptMessage{{Role: "system", Content: hexmcp.Text("x")}}}, nil
			}
			return &domain.GetPromptResult{Description: "weather", Messages: []domain.PromptMessage{
				hexmcp.UserMessage(hexmcp.Text("Weather in " + args["city"] + args["unit"])),
				hexmcp.AssistantMessage(hexmcp.EmbeddedText("x://doc", "doc", "text/plain")),
				hexmcp.UserMessage(hexmcp.Image([]byte{1, 2}, "image/png")),
				hexmcp.UserMessage(hexmcp.Audio([]byte{3}, "audio/wav")),
				hexmcp.UserMessage(&domain.ResourceLink{URI: "x://l", Name: "l"}),
			}}, nil
		}, hexmcp.WithArgument(domain.PromptArgument{Name: "city", Title: "City", Required: true}, cities),
			hexmcp.WithArguments(domain.PromptArgument{Name: "unit", Description: "C or F"}),
			hexmcp.WithIcons(domain.Icon{Src: "https://example.com/i.png"}), hexmcp.WithMeta(map[string]any{"k": "v"})),
	}
}

func TestPromptsHandshake(t *testing.T) {
	log := quietLogger(gomock.NewController(t))
	var logged []string
	log.EXPECT().LogAttrs(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Do(func(_ context.Context, _ slog.Level, msg string, _ ...slog.Attr) {
		logged = append(logged, msg)
	}).AnyTimes()
	c := serve(t, promptEngine(t, app.Options{Validator: jsonschema.New(), Logger: log}, samplePrompts()...))
	init := c.initialize("2025-11-25")
	if !strings.Contains(init, `"prompts":{"listChanged":true}`) || !strings.Contains(init, `"completions":{}`) {
		t.Fatal(init)
	}
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"prompts":[
			{"name":"args","arguments":[{"name":"city","title":"City","required":true},{"name":"unit","description":"C or F"}],"icons":[{"src":"https://example.com/i.png"}],"_meta":{"k":"v"}},
			{"name":"simple","title":"Simple","description":"A simple prompt"}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"simple"}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"args","arguments":{"city":"Oslo","unit":"C"}}}`),
		`{"jsonrpc":"2.0","id":3,"result":{"description":"weather","messages":[
			{"role":"user","content":{"type":"text","text":"Weather in OsloC"}},
			{"role":"assistant","content":{"type":"resource","resource":{"uri":"x://doc","mimeType":"text/plain","text":"doc"}}},
			{"role":"user","content":{"type":"image","data":"AQI=","mimeType":"image/png"}},
			{"role":"user","content":{"type":"audio","data":"Aw==","mimeType":"audio/wav"}},
			{"role":"user","content":{"type":"resource_link","uri":"x://l","name":"l"}}]}}`)
	// errors
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"nope"}}`),
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: unknown prompt \"nope\"","data":{"name":"nope"}}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"args","arguments":{"unit":"C"}}}`),
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params: missing required argument \"city\"","data":{"name":"args","argument":"city"}}}`)
	for i, city := range []string{"boom", "panic", "badrole"} {
		equalJSON(t, c.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":{"name":"args","arguments":{"city":%q}}}`, 6+i, city)),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"Internal error"}}`, 6+i))
	}
	if fmt.Sprint(logged) != "[hexmcp: prompt handler failed hexmcp: prompt handler panicked hexmcp: prompt handler failed]" {
		t.Fatalf("logged %q", logged)
	}
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"args","arguments":{"city":"denied"}}}`),
		`{"jsonrpc":"2.0","id":9,"error":{"code":-32001,"message":"denied"}}`)
	for i, params := range []string{`{}`, `{"name":7}`, `{"name":"args","arguments":{"city":1}}`, `{"name":"args","arguments":[]}`} {
		if got := c.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":%s}`, 10+i, params)); !strings.Contains(got, `"code":-32602`) {
			t.Fatal(got)
		}
	}
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":20,"method":"prompts/list","params":{"cursor":"bogus"}}`); !strings.Contains(got, `"code":-32602`) {
		t.Fatal(got)
	}
}

func TestPromptsShapedPerRevision(t *testing.T) {
	c := serve(t, promptEngine(t, app.Options{Validator: jsonschema.New()}, samplePrompts()...))
	init := c.initialize("2024-11-05")
	if !strings.Contains(init, `"prompts":{"listChanged":true}`) || strings.Contains(init, `"completions"`) {
		t.Fatal(init)
	}
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"prompts":[
			{"name":"args","arguments":[{"name":"city","required":true},{"name":"unit","description":"C or F"}]},
			{"name":"simple","description":"A simple prompt"}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"args","arguments":{"city":"Oslo"}}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"description":"weather","messages":[
			{"role":"user","content":{"type":"text","text":"Weather in Oslo"}},
			{"role":"assistant","content":{"type":"resource","resource":{"uri":"x://doc","mimeType":"text/plain","text":"doc"}}},
			{"role":"user","content":{"type":"image","data":"AQI=","mimeType":"image/png"}},
			{"role":"user","content":{"type":"text","text":"[audio omitted (audio/wav): the client's protocol revision has no audio content]"}},
			{"role":"user","content":{"type":"text","text":"Resource: l <x://l>"}}]}}`)
	// completion/complete exists in 2024-11-05, without the capability.
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"args"},"argument":{"name":"city","value":"pa"}}}`),
		`{"jsonrpc":"2.0","id":3,"result":{"completion":{"values":["paris","park","party"]}}}`)
}

func TestPromptsStateless(t *testing.T) {
	c := serve(t, promptEngine(t, app.Options{Validator: jsonschema.New()}, samplePrompts()...))
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","prompts":[
			{"name":"args","arguments":[{"name":"city","title":"City","required":true},{"name":"unit","description":"C or F"}],"icons":[{"src":"https://example.com/i.png"}],"_meta":{"k":"v"}},
			{"name":"simple","title":"Simple","description":"A simple prompt"}],"ttlMs":0,"cacheScope":"public",`+srvMeta+`}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"simple",`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","messages":[{"role":"user","content":{"type":"text","text":"hello"}}],`+srvMeta+`}}`)
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"args",` + meta2026 + `}}`); !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, `city`) {
		t.Fatal(got)
	}
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"args"},"argument":{"name":"city","value":"r"},`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","completion":{"values":["rome"]},`+srvMeta+`}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":5,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"logging":{},"tools":{"listChanged":true},"prompts":{"listChanged":true},"completions":{}},"ttlMs":0,"cacheScope":"public",`+srvMeta+`}}`)
}

func TestCompletion(t *testing.T) {
	many := func(context.Context, string, map[string]string) ([]string, error) {
		out := make([]string, 150)
		for i := range out {
			out[i] = fmt.Sprint(i)
		}
		return out, nil
	}
	var gotCtx map[string]string
	e := promptEngine(t, app.Options{Validator: jsonschema.New()}, samplePrompts()...)
	if err := e.AddResource(hexmcp.NewResourceTemplate("x://{owner}/{repo}", "repo", func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) { return nil, nil },
		hexmcp.WithTemplateCompleter("repo", func(_ context.Context, v string, ctx map[string]string) ([]string, error) {
			gotCtx = ctx
			return []string{ctx["owner"] + "/" + v + "1"}, nil
		}),
		hexmcp.WithTemplateCompleter("owner", many),
		hexmcp.WithTemplateCompleter("owner", func(context.Context, string, map[string]string) ([]string, error) { return nil, errors.New("x") }))); err != nil {
		t.Fatal(err)
	}
	if err := e.AddResource(hexmcp.NewResourceTemplate("x://big/{n}", "big", func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) { return nil, nil },
		hexmcp.WithTemplateCompleter("n", many))); err != nil {
		t.Fatal(err)
	}
	c := serve(t, e)
	c.initialize("2025-11-25")
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"x://{owner}/{repo}"},"argument":{"name":"repo","value":"he"},"context":{"arguments":{"owner":"me"}}}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":["me/he1"]}}}`)
	if gotCtx["owner"] != "me" {
		t.Fatal(gotCtx)
	}
	got := c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"x://big/{n}"},"argument":{"name":"n","value":""}}}`)
	if !strings.Contains(got, `"99"],"total":150,"hasMore":true}`) || strings.Contains(got, `"100"`) {
		t.Fatal(got)
	}
	// an argument without a completer has no values
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"args"},"argument":{"name":"unit","value":""}}}`),
		`{"jsonrpc":"2.0","id":3,"result":{"completion":{"values":[]}}}`)
	for i, params := range []string{
		`{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""}}`,
		`{"ref":{"type":"ref/resource","uri":"x://nope"},"argument":{"name":"a","value":""}}`,
		`{"ref":{"type":"ref/other"},"argument":{"name":"a","value":""}}`,
		`{"ref":{"type":"ref/prompt","name":"args"}}`,
		`{"argument":{"name":"a","value":""}}`,
		`{"ref":{"type":"ref/prompt","name":"args"},"argument":{"name":"city","value":""},"context":{"arguments":{"a":1}}}`,
	} {
		if got := c.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"completion/complete","params":%s}`, 10+i, params)); !strings.Contains(got, `"code":-32602`) {
			t.Fatalf("%s: %s", params, got)
		}
	}
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":20,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"x://{owner}/{repo}"},"argument":{"name":"owner","value":""}}}`); !strings.Contains(got, `"code":-32603`) {
		t.Fatal(got)
	}
}

func TestPromptsListChanged(t *testing.T) {
	e := promptEngine(t, app.Options{Validator: jsonschema.New()})
	early := serve(t, e)
	if init := early.initialize("2025-11-25"); strings.Contains(init, `"prompts"`) || strings.Contains(init, `"completions"`) {
		t.Fatal("prompts advertised with an empty registry: " + init)
	}
	// no completer: completion/complete does not exist
	if got := early.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"a"},"argument":{"name":"a","value":""}}}`); !strings.Contains(got, `"code":-32601`) {
		t.Fatal(got)
	}
	if err := e.AddPrompt(samplePrompts()[0]); err != nil {
		t.Fatal(err)
	}
	early.expectNothing()
	c := serve(t, e)
	if init := c.initialize("2025-11-25"); !strings.Contains(init, `"prompts":{"listChanged":true}`) || strings.Contains(init, `"completions"`) {
		t.Fatal(init)
	}
	stateless := serve(t, e)
	stateless.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{` + meta2026 + `}}`)
	if err := e.AddPrompt(samplePrompts()[1]); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
	if !e.RemovePrompt("args") || e.RemovePrompt("args") {
		t.Fatal("RemovePrompt result wrong")
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`),
		`{"jsonrpc":"2.0","id":2,"result":{"prompts":[{"name":"simple","title":"Simple","description":"A simple prompt"}]}}`)
	stateless.expectNothing()
	early.expectNothing()
}

func TestPromptsPagination(t *testing.T) {
	var ps []hexmcp.Prompt
	for i := 0; i < 5; i++ {
		ps = append(ps, hexmcp.NewPrompt(fmt.Sprintf("p%d", i), func(context.Context, map[string]string) (*domain.GetPromptResult, error) { return nil, nil }))
	}
	c := serve(t, promptEngine(t, app.Options{Validator: jsonschema.New(), PageSize: 2}, ps...))
	c.initialize("2025-11-25")
	got := listNames(t, c, "prompts/list", "prompts")
	if fmt.Sprint(got) != "[p0 p1 p2 p3 p4]" {
		t.Fatalf("paged through %v", got)
	}
}

func TestNoPromptRegistry(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
	c := serve(t, e)
	if init := c.initialize("2025-11-25"); strings.Contains(init, `"prompts"`) {
		t.Fatal(init)
	}
	for _, m := range []string{"prompts/list", "prompts/get", "completion/complete"} {
		if got := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"` + m + `","params":{"name":"a"}}`); !strings.Contains(got, `"code":-32601`) {
			t.Fatalf("%s: %s", m, got)
		}
	}
	if err := e.AddPrompt(samplePrompts()[0]); err == nil {
		t.Fatal("AddPrompt without a registry succeeded")
	}
	if e.RemovePrompt("simple") {
		t.Fatal("RemovePrompt without a registry")
	}
}

func TestPromptRegistrationErrors(t *testing.T) {
	e := promptEngine(t, app.Options{Validator: jsonschema.New()}, samplePrompts()[0])
	h := func(context.Context, map[string]string) (*domain.GetPromptResult, error) { return nil, nil }
	noop := func(context.Context, string, map[string]string) ([]string, error) { return nil, nil }
	bad := map[string]hexmcp.Prompt{
		"duplicate":   hexmcp.NewPrompt("simple", h),
		"bad name":    hexmcp.NewPrompt("a b", h),
		"no name":     hexmcp.NewPrompt("", h),
		"no handler":  hexmcp.NewPrompt("x", nil),
		"arg no name": hexmcp.NewPrompt("x", h, hexmcp.WithArguments(domain.PromptArgument{})),
		"arg twice":   hexmcp.NewPrompt("x", h, hexmcp.WithArguments(domain.PromptArgument{Name: "a"}, domain.PromptArgument{Name: "a"})),
		"bad icon":    hexmcp.NewPrompt("x", h, hexmcp.WithIcons(domain.Icon{Src: "ftp://x"})),
		"bad meta":    hexmcp.NewPrompt("x", h, hexmcp.WithMeta(map[string]any{"f": func() {}})),
		"empty":       {},
	}
	for name, p := range bad {
		var de *domain.DefinitionError
		if err := e.AddPrompt(p); !errors.As(err, &de) || de.Kind != "prompt" {
			t.Errorf("%s: AddPrompt = %v, want a prompt DefinitionError", name, err)
		}
	}
	if err := e.AddPrompt(hexmcp.NewPrompt("simple", h)); !errors.Is(err, domain.ErrDuplicatePrompt) {
		t.Fatalf("duplicate: %v", err)
	}
	read := func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) { return nil, nil }
	for name, r := range map[string]hexmcp.Resource{
		"plain resource": hexmcp.NewResource("x://a", "a", read, hexmcp.WithTemplateCompleter("a", noop)),
		"no variable":    hexmcp.NewResourceTemplate("x://{a}", "a", read, hexmcp.WithTemplateCompleter("b", noop)),
	} {
		var de *domain.DefinitionError
		if err := e.AddResource(r); !errors.As(err, &de) || de.Kind != "resource" {
			t.Errorf("%s: AddResource = %v, want a resource DefinitionError", name, err)
		}
	}
}
