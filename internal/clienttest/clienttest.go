// Package clienttest holds what the tests of package client and of
// hexmcptest, which both drive a [client.Session] against a test server,
// would otherwise each keep a copy of: the client's side of
// testtools.AskingTools (handlers that answer its questions and count
// them, and the checks of its tools' answers) and the names a session
// lists.
package clienttest

import (
	"context"
	"encoding/json"
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
