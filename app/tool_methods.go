package app

import (
	"context"
	"encoding/base64"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// toolCatalog serves the tools: it checks and compiles their definitions
// (AddTool, a session's own tools), lists them (tools/list) and calls them
// (tools/call), as each request sees them (viewFilter).
type toolCatalog struct {
	registry   ports.ToolRegistry
	validator  ports.SchemaValidator // nil: no validation (Options.DisableValidation)
	policy     domain.RevisionPolicy
	middleware handlerapi.ToolHandler // Options.ToolMiddleware, composed (nil: none)
	cache      encodingCache
	log        ports.Logger

	catalogParts
}

// changed drops cached lists and sends notifications/tools/list_changed to
// every initialized handshake-era session and to the subscriptions/listen
// streams that asked for it.
func (tc *toolCatalog) changed() { tc.bus.raise(ports.Notice{Kind: ports.NoticeToolsChanged}) }

// catalogParts are the parts the catalogs (tools, resources, prompts)
// reach: what a request sees, the shape of results, multi round-trip
// input, what a handler's RequestContext reaches, and the bus their list
// changes go out on.
type catalogParts struct {
	vis   *viewFilter
	res   *results
	input *inputRounds
	env   *requestEnv
	bus   *noticeBus
}

// encodingCache keeps the encoded form of each listed item (a tool,
// prompt, resource or resource template) per revision, until its list
// changes.
type encodingCache struct{ m sync.Map } // encodingKey[P] -> []byte

type encodingKey[P any] struct {
	item P
	r    domain.Revision
}

func (c *encodingCache) invalidate() { c.m.Clear() }

// listedItem is a pointer to what a list result holds.
type listedItem interface {
	comparable
	AppendJSON(b []byte) ([]byte, error)
}

// cachedEncoding returns item as revision r's list carries it: shaped by
// shape (a RevisionPolicy method) and encoded, once per item and revision.
func cachedEncoding[P listedItem](c *encodingCache, p domain.RevisionPolicy, item P, r domain.Revision, shape func(domain.RevisionPolicy, P, domain.Revision) P) ([]byte, error) {
	k := encodingKey[P]{item, r}
	if b, ok := c.m.Load(k); ok {
		return b.([]byte), nil
	}
	b, err := shape(p, item, r).AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	c.m.Store(k, b)
	return b, nil
}

const cursorPrefix = "after:"

func encodeCursor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + name))
}

func decodeCursor(c string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(raw), cursorPrefix) {
		return "", false
	}
	return string(raw[len(cursorPrefix):]), true
}

func (tc *toolCatalog) list(ctx context.Context, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	var tools []ports.RegisteredTool
	if tc.vis.rules.Tool == nil && (ci.session == nil || len(ci.session.ownTools()) == 0) {
		tools = tc.registry.List()
	} else {
		tools = tc.vis.visibleTools(ctx, viewerOf(ctx, ci), ci.session)
	}
	start := 0
	if p.Cursor != nil && p.Cursor.Kind() != 'n' {
		c, ok := stringParam(p.Cursor)
		after, ok2 := decodeCursor(c)
		if !ok || !ok2 {
			return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: invalid cursor", nil)
		}
		start = len(tools)
		for i, t := range tools {
			if t.Tool.Name > after {
				start = i
				break
			}
		}
	}
	end := min(start+tc.res.pageSize, len(tools))
	// The tools' encodings (cached) first, so that the answer is made in
	// one buffer of about its size.
	size := 256 + len(m.id)
	for _, t := range tools[start:end] {
		enc, err := cachedEncoding(&tc.cache, tc.policy, t.Tool, ci.rev, domain.RevisionPolicy.ShapeTool)
		if err != nil {
			logf(tc.log, context.Background(), slog.LevelError, "hexmcp: encoding a tool failed", slog.Any("tool", t.Tool.Name), slog.Any("error", err))
			return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
		}
		size += len(enc) + 1
	}
	if ci.era == domain.EraStateless {
		size += len(tc.res.metaJSON(ci.rev))
	}
	b := appendResponseHead(make([]byte, 0, size), m.id)
	b = append(b, '{')
	if ci.features.ResultType {
		b = append(b, `"resultType":"complete",`...)
	}
	b = append(b, `"tools":[`...)
	for i, t := range tools[start:end] {
		if i > 0 {
			b = append(b, ',')
		}
		enc, err := cachedEncoding(&tc.cache, tc.policy, t.Tool, ci.rev, domain.RevisionPolicy.ShapeTool) // cached by the first loop
		if err != nil {
			return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
		}
		b = append(b, enc...)
	}
	b = append(b, ']')
	if end < len(tools) {
		b = append(b, `,"nextCursor":`...)
		b = domain.AppendJSONString(b, encodeCursor(tools[end-1].Tool.Name))
	}
	b = tc.res.appendStatelessTail(b, ci, false)
	return append(b, "}}"...), nil
}

func (tc *toolCatalog) call(ctx context.Context, m message, p *wireParams, ci callInfo) ([]byte, *rpcError) {
	name, ok := stringParam(p.Name)
	if !ok || name == "" {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: "name" must be a non-empty string`, nil)
	}
	args := p.Arguments
	switch {
	case args == nil || args.Kind() == 'n':
		args = jsontext.Value("{}")
	case args.Kind() != '{':
		return nil, newRPCError(m.id, domain.CodeInvalidParams, `Invalid params: "arguments" must be an object`, nil)
	}
	rt, ok := tc.find(ctx, ci, name)
	if !ok {
		return nil, newRPCError(m.id, domain.CodeInvalidParams, "Unknown tool: "+name, nil)
	}
	if rerr := checkScopes(ctx, m.id, rt.Tool.Scopes); rerr != nil {
		return nil, rerr
	}
	if rt.Input != nil {
		if err := validateJSON(rt.Input, args); err != nil {
			if errors.Is(err, ports.ErrUndecodable) {
				return tc.invalidArguments(m, ci, name, "arguments are not valid JSON")
			}
			return tc.invalidArguments(m, ci, name, err.Error())
		}
	}
	rc := tc.env.newRequestContext(ctx, m, ci)
	rc.tool = name
	if rt.Tool.PassAccessToken {
		rc.token = ports.AccessTokenFrom(ctx)
	}
	if rerr := tc.input.begin(ctx, rc, m, p, name, args); rerr != nil {
		return nil, rerr
	}
	value, err := tc.invoke(withRequest(ctx, rc), rt, args)
	var res *domain.CallToolResult
	if err != nil {
		if out, rerr, ok := tc.input.errorResult(ctx, m, ci, rc.input, err); ok {
			return out, rerr
		}
		if te := (*domain.ToolError)(nil); errors.As(err, &te) {
			res = ci.features.ShapeResult(domain.ErrorResult(te))
			return tc.encodeResult(m, ci, res)
		}
		var ae *decl.ArgumentsError
		if errors.As(err, &ae) {
			return tc.invalidArguments(m, ci, name, ae.Error())
		}
		return nil, handlerFailed(ctx, tc.log, m, ci, err, "hexmcp: tool failed", slog.Any("tool", name))
	}
	out, err := ci.features.WrapValue(rt.Tool, value)
	if err != nil {
		logf(tc.log, ctx, slog.LevelError, "hexmcp: tool result cannot be encoded", slog.Any("tool", name), slog.Any("error", err))
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}
	if out.Warning != nil {
		logf(tc.log, ctx, slog.LevelWarn, "hexmcp: "+out.Warning.String(), requestAttrs(m.id, ci.session, slog.Any("tool", name), slog.Any("type", out.Warning.GoType), slog.Any("revision", string(out.Warning.Revision)))...)
	}
	// structuredContent must conform to a declared outputSchema, whether
	// the SDK produced it or the handler returned a complete result.
	if rt.Output != nil && out.Result.StructuredContent != nil && !out.Result.IsError {
		// The handler may have made the JSON itself: it is checked as
		// strictly as a request before it is validated as encoded.
		var err error
		if sc := jsontext.Value(out.Result.StructuredContent); !sc.IsValid() {
			err = errUndecodable
		} else {
			err = validateJSON(rt.Output, sc)
		}
		if err != nil {
			logf(tc.log, ctx, slog.LevelError, "hexmcp: tool result does not match its outputSchema (a bug in the tool)", slog.Any("tool", name), slog.Any("error", err))
			return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
		}
	}
	return tc.encodeResult(m, ci, out.Result)
}

// errUndecodable is the error of validateJSON for data that does not
// decode.
var errUndecodable = fmt.Errorf("hexmcp: %w", ports.ErrUndecodable)

// validateJSON checks data, JSON the engine has read strictly, against s:
// as encoded when s can (ports.JSONSchema), so that data is decoded only
// into what the tool takes; decoded with float64 numbers otherwise. An
// error that comes from decoding wraps ports.ErrUndecodable.
func validateJSON(s ports.Schema, data jsontext.Value) error {
	if js, ok := s.(ports.JSONSchema); ok {
		return js.ValidateJSON(data)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return errUndecodable
	}
	return s.Validate(v)
}

// invalidArguments reports arguments that fail the input schema: a tool
// result with isError from 2025-11-25 on (SEP-1303), -32602 before.
func (tc *toolCatalog) invalidArguments(m message, ci callInfo, tool, detail string) ([]byte, *rpcError) {
	msg := fmt.Sprintf("Invalid arguments for tool %s: %s", tool, detail)
	if ci.features.InputErrorsAsResults {
		return tc.encodeResult(m, ci, &domain.CallToolResult{Content: []domain.Content{&domain.TextContent{Text: msg}}, IsError: true})
	}
	return nil, newRPCError(m.id, domain.CodeInvalidParams, "Invalid params: "+msg, nil)
}

func (tc *toolCatalog) encodeResult(m message, ci callInfo, res *domain.CallToolResult) ([]byte, *rpcError) {
	resultType, addMeta := "", false
	if ci.features.ResultType {
		resultType = "complete"
		if len(res.Meta) == 0 {
			addMeta = true
		} else if _, ok := res.Meta[metaServerInfo]; !ok {
			cp := *res
			cp.Meta = make(map[string]any, len(res.Meta)+1)
			for k, v := range res.Meta {
				cp.Meta[k] = v
			}
			cp.Meta[metaServerInfo] = ci.features.ShapeImplementation(tc.res.info)
			res = &cp
		}
	}
	b := appendResponseHead(m.slot.outBuffer(), m.id)
	b, err := res.AppendJSON(b, resultType)
	if err != nil {
		logf(tc.log, context.Background(), slog.LevelError, "hexmcp: encoding a tool result failed", slog.Any("error", err))
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}
	if addMeta {
		b = tc.res.appendMeta(b[:len(b)-1], ci.rev) // reopen the result object
		b = append(b, '}')
	}
	b = append(b, '}')
	m.slot.encoded(b)
	return b, nil
}

// invoke runs the handler, turning a panic into an error.
func (tc *toolCatalog) invoke(ctx context.Context, rt ports.RegisteredTool, args jsontext.Value) (value any, err error) {
	defer func() {
		if r := recover(); r != nil {
			logf(tc.log, ctx, slog.LevelError, "hexmcp: tool handler panicked", panicAttrs(ctx, r, slog.Any("tool", rt.Tool.Name))...)
			value, err = nil, errPanic
		}
	}()
	if tc.middleware != nil {
		ctx = context.WithValue(ctx, registeredToolKey{}, rt)
		return tc.middleware(ctx, &handlerapi.ToolCall{Tool: rt.Tool, Arguments: stdjson.RawMessage(args)})
	}
	return rt.Handler(ctx, stdjson.RawMessage(args))
}

var errPanic = errors.New("tool handler panicked")

// requestAttrs are attrs followed by what tells an operator which request a
// log record is about: its JSON-RPC id ("id", as JSON) and, in a session,
// the session's id ("session").
func requestAttrs(id jsontext.Value, s *session, attrs ...slog.Attr) []slog.Attr {
	attrs = append(attrs, slog.Any("id", string(id)))
	if s != nil {
		if sid := s.sessionID(); sid != "" {
			attrs = append(attrs, slog.Any("session", sid))
		}
	}
	return attrs
}

// panicAttrs are the attrs of a handler's panic, logged where it is
// recovered, with the request's id and session (requestAttrs) from the
// RequestContext in ctx.
func panicAttrs(ctx context.Context, r any, attrs ...slog.Attr) []slog.Attr {
	attrs = append(attrs, slog.Any("panic", fmt.Sprint(r)), slog.Any("stack", string(debug.Stack())))
	if rc := RequestFrom(ctx); rc != nil {
		return requestAttrs(rc.id, rc.info.session, attrs...)
	}
	return attrs
}

// handlerFailed answers a request whose handler (a tool, prompt, resource
// or completer) failed with err, when nothing more particular applies: a
// *domain.ProtocolError is sent as it is; anything else as an internal
// error, logged as msg with attrs unless the request was cancelled or the
// handler panicked (logged then).
func handlerFailed(ctx context.Context, log ports.Logger, m message, ci callInfo, err error, msg string, attrs ...slog.Attr) *rpcError {
	var pe *domain.ProtocolError
	if errors.As(err, &pe) {
		return &rpcError{id: m.id, err: pe}
	}
	if ctx.Err() == nil && err != errPanic {
		logf(log, ctx, slog.LevelError, msg, append(attrs, requestAttrs(m.id, ci.session, slog.Any("error", err))...)...)
	}
	return newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
}

// prepare checks a tool's definition and compiles its schemas.
func (tc *toolCatalog) prepare(t decl.Tool) (ports.RegisteredTool, error) {
	def, handler, err := decl.ToolOf(t)
	if err != nil {
		return ports.RegisteredTool{}, err
	}
	if handler == nil {
		return ports.RegisteredTool{}, &domain.DefinitionError{Kind: "tool", Name: def.Name, Reason: "no handler"}
	}
	def.InputSchema = compactJSON(def.InputSchema)
	def.OutputSchema = compactJSON(def.OutputSchema)
	if err := def.Validate(); err != nil {
		return ports.RegisteredTool{}, err
	}
	rt := ports.RegisteredTool{Tool: &def, Handler: handler}
	if v := tc.validator; v != nil {
		in, err := v.Compile(def.InputSchema)
		if err != nil {
			return rt, &domain.DefinitionError{Kind: "tool", Name: def.Name, Reason: "inputSchema does not compile: " + err.Error(), Err: err}
		}
		rt.Input = in
		if len(def.OutputSchema) > 0 {
			out, err := v.Compile(def.OutputSchema)
			if err != nil {
				return rt, &domain.DefinitionError{Kind: "tool", Name: def.Name, Reason: "outputSchema does not compile: " + err.Error(), Err: err}
			}
			rt.Output = out
		}
	}
	return rt, nil
}

// find finds the tool a tools/call names, as the request sees it: the
// session's own first, then the registry's, hidden ones not at all.
func (tc *toolCatalog) find(ctx context.Context, ci callInfo, name string) (ports.RegisteredTool, bool) {
	if s := ci.session; s != nil && ci.era == domain.EraHandshake {
		if rt, ok := s.ownTool(name); ok {
			return rt, tc.vis.rules.Tool == nil || tc.vis.toolVisible(ctx, viewerOf(ctx, ci), rt.Tool)
		}
	}
	rt, ok := tc.registry.Get(name)
	if !ok || tc.vis.rules.Tool == nil {
		return rt, ok
	}
	return rt, tc.vis.toolVisible(ctx, viewerOf(ctx, ci), rt.Tool)
}

// runTool is the last handler of the tool middleware: the tool's own
// handler.
func runTool(ctx context.Context, call *handlerapi.ToolCall) (any, error) {
	rt, _ := ctx.Value(registeredToolKey{}).(ports.RegisteredTool)
	if rt.Handler == nil {
		return nil, errors.New("hexmcp: a ToolCall made outside the engine reached its handler")
	}
	return rt.Handler(ctx, call.Arguments)
}
