package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// The tools of this file ask the client for input (elicitation, sampling,
// roots) through app.RequestContext, so that the same code serves both
// eras: in a 2025-11-25 session (the tools-call-sampling,
// tools-call-elicitation, elicitation-sep1034-defaults and
// elicitation-sep1330-enums scenarios) the engine sends real
// server-to-client requests on the session; in the 2026-07-28 stateless
// revision (the input-required-result-* scenarios) it answers
// resultType "input_required" with inputRequests and a signed
// requestState, and the handler runs again from the start on the client's
// retry. Every handler therefore returns the error of Ask/Elicit/
// CreateMessage/ListRoots unchanged and acts only once it has every answer.

// The requested schemas, as the scenarios' "Server Implementation
// Requirements" give them.
const (
	// tools-call-elicitation
	userInfoSchema = `{
		"type": "object",
		"properties": {
			"username": {"type": "string", "description": "User's response"},
			"email": {"type": "string", "description": "User's email address"}
		},
		"required": ["username", "email"]
	}`

	// elicitation-sep1034-defaults: a default for every primitive type.
	sep1034Schema = `{
		"type": "object",
		"properties": {
			"name": {"type": "string", "description": "User name", "default": "John Doe"},
			"age": {"type": "integer", "description": "User age", "default": 30},
			"score": {"type": "number", "description": "User score", "default": 95.5},
			"status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
			"verified": {"type": "boolean", "description": "Verification status", "default": true}
		}
	}`

	// elicitation-sep1330-enums: the five enum variants of SEP-1330.
	sep1330Schema = `{
		"type": "object",
		"properties": {
			"untitledSingle": {
				"type": "string", "description": "Untitled single-select",
				"enum": ["option1", "option2", "option3"]
			},
			"titledSingle": {
				"type": "string", "description": "Titled single-select",
				"oneOf": [
					{"const": "value1", "title": "First Option"},
					{"const": "value2", "title": "Second Option"},
					{"const": "value3", "title": "Third Option"}
				]
			},
			"legacyEnum": {
				"type": "string", "description": "Legacy titled single-select (enumNames, deprecated)",
				"enum": ["opt1", "opt2", "opt3"],
				"enumNames": ["Option One", "Option Two", "Option Three"]
			},
			"untitledMulti": {
				"type": "array", "description": "Untitled multi-select",
				"items": {"type": "string", "enum": ["option1", "option2", "option3"]}
			},
			"titledMulti": {
				"type": "array", "description": "Titled multi-select",
				"items": {"anyOf": [
					{"const": "value1", "title": "First Choice"},
					{"const": "value2", "title": "Second Choice"},
					{"const": "value3", "title": "Third Choice"}
				]}
			}
		}
	}`

	// input-required-result-basic-elicitation, -multiple-input-requests,
	// -capability-check.
	nameSchema = `{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}`
	// input-required-result-multi-round, step 2.
	colorSchema = `{"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}`
	// input-required-result-request-state, -tampered-state, and
	// test_streaming_elicitation.
	confirmSchema = `{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}`
	// input-required-result-non-tool-request (the prompt).
	contextSchema = `{"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}`
)

// inputTools returns the tools that ask the client for input.
func inputTools() []hexmcp.Tool {
	return []hexmcp.Tool{
		// tools-call-sampling
		hexmcp.NewTool(testSampling,
			hexmcp.WithName("test_sampling"),
			hexmcp.WithDescription("Asks the client's LLM to answer the prompt (sampling/createMessage, maxTokens 100) and returns its answer.")),
		// tools-call-elicitation
		hexmcp.NewTool(testElicitation,
			hexmcp.WithName("test_elicitation"),
			hexmcp.WithDescription("Asks the user for a username and an email address (elicitation/create) with the given message.")),
		// elicitation-sep1034-defaults
		hexmcp.NewTool(elicitWith("Please review your profile; every field has a default.", sep1034Schema),
			hexmcp.WithName("test_elicitation_sep1034_defaults"),
			hexmcp.WithDescription("Elicits a form whose string, integer, number, enum and boolean fields all have defaults (SEP-1034).")),
		// elicitation-sep1330-enums
		hexmcp.NewTool(elicitWith("Please choose from each list.", sep1330Schema),
			hexmcp.WithName("test_elicitation_sep1330_enums"),
			hexmcp.WithDescription("Elicits a form with the five enum variants of SEP-1330 (untitled and titled single-select, legacy enumNames, untitled and titled multi-select).")),

		// input-required-result-basic-elicitation, -result-type,
		// -missing-input-response, -ignore-extra-params
		hexmcp.NewTool(mrtrElicitation,
			hexmcp.WithName("test_input_required_result_elicitation"),
			hexmcp.WithDescription(`Asks the user's name (elicitation under the key "user_name") and greets them.`)),
		// input-required-result-basic-sampling
		hexmcp.NewTool(mrtrSampling,
			hexmcp.WithName("test_input_required_result_sampling"),
			hexmcp.WithDescription(`Asks the client's LLM for the capital of France (sampling under the key "capital_question").`)),
		// input-required-result-basic-list-roots
		hexmcp.NewTool(mrtrListRoots,
			hexmcp.WithName("test_input_required_result_list_roots"),
			hexmcp.WithDescription(`Asks for the client's roots (roots/list under the key "client_roots") and lists them.`)),
		// input-required-result-request-state
		hexmcp.NewTool(confirmTool("state-ok"),
			hexmcp.WithName("test_input_required_result_request_state"),
			hexmcp.WithDescription(`Asks the user to confirm (key "confirm"); the retry must echo the signed requestState, and the result says "state-ok".`)),
		// input-required-result-multiple-input-requests
		hexmcp.NewTool(mrtrMultipleInputs,
			hexmcp.WithName("test_input_required_result_multiple_inputs"),
			hexmcp.WithDescription(`Asks an elicitation ("user_name"), a sampling ("greeting") and roots/list ("client_roots") at once.`)),
		// input-required-result-multi-round
		hexmcp.NewTool(mrtrMultiRound,
			hexmcp.WithName("test_input_required_result_multi_round"),
			hexmcp.WithDescription(`Asks the user's name ("step1"), then, in a second round, their favorite color ("step2").`)),
		// input-required-result-tampered-state
		hexmcp.NewTool(confirmTool("confirmed"),
			hexmcp.WithName("test_input_required_result_tampered_state"),
			hexmcp.WithDescription(`Asks the user to confirm (key "confirm"); a retry whose requestState was altered is refused (-32602).`)),
		// input-required-result-capability-check
		hexmcp.NewTool(mrtrCapabilities,
			hexmcp.WithName("test_input_required_result_capabilities"),
			hexmcp.WithDescription("Asks only what the client declared the capability for: elicitation, sampling and/or roots.")),

		// server-stateless (2026-07-28): a call that needs a client
		// capability the client did not declare is -32021 with
		// data.requiredCapabilities naming it.
		hexmcp.NewTool(missingCapability,
			hexmcp.WithName("test_missing_capability"),
			hexmcp.WithDescription("Needs the client's sampling capability: without it the call is MissingRequiredClientCapability (-32021).")),
		// server-stateless: the tool elicits; in the stateless era its
		// response stream carries only the input_required result, never a
		// server-to-client request.
		hexmcp.NewTool(confirmTool("confirmed"),
			hexmcp.WithName("test_streaming_elicitation"),
			hexmcp.WithDescription(`Asks the user to confirm (key "confirm"): a server request in a session, an input_required result when stateless.`)),
	}
}

// elicitationText is the text the elicitation tools return.
func elicitationText(prefix string, r *domain.ElicitResult) string {
	content := "{}"
	if len(r.Content) > 0 && string(r.Content) != "null" {
		content = string(r.Content)
	}
	return fmt.Sprintf("%s: action=%s, content=%s", prefix, r.Action, content)
}

func testSampling(ctx context.Context, rc *app.RequestContext, in struct {
	Prompt string `json:"prompt" description:"The prompt to send to the LLM."`
}) (string, error) {
	res, err := rc.CreateMessage(ctx, "prompt", domain.CreateMessageParams{
		Messages:  []domain.SamplingMessage{hexmcp.UserText(in.Prompt)},
		MaxTokens: 100,
	})
	if err != nil {
		return "", err
	}
	return "LLM response: " + res.Text(), nil
}

func testElicitation(ctx context.Context, rc *app.RequestContext, in struct {
	Message string `json:"message" description:"The message to show the user."`
}) (string, error) {
	res, err := rc.Elicit(ctx, "user_info", hexmcp.ElicitForm(in.Message, json.RawMessage(userInfoSchema)))
	if err != nil {
		return "", err
	}
	return elicitationText("User response", res), nil
}

// elicitWith returns a tool that elicits schema and reports the answer.
func elicitWith(message, schema string) func(context.Context, *app.RequestContext) (string, error) {
	return func(ctx context.Context, rc *app.RequestContext) (string, error) {
		res, err := rc.Elicit(ctx, "form", hexmcp.ElicitForm(message, json.RawMessage(schema)))
		if err != nil {
			return "", err
		}
		return elicitationText("Elicitation completed", res), nil
	}
}

func askName(key, message string) hexmcp.InputRequest {
	return hexmcp.ElicitInput(key, hexmcp.ElicitForm(message, json.RawMessage(nameSchema)))
}

// nameOf returns the name of an accepted name elicitation.
func nameOf(r *domain.ElicitResult) (string, bool) {
	var v struct {
		Name string `json:"name"`
	}
	if err := r.Decode(&v); err != nil {
		return "", false
	}
	return v.Name, true
}

func mrtrElicitation(ctx context.Context, rc *app.RequestContext) (string, error) {
	res, err := rc.Ask(ctx, askName("user_name", "What is your name?"))
	if err != nil {
		return "", err
	}
	r, _ := res.Elicitation("user_name")
	name, ok := nameOf(r)
	if !ok {
		return fmt.Sprintf("No name given (action=%s).", r.Action), nil
	}
	return "Hello, " + name + "!", nil
}

func mrtrSampling(ctx context.Context, rc *app.RequestContext) (string, error) {
	res, err := rc.CreateMessage(ctx, "capital_question", domain.CreateMessageParams{
		Messages:  []domain.SamplingMessage{hexmcp.UserText("What is the capital of France?")},
		MaxTokens: 100,
	})
	if err != nil {
		return "", err
	}
	return "LLM response: " + res.Text(), nil
}

// describeRoots lists roots as "uri (name), ...".
func describeRoots(r *domain.ListRootsResult) string {
	if len(r.Roots) == 0 {
		return "no roots"
	}
	parts := make([]string, len(r.Roots))
	for i, root := range r.Roots {
		parts[i] = root.URI
		if root.Name != "" {
			parts[i] += " (" + root.Name + ")"
		}
	}
	return strings.Join(parts, ", ")
}

func mrtrListRoots(ctx context.Context, rc *app.RequestContext) (string, error) {
	res, err := rc.ListRoots(ctx, "client_roots")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("The client has %d root(s): %s", len(res.Roots), describeRoots(res)), nil
}

// confirmTool asks the user to confirm and reports the answer after word.
// The engine verifies the signed requestState of the retry before the
// handler runs (a forged or altered one is -32602), so a handler that
// reaches its answer has a verified state.
func confirmTool(word string) func(context.Context, *app.RequestContext) (string, error) {
	return func(ctx context.Context, rc *app.RequestContext) (string, error) {
		res, err := rc.Elicit(ctx, "confirm", hexmcp.ElicitForm("Please confirm", json.RawMessage(confirmSchema)))
		if err != nil {
			return "", err
		}
		var v struct {
			OK bool `json:"ok"`
		}
		if err := res.Decode(&v); err != nil {
			return fmt.Sprintf("%s: not confirmed (action=%s)", word, res.Action), nil
		}
		return fmt.Sprintf("%s: confirmed, ok=%t", word, v.OK), nil
	}
}

func greetingInput(prompt string) hexmcp.InputRequest {
	return hexmcp.SamplingInput("greeting", domain.CreateMessageParams{
		Messages:  []domain.SamplingMessage{hexmcp.UserText(prompt)},
		MaxTokens: 50,
	})
}

func mrtrMultipleInputs(ctx context.Context, rc *app.RequestContext) (string, error) {
	res, err := rc.Ask(ctx,
		askName("user_name", "What is your name?"),
		greetingInput("Generate a greeting"),
		hexmcp.RootsInput("client_roots"))
	if err != nil {
		return "", err
	}
	e, _ := res.Elicitation("user_name")
	s, _ := res.Sampling("greeting")
	r, _ := res.Roots("client_roots")
	name, ok := nameOf(e)
	if !ok {
		name = "(no name: " + string(e.Action) + ")"
	}
	return fmt.Sprintf("name=%s; greeting=%s; roots=%s", name, s.Text(), describeRoots(r)), nil
}

func mrtrMultiRound(ctx context.Context, rc *app.RequestContext) (string, error) {
	first, err := rc.Ask(ctx, askName("step1", "Step 1: What is your name?"))
	if err != nil {
		return "", err
	}
	r1, _ := first.Elicitation("step1")
	name, ok := nameOf(r1)
	if !ok {
		return fmt.Sprintf("Stopped after step 1 (action=%s).", r1.Action), nil
	}
	r2, err := rc.Elicit(ctx, "step2", hexmcp.ElicitForm("Step 2: What is your favorite color?", json.RawMessage(colorSchema)))
	if err != nil {
		return "", err
	}
	var c struct {
		Color string `json:"color"`
	}
	if err := r2.Decode(&c); err != nil {
		return fmt.Sprintf("Hello, %s! (no color: action=%s)", name, r2.Action), nil
	}
	return fmt.Sprintf("Hello, %s! Your favorite color is %s.", name, c.Color), nil
}

// mrtrCapabilities asks only what the client can answer: the capabilities
// of the request (_meta clientCapabilities when stateless, the initialize
// capabilities in a session).
func mrtrCapabilities(ctx context.Context, rc *app.RequestContext) (string, error) {
	var reqs []hexmcp.InputRequest
	for _, q := range []hexmcp.InputRequest{
		askName("user_name", "What is your name?"),
		greetingInput("Generate a greeting"),
		hexmcp.RootsInput("client_roots"),
	} {
		if rc.CanAsk(q) {
			reqs = append(reqs, q)
		}
	}
	if len(reqs) == 0 {
		return "The client declared none of elicitation, sampling and roots: nothing to ask.", nil
	}
	res, err := rc.Ask(ctx, reqs...)
	if err != nil {
		return "", err
	}
	var parts []string
	if e, ok := res.Elicitation("user_name"); ok {
		parts = append(parts, "elicitation: "+string(e.Action))
	}
	if s, ok := res.Sampling("greeting"); ok {
		parts = append(parts, "sampling: "+s.Text())
	}
	if r, ok := res.Roots("client_roots"); ok {
		parts = append(parts, "roots: "+describeRoots(r))
	}
	return "Asked only what the client declared; " + strings.Join(parts, "; "), nil
}

// missingCapability needs sampling: without the capability, CreateMessage
// returns *hexmcp.MissingCapabilityError and the engine answers -32021 with
// data.requiredCapabilities {"sampling": {}}.
func missingCapability(ctx context.Context, rc *app.RequestContext) (string, error) {
	res, err := rc.CreateMessage(ctx, "sample", domain.CreateMessageParams{
		Messages:  []domain.SamplingMessage{hexmcp.UserText("Say hello.")},
		MaxTokens: 20,
	})
	if err != nil {
		return "", err
	}
	return "LLM response: " + res.Text(), nil
}

// inputPrompt is the prompt of input-required-result-non-tool-request: it
// elicits its context (key "user_context") before it can be rendered.
func inputPrompt() hexmcp.Prompt {
	return hexmcp.NewPrompt("test_input_required_result_prompt", func(ctx context.Context, _ map[string]string) (*domain.GetPromptResult, error) {
		res, err := app.RequestFrom(ctx).Elicit(ctx, "user_context",
			hexmcp.ElicitForm("What context should the prompt use?", json.RawMessage(contextSchema)))
		if err != nil {
			return nil, err
		}
		var v struct {
			Context string `json:"context"`
		}
		if err := res.Decode(&v); err != nil {
			v.Context = "(none: the user chose " + string(res.Action) + ")"
		}
		return &domain.GetPromptResult{
			Description: "A prompt that needs the user's context first.",
			Messages:    []domain.PromptMessage{hexmcp.UserMessage(hexmcp.Text("Use this context: " + v.Context))},
		}, nil
	}, hexmcp.WithDescription("Asks the user for its context (elicitation under the key \"user_context\") before rendering."))
}
