package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"go.uber.org/mock/gomock"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/internal/serving"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// okSchema is a mock schema that accepts everything.
func okValidator(ctrl *gomock.Controller) ports.SchemaValidator {
	v := porttest.NewMockSchemaValidator(ctrl)
	s := porttest.NewMockSchema(ctrl)
	s.EXPECT().Validate(gomock.Any()).Return(nil).AnyTimes()
	v.EXPECT().Compile(gomock.Any()).Return(s, nil).AnyTimes()
	return v
}

// quietLogger is a mock logger that takes anything.
func quietLogger(ctrl *gomock.Controller) *porttest.MockLogger {
	l := porttest.NewMockLogger(ctrl)
	l.EXPECT().Enabled(gomock.Any(), gomock.Any()).Return(true).AnyTimes()
	return l
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func newEngine(t *testing.T, opts app.Options, tools ...hexmcp.Tool) *app.Engine {
	t.Helper()
	if opts.ToolRegistry == nil {
		opts.ToolRegistry = memory.NewRegistry()
	}
	e, err := app.NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.AddTools(tools...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// blockTool is the tool name: it answers answer once release is closed, or
// fails with its context's error when that ends first.
func blockTool(name, answer string, release <-chan struct{}) hexmcp.Tool {
	return hexmcp.NewTool(func(ctx context.Context) (string, error) {
		select {
		case <-release:
			return answer, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, hexmcp.WithName(name))
}

func addTool() hexmcp.Tool {
	return hexmcp.Func(func(_ context.Context, in addIn) (float64, error) { return in.A + in.B, nil }, hexmcp.WithName("add"))
}

const (
	ping     = `{"jsonrpc":"2.0","id":"p","method":"ping"}`
	pingResp = `{"jsonrpc":"2.0","id":"p","result":{}}`
	meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"2"}}`
)

func TestInitializeNegotiatesRevision(t *testing.T) {
	for _, tc := range []struct{ asked, got string }{
		{"2024-11-05", "2024-11-05"}, {"2025-03-26", "2025-03-26"}, {"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"}, {"2026-07-28", "2025-11-25"}, {"1.0", "2025-11-25"},
	} {
		t.Run(tc.asked, func(t *testing.T) {
			e := newEngine(t, app.Options{Validator: jsonschema.New(), Info: domain.Implementation{Name: "srv", Title: "Server", Version: "1.2.3"}, Instructions: "Use it."})
			c := serve(t, e)
			title := ""
			if tc.got >= "2025-06-18" {
				title = `"title":"Server",`
			}
			equalJSON(t, c.initialize(tc.asked), `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"`+tc.got+`","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"srv",`+title+`"version":"1.2.3"},"instructions":"Use it."}}`)
			equalJSON(t, c.roundTrip(ping), pingResp)
		})
	}
}

func TestInitializeTwiceIsRejected(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}))
	c.initialize("2025-11-25")
	resp := c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	equalJSON(t, resp, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request: the session is already initialized"}}`)
}

// TestBadInput sends every kind of malformed message; each gets the right
// error and the connection goes on serving.
func TestBadInput(t *testing.T) {
	ctrl := gomock.NewController(t)
	e := newEngine(t, app.Options{Validator: okValidator(ctrl)}, addTool())
	c := serve(t, e)
	c.initialize("2025-11-25")
	cases := []struct{ name, send, want string }{
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":"ping"`, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: the message is not valid JSON"}}`},
		{"garbage", `not json at all`, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: the message is not valid JSON"}}`},
		{"array", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: JSON-RPC batches exist only in protocol revision 2025-03-26"}}`},
		{"scalar", `42`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: a message must be a JSON-RPC 2.0 object"}}`},
		{"string", `"ping"`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: a message must be a JSON-RPC 2.0 object"}}`},
		{"missing jsonrpc", `{"id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""}}`},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""}}`},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""}}`},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: id must be a string or a number"}}`},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: id must be a string or a number"}}`},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: id must be a string or a number"}}`},
		{"duplicate keys", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: duplicate member name","data":{"pointer":"/method"}}}`},
		{"duplicate ids", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: duplicate member name","data":{"pointer":"/id"}}}`}, // which id? none
		{"duplicate nested keys", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"a":2,"b":1}}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: duplicate member name","data":{"pointer":"/params/arguments/a"}}}`},
		{"Method smuggling", `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: \"method\" is missing"}}`},
		{"METHOD and method", `{"jsonrpc":"2.0","id":1,"method":"ping","METHOD":"tools/call"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"method number", `{"jsonrpc":"2.0","id":1,"method":7}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: \"method\" must be a string"}}`},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"tools/explode"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: tools/explode"}}`},
		{"params array", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: \"params\" must be an object"}}`},
		{"call without name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: \"name\" must be a non-empty string"}}`},
		{"call name number", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: \"name\" must be a non-empty string"}}`},
		{"arguments array", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":[1,2]}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: \"arguments\" must be an object"}}`},
		{"arguments string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":"a=1"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: \"arguments\" must be an object"}}`},
		{"unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}`},
		{"wrong argument type", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":"one","b":2}}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Invalid arguments for tool add: unexpected string at /a"}],"isError":true}}`},
		{"bad cursor", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"!!"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: invalid cursor"}}`},
		{"cursor number", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: invalid cursor"}}`},
		{"bad _meta type", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":[]}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: unexpected array at /_meta"}}`},
		{"stateless unsupported version", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":"2099-01-01","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]}}}`},
		{"stateless handshake version", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":"2025-11-25","supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]}}}`},
		{"stateless without capabilities", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: _meta[\"io.modelcontextprotocol/clientCapabilities\"] is required and must be an object"}}`},
		{"stateless ping", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{` + meta2026 + `}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: ping does not exist in protocol revision 2026-07-28"}}`},
		{"discover in a session", `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: server/discover does not exist in protocol revision 2025-11-25"}}`},
		{"initialize in a stateless request", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` + meta2026 + `}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: initialize does not exist in protocol revision 2026-07-28"}}`},
		{"initialize capabilities not an object", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":5,"clientInfo":{"name":"c","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: capabilities must be an object"}}`},
		{"bad progress token", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":{}}}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: _meta.progressToken must be a string or a number"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			equalJSON(t, c.roundTrip(tc.send), tc.want)
			equalJSON(t, c.roundTrip(ping), pingResp)
			equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":"ok","method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`),
				`{"jsonrpc":"2.0","id":"ok","result":{"content":[{"type":"text","text":"3"}]}}`)
		})
	}
}

func TestNotificationsGetNoAnswer(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}))
	c.initialize("2025-11-25")
	for _, n := range []string{
		`{"jsonrpc":"2.0","method":"notifications/unknown"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
	} {
		c.send(n)
	}
	equalJSON(t, c.roundTrip(ping), pingResp)
}

func TestRequestsBeforeInitialize(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, addTool()))
	// ping is allowed before initialize
	equalJSON(t, c.roundTrip(ping), pingResp)
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`); !strings.Contains(got, `"code":-32602`) {
		t.Fatalf("server/discover without _meta: %s", got)
	}
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: no protocol version: send initialize first, or put the version in _meta[\"io.modelcontextprotocol/protocolVersion\"] on every request","data":{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]}}}`
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), want)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":1}}}`), want)
	// the same connection can then go stateless, or initialize
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta2026 + `}}`); !strings.Contains(got, `"name":"add"`) {
		t.Fatalf("stateless tools/list failed: %s", got)
	}
	c.initialize("2025-06-18")
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); !strings.Contains(got, `"name":"add"`) {
		t.Fatalf("tools/list after initialize failed: %s", got)
	}
}

func TestBothErasOnOneConnection(t *testing.T) {
	flat := hexmcp.NewTool(func() []int { return []int{1, 2} }, hexmcp.WithName("flat"))
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Info: domain.Implementation{Name: "srv", Version: "1"}, ListTTL: 5 * time.Second}, flat)
	c := serve(t, e)
	c.initialize("2025-11-25")
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flat"}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"[1,2]"}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flat",`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"[1,2]"}],"structuredContent":[1,2],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1"}}}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","tools":[{"name":"flat","inputSchema":{"type":"object","properties":{}}}],"ttlMs":5000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1"}}}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`),
		`{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"flat","inputSchema":{"type":"object","properties":{}}}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":5,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"logging":{},"tools":{"listChanged":true}},"ttlMs":5000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1"}}}}`)
}

func TestStatelessOnlyConnection(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, addTool()))
	got := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":2},` + meta2026 + `}}`)
	if !strings.Contains(got, `"resultType":"complete","content":[{"type":"text","text":"4"}]`) {
		t.Fatal(got)
	}
	// initialize does not exist in the stateless era, even on a connection
	// that has not initialized
	got = c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},` + meta2026 + `}}`)
	if !strings.Contains(got, `"code":-32601`) {
		t.Fatal(got)
	}
}

func TestInputValidationPerRevision(t *testing.T) {
	ctrl := gomock.NewController(t)
	v := porttest.NewMockSchemaValidator(ctrl)
	s := porttest.NewMockSchema(ctrl)
	v.EXPECT().Compile(gomock.Any()).Return(s, nil)
	s.EXPECT().Validate(gomock.Any()).Return(errors.New("/a: got string, want number")).Times(3)
	c := serve(t, newEngine(t, app.Options{Validator: v}, addTool()))
	c.initialize("2025-06-18")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":"x","b":1}%s}}`
	equalJSON(t, c.roundTrip(fmt.Sprintf(call, "")),
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: Invalid arguments for tool add: /a: got string, want number"}}`)
	got := c.roundTrip(fmt.Sprintf(call, ","+meta2026))
	if !strings.Contains(got, `"content":[{"type":"text","text":"Invalid arguments for tool add: /a: got string, want number"}],"isError":true`) {
		t.Fatal(got)
	}
	c2 := serve(t, newEngine(t, app.Options{Validator: okValidatorWith(ctrl, s)}, addTool()))
	c2.initialize("2025-11-25")
	equalJSON(t, c2.roundTrip(fmt.Sprintf(call, "")),
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Invalid arguments for tool add: /a: got string, want number"}],"isError":true}}`)
}

func okValidatorWith(ctrl *gomock.Controller, s ports.Schema) ports.SchemaValidator {
	v := porttest.NewMockSchemaValidator(ctrl)
	v.EXPECT().Compile(gomock.Any()).Return(s, nil).AnyTimes()
	return v
}

func TestHandlerErrors(t *testing.T) {
	ctrl := gomock.NewController(t)
	log := quietLogger(ctrl)
	secret := errors.New("dial db.internal:5432: password rejected")
	var sid string // the session's id, as the tool "fails" saw it
	var logged []string
	var mu sync.Mutex
	log.EXPECT().LogAttrs(gomock.Any(), slog.LevelError, gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, _ slog.Level, msg string, fields ...slog.Attr) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprint(msg, fields))
	}).Times(2)
	tools := []hexmcp.Tool{
		hexmcp.NewTool(func(ctx context.Context) error {
			sid = hexmcp.RequestFrom(ctx).SessionID()
			return secret
		}, hexmcp.WithName("fails")),
		hexmcp.NewTool(func() (int, error) { panic("boom: " + secret.Error()) }, hexmcp.WithName("panics")),
		hexmcp.NewTool(func() error { return fmt.Errorf("while checking: %w", hexmcp.NewToolError("File not found: x.txt")) }, hexmcp.WithName("toolErr")),
		hexmcp.NewTool(func() error {
			return domain.NewProtocolError(-32002, "Resource not found", map[string]string{"uri": "file:///x"})
		}, hexmcp.WithName("protoErr")),
	}
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New(), Logger: log}, tools...))
	c.initialize("2025-11-25")
	for i, name := range []string{"fails", "panics"} {
		resp := c.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d","method":"tools/call","params":{"name":"%s"}}`, i, name))
		equalJSON(t, resp, fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d","error":{"code":-32603,"message":"Internal error"}}`, i))
		equalJSON(t, c.roundTrip(ping), pingResp)
	}
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"toolErr"}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"File not found: x.txt"}],"isError":true}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"protoErr"}}`),
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"file:///x"}}}`)
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 2 || !strings.Contains(logged[0], "password rejected") || !strings.Contains(logged[1], "boom") || !strings.Contains(logged[1], "stack") {
		t.Fatalf("the server log must hold the details: %q", logged)
	}
	// Each record names the request it is about: its id, as JSON. A
	// connection's session has no id (the HTTP tests hold the session's).
	for i, rec := range logged {
		if id := fmt.Sprintf(`id="r%d"`, i); !strings.Contains(rec, id) || sid != "" || strings.Contains(rec, "session=") {
			t.Errorf("record %d does not name its request (%s) alone: %s", i, id, rec)
		}
	}
}

func TestOutputSchemaWarningAndMismatch(t *testing.T) {
	ctrl := gomock.NewController(t)
	log := quietLogger(ctrl)
	v := porttest.NewMockSchemaValidator(ctrl)
	in, out := porttest.NewMockSchema(ctrl), porttest.NewMockSchema(ctrl)
	in.EXPECT().Validate(gomock.Any()).Return(nil).AnyTimes()
	gomock.InOrder(
		v.EXPECT().Compile(gomock.Any()).Return(in, nil),
		v.EXPECT().Compile(gomock.Any()).Return(out, nil),
	)
	out.EXPECT().Validate(map[string]any{"items": []any{1.0}}).Return(errors.New("/items/0: got number, want object"))
	var mode string
	tool := hexmcp.NewRawTool("listUsers", json.RawMessage(`{"type":"object"}`), func(context.Context, json.RawMessage) (any, error) {
		if mode == "list" {
			return []int{1}, nil
		}
		return map[string]any{"items": []int{1}}, nil
	}, hexmcp.WithOutputSchema(json.RawMessage(`{"type":"object","properties":{"items":{"type":"array"}}}`)))
	log.EXPECT().LogAttrs(gomock.Any(), slog.LevelWarn, gomock.Any(), gomock.Any()).Do(func(_ context.Context, _ slog.Level, msg string, attrs ...slog.Attr) {
		if !strings.HasPrefix(msg, "hexmcp: ") || !strings.Contains(msg, `"listUsers"`) || !strings.Contains(msg, "[]int") {
			t.Errorf("warning does not name the tool and type after the SDK's prefix: %s", msg)
		}
		if !strings.Contains(fmt.Sprint(attrs), "id=1") {
			t.Errorf("warning does not name its request: %s", attrs)
		}
	})
	log.EXPECT().LogAttrs(gomock.Any(), slog.LevelError, gomock.Any(), gomock.Any()).Do(func(_ context.Context, _ slog.Level, msg string, _ ...slog.Attr) {
		if !strings.Contains(msg, "outputSchema") {
			t.Errorf("mismatch log = %s", msg)
		}
	})
	c := serve(t, newEngine(t, app.Options{Logger: log, Validator: v}, tool))
	c.initialize("2025-11-25")
	mode = "list"
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"listUsers"}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"[1]"}]}}`)
	mode = "object"
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"listUsers"}}`),
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}`)
}

func TestPagination(t *testing.T) {
	var tools []hexmcp.Tool
	for _, n := range []string{"e", "b", "d", "a", "c"} {
		tools = append(tools, hexmcp.NewTool(func() string { return n }, hexmcp.WithName(n)))
	}
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New(), PageSize: 2}, tools...))
	c.initialize("2025-11-25")
	names := listNames(t, c, "tools/list", "tools")
	if strings.Join(names, ",") != "a,b,c,d,e" {
		t.Fatalf("pages gave %v", names)
	}
}

func TestCancellation(t *testing.T) {
	started := make(chan struct{})
	stopped := make(chan error, 1)
	slow := hexmcp.NewTool(func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return ctx.Err()
	}, hexmcp.WithName("slow"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, slow, addTool()))
	c.initialize("2025-11-25")
	c.send(`{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"slow"}}`)
	<-started
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1","reason":"user"}}`)
	if err := testtools.Recv(t, stopped, 5*time.Second, "the handler's context was not cancelled"); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	// no response for the cancelled request; the next one is answered
	equalJSON(t, c.roundTrip(ping), pingResp)
	c.expectNothing()
}

func TestDuplicateInFlightID(t *testing.T) {
	release := make(chan struct{})
	block := hexmcp.NewTool(func(ctx context.Context) error { <-release; return nil }, hexmcp.WithName("block"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, block))
	c.initialize("2025-11-25")
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"block"}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"block"}}`),
		`{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"Invalid Request: a request with this id is already in progress"}}`)
	close(release)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"(null)"}]}}`)
}

func TestListChanged(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
	handshake := serve(t, e)
	handshake.initialize("2025-11-25")
	stateless := serve(t, e)
	equalJSON(t, stateless.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}}],"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"hexmcp-server","version":"0.0.0"}}}}`)
	if err := e.AddTool(hexmcp.NewTool(func() string { return "x" }, hexmcp.WithName("late"))); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, handshake.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	if !strings.Contains(handshake.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), `"name":"late"`) {
		t.Fatal("new tool not listed")
	}
	if !e.RemoveTool("late") || e.RemoveTool("late") {
		t.Fatal("RemoveTool result wrong")
	}
	equalJSON(t, handshake.recv(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	stateless.expectNothing()
}

func TestProgress(t *testing.T) {
	var got []error
	tool := hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		got = append(got, rc.ReportProgress(ctx, 1, 2, "half"))
		got = append(got, rc.ReportProgress(ctx, 1, 2, "again"))
		got = append(got, rc.ReportProgress(ctx, 2, 2, ""))
		return fmt.Sprintf("%v %s %s", rc.CanReportProgress(), rc.Revision(), rc.Client().Name), nil
	}, hexmcp.WithName("work"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, tool))
	c.initialize("2025-11-25")
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"tok"}}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":2,"message":"half"}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2,"total":2}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"true 2025-11-25 test"}]}}`)
	if got[0] != nil || !errors.Is(got[1], hexmcp.ErrProgressNotIncreasing) || got[2] != nil {
		t.Fatalf("ReportProgress errors = %v", got)
	}
	// without a token: nothing is sent; stateless: client from _meta
	got = nil
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work",`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"false 2026-07-28 c"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"hexmcp-server","version":"0.0.0"}}}}`)
}

// Progress reported under a context that has ended is refused with the
// context's error and sends nothing; the next one still goes out.
func TestProgressAfterItsContextEnded(t *testing.T) {
	var got []error
	tool := hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		got = append(got, rc.ReportProgress(ended, 1, 0, "late"))
		got = append(got, rc.ReportProgress(ctx, 2, 0, ""))
		return "done", nil
	}, hexmcp.WithName("work"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, tool))
	c.initialize("2025-11-25")
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"tok"}}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`)
	if len(got) != 2 || !errors.Is(got[0], context.Canceled) || got[1] != nil {
		t.Fatalf("ReportProgress errors = %v, want context.Canceled then nil", got)
	}
}

// Progress must be a finite number: NaN and the infinities are refused
// with an error and send nothing (JSON has no way to write them).
func TestProgressMustBeFinite(t *testing.T) {
	var got []error
	tool := hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		for _, p := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			got = append(got, rc.ReportProgress(ctx, p, 0, ""))
		}
		got = append(got, rc.ReportProgress(ctx, 1, 0, ""))
		return "done", nil
	}, hexmcp.WithName("work"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, tool))
	c.initialize("2025-11-25")
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"tok"}}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`)
	if len(got) != 4 || got[3] != nil {
		t.Fatalf("ReportProgress errors = %v", got)
	}
	for i, err := range got[:3] {
		if err == nil || !strings.Contains(err.Error(), "finite") {
			t.Errorf("progress %d: error %v, want one saying it must be finite", i, err)
		}
	}
}

func TestConcurrentCalls(t *testing.T) {
	gate := make(chan struct{})
	echo := hexmcp.Func(func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (int, error) {
		<-gate
		return in.N, nil
	}, hexmcp.WithName("echo"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New(), MaxConcurrentRequests: 100}, echo))
	c.initialize("2025-11-25")
	const n = 50
	for i := 0; i < n; i++ {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"n":%d}}}`, i, i*10))
	}
	close(gate)
	seen := map[int]bool{}
	for i := 0; i < n; i++ {
		var resp struct {
			ID     int
			Result struct{ Content []struct{ Text string } }
		}
		if err := json.Unmarshal([]byte(c.recv()), &resp); err != nil {
			t.Fatal(err)
		}
		if seen[resp.ID] || resp.Result.Content[0].Text != fmt.Sprint(resp.ID*10) {
			t.Fatalf("response %d wrong or repeated: %+v", resp.ID, resp)
		}
		seen[resp.ID] = true
	}
}

func TestGracefulShutdownFinishesCalls(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	tool := hexmcp.NewTool(func(ctx context.Context) (string, error) {
		close(started)
		select {
		case <-release:
			return "finished", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, hexmcp.WithName("job"))
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, tool)
	cl, s := memory.NewPipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.ServeConn(ctx, s) }()
	c := &client{t: t, pipe: cl}
	c.initialize("2025-11-25")
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job"}}`)
	// The call must be in flight before the reading stops (a sleep here
	// let a loaded machine stop reading before the call was read).
	testtools.Recv(t, started, 10*time.Second, "the call did not start")
	cancel() // stop reading
	select {
	case <-done:
		t.Fatal("ServeConn returned with a call in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"finished"}]}}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestRegistrationErrors(t *testing.T) {
	ctrl := gomock.NewController(t)
	v := porttest.NewMockSchemaValidator(ctrl)
	s := porttest.NewMockSchema(ctrl)
	v.EXPECT().Compile(json.RawMessage(`{"type":"object","properties":{"x":{"type":"nonsense"}}}`)).Return(nil, errors.New("bad type"))
	v.EXPECT().Compile(gomock.Any()).Return(s, nil).AnyTimes()
	e := newEngine(t, app.Options{Validator: v}, addTool())
	cases := map[string]hexmcp.Tool{
		"duplicate":   addTool(),
		"bad name":    hexmcp.NewTool(func() {}, hexmcp.WithName("has space")),
		"empty name":  hexmcp.NewTool(func() {}, hexmcp.WithName("")),
		"anonymous":   hexmcp.NewTool(func() {}),
		"not a func":  hexmcp.NewTool(42, hexmcp.WithName("x")),
		"bad shape":   hexmcp.NewTool(func(a, b int) {}, hexmcp.WithName("x")),
		"bad results": hexmcp.NewTool(func() (int, int) { return 0, 0 }, hexmcp.WithName("x")),
		"bad input":   hexmcp.NewTool(func(s string) {}, hexmcp.WithName("x")),
		"bad schema":  hexmcp.NewRawTool("x", json.RawMessage(`{"type":"object","properties":{"x":{"type":"nonsense"}}}`), func(context.Context, json.RawMessage) (any, error) { return nil, nil }),
		"not object":  hexmcp.NewRawTool("x", json.RawMessage(`{"type":"string"}`), func(context.Context, json.RawMessage) (any, error) { return nil, nil }),
		"bad JSON":    hexmcp.NewRawTool("x", json.RawMessage(`{`), func(context.Context, json.RawMessage) (any, error) { return nil, nil }),
		"nil handler": hexmcp.NewRawTool("x", json.RawMessage(`{"type":"object"}`), nil),
		"bad icon":    hexmcp.NewTool(func() {}, hexmcp.WithName("x"), hexmcp.WithIcons(domain.Icon{Src: "ftp://x"})),
		"bad tag": hexmcp.Func(func(context.Context, struct {
			N int `json:"n" minimum:"abc"`
		}) (int, error) {
			return 0, nil
		}, hexmcp.WithName("x")),
	}
	for name, tool := range cases {
		t.Run(name, func(t *testing.T) {
			err := e.AddTool(tool)
			var de *domain.DefinitionError
			if err == nil || !errors.As(err, &de) || de.Kind != "tool" {
				t.Fatalf("AddTool = %v, want a tool *domain.DefinitionError", err)
			}
			t.Log(err)
		})
	}
}

func TestHandleMessage(t *testing.T) {
	progress := hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		if err := rc.ReportProgress(ctx, 1, 0, "step"); err != nil {
			return "", err
		}
		tr := rc.Transport()
		return fmt.Sprintf("%s %s %s", rc.Revision(), tr.Header["X-Trace"], tr.Principal.Subject), nil
	}, hexmcp.WithName("progress"))
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool(), progress)
	ctx := context.Background()
	// stateless without a session
	got := string(e.HandleMessage(ctx, nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":1},`+meta2026+`}}`), nil))
	if !strings.Contains(got, `"text":"2"`) {
		t.Fatal(got)
	}
	// handshake-era requests without a session are refused, never a panic
	got = string(e.HandleMessage(ctx, nil, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":1}}}`), nil))
	if !strings.Contains(got, `"code":-32602`) {
		t.Fatal(got)
	}
	if out := e.HandleMessage(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil); out != nil {
		t.Fatalf("a notification got %s", out)
	}
	// with a session, whose state can be stored and restored elsewhere
	sess := e.NewSession(ctx, "s-1", nil)
	defer sess.Close()
	got = string(e.HandleMessage(ctx, sess, []byte(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"cli","version":"2"}}}`), nil))
	if !strings.Contains(got, `"protocolVersion":"2025-06-18"`) {
		t.Fatal(got)
	}
	st := sess.State()
	if st.ID != "s-1" || !st.Initialized || st.Revision != "2025-06-18" || st.Client.Name != "cli" || string(st.Capabilities) != `{"roots":{}}` {
		t.Fatalf("State = %+v", st)
	}
	other := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool(), progress)
	restored := other.RestoreSession(ctx, st, nil)
	defer restored.Close()
	got = string(other.HandleMessage(ctx, restored, []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":2}}}`), nil))
	if got != `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"4"}]}}` {
		t.Fatal(got)
	}
	// related notifications go to the request's own writer; transport info reaches the handler
	related, relatedEnd := memory.NewPipe()
	tctx := app.WithTransportInfo(ctx, hexmcp.TransportInfo{Header: map[string][]string{"X-Trace": {"abc"}}, Principal: &ports.Principal{Subject: "alice"}})
	got = string(other.HandleMessage(tctx, restored, []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":7}}}`), relatedEnd))
	if got != `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"2025-06-18 [abc] alice"}]}}` {
		t.Fatal(got)
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	note, err := related.ReadMessage(rctx)
	if err != nil || string(note) != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"message":"step"}}` {
		t.Fatalf("related notification = %s, %v", note, err)
	}
}

// TestServerShutdownDeadline: Shutdown waits for calls in flight; when its
// context ends first, the calls' contexts are cancelled.
func TestServerShutdownDeadline(t *testing.T) {
	cancelled := make(chan struct{})
	started := make(chan struct{})
	tool := hexmcp.NewTool(func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return ctx.Err()
	}, hexmcp.WithName("forever"))
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, tool)
	tr, cl := memory.NewTransport()
	srv := serving.New(e, tr)
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); !errors.Is(err, serving.ErrAlreadyStarted) {
		t.Fatalf("second Start = %v", err)
	}
	c := &client{t: t, pipe: cl}
	c.initialize("2025-11-25")
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forever"}}`)
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want the deadline", err)
	}
	select {
	case <-cancelled:
	default:
		t.Fatal("the call's context was not cancelled at the deadline")
	}
	select {
	case <-srv.Done():
	default:
		t.Fatal("Done not closed after Shutdown")
	}
}

func TestInspect(t *testing.T) {
	for raw, want := range map[string]exchange.Info{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1},` + meta2026 + `}}`: {Kind: exchange.Request, ID: json.RawMessage(`1`), Method: "tools/call", ProtocolVersion: "2026-07-28", Name: "add", Arguments: json.RawMessage(`{"a":1}`)},
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:                                                      {Kind: exchange.Notification, Method: "notifications/initialized"},
		`{"jsonrpc":"2.0","id":"r","result":{}}`:                                                                      {Kind: exchange.Response, ID: json.RawMessage(`"r"`)},
		`{"jsonrpc":"2.0","id":2,"Method":"x"}`:                                                                       {Kind: exchange.Invalid, ID: json.RawMessage(`2`)},
		`nope`:                                                                                                        {Kind: exchange.Invalid},
	} {
		got := app.Inspect([]byte(raw))
		exported := func(mi exchange.Info) string {
			return fmt.Sprintf("%v %s %q %q %q %q %s", mi.Kind, mi.ID, mi.Method, mi.ProtocolVersion, mi.Name, mi.URI, mi.Arguments)
		}
		if exported(got.Info) != exported(want) {
			t.Errorf("Inspect(%s)\n got %+v\nwant %+v", raw, got, want)
		}
	}
	if !app.Inspect([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta2026 + `}}`)).Stateless() {
		t.Error("a request with the version in _meta is stateless")
	}
	if !app.Inspect([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + meta2026 + `}}`)).Stateless() {
		t.Error("an initialize carrying the stateless _meta is stateless (and then unknown)")
	}
}

func TestAnswerAndHandleInspected(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
	ctx := context.Background()
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":"a\"b,\"error\":{\"code\":1","method":"nope"}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},` + meta2026 + `}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{bad`,
		`{"jsonrpc":"2.0","method":"notifications/x"}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":2026,"io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"nope",` + meta2026 + `}}`,
	} {
		direct := e.HandleMessage(ctx, nil, []byte(raw), nil)
		inspected := e.HandleInspected(ctx, nil, app.Inspect([]byte(raw)), nil)
		if string(direct) != string(inspected) {
			t.Fatalf("HandleInspected differs for %s:\n%s\n%s", raw, inspected, direct)
		}
		ans := e.Answer(ctx, nil, app.Inspect([]byte(raw)), nil)
		var decoded struct {
			Error *struct {
				Code    int
				Message string
			}
		}
		if direct != nil {
			if err := json.Unmarshal(direct, &decoded); err != nil {
				t.Fatal(err)
			}
		}
		if string(ans.Response) != string(direct) || ans.IsError != (decoded.Error != nil) || decoded.Error != nil && ans.Code != decoded.Error.Code {
			t.Fatalf("Answer(%s) = %+v", direct, ans)
		}
		// Only a request missing a required per-request field is
		// malformed; an unknown tool's -32602 is an answer.
		wantMalformed := decoded.Error != nil && decoded.Error.Code == -32602 && strings.Contains(decoded.Error.Message, "_meta")
		if ans.Malformed != wantMalformed {
			t.Fatalf("Answer(%s).Malformed = %v", direct, ans.Malformed)
		}
	}
}

func TestLoggingToTheClient(t *testing.T) {
	logs := hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) error {
		for _, l := range []domain.LogLevel{domain.LogDebug, domain.LogInfo, domain.LogError} {
			if err := rc.Log(ctx, l, "calc", map[string]any{"step": string(l)}); err != nil {
				return err
			}
		}
		if err := rc.Log(ctx, "loud", "", "x"); err == nil {
			return errors.New("an invalid level was accepted")
		}
		return nil
	}, hexmcp.WithName("logs"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, logs))
	c.initialize("2025-11-25")
	// no level set: nothing is sent
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"logs"}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"(null)"}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`), `{"jsonrpc":"2.0","id":2,"result":{}}`)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"logs"}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"calc","data":{"step":"info"}}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"calc","data":{"step":"error"}}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"(null)"}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"loud"}}`),
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency"}}`)
	// stateless: per request, nothing without _meta logLevel
	got := c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"logs",` + meta2026 + `}}`)
	if !strings.Contains(got, `"id":5`) {
		t.Fatalf("a log message was sent without a logLevel in _meta: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"logs","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"error"}}}`)
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"calc","data":{"step":"error"}}}`)
	if got := c.recv(); !strings.Contains(got, `"id":6`) {
		t.Fatal(got)
	}
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"info",`+meta2026+`}}`),
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found: logging/setLevel does not exist in protocol revision 2026-07-28"}}`)
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"logs","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}}`); !strings.Contains(got, `"code":-32602`) {
		t.Fatal(got)
	}
}

func TestTraceContext(t *testing.T) {
	tool := hexmcp.NewTool(func(rc *app.RequestContext) string {
		tr := rc.Trace()
		return tr.TraceParent + "|" + tr.TraceState + "|" + tr.Baggage
	}, hexmcp.WithName("trace"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, tool))
	c.initialize("2025-11-25")
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trace","_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01","tracestate":"k=v","baggage":"user=1"}}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01|k=v|user=1"}]}}`)
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trace"}}`),
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"||"}]}}`)
}

// An engine assembled by hand cannot serve without validation by leaving
// the Validator empty: that is an error, and only DisableValidation turns
// validation off.
func TestNewEngineNeedsValidatorOrDisableValidation(t *testing.T) {
	_, err := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry()})
	if err == nil || !strings.Contains(err.Error(), "DisableValidation") {
		t.Fatalf("no validator: %v", err)
	}
	if _, err := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), DisableValidation: true}); err != nil {
		t.Fatalf("DisableValidation: %v", err)
	}
	if _, err := app.NewEngine(app.Options{Validator: jsonschema.New()}); err == nil {
		t.Fatal("no registry: no error")
	}
}

// A tool middleware that calls next with a context of its own making (not
// the one it was given) reaches no handler: the call is answered as an
// internal error, and the log says why, rather than that the tool
// panicked.
func TestToolMiddlewareWithAForeignContext(t *testing.T) {
	ctrl := gomock.NewController(t)
	log := quietLogger(ctrl)
	var logged []string
	log.EXPECT().LogAttrs(gomock.Any(), slog.LevelError, gomock.Any(), gomock.Any()).Do(func(_ context.Context, _ slog.Level, msg string, fields ...slog.Attr) {
		logged = append(logged, fmt.Sprint(msg, fields))
	}).Times(1)
	lost := func(next hexmcp.ToolHandler) hexmcp.ToolHandler {
		return func(_ context.Context, call *hexmcp.ToolCall) (any, error) {
			return next(context.Background(), call)
		}
	}
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New(), Logger: log, ToolMiddleware: []hexmcp.ToolMiddleware{lost}}, addTool()))
	c.initialize("2025-11-25")
	equalJSON(t, c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`),
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`)
	if len(logged) != 1 || !strings.Contains(logged[0], "hexmcp: tool failed") || !strings.Contains(logged[0], "made outside the engine") {
		t.Fatalf("the log: %q", logged)
	}
}
