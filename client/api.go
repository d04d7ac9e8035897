package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/xmcpheader"
	"github.com/hexmcp/hexmcp/ports"
)

// Collect gathers the values of a list ([Session.ListTools], ...) into a
// slice, stopping at the first error.
func Collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	out := []T{}
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// ListTools lists the server's tools, every page of tools/list, one tool
// at a time: a page is asked for when the range reaches it. An error ends
// the range. Use [Collect] for a slice. In the stateless era a tool whose
// input schema has an invalid x-mcp-header annotation (not an HTTP token,
// on a property that is not a string, integer or boolean, or a name used
// twice) is left out, as the spec asks of clients.
func (s *Session) ListTools(ctx context.Context) iter.Seq2[Tool, error] {
	return func(yield func(Tool, error) bool) {
		for t, err := range pages[Tool](ctx, s, "tools/list", "tools") {
			if era, _, _ := s.eraRev(); err == nil && era == domain.EraStateless && xmcpheader.Check(t.InputSchema) != nil {
				continue
			}
			if err == nil {
				s.mu.Lock()
				if len(t.InputSchema) > 0 {
					s.toolSchemas[t.Name] = t.InputSchema
				}
				if len(t.OutputSchema) > 0 {
					s.outSchemas[t.Name] = &outputSchema{raw: t.OutputSchema}
				} else {
					delete(s.outSchemas, t.Name)
				}
				s.mu.Unlock()
			}
			if !yield(t, err) {
				return
			}
		}
	}
}

// ListPrompts lists the server's prompts, every page of prompts/list.
func (s *Session) ListPrompts(ctx context.Context) iter.Seq2[Prompt, error] {
	return pages[Prompt](ctx, s, "prompts/list", "prompts")
}

// ListResources lists the server's resources, every page of
// resources/list.
func (s *Session) ListResources(ctx context.Context) iter.Seq2[Resource, error] {
	return pages[Resource](ctx, s, "resources/list", "resources")
}

// ListResourceTemplates lists the server's resource templates, every page
// of resources/templates/list.
func (s *Session) ListResourceTemplates(ctx context.Context) iter.Seq2[ResourceTemplate, error] {
	return pages[ResourceTemplate](ctx, s, "resources/templates/list", "resourceTemplates")
}

// pages ranges over every item of every page of a list method, at most
// MaxPages pages; a cursor seen twice is an error.
func pages[T any](ctx context.Context, s *Session, method, field string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		cursor := ""
		seen := map[string]bool{}
		for page := 0; ; page++ {
			if page == s.c.opts.MaxPages {
				yield(zero, fmt.Errorf("hexmcp: %s: more than %d pages", method, s.c.opts.MaxPages))
				return
			}
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			raw, err := s.request(ctx, method, params)
			if err != nil {
				yield(zero, err)
				return
			}
			var p map[string]json.RawMessage
			if err := json.Unmarshal(raw, &p); err != nil {
				yield(zero, fmt.Errorf("hexmcp: decoding the result of %s: %w", method, err))
				return
			}
			var items []T
			if v, ok := p[field]; ok {
				if err := json.Unmarshal(v, &items); err != nil {
					yield(zero, fmt.Errorf("hexmcp: decoding %s of %s: %w", field, method, err))
					return
				}
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			var next string
			if v, ok := p["nextCursor"]; ok && string(v) != "null" {
				if err := json.Unmarshal(v, &next); err != nil {
					yield(zero, fmt.Errorf("hexmcp: decoding nextCursor of %s: %w", method, err))
					return
				}
			}
			if next == "" {
				return
			}
			if seen[next] {
				yield(zero, fmt.Errorf("hexmcp: %s gave the cursor %q twice", method, next))
				return
			}
			seen[next] = true
			cursor = next
		}
	}
}

// CallTool calls the tool name with args (any value that encodes as a JSON
// object; nil, or a nil map or pointer, sends none) and returns its
// result, after answering the server's questions with the handlers. A
// tool that fails is a result whose IsError is set; a request the server
// refuses is an [*RPCError] (an unknown tool; invalid arguments before
// 2025-11-25).
//
// With [Options.Tasks], a server may answer a task-supporting tool's call
// with a task: CallTool then awaits it ([Session.AwaitTask]) and returns
// its result ([Session.StartTool] returns the task instead).
func (s *Session) CallTool(ctx context.Context, name string, args any) (*CallToolResult, error) {
	raw, err := s.callTool(ctx, name, args)
	if err != nil {
		return nil, err
	}
	if t, ok := asTask(raw); ok {
		return s.AwaitTask(ctx, t.ID)
	}
	return decodeResult(raw, &CallToolResult{Raw: raw}, "the result of ", name)
}

// callTool sends tools/call and returns its final result as sent.
func (s *Session) callTool(ctx context.Context, name string, args any) (json.RawMessage, error) {
	params := map[string]any{"name": name}
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("hexmcp: encoding the arguments of %s: %w", name, err)
		}
		// A nil map, slice or pointer in args encodes as null, which is no
		// object: send no arguments then, as for a nil args.
		if !bytes.Equal(b, []byte("null")) {
			params["arguments"] = json.RawMessage(b)
		}
	}
	raw, err := s.request(ctx, "tools/call", params)
	if err != nil && s.mayNeedSchema(name, err) {
		// The tool may mirror arguments into Mcp-Param headers that only
		// its input schema names: learn it, and call once more.
		if _, lerr := Collect(s.ListTools(ctx)); lerr == nil && s.toolSchema(name) != nil {
			raw, err = s.request(ctx, "tools/call", params)
		}
	}
	return raw, err
}

// CallToolAs calls the tool name with args as [Session.CallTool] does and
// decodes its structured result into a T. Before 2025-06-18, which has no
// structuredContent, it decodes the result's text, where a server puts
// the same JSON. When a list of the session gave the tool's output
// schema, the structured result is checked against it first
// ([ErrOutputSchema]; see [Options.Validator]). A tool that fails is a
// [*ToolError]; a result with nothing to decode is
// [ErrNoStructuredContent].
func CallToolAs[T any](ctx context.Context, s *Session, name string, args any) (T, error) {
	var out T
	res, err := s.CallTool(ctx, name, args)
	if err != nil {
		return out, err
	}
	if res.IsError {
		return out, &ToolError{Name: name, Result: res}
	}
	if len(res.StructuredContent) > 0 {
		if err := s.checkOutput(name, res.StructuredContent); err != nil {
			return out, err
		}
	}
	err = res.DecodeStructured(&out)
	if errors.Is(err, ErrNoStructuredContent) {
		if text := res.Text(); text != "" && json.Unmarshal([]byte(text), &out) == nil {
			return out, nil
		}
		return out, fmt.Errorf("hexmcp: %s: %w", name, err)
	}
	return out, err
}

// GetPrompt renders the prompt name with args (prompts/get), answering the
// server's questions with the handlers.
func (s *Session) GetPrompt(ctx context.Context, name string, args map[string]string) (*GetPromptResult, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	raw, err := s.request(ctx, "prompts/get", params)
	if err != nil {
		return nil, err
	}
	return decodeResult(raw, &GetPromptResult{Raw: raw}, "the prompt ", name)
}

// decodeResult decodes raw into res (whose Raw the caller set) and
// returns it; a decoding error says "hexmcp: decoding ", what and name.
func decodeResult[R any](raw json.RawMessage, res *R, what, name string) (*R, error) {
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("hexmcp: decoding %s%s: %w", what, name, err)
	}
	return res, nil
}

// ReadResource reads the resource at uri (resources/read), answering the
// server's questions with the handlers.
func (s *Session) ReadResource(ctx context.Context, uri string) (*ReadResourceResult, error) {
	raw, err := s.request(ctx, "resources/read", map[string]any{"uri": uri})
	if err != nil {
		return nil, err
	}
	return decodeResult(raw, &ReadResourceResult{Raw: raw}, "the resource ", uri)
}

// CompleteRef names what completion/complete completes: a prompt's
// argument (Type "ref/prompt", Name) or a resource template's variable
// (Type "ref/resource", URI).
type CompleteRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// Complete asks the server for completions of the argument arg whose
// value so far is value (completion/complete); context holds the values
// of the other arguments already chosen (nil for none).
func (s *Session) Complete(ctx context.Context, ref CompleteRef, arg, value string, context map[string]string) (*CompleteResult, error) {
	params := map[string]any{"ref": ref, "argument": map[string]string{"name": arg, "value": value}}
	if context != nil {
		params["context"] = map[string]any{"arguments": context}
	}
	raw, err := s.request(ctx, "completion/complete", params)
	if err != nil {
		return nil, err
	}
	var res struct {
		Completion CompleteResult `json:"completion"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("hexmcp: decoding the completion: %w", err)
	}
	return &res.Completion, nil
}

// Ping checks that the server answers (ping). The stateless era has no
// ping: there it asks server/discover.
func (s *Session) Ping(ctx context.Context) error {
	method := "ping"
	if s.Features().Era == domain.EraStateless {
		method = "server/discover"
	}
	_, err := s.request(ctx, method, nil)
	return err
}

// Call sends any request (method, params: a value that encodes as a JSON
// object, or nil) with the session's _meta, answers the server's
// questions, and decodes the result into result (nil: not decoded). It is
// for the methods this package has no function for.
func (s *Session) Call(ctx context.Context, method string, params, result any) error {
	p := map[string]any{}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("hexmcp: encoding the params of %s: %w", method, err)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(b, &members); err != nil {
			return fmt.Errorf("hexmcp: the params of %s must be an object: %w", method, err)
		}
		for k, v := range members {
			p[k] = v
		}
	}
	raw, err := s.request(ctx, method, p)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("hexmcp: decoding the result of %s: %w", method, err)
	}
	return nil
}

// mayNeedSchema reports whether err is the HeaderMismatch of a stateless
// HTTP call to a tool whose input schema the session does not know.
func (s *Session) mayNeedSchema(name string, err error) bool {
	var re *RPCError
	return s.hc != nil && s.Features().Era == domain.EraStateless && s.toolSchema(name) == nil &&
		errors.As(err, &re) && re.Code == domain.CodeHeaderMismatch
}

// ErrOutputSchema is the error of [CallToolAs] for a structured result
// that does not match the tool's output schema.
var ErrOutputSchema = errors.New("hexmcp: the structured result does not match the tool's output schema")

// outputSchema is a tool's output schema, compiled on first use.
type outputSchema struct {
	raw      json.RawMessage
	once     sync.Once
	compiled ports.Schema
	err      error
}

// checkOutput checks the structured result v of the tool name against
// its output schema, when the session knows it.
func (s *Session) checkOutput(name string, v json.RawMessage) error {
	if s.c.opts.SkipOutputValidation {
		return nil
	}
	s.mu.Lock()
	os := s.outSchemas[name]
	s.mu.Unlock()
	if os == nil {
		return nil
	}
	os.once.Do(func() { os.compiled, os.err = s.c.opts.Validator.Compile(os.raw) })
	if os.err != nil {
		return fmt.Errorf("hexmcp: the output schema of %s: %w", name, os.err)
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var val any
	if err := dec.Decode(&val); err != nil {
		return fmt.Errorf("hexmcp: decoding structuredContent of %s: %w", name, err)
	}
	if err := os.compiled.Validate(val); err != nil {
		return fmt.Errorf("%w (%s): %w", ErrOutputSchema, name, err)
	}
	return nil
}
