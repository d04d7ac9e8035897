package client_test

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/internal/clienttest"
)

func TestTools(t *testing.T) {
	srv := testServer(t, nil)
	forEach(t, srv, client.Options{}, func(t *testing.T, s *client.Session) {
		ctx := t.Context()
		names := clienttest.ToolNames(t, s)
		if want := []string{"add", "ask_all", "ask_twice", "count", "fly", "log", "slow", "weather"}; !slices.Equal(names, want) {
			t.Fatalf("tools = %v, want %v (every page)", names, want)
		}
		// Stopping a range early stops the paging.
		for tool, err := range s.ListTools(ctx) {
			if err != nil || tool.Name != "add" {
				t.Fatalf("first tool %v %v", tool, err)
			}
			break
		}

		res, err := s.CallTool(ctx, "add", map[string]any{"a": 2, "b": 3})
		if err != nil || res.Text() != "5" || res.IsError {
			t.Fatalf("add = %+v, %v", res, err)
		}

		w, err := client.CallToolAs[Weather](ctx, s, "weather", CityInput{City: "Lyon"})
		if err != nil || w.Conditions != "sunny in Lyon" || w.Temperature != 21.5 {
			t.Fatalf("weather = %+v, %v", w, err)
		}
		res, err = s.CallTool(ctx, "weather", CityInput{City: "Lyon"})
		if err != nil || (len(res.StructuredContent) > 0) != s.Features().StructuredContent {
			t.Fatalf("weather at %s = %s, %v", s.Revision(), res.Raw, err)
		}

		res, err = s.CallTool(ctx, "fly", CityInput{City: "Mars"})
		if err != nil || !res.IsError || res.Text() != "no flights to Mars" {
			t.Errorf("fly = %+v, %v: want a tool error", res, err)
		}
		_, err = client.CallToolAs[string](ctx, s, "fly", CityInput{City: "Mars"})
		var te *client.ToolError
		if !errors.As(err, &te) || te.Result.Text() != "no flights to Mars" {
			t.Errorf("typed fly: %v, want a *ToolError", err)
		}

		clienttest.CheckRefusedCalls(t, s)
		if err := s.Ping(ctx); err != nil {
			t.Errorf("ping: %v", err)
		}
	})
}

func TestPromptsAndResources(t *testing.T) {
	srv := testServer(t, nil)
	forEach(t, srv, client.Options{}, func(t *testing.T, s *client.Session) {
		ctx := t.Context()
		prompts, err := client.Collect(s.ListPrompts(ctx))
		if err != nil || len(prompts) != 1 || prompts[0].Name != "greet" {
			t.Fatalf("prompts = %+v, %v", prompts, err)
		}
		p, err := s.GetPrompt(ctx, "greet", map[string]string{"who": "Ada"})
		if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.Text != "Hello, Ada" {
			t.Fatalf("greet = %+v, %v", p, err)
		}
		rs, err := client.Collect(s.ListResources(ctx))
		if err != nil || len(rs) != 2 {
			t.Fatalf("resources = %+v, %v", rs, err)
		}
		r, err := s.ReadResource(ctx, "file:///readme.txt")
		if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "read me" {
			t.Fatalf("read = %+v, %v", r, err)
		}
		if _, err := client.Collect(s.ListResourceTemplates(ctx)); err != nil {
			t.Fatalf("templates: %v", err)
		}
		_, err = s.ReadResource(ctx, "file:///nope")
		var rpcErr *client.RPCError
		if !errors.As(err, &rpcErr) {
			t.Fatalf("unknown resource: %v", err)
		}
	})
}

func TestHandlersAnswerInBothEras(t *testing.T) {
	srv := testServer(t, nil)
	var answers clienttest.Answers
	opts := client.Options{Elicitation: answers.Elicitation, Sampling: answers.Sampling, Roots: answers.Roots}
	forEach(t, srv, opts, func(t *testing.T, s *client.Session) {
		clienttest.CallAskingTools(t, s)
	})
	// Per transport and session: sampling 1+2, roots 1; elicitation where
	// the revision has it (2025-06-18 on: four sessions of six).
	n := len(transports)
	want := map[string]int{"sampling": 3 * 6 * n, "roots": 6 * n, "elicitation": 4 * n}
	if calls := answers.Calls(); !maps.Equal(calls, want) {
		t.Errorf("handler calls = %v, want %v", calls, want)
	}
}
