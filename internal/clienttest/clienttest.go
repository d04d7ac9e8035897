// Package clienttest holds what the tests of package client and of
// hexmcptest, which both drive a [client.Session] against a test server,
// would otherwise each keep a copy of: the client's side of
// testtools.AskingTools (handlers that answer its questions and count
// them, and the checks of its tools' answers), the names a session lists,
// and the checks of the calls a server refuses.
package clienttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
)

// Answers answer the questions of testtools.AskingTools and count the
// calls of each handler. The zero value is ready; it is safe for
// concurrent use.
type Answers struct {
	mu    sync.Mutex
	calls map[string]int
}

func (a *Answers) count(what string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.calls == nil {
		a.calls = map[string]int{}
	}
	a.calls[what]++
}

// Elicitation accepts {"name":"Ada"} for the question "Name?" asked by
// form with a schema that names "name", and fails any other question.
func (a *Answers) Elicitation(_ context.Context, p domain.ElicitParams) (*domain.ElicitResult, error) {
	a.count("elicitation")
	if p.Message != "Name?" || p.Mode != domain.ElicitModeForm || !strings.Contains(string(p.RequestedSchema), `"name"`) {
		return nil, fmt.Errorf("unexpected question %+v", p)
	}
	return client.Accept(map[string]string{"name": "Ada"})
}

// Sampling replies "re: " and the text of the first message.
func (a *Answers) Sampling(_ context.Context, p domain.CreateMessageParams) (*domain.CreateMessageResult, error) {
	a.count("sampling")
	var block struct{ Text string }
	_ = json.Unmarshal(p.Messages[0].Content, &block)
	return client.Reply("clienttest", "re: "+block.Text), nil
}

// Roots answers the roots file:///a and file:///b.
func (a *Answers) Roots(context.Context) ([]domain.Root, error) {
	a.count("roots")
	return []domain.Root{{URI: "file:///a"}, {URI: "file:///b"}}, nil
}

// Calls returns how many times each handler was called so far, by
// "elicitation", "sampling" and "roots" (a handler never called is not
// in it).
func (a *Answers) Calls() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.calls)
}

// CallAskingTools calls ask_all and ask_twice of testtools.AskingTools on
// s, whose client answers with an [Answers], and fails t unless they
// answer as those answers make them: ask_all "re: A haiku|2 roots", then
// `|{"name":"Ada"}` where the session has elicitation; ask_twice "re: one
// then re: two".
func CallAskingTools(t testing.TB, s *client.Session) {
	t.Helper()
	ctx := t.Context()
	res, err := s.CallTool(ctx, "ask_all", nil)
	want := "re: A haiku|2 roots"
	if s.Features().Elicitation {
		want += `|{"name":"Ada"}`
	}
	if err != nil || res.Text() != want {
		t.Fatalf("ask_all = %+v, %v; want %q", res, err, want)
	}
	res, err = s.CallTool(ctx, "ask_twice", nil)
	if err != nil || res.Text() != "re: one then re: two" {
		t.Fatalf("ask_twice = %+v, %v", res, err)
	}
}

// ToolNames lists every tool of s, every page, and returns their names
// in the order listed; it fails t when listing fails.
func ToolNames(t testing.TB, s *client.Session) []string {
	t.Helper()
	tools, err := client.Collect(s.ListTools(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	return names
}

// CheckRefusedCalls calls two tools on s and fails t unless each is
// refused as the session's revision says: "weather" with an empty city,
// which its input schema refuses (a tool error from 2025-11-25 on, -32602
// before), and "nope", which the server does not have (-32602 naming it,
// with an HTTP status where the test's name has "/http/", a status-less
// error elsewhere).
func CheckRefusedCalls(t testing.TB, s *client.Session) {
	t.Helper()
	ctx := t.Context()
	res, err := s.CallTool(ctx, "weather", map[string]any{"city": ""})
	var rpcErr *client.RPCError
	if s.Features().InputErrorsAsResults {
		if err != nil || !res.IsError {
			t.Errorf("invalid arguments = %+v, %v: want a tool error", res, err)
		}
	} else if !errors.As(err, &rpcErr) || rpcErr.Code != domain.CodeInvalidParams {
		t.Errorf("invalid arguments = %+v, %v: want -32602", res, err)
	}

	_, err = s.CallTool(ctx, "nope", nil)
	if !errors.As(err, &rpcErr) || rpcErr.Code != domain.CodeInvalidParams || !strings.Contains(rpcErr.Message, "nope") {
		t.Fatalf("unknown tool: %v", err)
	}
	if (rpcErr.HTTPStatus != 0) != strings.Contains(t.Name(), "/http/") {
		t.Errorf("HTTPStatus %d in %s", rpcErr.HTTPStatus, t.Name())
	}
}
