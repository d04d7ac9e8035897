package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// staffPrompt is a prompt with a completable argument, named name.
func staffPrompt(name string) app.Prompt {
	return app.NewPrompt(name, func(_ context.Context, args map[string]string) (*domain.GetPromptResult, error) {
		return &domain.GetPromptResult{Messages: []domain.PromptMessage{domain.UserMessage(domain.Text("for " + args["team"]))}}, nil
	}, app.WithArgument(domain.PromptArgument{Name: "team"}, func(context.Context, string, map[string]string) ([]string, error) {
		return []string{"ops"}, nil
	}))
}

// initializeAs initializes c's session at 2025-11-25 as the client name.
func initializeAs(c *client, name string) {
	c.t.Helper()
	c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// A Visibility.Prompt filter hides a prompt from those it refuses: absent
// from prompts/list, unknown to prompts/get and completion/complete, and
// its arrival announces no list change to them; those it admits see it.
func TestPromptVisibilityFilter(t *testing.T) {
	e := newEngine(t, app.Options{
		Validator:      jsonschema.New(),
		PromptRegistry: memory.NewPromptRegistry(),
		Visibility: app.Visibility{Prompt: func(_ context.Context, v *app.Viewer, p *domain.Prompt) bool {
			return strings.HasPrefix(p.Name, "open") || v.Client.Name == "staff"
		}},
	})
	if err := e.AddPrompts(staffPrompt("open"), staffPrompt("staff_only")); err != nil {
		t.Fatal(err)
	}
	guest, staff := serve(t, e), serve(t, e)
	initializeAs(guest, "guest")
	initializeAs(staff, "staff")

	equalJSON(t, guest.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"open","arguments":[{"name":"team"}]}]}}`)
	equalJSON(t, staff.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`),
		`{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"open","arguments":[{"name":"team"}]},{"name":"staff_only","arguments":[{"name":"team"}]}]}}`)

	get := `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"staff_only","arguments":{"team":"ops"}}}`
	equalJSON(t, guest.roundTrip(get),
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: unknown prompt \"staff_only\"","data":{"name":"staff_only"}}}`)
	equalJSON(t, staff.roundTrip(get),
		`{"jsonrpc":"2.0","id":2,"result":{"messages":[{"role":"user","content":{"type":"text","text":"for ops"}}]}}`)

	complete := `{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"staff_only"},"argument":{"name":"team","value":"o"}}}`
	equalJSON(t, guest.roundTrip(complete),
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: unknown prompt \"staff_only\"","data":{"name":"staff_only"}}}`)
	equalJSON(t, staff.roundTrip(complete),
		`{"jsonrpc":"2.0","id":3,"result":{"completion":{"values":["ops"]}}}`)

	// A prompt only staff sees: staff's list changed, the guest's did not.
	if err := e.AddPrompt(staffPrompt("staff_two")); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, staff.recv(), `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
	guest.expectNothing()
	// One both see: both hear of it.
	if err := e.AddPrompt(staffPrompt("open_two")); err != nil {
		t.Fatal(err)
	}
	equalJSON(t, staff.recv(), `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
	equalJSON(t, guest.recv(), `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
}
