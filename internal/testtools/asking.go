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
			handlerapi.SamplingInput("haiku", domain.CreateMessageParams{Messages: []domain.SamplingMessage{userText("A haiku")}, MaxTokens: 50}),
			handlerapi.RootsInput("roots"),
		}
		if rc.Features().Elicitation {
			qs = append(qs, handlerapi.ElicitInput("name", elicitForm("Name?", name)))
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
		first, err := rc.CreateMessage(ctx, "first", domain.CreateMessageParams{Messages: []domain.SamplingMessage{userText("one")}, MaxTokens: 5})
		if err != nil {
			return "", err
		}
		second, err := rc.CreateMessage(ctx, "second", domain.CreateMessageParams{Messages: []domain.SamplingMessage{userText("two")}, MaxTokens: 5})
		if err != nil {
			return "", err
		}
		return first.Text() + " then " + second.Text(), nil
	}, decl.WithName("ask_twice"))
	return []decl.Tool{askAll, askTwice}
}

// userText is a user's sampling message of one text block (hexmcp.UserText,
// which this package cannot import).
func userText(text string) domain.SamplingMessage {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	return domain.SamplingMessage{Role: domain.RoleUser, Content: b}
}

// elicitForm is hexmcp.ElicitForm.
func elicitForm(message string, schema json.RawMessage) domain.ElicitParams {
	return domain.ElicitParams{Mode: domain.ElicitModeForm, Message: message, RequestedSchema: schema}
}
