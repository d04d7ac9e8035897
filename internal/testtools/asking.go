package testtools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
)

// AskingTools are two tools that ask the client, for tests of a client's
// answers in both eras: ask_all asks for a sampling ("A haiku") and the
// roots at once, and for a name by form elicitation where the revision has
// it, and answers "<sampled>|<n> roots" (then "|<elicited content>");
// ask_twice asks for a sampling of "one", then of "two", and answers
// "<first> then <second>".
func AskingTools() []decl.Tool {
	name := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
	askAll := decl.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		qs := []handlerapi.InputRequest{
			handlerapi.SamplingInput("haiku", domain.CreateMessageParams{Messages: []domain.SamplingMessage{handlerapi.UserText("A haiku")}, MaxTokens: 50}),
			handlerapi.RootsInput("roots"),
		}
		if rc.Features().Elicitation {
			qs = append(qs, handlerapi.ElicitInput("name", handlerapi.ElicitForm("Name?", name)))
		}
		res, err := rc.Ask(ctx, qs...)
		if err != nil {
			return "", err
		}
		s, _ := res.Sampling("haiku")
		r, _ := res.Roots("roots")
		out := fmt.Sprintf("%s|%d roots", s.Text(), len(r.Roots))
		if e, ok := res.Elicitation("name"); ok {
			out += "|" + string(e.Content)
		}
		return out, nil
	}, decl.WithName("ask_all"))
	askTwice := decl.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		first, err := rc.CreateMessage(ctx, "first", domain.CreateMessageParams{Messages: []domain.SamplingMessage{handlerapi.UserText("one")}, MaxTokens: 5})
		if err != nil {
			return "", err
		}
		second, err := rc.CreateMessage(ctx, "second", domain.CreateMessageParams{Messages: []domain.SamplingMessage{handlerapi.UserText("two")}, MaxTokens: 5})
		if err != nil {
			return "", err
		}
		return first.Text() + " then " + second.Text(), nil
	}, decl.WithName("ask_twice"))
	return []decl.Tool{askAll, askTwice}
}
