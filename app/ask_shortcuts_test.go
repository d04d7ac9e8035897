package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// describeAnswer tells, as a tool's text, what a shortcut of Ask returned:
// the answer, or the client's error.
func describeAnswer[T any](v *T, err error, show func(*T) string) string {
	var ce *app.ClientError
	switch {
	case errors.As(err, &ce):
		return fmt.Sprintf("client error %d on %s", ce.Code, ce.Method)
	case err != nil:
		return "error: " + err.Error()
	case v == nil:
		return "no answer and no error"
	}
	return show(v)
}

// shortcutTools are tools that ask through the shortcuts of Ask
// (ListRoots, CreateMessage): each returns what it got.
func shortcutTools() []app.Tool {
	return []app.Tool{
		app.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
			res, err := rc.ListRoots(ctx, "roots")
			return describeAnswer(res, err, func(r *domain.ListRootsResult) string {
				uris := make([]string, 0, len(r.Roots))
				for _, root := range r.Roots {
					uris = append(uris, root.URI)
				}
				return "roots: " + strings.Join(uris, " ")
			}), nil
		}, app.WithName("list_roots")),
		app.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
			res, err := rc.CreateMessage(ctx, "completion", domain.CreateMessageParams{
				Messages: []domain.SamplingMessage{domain.UserText("Say hi")}, MaxTokens: 10})
			return describeAnswer(res, err, func(r *domain.CreateMessageResult) string {
				return "sampled: " + r.Text()
			}), nil
		}, app.WithName("sample")),
	}
}

// The shortcuts of Ask hand the handler the client's answer, and the
// client's error as an error (never a nil answer without an error, nor an
// answer for an error).
func TestAskShortcutsReturnAnswerOrError(t *testing.T) {
	for _, tc := range []struct {
		tool, method, answer, want string
	}{
		{"list_roots", "roots/list", `"result":{"roots":[{"uri":"file:///a"},{"uri":"file:///b","name":"b"}]}`,
			"roots: file:///a file:///b"},
		{"list_roots", "roots/list", `"error":{"code":-1,"message":"no roots today"}`,
			"client error -1 on roots/list"},
		{"sample", "sampling/createMessage", `"result":{"role":"assistant","content":{"type":"text","text":"Hi"},"model":"m"}`,
			"sampled: Hi"},
		{"sample", "sampling/createMessage", `"error":{"code":-1,"message":"User rejected sampling request"}`,
			"client error -1 on sampling/createMessage"},
	} {
		t.Run(tc.tool+" "+strings.Split(tc.answer, `"`)[1], func(t *testing.T) {
			c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, shortcutTools()...))
			initializeWith(c, "2025-11-25", `{"roots":{},"sampling":{}}`)
			c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tc.tool + `","arguments":{}}}`)
			id, method, _ := serverRequest(t, c.recv())
			if method != tc.method {
				t.Fatalf("the server asked %s, want %s", method, tc.method)
			}
			c.send(`{"jsonrpc":"2.0","id":` + id + `,` + tc.answer + `}`)
			equalJSON(t, c.recv(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+tc.want+`"}]}}`)
		})
	}
}

// A shortcut of Ask whose question the client cannot answer (no roots
// capability) fails before asking, with the error Ask returns.
func TestAskShortcutMissingCapability(t *testing.T) {
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New()}, shortcutTools()...))
	initializeWith(c, "2025-11-25", `{"sampling":{}}`)
	resp := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_roots","arguments":{}}}`)
	var m struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(resp), &m); err != nil || len(m.Result.Content) != 1 {
		t.Fatalf("response: %s", resp)
	}
	if got := m.Result.Content[0].Text; !strings.HasPrefix(got, "error: ") || !strings.Contains(got, "roots") {
		t.Fatalf("ListRoots without the roots capability: %q, want the missing capability error", got)
	}
}
